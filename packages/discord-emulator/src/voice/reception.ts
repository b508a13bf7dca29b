/**
 * What the emulator hears of the bot in one guild: Opus frames decoded to 48 kHz stereo, counted,
 * timed and measured (silence, gaps, frame intervals, a loudness envelope), and handed to listeners.
 */
import OpusScript from 'opusscript';
import type { RtpHeader } from './rtp.js';

export const SAMPLE_RATE = 48_000;
export const CHANNELS = 2;
/** Samples per channel in one 20 ms frame. */
export const FRAME_SAMPLES = 960;
/** Longer than this between two frames while speaking is a gap. */
export const GAP_THRESHOLD_MS = 60;
/** The envelope's block: RMS per 100 ms of audio. */
export const ENVELOPE_BLOCK_MS = 100;
/** A frame whose RMS is below this (about -60 dBFS) is silence. */
const SILENCE_RMS = 0.001;
/** Discord's silence frame, sent (five times) when a client stops speaking. */
const SILENCE_FRAME = Buffer.from([0xf8, 0xff, 0xfe]);

/** A snapshot of what the emulator heard of the bot in a guild since the last reset. */
export interface VoiceReception {
  guildId: string;
  /** The voice channel the bot's voice connection is in, or null. */
  channelId: string | null;
  /** Whether the bot's voice connection is up (identified, protocol selected). */
  connected: boolean;
  /** The bot's last Speaking (op 5): microphone bit set. */
  speaking: boolean;
  /** The transport mode the bot chose, and the DAVE protocol version of the session (0: none). */
  encryptionMode: string | null;
  daveProtocolVersion: number;
  /** Frames heard and decoded (dropped ones not counted). */
  frames: number;
  /** Seconds of audio decoded (frames × their duration). */
  seconds: number;
  silentFrames: number;
  /** silentFrames / frames (0 when nothing was heard). */
  silenceShare: number;
  /** Intervals over 60 ms between two frames while the bot said it was speaking. */
  gaps: number;
  /**
   * Consecutive frames within a speaking run whose RTP header did not step by one frame: sequence
   * by 1 and timestamp by 960 (20 ms of audio at 48 kHz). 0 when the stream says 20 ms a frame.
   */
  rtpDiscontinuities: number;
  /** Every interval between consecutive frames within a speaking run, in ms (arrival times on the emulator clock). */
  intervalsMs: number[];
  /** Percentiles of `intervalsMs` (0 when empty); jitter is how far they stray from 20 ms. */
  intervalP50Ms: number;
  intervalP99Ms: number;
  intervalMaxMs: number;
  /** RMS (0–1, full scale 1) per 100 ms of decoded audio, in order (Discord's silence frames left out). */
  envelope: number[];
  /** Frames dropped because the bot lacks Speak in the channel. */
  droppedNoSpeak: number;
  /** Frames that did not decrypt (transport or DAVE), or did not decode as Opus. */
  undecodable: number;
  /** Frames end-to-end encrypted with DAVE, and frames that came in the clear (silence frames aside). */
  daveFrames: number;
  plainFrames: number;
  /** Emulator clock times (ms) of the first and the last frame heard. */
  firstFrameAt: number | null;
  lastFrameAt: number | null;
}

export type VoiceAudioListener = (pcm: Int16Array) => void;

export function percentile(sorted: readonly number[], p: number): number {
  if (sorted.length === 0) return 0;
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)] ?? 0;
}

/** Per-guild counters and the Opus decoder; one per guild, kept across voice connections until reset. */
export class GuildReception {
  readonly guildId: string;
  channelId: string | null = null;
  connected = false;
  speaking = false;
  encryptionMode: string | null = null;
  daveProtocolVersion = 0;
  readonly listeners = new Set<VoiceAudioListener>();
  /** Called after every frame counted (decoded or not), with the count so far. */
  readonly frameWatchers = new Set<(frames: number) => void>();
  #decoder: OpusScript | undefined;
  readonly #decode: boolean;
  #counts = GuildReception.#zero();
  #intervals: number[] = [];
  #envelope: number[] = [];
  #blockSquares = 0;
  #blockSamples = 0;
  /** Arrival time (emulator clock, monotonic) and RTP header of the last frame of the current speaking run. */
  #lastArrival: number | undefined;
  #lastRtp: Pick<RtpHeader, 'sequence' | 'timestamp'> | undefined;
  readonly #now: () => number;

  /** `now` times arrivals in ms: the emulator clock's monotonic reading, so a test can advance it. */
  constructor(guildId: string, decode: boolean, now: () => number) {
    this.guildId = guildId;
    this.#decode = decode;
    this.#now = now;
  }

  static #zero() {
    return { frames: 0, silentFrames: 0, gaps: 0, rtpDiscontinuities: 0, droppedNoSpeak: 0, undecodable: 0, daveFrames: 0, plainFrames: 0, firstFrameAt: null as number | null, lastFrameAt: null as number | null };
  }

  /** Frames heard since the last reset (cheaper than a snapshot). */
  get frames(): number {
    return this.#counts.frames;
  }

  /** A new speaking run starts (Speaking on, or a new connection): the next interval is not measured. */
  startRun(): void {
    this.#lastArrival = undefined;
    this.#lastRtp = undefined;
  }

  dropped(reason: 'no-speak' | 'undecodable'): void {
    if (reason === 'no-speak') this.#counts.droppedNoSpeak += 1;
    else this.#counts.undecodable += 1;
  }

  /**
   * One Opus frame heard at `clockNow` (emulator clock) under `rtp`, having arrived at `arrival`
   * (the monotonic reading `now` gives, taken when the packet came, before its decryption);
   * `dave` says whether it came end-to-end encrypted.
   */
  frame(opus: Buffer, rtp: Pick<RtpHeader, 'sequence' | 'timestamp'>, clockNow: number, dave: boolean, arrival = this.#now()): void {
    let pcm: Int16Array;
    const silenceFrame = opus.equals(SILENCE_FRAME);
    if (silenceFrame) {
      pcm = new Int16Array(FRAME_SAMPLES * CHANNELS);
    } else if (this.#decode) {
      try {
        this.#decoder ??= new OpusScript(SAMPLE_RATE, CHANNELS, OpusScript.Application.AUDIO);
        const out = this.#decoder.decode(opus);
        pcm = new Int16Array(out.buffer, out.byteOffset, out.byteLength / 2).slice();
      } catch {
        this.#counts.undecodable += 1;
        return;
      }
      if (dave) this.#counts.daveFrames += 1;
      else this.#counts.plainFrames += 1;
    } else {
      // Not decoding (benchmarks): count a frame of the standard length, loudness unknown.
      pcm = new Int16Array(0);
      if (dave) this.#counts.daveFrames += 1;
      else this.#counts.plainFrames += 1;
    }
    const counts = this.#counts;
    counts.frames += 1;
    counts.firstFrameAt ??= clockNow;
    counts.lastFrameAt = clockNow;
    if (this.#lastArrival !== undefined) {
      const interval = arrival - this.#lastArrival;
      this.#intervals.push(interval);
      if (this.speaking && interval > GAP_THRESHOLD_MS) counts.gaps += 1;
    }
    this.#lastArrival = arrival;
    if (this.#lastRtp !== undefined) {
      const sequenceStep = (rtp.sequence - this.#lastRtp.sequence) & 0xffff;
      const timestampStep = (rtp.timestamp - this.#lastRtp.timestamp) >>> 0;
      if (sequenceStep !== 1 || timestampStep !== FRAME_SAMPLES) counts.rtpDiscontinuities += 1;
    }
    this.#lastRtp = { sequence: rtp.sequence, timestamp: rtp.timestamp };
    for (const watcher of this.frameWatchers) watcher(counts.frames);
    if (pcm.length === 0) return;
    let squares = 0;
    for (const sample of pcm) squares += sample * sample;
    const rms = Math.sqrt(squares / pcm.length) / 32768;
    if (rms < SILENCE_RMS) counts.silentFrames += 1;
    // Silence frames mark the end of speech: not part of what was played.
    if (!silenceFrame) this.#addToEnvelope(squares, pcm.length);
    for (const listener of this.listeners) listener(pcm);
  }

  #addToEnvelope(squares: number, samples: number): void {
    this.#blockSquares += squares;
    this.#blockSamples += samples;
    const blockSamples = (SAMPLE_RATE * CHANNELS * ENVELOPE_BLOCK_MS) / 1000;
    if (this.#blockSamples >= blockSamples) {
      this.#envelope.push(Math.sqrt(this.#blockSquares / this.#blockSamples) / 32768);
      this.#blockSquares = 0;
      this.#blockSamples = 0;
    }
  }

  reset(): void {
    this.#counts = GuildReception.#zero();
    this.#intervals = [];
    this.#envelope = [];
    this.#blockSquares = 0;
    this.#blockSamples = 0;
    this.#lastArrival = undefined;
    this.#lastRtp = undefined;
  }

  snapshot(): VoiceReception {
    const counts = this.#counts;
    const sorted = [...this.#intervals].sort((a, b) => a - b);
    return {
      guildId: this.guildId,
      channelId: this.channelId,
      connected: this.connected,
      speaking: this.speaking,
      encryptionMode: this.encryptionMode,
      daveProtocolVersion: this.daveProtocolVersion,
      frames: counts.frames,
      seconds: (counts.frames * FRAME_SAMPLES) / SAMPLE_RATE,
      silentFrames: counts.silentFrames,
      silenceShare: counts.frames === 0 ? 0 : counts.silentFrames / counts.frames,
      gaps: counts.gaps,
      rtpDiscontinuities: counts.rtpDiscontinuities,
      intervalsMs: [...this.#intervals],
      intervalP50Ms: percentile(sorted, 50),
      intervalP99Ms: percentile(sorted, 99),
      intervalMaxMs: sorted.at(-1) ?? 0,
      envelope: [...this.#envelope],
      droppedNoSpeak: counts.droppedNoSpeak,
      undecodable: counts.undecodable,
      daveFrames: counts.daveFrames,
      plainFrames: counts.plainFrames,
      firstFrameAt: counts.firstFrameAt,
      lastFrameAt: counts.lastFrameAt,
    };
  }

  close(): void {
    this.#decoder?.delete();
    this.#decoder = undefined;
  }
}

/** The loudness envelope of PCM (16-bit, interleaved): RMS per 100 ms, as {@link VoiceReception.envelope}. */
export function pcmEnvelope(pcm: Int16Array, sampleRate = SAMPLE_RATE, channels = CHANNELS): number[] {
  const block = (sampleRate * channels * ENVELOPE_BLOCK_MS) / 1000;
  const envelope: number[] = [];
  for (let start = 0; start + block <= pcm.length; start += block) {
    let squares = 0;
    for (let i = start; i < start + block; i += 1) squares += pcm[i]! * pcm[i]!;
    envelope.push(Math.sqrt(squares / block) / 32768);
  }
  return envelope;
}

export interface EnvelopeComparison {
  /** Seconds of sound (leading and trailing silence trimmed) in each. */
  heardSeconds: number;
  referenceSeconds: number;
  /** heardSeconds / referenceSeconds. */
  durationRatio: number;
  /** Pearson correlation of the two envelopes in dB, at the best offset (blocks, heard later when positive). */
  correlation: number;
  offsetBlocks: number;
  /** Duration within `durationTolerance` and correlation at least `minCorrelation`. */
  matches: boolean;
}

const QUIET = 0.003;

function trimSilence(envelope: readonly number[]): number[] {
  let start = 0;
  let end = envelope.length;
  while (start < end && envelope[start]! < QUIET) start += 1;
  while (end > start && envelope[end - 1]! < QUIET) end -= 1;
  return envelope.slice(start, end);
}

function correlate(a: readonly number[], b: readonly number[]): number {
  const n = Math.min(a.length, b.length);
  if (n < 2) return 0;
  let meanA = 0;
  let meanB = 0;
  for (let i = 0; i < n; i += 1) {
    meanA += a[i]!;
    meanB += b[i]!;
  }
  meanA /= n;
  meanB /= n;
  let cov = 0;
  let varA = 0;
  let varB = 0;
  for (let i = 0; i < n; i += 1) {
    const da = a[i]! - meanA;
    const db = b[i]! - meanB;
    cov += da * db;
    varA += da * da;
    varB += db * db;
  }
  return varA === 0 || varB === 0 ? 0 : cov / Math.sqrt(varA * varB);
}

/**
 * Whether what was heard is the reference: leading and trailing silence trimmed from both, the
 * durations within `durationTolerance` (5 %), and the envelopes (in dB) correlated at least
 * `minCorrelation` (0.9) at the best offset within ±`maxOffsetBlocks` (10, one second).
 */
export function compareEnvelope(
  heard: readonly number[],
  reference: readonly number[],
  options: { durationTolerance?: number; minCorrelation?: number; maxOffsetBlocks?: number } = {},
): EnvelopeComparison {
  const tolerance = options.durationTolerance ?? 0.05;
  const minCorrelation = options.minCorrelation ?? 0.9;
  const maxOffset = options.maxOffsetBlocks ?? 10;
  const toDb = (value: number): number => 20 * Math.log10(value + 1e-5);
  const a = trimSilence(heard).map(toDb);
  const b = trimSilence(reference).map(toDb);
  let best = -1;
  let bestOffset = 0;
  // Nearest offsets first, so that a periodic envelope keeps the smallest of equally good ones.
  const offsets = Array.from({ length: 2 * maxOffset + 1 }, (_, i) => (i % 2 === 0 ? i / 2 : -(i + 1) / 2));
  for (const offset of offsets) {
    const value = offset >= 0 ? correlate(a.slice(offset), b) : correlate(a, b.slice(-offset));
    if (value > best + 1e-6) {
      best = value;
      bestOffset = offset;
    }
  }
  const heardSeconds = (a.length * ENVELOPE_BLOCK_MS) / 1000;
  const referenceSeconds = (b.length * ENVELOPE_BLOCK_MS) / 1000;
  const durationRatio = referenceSeconds === 0 ? 0 : heardSeconds / referenceSeconds;
  return {
    heardSeconds,
    referenceSeconds,
    durationRatio,
    correlation: best,
    offsetBlocks: bestOffset,
    matches: Math.abs(durationRatio - 1) <= tolerance && best >= minCorrelation,
  };
}
