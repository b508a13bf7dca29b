/**
 * The queue's edits and the loop as plain functions over entries: remove, move, shuffle, and
 * what plays after a song ends. Positions are the ones `/queue` shows: 1 is next.
 */
import { shuffled } from './rules.js';
import type { LoopMode, QueueEntry } from './store.js';

/** The queue without the entry at `position`, and that entry; undefined when there is no such position. */
export function removeAt(queue: readonly QueueEntry[], position: number): { readonly queue: QueueEntry[]; readonly removed: QueueEntry } | undefined {
  if (!Number.isInteger(position) || position < 1 || position > queue.length) return undefined;
  const rest = [...queue];
  const [removed] = rest.splice(position - 1, 1);
  return { queue: rest, removed: removed! };
}

/** The queue with the entry at `from` put at `to` (the others shift); undefined when either position is not in the queue. */
export function moveEntry(queue: readonly QueueEntry[], from: number, to: number): { readonly queue: QueueEntry[]; readonly moved: QueueEntry } | undefined {
  const taken = removeAt(queue, from);
  if (!taken || !Number.isInteger(to) || to < 1 || to > queue.length) return undefined;
  const rest = taken.queue;
  rest.splice(to - 1, 0, taken.removed);
  return { queue: rest, moved: taken.removed };
}

/** The queue in a new random order (the song playing stays where it is). */
export function shuffleQueue(queue: readonly QueueEntry[], random: () => number = Math.random): QueueEntry[] {
  return shuffled(queue, random);
}

/** How a song ended: played to its end, skipped (by a member, a vote, or its removal), or its audio failed. */
export type SongOutcome = 'finished' | 'skipped' | 'failed';

/**
 * What the loop does once a song ends: play it again (a song loop, when it played to its end),
 * put it at the end of the queue (a queue loop, unless its audio failed: it would fail again),
 * or nothing (the queue's next plays).
 */
export function afterSong(loop: LoopMode | undefined, outcome: SongOutcome): 'replay' | 'requeue' | 'next' {
  if (loop === 'song' && outcome === 'finished') return 'replay';
  if (loop === 'queue' && outcome !== 'failed') return 'requeue';
  return 'next';
}
