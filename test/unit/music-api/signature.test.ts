import { createHmac } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { signWebhook, verifyWebhookSignature } from '../../../src/music-api/webhook-signature.js';

const secret = 'whsec-test-1';
const body = JSON.stringify({ code: 200, message: 'success', data: [], status: 'SUCCESS', task_id: 't-1' });
const now = Date.UTC(2026, 10, 22, 12, 0, 0);
const nowSeconds = Math.floor(now / 1000);

function hex(text: string, key = secret): string {
  return createHmac('sha256', key).update(text).digest('hex');
}

function digest(text: string, encoding: 'hex' | 'base64' | 'base64url', key = secret): string {
  return createHmac('sha256', key).update(text).digest(encoding);
}

describe('verifyWebhookSignature', () => {
  it("accepts the spec's scheme: hex HMAC of the raw body, with or without sha256=", () => {
    expect(verifyWebhookSignature({ rawBody: body, secret, headers: { 'x-webhook-signature': hex(body) }, now })).toEqual({
      ok: true,
      scheme: 'spec',
      timestamp: undefined,
    });
    const prefixed = { 'X-Webhook-Signature': `sha256=${hex(body)}` };
    expect(verifyWebhookSignature({ rawBody: Buffer.from(body), secret, headers: prefixed, now }).ok).toBe(true);
  });

  it.each(['base64', 'base64url'] as const)('accepts the spec scheme written in %s, padded or not, with or without sha256=', (encoding) => {
    const written = digest(body, encoding);
    const padded = written.endsWith('=') ? written : `${written}=`;
    const unpadded = written.replace(/=$/, '');
    for (const signature of [padded, unpadded, `sha256=${padded}`, `sha256=${unpadded}`]) {
      expect(verifyWebhookSignature({ rawBody: body, secret, headers: { 'x-webhook-signature': signature }, now }), signature).toEqual({
        ok: true,
        scheme: 'spec',
        timestamp: undefined,
      });
    }
  });

  it('accepts the timestamped scheme in base64 and base64url too', () => {
    for (const encoding of ['base64', 'base64url'] as const) {
      const headers = { 'x-webhook-signature': `sha256=${digest(`${nowSeconds}.${body}`, encoding)}`, 'x-webhook-timestamp': String(nowSeconds) };
      expect(verifyWebhookSignature({ rawBody: body, secret, headers, now })).toMatchObject({ ok: true, scheme: 'timestamped' });
    }
  });

  it('refuses a forged signature in every encoding: wrong secret, or a body it does not cover', () => {
    const tampered = body.replace('SUCCESS', 'FAILED');
    for (const encoding of ['hex', 'base64', 'base64url'] as const) {
      const wrongSecret = { 'x-webhook-signature': digest(body, encoding, 'not-the-secret') };
      expect(verifyWebhookSignature({ rawBody: body, secret, headers: wrongSecret, now }), encoding).toEqual({ ok: false, reason: 'mismatch' });
      const otherBody = { 'x-webhook-signature': `sha256=${digest(body, encoding)}` };
      expect(verifyWebhookSignature({ rawBody: tampered, secret, headers: otherBody, now }), encoding).toEqual({ ok: false, reason: 'mismatch' });
    }
  });

  it('refuses base64 that is not 32 bytes, mixes both alphabets, or is not the canonical writing of its bytes', () => {
    const written = digest(body, 'base64').replace(/=$/, '');
    const last = written.at(-1)!;
    // The last of 43 characters carries 2 spare bits: a neighbour letter decodes to the same bytes.
    const alphabet = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/';
    const twin = alphabet[alphabet.indexOf(last) ^ 1]!;
    const shorter = createHmac('sha1', secret).update(body).digest('base64');
    for (const signature of [`${written.slice(0, -1)}${twin}`, shorter, `${written.slice(0, 41)}+_`, `${written}==`]) {
      expect(verifyWebhookSignature({ rawBody: body, secret, headers: { 'x-webhook-signature': signature }, now }), signature).toEqual({
        ok: false,
        reason: 'malformed_signature',
      });
    }
  });

  it('accepts a body-only signature whatever X-Webhook-Timestamp says: the timestamp is not signed, so its age proves nothing', () => {
    for (const timestamp of [String(nowSeconds - 3600), String(nowSeconds + 86_400), 'soon']) {
      const headers = { 'x-webhook-signature': digest(body, 'base64'), 'x-webhook-timestamp': timestamp };
      expect(verifyWebhookSignature({ rawBody: body, secret, headers, now }), timestamp).toMatchObject({ ok: true, scheme: 'spec' });
    }
  });

  it("accepts the real service's timestamped scheme over \"<timestamp>.<body>\"", () => {
    const headers = {
      'x-webhook-signature': `sha256=${hex(`${nowSeconds}.${body}`)}`,
      'x-webhook-timestamp': String(nowSeconds),
    };
    expect(verifyWebhookSignature({ rawBody: body, secret, headers, now })).toEqual({
      ok: true,
      scheme: 'timestamped',
      timestamp: nowSeconds,
    });
    // Upper-case hex without the prefix, and a fetch Headers object, work too.
    const fetchHeaders = new Headers({
      'X-Webhook-Signature': hex(`${nowSeconds}.${body}`).toUpperCase(),
      'X-Webhook-Timestamp': String(nowSeconds),
    });
    expect(verifyWebhookSignature({ rawBody: body, secret, headers: fetchHeaders, now }).ok).toBe(true);
  });

  it('accepts what signWebhook produces in both schemes, and in each encoding of the spec scheme', () => {
    for (const scheme of ['spec', 'timestamped'] as const) {
      const headers = signWebhook({ rawBody: body, secret, scheme, timestamp: nowSeconds });
      expect(verifyWebhookSignature({ rawBody: body, secret, headers, now })).toMatchObject({ ok: true, scheme });
    }
    for (const encoding of ['hex', 'base64', 'base64url'] as const) {
      const headers = signWebhook({ rawBody: body, secret, scheme: 'spec', encoding });
      expect(headers['X-Webhook-Signature']).toBe(digest(body, encoding));
      expect(verifyWebhookSignature({ rawBody: body, secret, headers, now })).toMatchObject({ ok: true, scheme: 'spec' });
    }
  });

  it('refuses a tampered body', () => {
    const tampered = body.replace('SUCCESS', 'FAILED');
    expect(verifyWebhookSignature({ rawBody: tampered, secret, headers: { 'x-webhook-signature': hex(body) }, now })).toEqual({
      ok: false,
      reason: 'mismatch',
    });
    const headers = signWebhook({ rawBody: body, secret, scheme: 'timestamped', timestamp: nowSeconds });
    expect(verifyWebhookSignature({ rawBody: tampered, secret, headers, now })).toEqual({ ok: false, reason: 'mismatch' });
  });

  it('refuses a wrong secret', () => {
    for (const scheme of ['spec', 'timestamped'] as const) {
      const headers = signWebhook({ rawBody: body, secret: 'another-secret', scheme, timestamp: nowSeconds });
      expect(verifyWebhookSignature({ rawBody: body, secret, headers, now })).toEqual({ ok: false, reason: 'mismatch' });
    }
  });

  it('refuses a timestamp more than five minutes off, either way', () => {
    for (const offset of [-301, 301, -3600]) {
      const timestamp = nowSeconds + offset;
      const headers = signWebhook({ rawBody: body, secret, scheme: 'timestamped', timestamp });
      expect(verifyWebhookSignature({ rawBody: body, secret, headers, now })).toEqual({ ok: false, reason: 'stale_timestamp' });
    }
    const edge = signWebhook({ rawBody: body, secret, scheme: 'timestamped', timestamp: nowSeconds - 299 });
    expect(verifyWebhookSignature({ rawBody: body, secret, headers: edge, now }).ok).toBe(true);
    const tight = signWebhook({ rawBody: body, secret, scheme: 'timestamped', timestamp: nowSeconds - 60 });
    expect(verifyWebhookSignature({ rawBody: body, secret, headers: tight, now, toleranceSeconds: 30 })).toEqual({
      ok: false,
      reason: 'stale_timestamp',
    });
  });

  it('refuses a timestamped signature once the timestamp header is dropped', () => {
    const { 'X-Webhook-Signature': signature } = signWebhook({ rawBody: body, secret, scheme: 'timestamped', timestamp: nowSeconds });
    expect(verifyWebhookSignature({ rawBody: body, secret, headers: { 'x-webhook-signature': signature }, now })).toEqual({
      ok: false,
      reason: 'mismatch',
    });
  });

  it('refuses a missing or empty signature header, a malformed one, and an empty secret', () => {
    expect(verifyWebhookSignature({ rawBody: body, secret, headers: {}, now })).toEqual({ ok: false, reason: 'missing_signature' });
    expect(verifyWebhookSignature({ rawBody: body, secret, headers: { 'x-webhook-signature': '' }, now })).toEqual({
      ok: false,
      reason: 'missing_signature',
    });
    expect(verifyWebhookSignature({ rawBody: body, secret, headers: { 'x-webhook-signature': 'sha256=abc' }, now })).toEqual({
      ok: false,
      reason: 'malformed_signature',
    });
    // A shorter hex string must not reach timingSafeEqual (which throws on unequal lengths).
    const short = hex(body).slice(0, 62);
    expect(verifyWebhookSignature({ rawBody: body, secret, headers: { 'x-webhook-signature': short }, now })).toMatchObject({ ok: false });
    expect(verifyWebhookSignature({ rawBody: body, secret: '', headers: { 'x-webhook-signature': hex(body, '') }, now })).toEqual({
      ok: false,
      reason: 'missing_secret',
    });
  });

  it('refuses a timestamp that is not Unix seconds', () => {
    const headers = { 'x-webhook-signature': hex(`soon.${body}`), 'x-webhook-timestamp': 'soon' };
    expect(verifyWebhookSignature({ rawBody: body, secret, headers, now })).toEqual({ ok: false, reason: 'malformed_timestamp' });
  });
});
