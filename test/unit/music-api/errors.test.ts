import { inspect } from 'node:util';
import { describe, expect, it } from 'vitest';
import { creditCost, DEFAULT_PERSONA_SONG_COST, OPERATION_COSTS } from '../../../src/music-api/costs.js';
import { kindForHttpError, MusicApiError } from '../../../src/music-api/errors.js';
import { english } from '../../../src/i18n/index.js';

describe('kindForHttpError', () => {
  it.each([
    [400, 'validation_error', 'validation'],
    [401, 'unauthorized', 'unauthorized'],
    [402, 'insufficient_credits', 'insufficient_credits'],
    [403, 'insufficient_credits', 'insufficient_credits'],
    [410, 'endpoint_retired', 'endpoint_retired'],
    [429, 'rate_limited', 'rate_limited'],
    [500, 'internal_error', 'internal'],
    [502, 'upstream_error', 'upstream'],
  ] as const)('maps %i %s to %s', (status, type, kind) => {
    expect(kindForHttpError(status, type)).toBe(kind);
  });

  it('falls back on the status when the type is missing or new', () => {
    expect(kindForHttpError(402, undefined)).toBe('insufficient_credits');
    expect(kindForHttpError(429, 'slow_down')).toBe('rate_limited');
    expect(kindForHttpError(503, undefined)).toBe('upstream');
    expect(kindForHttpError(404, undefined)).toBe('not_found');
    expect(kindForHttpError(409, undefined)).toBe('validation');
    expect(kindForHttpError(418, undefined)).toBe('validation');
  });

  it('reads a 403 by its type or text: credits, or a plain refusal', () => {
    expect(kindForHttpError(403, undefined, '{"error":"Insufficient credits"}')).toBe('insufficient_credits');
    expect(kindForHttpError(403, 'forbidden', '{"error":"not allowed"}')).toBe('unauthorized');
  });
});

describe('MusicApiError', () => {
  const base = { operation: 'createSong', method: 'POST', path: '/api/v1/producer/create' } as const;

  it('is retryable only for transient kinds, and never when a task may exist', () => {
    expect(new MusicApiError({ ...base, kind: 'rate_limited', status: 429 }).retryable).toBe(true);
    expect(new MusicApiError({ ...base, kind: 'validation', status: 400 }).retryable).toBe(false);
    const timeout = new MusicApiError({ ...base, kind: 'timeout', maybeAccepted: true });
    expect(timeout).toMatchObject({ retryable: false, maybeAccepted: true });
    expect(english.text(timeout.userText)).toMatch(/may still be processed/);
  });

  it('keeps the key out of message, detail, cause, JSON and inspection', () => {
    const key = 'sk-live-very-secret-key-123';
    const error = new MusicApiError({
      ...base,
      kind: 'network',
      type: `echo ${key}`,
      detail: `{"error":"bad header Bearer ${key}"}`,
      cause: new Error(`connect failed for Bearer ${key}`),
      secrets: [key],
    });
    const texts = [error.message, error.detail, english.text(error.userText), String(error.cause), JSON.stringify(error), inspect(error, { depth: 5 }), error.stack];
    for (const text of texts) expect(text ?? '').not.toContain(key);
    expect(error.detail).toContain('[redacted]');
  });

  it('truncates the upstream detail and never shows it to the user', () => {
    const body = `{"message":"${'x'.repeat(2000)}"}`;
    const error = new MusicApiError({ ...base, kind: 'internal', status: 500, detail: body });
    expect(error.detail?.length).toBeLessThanOrEqual(301);
    expect(english.text(error.userText)).not.toContain('xxx');
  });
});

describe('credit costs', () => {
  it("holds the spec's table and a configurable persona-song cost", () => {
    expect(OPERATION_COSTS).toEqual({ song: 10, lyrics: 1, video: 5, upload: 2, download: 2, voice: 4, concat: 2, poll: 0 });
    expect(creditCost('personaSong')).toBe(DEFAULT_PERSONA_SONG_COST);
    expect(creditCost('personaSong', 7)).toBe(7);
    expect(creditCost('voice', 7)).toBe(4);
  });
});
