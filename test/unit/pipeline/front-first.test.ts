import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { createFrontFirst, inBackgroundSlot } from '../../../src/pipeline/front-first.js';

/** Starts `count` background entries; each records when it got its slot and holds it until released. */
function startEntries(gate: ReturnType<typeof createFrontFirst>, count: number) {
  const started: number[] = [];
  const releases = new Map<number, () => void>();
  for (let i = 0; i < count; i += 1) {
    void gate.acquire().then((release) => {
      started.push(i);
      releases.set(i, release);
    });
  }
  return { started, release: (i: number) => releases.get(i)!() };
}

/** Runs what is due now (promise callbacks), without moving the fake clock. */
const settled = () => vi.advanceTimersByTimeAsync(0);

describe('front first: background work makes way for members', () => {
  beforeEach(() => {
    vi.useFakeTimers();
  });
  afterEach(() => {
    vi.useRealTimers();
  });

  it('lets every entry go at once while the front has nothing in hand', async () => {
    const gate = createFrontFirst({ busyConcurrency: 2, quietMs: 50, now: () => Date.now() });
    const entries = startEntries(gate, 20);
    await settled();
    expect(entries.started).toHaveLength(20);
    expect(gate.stats()).toEqual({ inHand: 0, active: 20, waiting: 0 });
  });

  it('lets `busyConcurrency` entries go while an interaction is in hand, the next when one ends, and all once quiet', async () => {
    const observed: number[] = [];
    const gate = createFrontFirst({ busyConcurrency: 2, quietMs: 50, now: () => Date.now(), observe: (waiting) => observed.push(waiting) });
    const answered = gate.begin();
    const entries = startEntries(gate, 6);
    await settled();
    expect(gate.stats().waiting).toBe(4);
    expect(entries.started).toEqual([0, 1]);

    // Busy still: one entry done lets one more go, in the order they came.
    entries.release(0);
    await settled();
    expect(entries.started).toEqual([0, 1, 2]);
    expect(gate.stats()).toMatchObject({ active: 2, waiting: 3 });

    // Answered, but an interaction came less than quietMs ago: still one at a time.
    answered();
    await vi.advanceTimersByTimeAsync(49);
    expect(entries.started).toEqual([0, 1, 2]);
    await vi.advanceTimersByTimeAsync(1);
    await settled();
    expect(entries.started).toEqual([0, 1, 2, 3, 4, 5]);
    expect(gate.stats()).toEqual({ inHand: 0, active: 5, waiting: 0 });
    // The gauge saw the queue grow to four, shrink by one, then empty.
    expect(observed.at(-1)).toBe(0);
    expect(Math.max(...observed)).toBe(4);
    expect(observed).toContain(3);
  });

  it('counts the front as busy from each new interaction, and waits for the last one to end', async () => {
    const gate = createFrontFirst({ busyConcurrency: 1, quietMs: 20, now: () => Date.now() });
    const first = gate.begin();
    const second = gate.begin();
    const entries = startEntries(gate, 3);
    await settled();
    expect(gate.stats().waiting).toBe(2);
    first();
    await vi.advanceTimersByTimeAsync(100);
    expect(entries.started).toEqual([0]);
    second();
    await vi.advanceTimersByTimeAsync(20);
    await settled();
    expect(entries.started).toEqual([0, 1, 2]);
  });

  it('never stops background work under a front that is never quiet', async () => {
    const gate = createFrontFirst({ busyConcurrency: 1, quietMs: 50, now: () => Date.now() });
    gate.begin(); // never answered
    const done: number[] = [];
    const work = Array.from({ length: 5 }, (_, i) =>
      inBackgroundSlot(gate, async () => {
        expect(gate.stats().active).toBe(1);
        await new Promise((resolve) => setTimeout(resolve, 10));
        done.push(i);
      }),
    );
    await vi.advanceTimersByTimeAsync(50);
    await Promise.all(work);
    expect(done).toEqual([0, 1, 2, 3, 4]);
  });

  it('gives a slot back once, however often it is released, and when the work throws', async () => {
    const gate = createFrontFirst({ busyConcurrency: 1, quietMs: 50, now: () => Date.now() });
    const answered = gate.begin();
    const release = await gate.acquire();
    release();
    release();
    expect(gate.stats().active).toBe(0);
    await expect(inBackgroundSlot(gate, () => Promise.reject(new Error('upstream down')))).rejects.toThrow('upstream down');
    expect(gate.stats().active).toBe(0);
    answered();
    answered();
    expect(gate.stats().inHand).toBe(0);
  });

  it('runs the work at once without a gate (a process with no front)', async () => {
    await expect(inBackgroundSlot(undefined, () => Promise.resolve(7))).resolves.toBe(7);
  });
});
