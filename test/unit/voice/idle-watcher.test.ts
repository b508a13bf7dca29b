/** The idle countdown: a channel with no listener is left after the idle time, unless someone comes back or the player stays. */
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { IdleWatcher } from '../../../src/voice/idle-watcher.js';

const IDLE_MS = 60_000;
let listeners: Map<string, string[] | undefined>;
let staying: Set<string>;
let left: string[];
let watcher: IdleWatcher;

beforeEach(() => {
  vi.useFakeTimers();
  listeners = new Map();
  staying = new Set();
  left = [];
  watcher = new IdleWatcher({
    idleMs: IDLE_MS,
    listeners: (guildId) => listeners.get(guildId),
    stays: async (guildId) => staying.has(guildId),
    leave: (guildId) => left.push(guildId),
  });
});
afterEach(() => vi.useRealTimers());

/** Lets the watcher's read of `stays` finish, without moving the clock. */
const readThrough = () => vi.advanceTimersByTimeAsync(0);

/** Empties the guild's channel and checks it: its countdown starts. */
async function emptied(guildId: string): Promise<void> {
  listeners.set(guildId, []);
  watcher.check(guildId);
  await readThrough();
  expect(watcher.counting(guildId)).toBe(true);
}

/** The countdown's last moment passes without a leave, then its end leaves `guildId`. */
async function leavesAtTheEnd(guildId: string): Promise<void> {
  await vi.advanceTimersByTimeAsync(IDLE_MS - 1);
  expect(left).toEqual([]);
  await vi.advanceTimersByTimeAsync(1);
  expect(left).toEqual([guildId]);
}

describe('the idle watcher', () => {
  it('leaves a channel that stays empty for the idle time, and not a moment before', async () => {
    await emptied('g1');
    await leavesAtTheEnd('g1');
    expect(watcher.counting('g1')).toBe(false);
  });

  it('stops counting when a listener comes back, and counts again from the start when they leave', async () => {
    await emptied('g1');
    await vi.advanceTimersByTimeAsync(IDLE_MS / 2);
    listeners.set('g1', ['member']);
    watcher.check('g1');
    expect(watcher.counting('g1')).toBe(false);
    await emptied('g1');
    await leavesAtTheEnd('g1');
  });

  it('does not leave when someone is back at the end of the countdown without a check', async () => {
    await emptied('g1');
    listeners.set('g1', ['member']);
    await vi.advanceTimersByTimeAsync(IDLE_MS);
    expect(watcher.counting('g1')).toBe(false);
    expect(left).toEqual([]);
  });

  it('never counts a player told to stay, nor one that plays nowhere', async () => {
    listeners.set('g1', []);
    staying.add('g1');
    watcher.check('g1');
    watcher.check('g2');
    listeners.set('g3', []);
    watcher.check('g3');
    // g3's countdown is the sign that the checks have been read through.
    await readThrough();
    expect(watcher.counting('g3')).toBe(true);
    expect(watcher.counting('g1')).toBe(false);
    expect(watcher.counting('g2')).toBe(false);
    await vi.advanceTimersByTimeAsync(IDLE_MS);
    expect(left).toEqual(['g3']);
  });

  it('forgets a countdown when the player ends', async () => {
    await emptied('g1');
    watcher.forget('g1');
    await emptied('g2');
    await vi.advanceTimersByTimeAsync(IDLE_MS);
    expect(left).toEqual(['g2']);
  });
});
