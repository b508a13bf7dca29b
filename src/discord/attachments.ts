/**
 * Checks an audio attachment before anything is reserved, in two steps: what it declares (MP3
 * or WAV by name or type, not too large, kept on Discord's CDN), which costs nothing and comes
 * first; then, once the member is admitted, the file itself (read within a byte cap, long
 * enough for a voice).
 */
import type { Attachment } from 'discord.js';
import { DownloadError, downloadCapped } from '../audio/download.js';
import { probeAudio, type AudioFormat } from '../audio/duration.js';
import { localText } from '../i18n/index.js';
import { Refusal } from './errors.js';

export const AUDIO_LIMITS = {
  /** The largest file the bot reads and hands to the service. */
  maxBytes: 20 * 1024 * 1024,
  /** A voice persona needs a recording longer than this. */
  voiceMinSeconds: 10,
  downloadTimeoutMs: 20_000,
  /** Attachments one process reads at once; more wait for a turn, at most `downloadTimeoutMs`. */
  maxConcurrentDownloads: 4,
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

/** To one decimal, as a number: the catalogue writes it the reader's way ("20.5", "20,5"). */
function megabytes(bytes: number): number {
  return Math.round((bytes / (1024 * 1024)) * 10) / 10;
}

/** An attachment whose declarations passed: the file itself is not read yet. */
export interface VettedAudio {
  readonly url: string;
}

/**
 * Whether `url` lies under one of `cdnUrls` (DISCORD_CDN_URLS): the same scheme, host and port,
 * and a path inside the base's.
 */
export function isOnCdn(url: string, cdnUrls: readonly string[]): boolean {
  let address: URL;
  try {
    address = new URL(url);
  } catch {
    return false;
  }
  if (address.username !== '' || address.password !== '') return false;
  return cdnUrls.some((base) => {
    const cdn = new URL(base);
    const prefix = cdn.pathname.replace(/\/+$/, '');
    return address.origin === cdn.origin && address.pathname.startsWith(`${prefix}/`);
  });
}

/**
 * What the attachment declares: checked before the member is admitted, as it costs nothing.
 *
 * @throws Refusal `invalid_input` with a sentence for the member when the file will not do.
 */
export function vetAudioAttachment(attachment: Pick<Attachment, 'name' | 'contentType' | 'size' | 'url'>, cdnUrls: readonly string[]): VettedAudio {
  if (!declaredFormat(attachment)) {
    throw new Refusal('invalid_input', localText('attachment.notAudio'));
  }
  if (attachment.size > AUDIO_LIMITS.maxBytes) {
    throw new Refusal('invalid_input', localText('attachment.tooLarge', { size: megabytes(attachment.size), limit: megabytes(AUDIO_LIMITS.maxBytes) }));
  }
  if (!isOnCdn(attachment.url, cdnUrls)) {
    throw new Refusal('invalid_input', localText('attachment.notFromDiscord'));
  }
  return { url: attachment.url };
}

/**
 * Reads a vetted attachment and measures it: call only once the member is admitted, so that
 * nobody makes the bot download for free.
 *
 * @throws Refusal `invalid_input` with a sentence for the member when the file will not do.
 */
export async function readAudioAttachment(vetted: VettedAudio, options: { minSeconds?: number; fetch?: typeof globalThis.fetch } = {}): Promise<CheckedAudio> {
  const bytes = await inDownloadTurn(() => download(vetted.url, options.fetch ?? globalThis.fetch));
  const info = await probeAudio(bytes);
  if (!info) throw new Refusal('invalid_input', localText('attachment.unreadable'));
  const minSeconds = options.minSeconds ?? 0;
  if (minSeconds > 0 && info.durationSeconds <= minSeconds) {
    throw new Refusal('invalid_input', localText('attachment.tooShort', { seconds: Math.round(info.durationSeconds * 10) / 10, min: minSeconds }));
  }
  return { url: vetted.url, format: info.format, durationSeconds: info.durationSeconds };
}

/** Downloads under way in this process, and those waiting for a turn. */
const turns = { reading: 0, waiting: [] as Array<() => void> };

/** Runs `read` when fewer than `maxConcurrentDownloads` run; a wait longer than `downloadTimeoutMs` is refused. */
async function inDownloadTurn<T>(read: () => Promise<T>): Promise<T> {
  if (turns.reading < AUDIO_LIMITS.maxConcurrentDownloads) {
    turns.reading += 1;
  } else {
    // A turn is handed over by the download that ends, so `reading` stays as it is.
    await new Promise<void>((resolve, reject) => {
      const turn = () => {
        clearTimeout(timer);
        resolve();
      };
      const timer = setTimeout(() => {
        turns.waiting.splice(turns.waiting.indexOf(turn), 1);
        reject(new Refusal('invalid_input', localText('attachment.busy')));
      }, AUDIO_LIMITS.downloadTimeoutMs);
      turns.waiting.push(turn);
    });
  }
  try {
    return await read();
  } finally {
    const next = turns.waiting.shift();
    if (next) next();
    else turns.reading -= 1;
  }
}

async function download(url: string, fetcher: typeof globalThis.fetch): Promise<Uint8Array> {
  try {
    const { data } = await downloadCapped(url, { maxBytes: AUDIO_LIMITS.maxBytes, timeoutMs: AUDIO_LIMITS.downloadTimeoutMs, redirects: 'refuse' }, fetcher);
    return data;
  } catch (error) {
    if (error instanceof DownloadError && error.reason === 'too_large') {
      throw new Refusal('invalid_input', localText('attachment.larger', { limit: megabytes(AUDIO_LIMITS.maxBytes) }));
    }
    throw new Refusal('invalid_input', localText('attachment.downloadFailed'));
  }
}
