/**
 * ffmpeg: the decoder of every stored song (mp3, m4a, wav) and, when it has libopus, the Opus
 * encoder too (docs/decisions/voice-playback.md has the measurements behind that choice).
 */
import { spawn, type ChildProcessByStdio } from 'node:child_process';
import type { Readable } from 'node:stream';

export interface FfmpegCheck {
  /** ffmpeg ran: its first `-version` line. */
  readonly found: boolean;
  readonly libopus: boolean;
  readonly version?: string;
}

/** Runs `<path> -version` once and reads whether libopus was built in. Never throws. */
export function checkFfmpeg(path: string, timeoutMs = 5_000): Promise<FfmpegCheck> {
  return new Promise((resolve) => {
    let out = '';
    let child: ReturnType<typeof spawn>;
    try {
      child = spawn(path, ['-hide_banner', '-version'], { stdio: ['ignore', 'pipe', 'ignore'], timeout: timeoutMs });
    } catch {
      resolve({ found: false, libopus: false });
      return;
    }
    child.stdout?.setEncoding('utf8').on('data', (chunk: string) => (out += chunk));
    child.on('error', () => resolve({ found: false, libopus: false }));
    child.on('close', (code) => {
      if (code !== 0) return resolve({ found: false, libopus: false });
      resolve({ found: true, libopus: /--enable-libopus/.test(out), version: out.split('\n')[0]?.trim() });
    });
  });
}

/** The line an operator reads when ffmpeg is missing. */
export const FFMPEG_MISSING =
  'voice playback needs ffmpeg, which was not found: apt-get install -y ffmpeg (or your system\'s package), or set FFMPEG_PATH to its binary; the voice commands say so meanwhile';

export type EncodedStream = ChildProcessByStdio<null, Readable, Readable>;

/**
 * The protocols the decoder may open: http and https and what they run over. The player hands
 * it the media relay's loopback address (relay.ts), which fetches the song; a local file, or
 * any other protocol an address names, is refused by ffmpeg itself.
 */
export const DECODER_PROTOCOLS = 'http,https,tcp,tls';

/** Where the decoder starts in the song, and its volume in percent (100: as the song is). */
export interface DecoderStart {
  readonly startMs: number;
  readonly volume: number;
}

/** ffmpeg's arguments for `start`: a seek on the input, and a volume filter unless it is 100%. */
export function decoderStartArgs(start: DecoderStart): { readonly input: string[]; readonly filter: string[] } {
  const input = start.startMs > 0 ? ['-ss', (start.startMs / 1000).toFixed(3)] : [];
  const filter = start.volume === 100 ? [] : ['-af', `volume=${(Math.max(0, start.volume) / 100).toFixed(2)}`];
  return { input, filter };
}

/**
 * Starts ffmpeg reading `url` (http or https only, see {@link DECODER_PROTOCOLS}) from `start`:
 * Ogg Opus out when `libopus`, else raw 48 kHz stereo s16le for an Opus encoder in Node. Stdout
 * is the audio; stderr is kept short for the error line.
 */
export function spawnDecoder(path: string, url: string, libopus: boolean, start: DecoderStart = { startMs: 0, volume: 100 }): EncodedStream {
  // A network source may drop mid-song: ffmpeg reconnects rather than ending the song early.
  const reconnect = ['-reconnect', '1', '-reconnect_streamed', '1', '-reconnect_delay_max', '4'];
  const { input, filter } = decoderStartArgs(start);
  const output = libopus
    ? ['-c:a', 'libopus', '-b:a', '128k', '-ar', '48000', '-ac', '2', '-f', 'ogg', 'pipe:1']
    : ['-f', 's16le', '-ar', '48000', '-ac', '2', 'pipe:1'];
  return spawn(path, ['-hide_banner', '-loglevel', 'error', '-nostdin', '-protocol_whitelist', DECODER_PROTOCOLS, ...reconnect, ...input, '-i', url, '-vn', ...filter, ...output], {
    stdio: ['ignore', 'pipe', 'pipe'],
  });
}
