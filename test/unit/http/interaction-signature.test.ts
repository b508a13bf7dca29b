/** Discord's Ed25519 signature over `X-Signature-Timestamp` + body, checked with Node's crypto. */
import { generateKeyPairSync, sign } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { ed25519PublicKey, verifyInteractionSignature } from '../../../src/http/interactions.js';

const { privateKey, publicKey } = generateKeyPairSync('ed25519');
const publicHex = Buffer.from(publicKey.export({ format: 'jwk' }).x!, 'base64url').toString('hex');
const key = ed25519PublicKey(publicHex);
const now = Date.UTC(2026, 10, 23, 12, 0, 0);
const seconds = Math.floor(now / 1000);
const body = Buffer.from('{"type":1}');
const signatureOf = (timestamp: number, bytes: Buffer = body) =>
  sign(null, Buffer.concat([Buffer.from(String(timestamp)), bytes]), privateKey).toString('hex');

const check = (signature: string | undefined, timestamp: string | undefined, rawBody = body) =>
  verifyInteractionSignature({ key, signature, timestamp, rawBody, nowMs: now });

describe('verifyInteractionSignature', () => {
  it('accepts a signature of the timestamp and the exact body, within five minutes either way', () => {
    expect(check(signatureOf(seconds), String(seconds))).toEqual({ ok: true });
    expect(check(signatureOf(seconds - 299), String(seconds - 299))).toEqual({ ok: true });
    expect(check(signatureOf(seconds + 299), String(seconds + 299))).toEqual({ ok: true });
  });

  it('refuses a changed body, another timestamp, another key, a stale signature and missing or malformed headers', () => {
    expect(check(signatureOf(seconds), String(seconds), Buffer.from('{"type":2}'))).toEqual({ ok: false, reason: 'mismatch' });
    expect(check(signatureOf(seconds), String(seconds + 1))).toEqual({ ok: false, reason: 'mismatch' });
    const other = generateKeyPairSync('ed25519').privateKey;
    const foreign = sign(null, Buffer.concat([Buffer.from(String(seconds)), body]), other).toString('hex');
    expect(check(foreign, String(seconds))).toEqual({ ok: false, reason: 'mismatch' });
    expect(check(signatureOf(seconds - 301), String(seconds - 301))).toEqual({ ok: false, reason: 'stale' });
    expect(check(undefined, String(seconds))).toEqual({ ok: false, reason: 'missing' });
    expect(check(signatureOf(seconds), undefined)).toEqual({ ok: false, reason: 'missing' });
    expect(check('zz'.repeat(64), String(seconds))).toEqual({ ok: false, reason: 'malformed' });
    expect(check(signatureOf(seconds), 'yesterday')).toEqual({ ok: false, reason: 'malformed' });
  });

  it('reads the key from its 64 hexadecimal characters only', () => {
    expect(() => ed25519PublicKey('abc')).toThrow('64 hexadecimal characters');
  });
});
