/**
 * The voice side of the engine: @discordjs/voice connections, their audio players and the
 * ffmpeg decoders, one set per guild. It runs on the voice thread (thread.ts), so that neither
 * a burst of commands nor a join's DAVE key exchange delays another guild's next frame, and
 * speaks only in the messages of protocol.ts.
 */
import {
  AudioPlayerStatus,
  NoSubscriberBehavior,
  StreamType,
  VoiceConnectionStatus,
  createAudioPlayer,
  createAudioResource,
  entersState,
  joinVoiceChannel,
  type AudioPlayer,
  type AudioResource,
  type DiscordGatewayAdapterLibraryMethods,
  type VoiceConnection,
} from '@discordjs/voice';
import { spawnDecoder, type EncodedStream } from '../ffmpeg.js';
import { createMediaRelay, type RelayedSong } from '../relay.js';
import type { FromVoice, ToVoice, VoiceCall } from './protocol.js';

interface Line {
  readonly guildId: string;
  readonly connection: VoiceConnection;
  readonly audio: AudioPlayer;
  adapter?: DiscordGatewayAdapterLibraryMethods;
  resource?: AudioResource;
  /** Where the resource playing started in its song (a seek), in ms. */
  startMs: number;
  decoder?: { readonly process: EncodedStream; readonly song: RelayedSong; readonly exited: Promise<{ code: number | null; error: string }> };
  playId: number;
  left: boolean;
}

/** How long the end of a song waits for its decoder's exit status. */
const EXIT_WAIT_MS = 2_000;

export function createVoiceCore(post: (message: FromVoice) => void): { receive(message: ToVoice): void; close(): void } {
  const lines = new Map<string, Line>();
  /** The adapter's methods, handed over while joinVoiceChannel runs (before its line exists). */
  let pendingAdapter: DiscordGatewayAdapterLibraryMethods | undefined;
  const log = (level: 'debug' | 'info' | 'warn', msg: string, fields: Record<string, unknown>) => post({ type: 'log', level, msg, fields });
  // The decoders read songs through it (relay.ts): nothing is handled before it listens.
  const relay = createMediaRelay();
  let waiting: ToVoice[] | undefined = [];
  void relay.listening.then(() => {
    const queued = waiting ?? [];
    waiting = undefined;
    for (const message of queued) handle(message);
  });

  function stopDecoder(line: Line): void {
    const decoder = line.decoder;
    line.decoder = undefined;
    if (decoder && decoder.process.exitCode === null) decoder.process.kill('SIGKILL');
    decoder?.song.close();
  }

  async function songEnded(line: Line): Promise<void> {
    if (line.left) return;
    const playId = line.playId;
    const playedMs = line.resource?.playbackDuration ?? 0;
    const decoder = line.decoder;
    const exit = decoder ? await Promise.race([decoder.exited, new Promise<undefined>((resolve) => setTimeout(() => resolve(undefined), EXIT_WAIT_MS))]) : undefined;
    if (line.left || line.playId !== playId) return;
    post({ type: 'ended', guildId: line.guildId, end: { playId, playedMs, exitCode: exit?.code ?? null, error: exit?.error ?? '' } });
  }

  /** Discord's advice: a disconnection that does not start reconnecting within 5 s is final. */
  async function disconnected(line: Line): Promise<void> {
    try {
      await Promise.race([entersState(line.connection, VoiceConnectionStatus.Signalling, 5_000), entersState(line.connection, VoiceConnectionStatus.Connecting, 5_000)]);
    } catch {
      if (!line.left) post({ type: 'gone', guildId: line.guildId });
    }
  }

  function join(guildId: string, channelId: string): void {
    if (lines.has(guildId)) return;
    const connection = joinVoiceChannel({
      guildId,
      channelId,
      selfDeaf: true,
      daveEncryption: true,
      // The gateway is on the main thread: Update Voice State goes there, its answers come back.
      adapterCreator: (methods) => {
        const current = lines.get(guildId);
        if (current) current.adapter = methods;
        else pendingAdapter = methods;
        return {
          sendPayload: (payload) => {
            post({ type: 'payload', guildId, payload });
            return true;
          },
          destroy: () => {
            const current = lines.get(guildId);
            if (current) current.adapter = undefined;
          },
        };
      },
    });
    // Paused frames are not sent while nobody could hear; playing resumes where it was.
    const audio = createAudioPlayer({ behaviors: { noSubscriber: NoSubscriberBehavior.Pause } });
    connection.subscribe(audio);
    const joined: Line = { guildId, connection, audio, playId: 0, startMs: 0, left: false, ...(pendingAdapter && { adapter: pendingAdapter }) };
    pendingAdapter = undefined;
    lines.set(guildId, joined);
    audio.on('stateChange', (before, after) => log('debug', 'voice player state', { guildId, from: before.status, to: after.status }));
    audio.on('error', (error) => log('warn', 'voice resource failed', { guildId, error: error.message }));
    audio.on(AudioPlayerStatus.Idle, () => void songEnded(joined));
    connection.on(VoiceConnectionStatus.Disconnected, () => void disconnected(joined));
    connection.on('error', (error) => log('warn', 'voice connection error', { guildId, error: error.message }));
  }

  function play(line: Line, call: Extract<VoiceCall, { op: 'play' }>): void {
    stopDecoder(line);
    let song: RelayedSong;
    try {
      song = relay.open(call.url, (reason) => log('warn', 'voice song cut off by the media relay', { guildId: line.guildId, reason }));
    } catch (error) {
      const reason = error instanceof Error ? error.message : String(error);
      log('warn', 'voice song not played', { guildId: line.guildId, error: reason });
      line.playId = call.playId;
      line.resource = undefined;
      // A song still sounding ends now, and its end reports this play's; else the end is told here.
      if (!line.audio.stop(true)) post({ type: 'ended', guildId: line.guildId, end: { playId: call.playId, playedMs: 0, exitCode: -1, error: reason } });
      return;
    }
    const process = spawnDecoder(call.ffmpegPath, song.url, call.libopus, { startMs: call.startMs ?? 0, volume: call.volume ?? 100 });
    let error = '';
    process.stderr.setEncoding('utf8').on('data', (chunk: string) => (error = `${error}${chunk}`.slice(-500)));
    const exited = new Promise<{ code: number | null; error: string }>((resolve) => {
      process.on('error', (spawnError) => resolve({ code: -1, error: spawnError.message }));
      process.on('close', (code) => resolve({ code, error }));
    });
    void exited.then(() => song.close());
    process.stdout.on('error', () => {});
    line.playId = call.playId;
    line.decoder = { process, song, exited };
    line.startMs = call.startMs ?? 0;
    line.resource = createAudioResource(process.stdout, { inputType: call.libopus ? StreamType.OggOpus : StreamType.Raw });
    line.audio.play(line.resource);
  }

  function leave(line: Line): void {
    line.left = true;
    lines.delete(line.guildId);
    stopDecoder(line);
    line.audio.stop(true);
    line.connection.destroy();
  }

  async function run(call: VoiceCall): Promise<unknown> {
    if (call.op === 'join') return join(call.guildId, call.channelId);
    const line = lines.get(call.guildId);
    if (!line) return call.op === 'playback' ? 0 : false;
    switch (call.op) {
      case 'play':
        return play(line, call);
      case 'pause':
      case 'unpause':
        // A song still buffering cannot be paused yet: wait for its first frames.
        if (line.audio.state.status === AudioPlayerStatus.Buffering) await entersState(line.audio, AudioPlayerStatus.Playing, 5_000).catch(() => {});
        return call.op === 'pause' ? line.audio.pause(true) : line.audio.unpause();
      case 'stop-song': {
        stopDecoder(line);
        if (line.audio.state.status === AudioPlayerStatus.Idle) return false;
        line.audio.stop(true);
        return true;
      }
      case 'playback':
        return line.resource ? line.startMs + line.resource.playbackDuration : 0;
      case 'leave':
        return leave(line);
    }
  }

  function handle(message: ToVoice): void {
    switch (message.type) {
      case 'call':
        run(message.call).then(
          (value) => post({ type: 'result', id: message.id, value }),
          (error: unknown) => post({ type: 'result', id: message.id, error: error instanceof Error ? error.message : String(error) }),
        );
        return;
      case 'voice-server':
        lines.get(message.guildId)?.adapter?.onVoiceServerUpdate(message.data);
        return;
      case 'voice-state':
        lines.get(message.guildId)?.adapter?.onVoiceStateUpdate(message.data);
        return;
      case 'adapter-destroyed':
        lines.get(message.guildId)?.adapter?.destroy();
        return;
    }
  }

  return {
    receive(message) {
      if (waiting) waiting.push(message);
      else handle(message);
    },
    close() {
      waiting = undefined;
      for (const line of [...lines.values()]) leave(line);
      void relay.close();
    },
  };
}
