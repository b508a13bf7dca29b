import { CATALOGUES, localText, translator } from '../../../src/i18n/index.js';
import { DiscordAPIError as RestDiscordAPIError } from '@discordjs/rest';
import { DiscordAPIError, RESTJSONErrorCodes } from 'discord.js';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import {
  isExpected,
  isGoneInteraction,
  Refusal,
  userMessageFor,
} from '../../../src/discord/errors.js';
import { MusicApiError } from '../../../src/music-api/errors.js';
import { loggableError } from '../../../src/logger.js';

/** Interaction tokens are long; Discord puts them in the path of every interaction response. */
const token = `aW50ZXJhY3Rpb246MTIzNDU2Nzg5MDEyMzQ1Njc4OnNlY3JldA${'x'.repeat(40)}`;

function discordError(code: number, url: string, message = 'Unknown interaction'): DiscordAPIError {
  return new DiscordAPIError({ code, message }, code, 404, 'POST', url, { body: undefined, files: undefined });
}

describe('loggableError', () => {
  it('keeps the route shape of a Discord error and cuts the interaction token out of it', () => {
    const error = discordError(RESTJSONErrorCodes.UnknownInteraction, `https://discord.com/api/v10/interactions/123/${token}/callback?with_response=true`);
    const logged = loggableError(error);
    expect(logged).toEqual({
      name: error.name,
      code: RESTJSONErrorCodes.UnknownInteraction,
      status: 404,
      method: 'POST',
      route: '/api/v10/interactions/123/[token]/callback',
      message: 'Unknown interaction',
    });
    expect(JSON.stringify(logged)).not.toContain(token);
  });

  it('redacts a secret it is given, even one too short to look like a token', () => {
    const error = discordError(RESTJSONErrorCodes.UnknownWebhook, 'https://discord.com/api/v10/webhooks/99/short-token/messages/@original', 'Unknown webhook short-token');
    expect(loggableError(error, ['short-token'])).toMatchObject({
      route: '/api/v10/webhooks/99/[redacted]/messages/@original',
      message: 'Unknown webhook [redacted]',
    });
  });

  it('logs a music API error as it describes itself', () => {
    const error = new MusicApiError({ kind: 'rate_limited', operation: 'createSong', method: 'POST', path: '/api/v1/producer/create', status: 429 });
    expect(loggableError(error)).toEqual(error.toJSON());
  });

  it('keeps the name, message and stack of other errors, with every copy of every secret blanked out', () => {
    const error = new TypeError('token abc123 and abc123 again, key k-9');
    const logged = loggableError(error, ['abc123', 'k-9']);
    expect(logged.name).toBe('TypeError');
    expect(logged.message).toBe('token [redacted] and [redacted] again, key [redacted]');
    expect(logged.stack).toMatch(/^TypeError: token \[redacted\] and \[redacted\] again, key \[redacted\]\n\s+at /);
    expect(JSON.stringify(logged)).not.toMatch(/abc123|k-9/);
  });

  it('leaves out a stack the error does not have', () => {
    const error = new Error('no stack');
    delete error.stack;
    expect(loggableError(error)).toEqual({ name: 'Error', message: 'no stack', stack: undefined });
  });

  it('ignores an empty secret instead of redacting between every character', () => {
    expect(loggableError(new Error('plain'), ['']).message).toBe('plain');
  });

  it('turns anything else thrown into text', () => {
    expect(loggableError('failed with abc123', ['abc123'])).toEqual({ value: 'failed with [redacted]' });
    expect(loggableError(42)).toEqual({ value: '42' });
    expect(loggableError(undefined)).toEqual({ value: 'undefined' });
    expect(loggableError({ token: 'abc123' }, ['abc123'])).toEqual({ value: '[object Object]' });
  });
});

describe('what a member is told', () => {
  it('shows refusals in the member’s language, and nothing of an unexpected error', () => {
    const refusal = new Refusal('cooldown', localText('refusal.cooldown', { count: 5 }));
    expect(userMessageFor(refusal)).toBe(translator('en').text(refusal.text));
    expect(userMessageFor(refusal)).toMatch(/5 more seconds/);
    expect(userMessageFor(refusal, translator('de'))).toBe(translator('de').text(refusal.text));
    expect(userMessageFor(refusal, translator('de'))).not.toBe(userMessageFor(refusal));
    expect(refusal.message).toBe(userMessageFor(refusal));
    expect(userMessageFor(new Error('connection refused at 10.0.0.3:5432'))).toBe(CATALOGUES.en['error.generic']);
    expect(userMessageFor('a string')).toBe(CATALOGUES.en['error.generic']);
  });

  it('says nothing through an interaction that is gone', () => {
    const gone = discordError(RESTJSONErrorCodes.UnknownInteraction, `https://discord.com/api/v10/interactions/1/${token}/callback`);
    expect(isGoneInteraction(gone)).toBe(true);
    expect(userMessageFor(gone)).toBeUndefined();
    const other = discordError(RESTJSONErrorCodes.MissingAccess, 'https://discord.com/api/v10/channels/1/messages', 'Missing Access');
    expect(isGoneInteraction(other)).toBe(false);
    expect(userMessageFor(other)).toBe(CATALOGUES.en['error.generic']);
  });

  it('knows a gone interaction from either build of @discordjs/rest, with one list of codes', () => {
    // discord.js throws the CommonJS build's class; the delivery's own REST client the ESM one.
    const esm = (code: number) => new RestDiscordAPIError({ code, message: 'gone' }, code, 404, 'PATCH', 'https://discord.com/api/v10/webhooks/1/t/messages/@original', { body: undefined, files: undefined });
    for (const code of [50027, 10015, 10062, 40060, 10008]) {
      expect(isGoneInteraction(esm(code))).toBe(true);
      expect(isGoneInteraction(discordError(code, 'https://discord.com/api/v10/interactions/1/t/callback'))).toBe(true);
    }
    expect(isGoneInteraction(esm(50001))).toBe(false);
    expect(isGoneInteraction(new Error('DiscordAPIError lookalike'))).toBe(false);
  });

  it('words a schema error for members: our own messages as they are, zod’s own with a prefix', () => {
    const ours = z.object({ prompt: z.string().min(1, 'The prompt is empty.') }).safeParse({ prompt: '' });
    const zods = z.object({ seconds: z.number() }).safeParse({ seconds: 'ten' });
    expect(userMessageFor(ours.error)).toBe('The prompt is empty.');
    expect(userMessageFor(zods.error)).toMatch(/^That request is not valid \(seconds: .+\)\.$/);
  });

  it('logs refusals and bad input as expected, and internal music API faults as not', () => {
    expect(isExpected(new Refusal('frozen', localText('refusal.frozen')))).toBe(true);
    expect(isExpected(new MusicApiError({ kind: 'validation', operation: 'createSong', method: 'POST', path: '/x', status: 400 }))).toBe(true);
    expect(isExpected(new MusicApiError({ kind: 'internal', operation: 'createSong', method: 'POST', path: '/x', status: 500 }))).toBe(false);
    expect(isExpected(new Error('bug'))).toBe(false);
  });
});
