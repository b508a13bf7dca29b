import { describe, expect, it } from 'vitest';
import { LIMITS, lyricsRequestSchema, songRequestSchema } from '../../../src/pipeline/requests.js';

describe('request texts', () => {
  it('leave out U+0000, which Postgres cannot store, and then check what is left', () => {
    expect(songRequestSchema.parse({ kind: 'song', prompt: 'rain\u0000 city', title: '\u0000t' })).toMatchObject({ prompt: 'rain city', title: 't' });
    expect(lyricsRequestSchema.safeParse({ kind: 'lyrics', prompt: ' \u0000 ' }).success).toBe(false);
  });

  it('measure a text as it was sent: one that fits only once cleaned is refused as too long', () => {
    // 6,000 characters of which half are U+0000, sent where Discord's form allows 3,000 (a chaos fuzz case that was charged).
    const lyrics = '\u0001\u0000'.repeat(LIMITS.lyricsMax);
    const result = songRequestSchema.safeParse({ kind: 'song', prompt: 'rain', lyrics });
    expect(result.success).toBe(false);
    expect(JSON.stringify(result.error?.issues)).toContain('request.lyrics.tooLong');
    expect(songRequestSchema.safeParse({ kind: 'song', prompt: 'rain', lyrics: 'a'.repeat(LIMITS.lyricsMax) }).success).toBe(true);
  });
});
