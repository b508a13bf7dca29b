/**
 * The song form's fields (the "Make a song" and Remix forms, and /song): a field left blank is
 * a field not given, but one longer than its limit is refused as too long even when it is
 * blank, as Discord's own max_length would have stopped it. (A chaos fuzz case: 6,000 line
 * separators in the lyrics read as "no lyrics", and the song was made and charged.)
 */
import { describe, expect, it } from 'vitest';
import { checkSongFields, type SongFields } from '../../../commands/song.js';
import { LIMITS } from '../../../src/pipeline/requests.js';

const check = async (fields: SongFields) => checkSongFields(['ModelB-2.0'], fields).request;

describe('checkSongFields', () => {
  it('takes a blank field within its limit as not given', async () => {
    const request = await check({ prompt: 'rain', lyrics: '\u2028'.repeat(LIMITS.lyricsMax), title: '   ' });
    expect(request).toMatchObject({ kind: 'song', prompt: 'rain' });
    const { lyrics, title } = request as { lyrics?: string; title?: string };
    expect(lyrics).toBeUndefined();
    expect(title).toBeUndefined();
  });

  it('refuses a field longer than its limit as too long, blank or not', async () => {
    await expect(check({ prompt: 'rain', lyrics: '\u2028'.repeat(6_000) })).rejects.toThrow('request.lyrics.tooLong');
    await expect(check({ prompt: ' '.repeat(LIMITS.promptMax + 1) })).rejects.toThrow('request.prompt.tooLong');
  });
});
