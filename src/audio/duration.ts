/**
 * What an uploaded audio file is and how long it plays, read from its bytes by music-metadata:
 * enough to refuse a file that is not MP3 or WAV, or too short for a voice persona, before any
 * credit is reserved. Headers and frame headers only; nothing is decoded.
 */
import { parseBuffer, type IAudioMetadata } from 'music-metadata';

export type AudioFormat = 'mp3' | 'wav';

export interface AudioInfo {
  readonly format: AudioFormat;
  readonly durationSeconds: number;
}

/** How much of the file's end is read on its own to confirm an MPEG stream found by searching. */
const CONFIRM_BYTES = 16 * 1024;

/** The format and duration, or undefined when the bytes are neither a WAV nor an MP3 stream. */
export async function probeAudio(bytes: Uint8Array): Promise<AudioInfo | undefined> {
  const metadata = (await read(bytes)) ?? (await readMpegAfterJunk(bytes));
  const format = metadata && formatOf(metadata);
  const seconds = metadata?.format.duration;
  if (!format || seconds === undefined || !Number.isFinite(seconds) || seconds <= 0) return undefined;
  return { format, durationSeconds: seconds };
}

/** WAVE is WAV whatever its codec; MPEG audio is MP3 only when it is layer III. */
function formatOf(metadata: IAudioMetadata): AudioFormat | undefined {
  const { container, codec } = metadata.format;
  if (container === 'WAVE') return 'wav';
  if (container === 'MPEG' && codec?.endsWith('Layer 3')) return 'mp3';
  return undefined;
}

/**
 * An MP3 whose first frame comes after junk (garbage after its ID3 tag, a stream cut mid-frame)
 * has no signature to sniff, so it is read as MPEG, which searches for the frame sync. Noise
 * has sync words too: such a stream is believed only when the end of the file, read on its
 * own, is the same MPEG audio (version, layer, sample rate) as its start.
 */
async function readMpegAfterJunk(bytes: Uint8Array): Promise<IAudioMetadata | undefined> {
  const [whole, start, end] = await Promise.all([
    read(bytes, 'audio/mpeg'),
    read(bytes, 'audio/mpeg', { duration: false }),
    read(bytes.subarray(Math.max(0, bytes.byteLength - CONFIRM_BYTES)), 'audio/mpeg', { duration: false }),
  ]);
  const streamOf = (metadata: IAudioMetadata | undefined) =>
    metadata && formatOf(metadata) === 'mp3' ? `${metadata.format.codec} ${metadata.format.sampleRate}` : undefined;
  const stream = streamOf(start);
  return stream !== undefined && stream === streamOf(end) ? whole : undefined;
}

/**
 * Undefined when music-metadata cannot read the bytes at all. With `duration`, a VBR stream
 * without a Xing header is measured by counting its frames rather than guessed from its start.
 */
async function read(
  bytes: Uint8Array,
  mimeType?: string,
  options: { duration: boolean } = { duration: true },
): Promise<IAudioMetadata | undefined> {
  try {
    return await parseBuffer(bytes, { size: bytes.byteLength, ...(mimeType && { mimeType }) }, { ...options, skipCovers: true });
  } catch {
    return undefined;
  }
}
