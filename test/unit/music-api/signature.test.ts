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

  it('accepts what signWebhook produces in both schemes', () => {
    for (const scheme of ['spec', 'timestamped'] as const) {
      const headers = signWebhook({ rawBody: body, secret, scheme, timestamp: nowSeconds });
      expect(verifyWebhookSignature({ rawBody: body, secret, headers, now })).toMatchObject({ ok: true, scheme });
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
