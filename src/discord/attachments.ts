/**
 * Checks an audio attachment before anything is reserved: MP3 or WAV by name or type, not too
 * large, and (for voices) long enough, measured from the file itself.
 */
import type { Attachment } from 'discord.js';
import { probeAudio, type AudioFormat } from '../audio/duration.js';
import { localText } from '../i18n/index.js';
import { Refusal } from './errors.js';

export const AUDIO_LIMITS = {
  /** The largest file the bot reads and hands to the service. */
  maxBytes: 20 * 1024 * 1024,
  /** A voice persona needs a recording longer than this. */
  voiceMinSeconds: 10,
  downloadTimeoutMs: 20_000,
} as const;

const TYPES: Record<string, AudioFormat> = {
  'audio/mpeg': 'mp3',
  'audio/mp3': 'mp3',
  'audio/mpeg3': 'mp3',
  'audio/x-mpeg-3': 'mp3',
  'audio/wav': 'wav',
  'audio/x-wav': 'wav',
  'audio/wave': 'wav',
  'audio/vnd.wave': 'wav',
};

export interface CheckedAudio {
  readonly url: string;
  readonly format: AudioFormat;
  readonly durationSeconds: number;
}

function declaredFormat(attachment: Pick<Attachment, 'name' | 'contentType'>): AudioFormat | undefined {
  const type = attachment.contentType?.split(';')[0]?.trim().toLowerCase();
  if (type && TYPES[type]) return TYPES[type];
  const extension = attachment.name.toLowerCase().split('.').pop();
  return extension === 'mp3' || extension === 'wav' ? extension : undefined;
}

/** One decimal, as the member reads it ("21.0"); the unit is in the message. */
/** To one decimal, as a number: the catalogue writes it the reader's way ("20.5", "20,5"). */
function megabytes(bytes: number): number {
  return Math.round((bytes / (1024 * 1024)) * 10) / 10;
}

/**
 * @throws Refusal `invalid_input` with a sentence for the member when the file will not do.
 */
export async function checkAudioAttachment(
  attachment: Pick<Attachment, 'name' | 'contentType' | 'size' | 'url'>,
  options: { minSeconds?: number; fetch?: typeof globalThis.fetch } = {},
): Promise<CheckedAudio> {
  if (!declaredFormat(attachment)) {
    throw new Refusal('invalid_input', localText('attachment.notAudio'));
  }
  if (attachment.size > AUDIO_LIMITS.maxBytes) {
    throw new Refusal('invalid_input', localText('attachment.tooLarge', { size: megabytes(attachment.size), limit: megabytes(AUDIO_LIMITS.maxBytes) }));
  }
  const bytes = await download(attachment.url, options.fetch ?? globalThis.fetch);
  const info = await probeAudio(bytes);
  if (!info) throw new Refusal('invalid_input', localText('attachment.unreadable'));
  const minSeconds = options.minSeconds ?? 0;
  if (minSeconds > 0 && info.durationSeconds <= minSeconds) {
    throw new Refusal('invalid_input', localText('attachment.tooShort', { seconds: Math.round(info.durationSeconds * 10) / 10, min: minSeconds }));
  }
  return { url: attachment.url, format: info.format, durationSeconds: info.durationSeconds };
}

async function download(url: string, fetcher: typeof globalThis.fetch): Promise<Uint8Array> {
  let response: Response;
  try {
    response = await fetcher(url, { signal: AbortSignal.timeout(AUDIO_LIMITS.downloadTimeoutMs) });
  } catch {
    throw new Refusal('invalid_input', localText('attachment.downloadFailed'));
  }
  if (!response.ok || !response.body) {
    throw new Refusal('invalid_input', localText('attachment.downloadFailed'));
  }
  const chunks: Uint8Array[] = [];
  let total = 0;
  for await (const chunk of response.body) {
    total += chunk.byteLength;
    if (total > AUDIO_LIMITS.maxBytes) {
      throw new Refusal('invalid_input', localText('attachment.larger', { limit: megabytes(AUDIO_LIMITS.maxBytes) }));
    }
    chunks.push(chunk);
  }
  return Buffer.concat(chunks);
}
