/** The queue's edits and the loop's choice, over plain entries. */
import { describe, expect, it } from 'vitest';
import { afterSong, moveEntry, removeAt, shuffleQueue } from '../../../src/voice/queue-edits.js';
import type { QueueEntry } from '../../../src/voice/store.js';

const entry = (n: number): QueueEntry => ({
  jobId: `job-${n}`,
  clipId: `clip-${n}`,
  title: `Song ${n}`,
  makerId: '100000000000000001',
  mediaUrl: `http://127.0.0.1/media/${n}.m4a`,
  durationSeconds: 60,
  requestedBy: '100000000000000002',
});
const queue = [1, 2, 3, 4].map(entry);
const titles = (entries: readonly QueueEntry[]) => entries.map((e) => e.title);

describe('the queue’s edits', () => {
  it('removes the entry at a position counted from 1, and nothing for a position outside the queue', () => {
    const edited = removeAt(queue, 2);
    expect(edited?.removed.title).toBe('Song 2');
    expect(titles(edited!.queue)).toEqual(['Song 1', 'Song 3', 'Song 4']);
    expect(titles(queue)).toEqual(['Song 1', 'Song 2', 'Song 3', 'Song 4']);
    for (const position of [0, 5, -1, 1.5]) expect(removeAt(queue, position), String(position)).toBeUndefined();
    expect(removeAt([], 1)).toBeUndefined();
  });

  it('moves an entry forward or back, the others shifting, and refuses a place outside the queue', () => {
    expect(titles(moveEntry(queue, 4, 1)!.queue)).toEqual(['Song 4', 'Song 1', 'Song 2', 'Song 3']);
    expect(titles(moveEntry(queue, 1, 3)!.queue)).toEqual(['Song 2', 'Song 3', 'Song 1', 'Song 4']);
    expect(titles(moveEntry(queue, 2, 2)!.queue)).toEqual(titles(queue));
    expect(moveEntry(queue, 1, 3)?.moved.title).toBe('Song 1');
    expect(moveEntry(queue, 5, 1)).toBeUndefined();
    expect(moveEntry(queue, 1, 5)).toBeUndefined();
    expect(moveEntry(queue, 1, 0)).toBeUndefined();
  });

  it('shuffles into another order of the same entries, as the random source decides', () => {
    const shuffled = shuffleQueue(queue, () => 0);
    expect(titles(shuffled)).toEqual(['Song 2', 'Song 3', 'Song 4', 'Song 1']);
    expect(titles(shuffled).sort()).toEqual(titles(queue));
    expect(titles(queue)).toEqual(['Song 1', 'Song 2', 'Song 3', 'Song 4']);
  });
});

describe('the loop', () => {
  it('plays a song that played to its end again under a song loop; a skipped or failed song moves on', () => {
    expect(afterSong('song', 'finished')).toBe('replay');
    expect(afterSong('song', 'skipped')).toBe('next');
    expect(afterSong('song', 'failed')).toBe('next');
  });

  it('puts a played or skipped song back at the queue’s end under a queue loop, never one that failed', () => {
    expect(afterSong('queue', 'finished')).toBe('requeue');
    expect(afterSong('queue', 'skipped')).toBe('requeue');
    expect(afterSong('queue', 'failed')).toBe('next');
  });

  it('moves on with the loop off, or in a state written before loops', () => {
    for (const outcome of ['finished', 'skipped', 'failed'] as const) {
      expect(afterSong('off', outcome)).toBe('next');
      expect(afterSong(undefined, outcome)).toBe('next');
    }
  });
});
