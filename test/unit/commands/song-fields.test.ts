/**
 * The song form's fields (the "Make a song" and Remix forms, and /song): a field left blank is
 * a field not given, but one longer than its limit is refused as too long even when it is
 * blank, as Discord's own max_length would have stopped it. (A chaos fuzz case: 6,000 line
 * separators in the lyrics read as "no lyrics", and the song was made and charged.)
 */
import { describe, expect, it } from 'vitest';
import { buildSongRequest } from '../../../commands/song.js';
import type { Caller } from '../../../src/discord/caller.js';
import type { CommandContext } from '../../../src/discord/context.js';
import { LIMITS } from '../../../src/pipeline/requests.js';

// buildSongRequest reads only the configured models and the guild's default model without a voice.
const context = { config: { musicModels: ['ModelB-2.0'] } } as unknown as CommandContext;
const caller = { guild: { defaultModel: null } } as unknown as Caller;

describe('buildSongRequest', () => {
  it('takes a blank field within its limit as not given', async () => {
    const request = await buildSongRequest(context, caller, { prompt: 'rain', lyrics: '\u2028'.repeat(LIMITS.lyricsMax), title: '   ' });
    expect(request).toMatchObject({ kind: 'song', prompt: 'rain' });
    const { lyrics, title } = request as { lyrics?: string; title?: string };
    expect(lyrics).toBeUndefined();
    expect(title).toBeUndefined();
  });

  it('refuses a field longer than its limit as too long, blank or not', async () => {
    await expect(buildSongRequest(context, caller, { prompt: 'rain', lyrics: '\u2028'.repeat(6_000) })).rejects.toThrow('request.lyrics.tooLong');
    await expect(buildSongRequest(context, caller, { prompt: ' '.repeat(LIMITS.promptMax + 1) })).rejects.toThrow('request.prompt.tooLong');
  });
});
