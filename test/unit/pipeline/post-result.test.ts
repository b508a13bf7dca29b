import { describe, expect, it } from 'vitest';
import { nonceFor } from '../../../src/discord-rest/discord-delivery.js';
import { interactionTokenUsable } from '../../../src/pipeline/post-result.js';
import { redactRoute } from '../../../src/discord-rest/discord-delivery.js';

describe('interactionTokenUsable', () => {
  const at = new Date('2026-11-22T10:00:00Z');
  const job = { interactionToken: 't', applicationId: 'a', interactionAt: at };
  it('is true inside 15 minutes less a one-minute margin, false after', () => {
    expect(interactionTokenUsable(job, new Date(at.getTime() + 13 * 60_000))).toBe(true);
    expect(interactionTokenUsable(job, new Date(at.getTime() + 14 * 60_000 + 1))).toBe(false);
    expect(interactionTokenUsable({ ...job, interactionToken: null }, at)).toBe(false);
  });
});

describe('secrets in routes', () => {
  it('cuts interaction tokens out of webhook and callback routes', () => {
    expect(redactRoute('PATCH /api/v10/webhooks/123/aW50ZXJhY3Rpb24.tok-en/messages/@original')).toBe(
      'PATCH /api/v10/webhooks/123/[token]/messages/@original',
    );
    expect(redactRoute('/interactions/99/secret-token/callback')).toBe('/interactions/99/[token]/callback');
  });

  it('derives a stable nonce of at most 25 characters from the job id', () => {
    expect(nonceFor('a')).toBe(nonceFor('a'));
    expect(nonceFor('a')).not.toBe(nonceFor('b'));
    expect(nonceFor('6f1c0c84-1f55-4f8a-9a0e-3f4b8a1d2c3e').length).toBeLessThanOrEqual(25);
  });
});
