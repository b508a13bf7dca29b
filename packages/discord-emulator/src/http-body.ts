import type { IncomingMessage } from 'node:http';
import type { Upload } from './store/records.js';

/** A request body as the REST layer sees it. */
export interface ParsedBody {
  kind: 'none' | 'json' | 'multipart' | 'form' | 'other';
  contentType: string;
  /** The JSON body, or the `payload_json` part (merged with plain form fields) of a multipart body. */
  json: unknown;
  /** The fields of a form-encoded body (OAuth2's token routes), the first value of a repeated one. */
  form?: Record<string, string>;
  uploads: Upload[];
  hasPayloadJson: boolean;
  invalidJson: boolean;
}

export class BodyTooLargeError extends Error {
  constructor() {
    super('request body too large');
  }
}

/** A multipart body that cannot be read as one. */
export class MalformedBodyError extends Error {
  constructor(cause: unknown) {
    super('malformed multipart body', { cause });
  }
}

/** Reads the whole body, refusing more than `maxBytes`. */
export async function readBody(request: IncomingMessage, maxBytes: number): Promise<Buffer> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of request) {
    const buffer = Buffer.isBuffer(chunk) ? chunk : Buffer.from(chunk as string);
    size += buffer.length;
    if (size > maxBytes) throw new BodyTooLargeError();
    chunks.push(buffer);
  }
  return Buffer.concat(chunks);
}

const FILE_FIELD = /^files\[(\d+)\]$|^file(\d*)$/;

/** Parses JSON, multipart/form-data (`payload_json` plus `files[n]`) and form-encoded (OAuth2's) bodies. */
export async function parseBody(raw: Buffer, contentTypeHeader: string | undefined): Promise<ParsedBody> {
  const contentType = (contentTypeHeader ?? '').split(';')[0]?.trim().toLowerCase() ?? '';
  const empty: ParsedBody = { kind: 'none', contentType, json: undefined, uploads: [], hasPayloadJson: false, invalidJson: false };
  if (raw.length === 0) return empty;
  if (contentType === 'application/json' || contentType === '') {
    try {
      return { ...empty, kind: 'json', contentType: contentType || 'application/json', json: JSON.parse(raw.toString('utf8')) };
    } catch {
      return { ...empty, kind: 'json', invalidJson: true };
    }
  }
  if (contentType === 'multipart/form-data') {
    const form = await new Request('http://emulator.invalid/', {
      method: 'POST',
      headers: { 'content-type': contentTypeHeader ?? contentType },
      body: raw,
    })
      .formData()
      .catch((error: unknown) => {
        throw new MalformedBodyError(error);
      });
    const fields: Record<string, unknown> = {};
    const uploads: Upload[] = [];
    let payload: unknown;
    let hasPayloadJson = false;
    let invalidJson = false;
    for (const [name, value] of form.entries()) {
      if (typeof value === 'string') {
        if (name === 'payload_json') {
          hasPayloadJson = true;
          try {
            payload = JSON.parse(value);
          } catch {
            invalidJson = true;
          }
        } else {
          fields[name] = value;
        }
        continue;
      }
      const match = FILE_FIELD.exec(name);
      const index = match ? Number(match[1] ?? (match[2] === '' ? 0 : match[2])) : null;
      uploads.push({
        field: name,
        index,
        filename: value.name || name,
        contentType: value.type,
        data: Buffer.from(await value.arrayBuffer()),
      });
    }
    const json = hasPayloadJson && typeof payload === 'object' && payload !== null ? { ...fields, ...payload } : { ...fields };
    return { kind: 'multipart', contentType, json, uploads, hasPayloadJson, invalidJson };
  }
  if (contentType === 'application/x-www-form-urlencoded') {
    const fields: Record<string, string> = {};
    for (const [name, value] of new URLSearchParams(raw.toString('utf8'))) {
      if (!(name in fields)) fields[name] = value;
    }
    return { ...empty, kind: 'form', form: fields };
  }
  return { ...empty, kind: 'other' };
}
