/** Uploaded files: their content types, their bytes on the emulator's CDN, and the attachment objects that point there. */
import type { APIAttachment } from 'discord-api-types/v10';
import type { EmulatorAttachment } from '../types.js';
import type { Upload } from './records.js';
import type { StoreState } from './state.js';

const CONTENT_TYPES: Record<string, string> = {
  mp3: 'audio/mpeg',
  wav: 'audio/wav',
  ogg: 'audio/ogg',
  flac: 'audio/flac',
  m4a: 'audio/mp4',
  mp4: 'video/mp4',
  webm: 'video/webm',
  png: 'image/png',
  jpg: 'image/jpeg',
  jpeg: 'image/jpeg',
  gif: 'image/gif',
  webp: 'image/webp',
  txt: 'text/plain; charset=utf-8',
  json: 'application/json; charset=utf-8',
};

/** Guesses a content type from a file name, as Discord does for uploads without a usable one. */
export function contentTypeFor(filename: string, declared?: string): string {
  if (declared && declared !== 'application/octet-stream') return declared;
  const extension = filename.split('.').pop()?.toLowerCase() ?? '';
  return CONTENT_TYPES[extension] ?? 'application/octet-stream';
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** Stores bytes at the emulator's CDN route and returns the attachment object. */
export function storeAttachment(
  state: StoreState,
  channelId: string,
  upload: { filename: string; contentType?: string; data: Buffer; description?: string; url?: string; redirectTo?: string },
  ephemeral = false,
): EmulatorAttachment {
  const id = state.ids.next();
  const path = `/attachments/${channelId}/${id}/${encodeURIComponent(upload.filename)}`;
  const contentType = contentTypeFor(upload.filename, upload.contentType);
  state.cdn.set(path, { data: upload.data, contentType, ...(upload.redirectTo !== undefined && { redirectTo: upload.redirectTo }) });
  const url = upload.url ?? `${state.cdnBase()}${path}`;
  return {
    id,
    filename: upload.filename,
    size: upload.data.length,
    url,
    proxy_url: url,
    content_type: contentType,
    ...(upload.description ? { description: upload.description } : {}),
    ...(ephemeral ? { ephemeral: true } : {}),
    data: upload.data,
  };
}

/** New attachments for uploaded files; `requested` (the body's `attachments`) names and describes them by index. */
export function uploadedAttachments(
  state: StoreState,
  channelId: string,
  requested: unknown,
  uploads: Upload[],
  files: Map<string, Buffer>,
): APIAttachment[] {
  const metadata = Array.isArray(requested) ? requested.filter(isRecord) : [];
  return uploads.map((upload) => {
    const meta = metadata.find((entry) => upload.index !== null && String(entry.id) === String(upload.index));
    const { data, ...attachment } = storeAttachment(state, channelId, {
      filename: typeof meta?.filename === 'string' ? meta.filename : upload.filename,
      contentType: upload.contentType,
      data: upload.data,
      description: typeof meta?.description === 'string' ? meta.description : undefined,
    });
    files.set(attachment.id, data);
    return attachment;
  });
}

