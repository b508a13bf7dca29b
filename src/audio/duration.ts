/**
 * What an uploaded audio file is and how long it plays, read from its bytes: enough to
 * refuse a file that is not MP3 or WAV, or too short for a voice persona, before any credit
 * is reserved. Headers only; nothing is decoded.
 */

export type AudioFormat = 'mp3' | 'wav';

export interface AudioInfo {
  readonly format: AudioFormat;
  readonly durationSeconds: number;
}

/** The format and duration, or undefined when the bytes are neither a WAV nor an MP3 stream. */
export function probeAudio(bytes: Uint8Array): AudioInfo | undefined {
  const buffer = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  return probeWav(buffer) ?? probeMp3(buffer);
}

function probeWav(buffer: Buffer): AudioInfo | undefined {
  if (buffer.length < 12 || buffer.toString('ascii', 0, 4) !== 'RIFF' || buffer.toString('ascii', 8, 12) !== 'WAVE') {
    return undefined;
  }
  let byteRate: number | undefined;
  let offset = 12;
  while (offset + 8 <= buffer.length) {
    const id = buffer.toString('ascii', offset, offset + 4);
    const size = buffer.readUInt32LE(offset + 4);
    const body = offset + 8;
    if (id === 'fmt ' && body + 12 <= buffer.length) byteRate = buffer.readUInt32LE(body + 8);
    if (id === 'data') {
      if (!byteRate) return undefined;
      // A streamed WAV may say 0 or 0xFFFFFFFF; the bytes present are then the measure.
      const declared = size === 0 || size === 0xffffffff ? buffer.length - body : size;
      return { format: 'wav', durationSeconds: Math.min(declared, buffer.length - body) / byteRate };
    }
    offset = body + size + (size % 2);
  }
  return undefined;
}

// Bitrates in kbit/s, by [MPEG-1 | MPEG-2/2.5][layer I, II, III][index].
const BITRATES: Record<'v1' | 'v2', number[][]> = {
  v1: [
    [0, 32, 64, 96, 128, 160, 192, 224, 256, 288, 320, 352, 384, 416, 448],
    [0, 32, 48, 56, 64, 80, 96, 112, 128, 160, 192, 224, 256, 320, 384],
    [0, 32, 40, 48, 56, 64, 80, 96, 112, 128, 160, 192, 224, 256, 320],
  ],
  v2: [
    [0, 32, 48, 56, 64, 80, 96, 112, 128, 144, 160, 176, 192, 224, 256],
    [0, 8, 16, 24, 32, 40, 48, 56, 64, 80, 96, 112, 128, 144, 160],
    [0, 8, 16, 24, 32, 40, 48, 56, 64, 80, 96, 112, 128, 144, 160],
  ],
};
const SAMPLE_RATES: Record<number, number[]> = { 3: [44100, 48000, 32000], 2: [22050, 24000, 16000], 0: [11025, 12000, 8000] };

interface Frame {
  readonly length: number;
  readonly samples: number;
  readonly sampleRate: number;
}

/** The MPEG audio frame header at `offset`, or undefined when there is none. */
function frameAt(buffer: Buffer, offset: number): Frame | undefined {
  if (offset + 4 > buffer.length) return undefined;
  const header = buffer.readUInt32BE(offset);
  if ((header & 0xffe00000) >>> 0 !== 0xffe00000) return undefined;
  const version = (header >>> 19) & 0b11; // 3: MPEG-1, 2: MPEG-2, 0: MPEG-2.5
  const layerBits = (header >>> 17) & 0b11; // 3: layer I, 2: II, 1: III
  const bitrateIndex = (header >>> 12) & 0b1111;
  const rateIndex = (header >>> 10) & 0b11;
  const padding = (header >>> 9) & 1;
  if (version === 1 || layerBits === 0 || bitrateIndex === 0 || bitrateIndex === 15 || rateIndex === 3) return undefined;
  const layer = 4 - layerBits; // 1, 2 or 3
  const bitrate = BITRATES[version === 3 ? 'v1' : 'v2'][layer - 1]?.[bitrateIndex];
  const sampleRate = SAMPLE_RATES[version]?.[rateIndex];
  if (!bitrate || !sampleRate) return undefined;
  const samples = layer === 1 ? 384 : layer === 2 || version === 3 ? 1152 : 576;
  const length =
    layer === 1
      ? (Math.floor((12 * bitrate * 1000) / sampleRate) + padding) * 4
      : Math.floor(((samples / 8) * bitrate * 1000) / sampleRate) + padding;
  return length >= 4 ? { length, samples, sampleRate } : undefined;
}

function skipId3(buffer: Buffer): number {
  if (buffer.length < 10 || buffer.toString('latin1', 0, 3) !== 'ID3') return 0;
  const size = ((buffer[6]! & 0x7f) << 21) | ((buffer[7]! & 0x7f) << 14) | ((buffer[8]! & 0x7f) << 7) | (buffer[9]! & 0x7f);
  const footer = (buffer[5]! & 0x10) !== 0 ? 10 : 0;
  return 10 + size + footer;
}

/**
 * Walks the frames: a Xing/Info header's frame count when present, otherwise the sum of the
 * frames themselves (exact for CBR and VBR alike). Two frames in a row must agree before a
 * sync word is believed, so random bytes are not taken for MP3.
 */
function probeMp3(buffer: Buffer): AudioInfo | undefined {
  let offset = skipId3(buffer);
  // Find the first frame that is followed by another (or by the end of the file).
  let first: Frame | undefined;
  const searchLimit = Math.min(buffer.length, offset + 64 * 1024);
  for (; offset < searchLimit; offset += 1) {
    const frame = frameAt(buffer, offset);
    if (frame && (offset + frame.length === buffer.length || frameAt(buffer, offset + frame.length))) {
      first = frame;
      break;
    }
  }
  if (!first) return undefined;

  const xingFrames = xingFrameCount(buffer, offset, first);
  if (xingFrames !== undefined) {
    return { format: 'mp3', durationSeconds: (xingFrames * first.samples) / first.sampleRate };
  }
  let seconds = 0;
  let frames = 0;
  while (offset < buffer.length) {
    const frame = frameAt(buffer, offset);
    if (!frame) break;
    seconds += frame.samples / frame.sampleRate;
    frames += 1;
    offset += frame.length;
  }
  return frames >= 1 ? { format: 'mp3', durationSeconds: seconds } : undefined;
}

function xingFrameCount(buffer: Buffer, offset: number, frame: Frame): number | undefined {
  const end = Math.min(buffer.length, offset + frame.length);
  const slice = buffer.subarray(offset, end);
  for (const tag of ['Xing', 'Info']) {
    const at = slice.indexOf(tag, 4, 'latin1');
    if (at > 0 && at + 12 <= slice.length && (slice.readUInt32BE(at + 4) & 1) === 1) {
      const count = slice.readUInt32BE(at + 8);
      return count > 0 ? count : undefined;
    }
  }
  return undefined;
}
