import { describe, expect, it } from 'vitest';
import { clipOfTake, MAX_TAKES, takeArg, takeCount, takeFromArg } from '../../../src/pipeline/takes.js';
import { entryOf } from '../../../src/voice/library-entries.js';
import type { JobRow } from '../../../src/pipeline/job-rows.js';

const twoTakes = { result: { clips: [{ clipId: 'a' }, { clipId: 'b' }, { clipId: 'c' }] } };

describe('takes', () => {
  it('numbers a result’s clips from 1, and offers at most the takes a message has rows for', () => {
    expect(clipOfTake(twoTakes)?.clipId).toBe('a');
    expect(clipOfTake(twoTakes, 2)?.clipId).toBe('b');
    expect(takeCount(twoTakes)).toBe(MAX_TAKES);
    expect(takeCount({ result: { clips: [{ clipId: 'a' }] } })).toBe(1);
    expect(takeCount({ result: null })).toBe(0);
  });

  it('reads a button’s take: none is the first, a forged one is undefined', () => {
    expect(takeFromArg(undefined)).toBe(1);
    expect(takeFromArg('2')).toBe(2);
    for (const forged of ['0', '3', '9', '02', '-1', 'x', '1.5']) expect(takeFromArg(forged)).toBeUndefined();
    expect(takeArg(1)).toBeUndefined();
    expect(takeFromArg(takeArg(2))).toBe(2);
  });
});

describe('a take in the voice queue', () => {
  const song = {
    id: '00000000-0000-4000-8000-000000000001',
    kind: 'persona_song',
    state: 'succeeded',
    removedAt: null,
    userId: '1',
    request: { kind: 'persona_song', prompt: 'a hum', title: 'Hum' },
    remixOf: null,
    result: {
      clips: [
        { clipId: 'first', audioUrl: 'https://cdn.example/first.m4a' },
        { clipId: 'second', audioUrl: 'https://cdn.example/second.m4a' },
      ],
    },
  } as unknown as JobRow;

  it('plays the take pressed, named by its take, and the first take otherwise', () => {
    expect(entryOf(song, '2', 2)).toMatchObject({ clipId: 'second', mediaUrl: 'https://cdn.example/second.m4a', title: 'Hum (take 2)' });
    expect(entryOf(song, '2')).toMatchObject({ clipId: 'first', title: 'Hum' });
    expect(entryOf(song, '2', 1)).toMatchObject({ clipId: 'first', title: 'Hum' });
  });
});
