import { describe, expect, it } from 'vitest';
import { lyricsRequestSchema, songRequestSchema } from '../../../src/pipeline/requests.js';

describe('request texts', () => {
  it('leave out U+0000, which Postgres cannot store, and then check what is left', () => {
    expect(songRequestSchema.parse({ kind: 'song', prompt: 'rain\u0000 city', title: '\u0000t' })).toMatchObject({ prompt: 'rain city', title: 't' });
    expect(lyricsRequestSchema.safeParse({ kind: 'lyrics', prompt: ' \u0000 ' }).success).toBe(false);
  });
});
