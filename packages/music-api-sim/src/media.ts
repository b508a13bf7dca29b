/**
 * The files behind the simulator's media links, so that every link the bot posts opens.
 * By default the WAV is generated here (a sine tone) and the other files are tiny real
 * encodings kept in ./assets (how they were made: README.md). With `songSeconds`, every song
 * is a generated melody of that length, encoded by ffmpeg once at start-up.
 */
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { IncomingMessage, ServerResponse } from 'node:http';

export interface MediaFile {
  body: Buffer;
  contentType: string;
}

/** A mono 16-bit PCM WAV of a sine tone, with short fades so it does not click. */
export function sineWav(options: { seconds?: number; frequency?: number; sampleRate?: number } = {}): Buffer {
  const seconds = options.seconds ?? 2;
  const frequency = options.frequency ?? 440;
  const sampleRate = options.sampleRate ?? 22_050;
  const samples = Math.round(seconds * sampleRate);
  const fade = Math.round(sampleRate * 0.02);
  const data = Buffer.alloc(samples * 2);
  for (let i = 0; i < samples; i += 1) {
    const envelope = Math.min(1, i / fade, (samples - 1 - i) / fade);
    const value = Math.sin((2 * Math.PI * frequency * i) / sampleRate) * 0.3 * envelope;
    data.writeInt16LE(Math.round(value * 32_767), i * 2);
  }
  return wavFile(data, sampleRate);
}

/** A mono 16-bit PCM WAV around `data`. */
function wavFile(data: Buffer, sampleRate: number): Buffer {
  const header = Buffer.alloc(44);
  header.write('RIFF', 0, 'ascii');
  header.writeUInt32LE(36 + data.length, 4);
  header.write('WAVE', 8, 'ascii');
  header.write('fmt ', 12, 'ascii');
  header.writeUInt32LE(16, 16); // fmt chunk size
  header.writeUInt16LE(1, 20); // PCM
  header.writeUInt16LE(1, 22); // mono
  header.writeUInt32LE(sampleRate, 24);
  header.writeUInt32LE(sampleRate * 2, 28); // byte rate
  header.writeUInt16LE(2, 32); // block align
  header.writeUInt16LE(16, 34); // bits per sample
  header.write('data', 36, 'ascii');
  header.writeUInt32LE(data.length, 40);
  return Buffer.concat([header, data]);
}

function asset(name: string): Buffer {
  return readFileSync(new URL(`./assets/${name}`, import.meta.url));
}

/**
 * A melody of `seconds` (48 kHz mono WAV): half-second notes of a pentatonic scale whose
 * loudness rises and falls, so that what a listener heard can be matched against it.
 */
export function melodyWav(seconds: number): Buffer {
  const sampleRate = 48_000;
  const samples = Math.round(seconds * sampleRate);
  const noteSamples = sampleRate / 2;
  const scale = [262, 294, 330, 392, 440, 523, 440, 392];
  const loudness = [0.5, 0.15, 0.35, 0.05, 0.45, 0.25, 0.1, 0.4];
  const fade = Math.round(sampleRate * 0.01);
  const data = Buffer.alloc(samples * 2);
  for (let i = 0; i < samples; i += 1) {
    const note = Math.floor(i / noteSamples);
    const within = i % noteSamples;
    const envelope = Math.min(1, within / fade, (noteSamples - 1 - within) / fade, (samples - 1 - i) / fade);
    const value = Math.sin((2 * Math.PI * scale[note % scale.length]! * i) / sampleRate) * loudness[note % loudness.length]! * envelope;
    data.writeInt16LE(Math.round(value * 32_767), i * 2);
  }
  return wavFile(data, sampleRate);
}

/** Encodes a WAV with ffmpeg into `format`; throws a readable error when ffmpeg is missing. */
function encode(wav: Buffer, format: 'm4a' | 'mp3'): Buffer {
  // An MP4 file is finished by seeking back, which a pipe cannot do: ffmpeg writes a file.
  const folder = mkdtempSync(join(tmpdir(), 'music-api-sim-'));
  const output = join(folder, `song.${format}`);
  const codec = format === 'm4a' ? ['-c:a', 'aac', '-b:a', '96k', '-movflags', '+faststart'] : ['-c:a', 'libmp3lame', '-b:a', '128k'];
  try {
    const run = spawnSync('ffmpeg', ['-hide_banner', '-loglevel', 'error', '-f', 'wav', '-i', 'pipe:0', ...codec, output], { input: wav });
    if (run.error !== undefined || run.status !== 0) {
      throw new Error(`the simulator's songSeconds needs ffmpeg on the PATH to encode its songs (${run.error?.message ?? run.stderr.toString().trim()})`);
    }
    return readFileSync(output);
  } finally {
    rmSync(folder, { recursive: true, force: true });
  }
}

/** How long the stock tone is. */
export const STOCK_SONG_SECONDS = 2;

/** Media files by link suffix. */
export type MediaLibrary = Readonly<Record<string, MediaFile>>;

const generated = new Map<number, MediaLibrary>();
let stock: MediaLibrary | undefined;

/** The files the simulator serves: the stock tone, or melodies of `songSeconds` (made once per length). */
export function mediaLibrary(songSeconds?: number): MediaLibrary {
  const pictures = () => ({
    '-img.jpg': { body: asset('cover.jpg'), contentType: 'image/jpeg' },
    '-video.mp4': { body: asset('clip.mp4'), contentType: 'video/mp4' },
  });
  if (songSeconds === undefined) {
    stock ??= {
      ...pictures(),
      '-wav.wav': { body: sineWav(), contentType: 'audio/wav' },
      '.m4a': { body: asset('tone.m4a'), contentType: 'audio/mp4' },
      '.mp3': { body: asset('tone.mp3'), contentType: 'audio/mpeg' },
    };
    return stock;
  }
  let files = generated.get(songSeconds);
  if (files === undefined) {
    const wav = melodyWav(songSeconds);
    files = {
      ...pictures(),
      '-wav.wav': { body: wav, contentType: 'audio/wav' },
      '.m4a': { body: encode(wav, 'm4a'), contentType: 'audio/mp4' },
      '.mp3': { body: encode(wav, 'mp3'), contentType: 'audio/mpeg' },
    };
    generated.set(songSeconds, files);
  }
  return files;
}

const FILE_NAME = /^[A-Za-z0-9_-]{1,100}(-wav\.wav|-img\.jpg|-video\.mp4|\.m4a|\.mp3)$/;

/**
 * The file for a media path of the spec's shapes (`/producer/<clip_id>.m4a`, `-wav.wav`,
 * `-img.jpg`, `-video.mp4`; also `.mp3` for mp3 downloads). Any clip id is served: the spec
 * promises links stay valid indefinitely, and a restarted simulator has forgotten its clips.
 */
export function mediaFor(pathname: string, library: MediaLibrary = mediaLibrary()): MediaFile | undefined {
  const match = /^\/(?:producer|sonic)\/([^/]+)$/.exec(pathname);
  const suffix = match?.[1] === undefined ? undefined : FILE_NAME.exec(match[1])?.[1];
  return suffix === undefined ? undefined : library[suffix];
}

/** Sends a media file, honouring HEAD and a single byte range (players seek with them). */
export function sendMedia(request: IncomingMessage, response: ServerResponse, file: MediaFile): number {
  const size = file.body.length;
  const headers: Record<string, string> = {
    'content-type': file.contentType,
    'accept-ranges': 'bytes',
    'cache-control': 'public, max-age=31536000, immutable',
  };
  const range = /^bytes=(\d*)-(\d*)$/.exec(request.headers.range ?? '');
  let status = 200;
  let body = file.body;
  if (range !== null && (range[1] !== '' || range[2] !== '')) {
    const start = range[1] === '' ? Math.max(0, size - Number(range[2])) : Number(range[1]);
    const end = range[1] === '' || range[2] === '' ? size - 1 : Math.min(Number(range[2]), size - 1);
    if (start > end || start >= size) {
      response.writeHead(416, { 'content-range': `bytes */${size}` }).end();
      return 416;
    }
    status = 206;
    body = file.body.subarray(start, end + 1);
    headers['content-range'] = `bytes ${start}-${end}/${size}`;
  }
  headers['content-length'] = String(body.length);
  response.writeHead(status, headers);
  response.end(request.method === 'HEAD' ? undefined : body);
  return status;
}
