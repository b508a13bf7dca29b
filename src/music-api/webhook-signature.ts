/**
 * Webhook signatures, both schemes the service is known to use: "spec", the HMAC-SHA256 of the
 * raw body keyed with the task's `webhook_secret` (hex, base64 or base64url); and "timestamped"
 * (the real service today), `sha256=<hex>` over `"<X-Webhook-Timestamp>.<raw body>"`.
 */
import { createHmac, timingSafeEqual } from 'node:crypto';

export type SignatureScheme = 'spec' | 'timestamped';

/** How the digest is written in the header. */
export type SignatureEncoding = 'hex' | 'base64' | 'base64url';

/** Request headers as node:http (`IncomingMessage.headers`), fastify, or fetch (`Headers`) give them. */
export type HeaderBag = Headers | Readonly<Record<string, string | readonly string[] | undefined>>;

export const SIGNATURE_HEADER = 'x-webhook-signature';
export const TIMESTAMP_HEADER = 'x-webhook-timestamp';
export const DEFAULT_TOLERANCE_SECONDS = 300;

export type WebhookVerification =
  | { ok: true; scheme: SignatureScheme; timestamp: number | undefined }
  | {
      ok: false;
      reason: 'missing_secret' | 'missing_signature' | 'malformed_signature' | 'malformed_timestamp' | 'stale_timestamp' | 'mismatch';
    };

export interface VerifyWebhookOptions {
  /** The body exactly as received: parse it only after it verified. */
  rawBody: Buffer | string;
  secret: string;
  headers: HeaderBag;
  /** The current time in milliseconds since the epoch. Default `Date.now()`. */
  now?: number;
  /**
   * How far `X-Webhook-Timestamp` may be from `now`, either way, when the timestamp is part of
   * what was signed. @defaultValue 300
   */
  toleranceSeconds?: number;
}

/**
 * Checks `X-Webhook-Signature` in constant time: the HMAC in hex, base64 or base64url, with or
 * without `sha256=`, over `"<timestamp>.<raw body>"` (the real service) or over the raw body
 * (the spec). The timestamp must be within the tolerance only when it was signed: on the
 * body-only scheme it proves nothing, and refusing a late retry there would only lose news.
 */
export function verifyWebhookSignature(options: VerifyWebhookOptions): WebhookVerification {
  const { rawBody, secret, headers } = options;
  if (secret.length === 0) return { ok: false, reason: 'missing_secret' };
  const header = headerValue(headers, SIGNATURE_HEADER);
  if (header === undefined || header.trim() === '') return { ok: false, reason: 'missing_signature' };
  const given = parseSignature(header);
  if (given === undefined) return { ok: false, reason: 'malformed_signature' };

  const body = typeof rawBody === 'string' ? Buffer.from(rawBody, 'utf8') : rawBody;
  const timestampHeader = headerValue(headers, TIMESTAMP_HEADER)?.trim();
  const timestamp = timestampHeader !== undefined && /^\d{1,12}$/.test(timestampHeader) ? Number(timestampHeader) : undefined;
  if (timestamp !== undefined && sameDigest(given, hmac(secret, body, timestampHeader))) {
    const nowSeconds = (options.now ?? Date.now()) / 1000;
    const tolerance = options.toleranceSeconds ?? DEFAULT_TOLERANCE_SECONDS;
    if (Math.abs(nowSeconds - timestamp) > tolerance) return { ok: false, reason: 'stale_timestamp' };
    return { ok: true, scheme: 'timestamped', timestamp };
  }
  if (sameDigest(given, hmac(secret, body, undefined))) return { ok: true, scheme: 'spec', timestamp };
  if (timestampHeader !== undefined && timestamp === undefined) return { ok: false, reason: 'malformed_timestamp' };
  return { ok: false, reason: 'mismatch' };
}

export interface SignWebhookOptions {
  rawBody: Buffer | string;
  secret: string;
  scheme: SignatureScheme;
  /** Unix seconds, for the timestamped scheme. Default: now. */
  timestamp?: number;
  /** For the spec scheme, which leaves it open. @defaultValue 'hex' */
  encoding?: SignatureEncoding;
}

/** The signature headers for a webhook body, in the chosen scheme. */
export function signWebhook(options: SignWebhookOptions): Record<string, string> {
  const body = typeof options.rawBody === 'string' ? Buffer.from(options.rawBody, 'utf8') : options.rawBody;
  if (options.scheme === 'spec') {
    return { 'X-Webhook-Signature': hmac(options.secret, body, undefined).toString(options.encoding ?? 'hex') };
  }
  const timestamp = String(options.timestamp ?? Math.floor(Date.now() / 1000));
  return {
    'X-Webhook-Signature': `sha256=${hmac(options.secret, body, timestamp).toString('hex')}`,
    'X-Webhook-Timestamp': timestamp,
  };
}

/** One header's value, case-insensitively; the first when repeated. */
export function headerValue(headers: HeaderBag, name: string): string | undefined {
  if (headers instanceof Headers) return headers.get(name) ?? undefined;
  const wanted = name.toLowerCase();
  for (const [key, value] of Object.entries(headers)) {
    if (key.toLowerCase() !== wanted || value === undefined) continue;
    return typeof value === 'string' ? value : value[0];
  }
  return undefined;
}

function hmac(secret: string, body: Buffer, timestamp: string | undefined): Buffer {
  const mac = createHmac('sha256', secret);
  if (timestamp !== undefined) mac.update(`${timestamp}.`, 'utf8');
  mac.update(body);
  return mac.digest();
}

/**
 * The 32 bytes a signature header names, in hex (64 characters, either case) or in base64 or
 * base64url (43 characters, padded to 44 or not). Anything else, including a base64 text that
 * is not the canonical writing of its bytes, is malformed.
 */
function parseSignature(header: string): Buffer | undefined {
  const text = header.trim().replace(/^sha256=/i, '');
  if (/^[0-9a-f]{64}$/i.test(text)) return Buffer.from(text, 'hex');
  const unpadded = text.replace(/=$/, '');
  const encoding = /^[A-Za-z0-9+/]{43}$/.test(unpadded) ? 'base64' : /^[A-Za-z0-9_-]{43}$/.test(unpadded) ? 'base64url' : undefined;
  if (encoding === undefined) return undefined;
  const bytes = Buffer.from(unpadded, encoding);
  return bytes.length === 32 && bytes.toString(encoding).replace(/=$/, '') === unpadded ? bytes : undefined;
}

function sameDigest(given: Buffer, expected: Buffer): boolean {
  return given.length === expected.length && timingSafeEqual(given, expected);
}
