/**
 * The poll worker's limiter (workers.ts, `pollLimiter`) against a model of BullMQ's limiter:
 * a shared Redis key that the first start after it expired sets with a time to live of
 * `duration` (whole milliseconds), each start counting, no start while the count is at `max`.
 * The model starts polls as fast as the limiter allows (the queue always full) and lets each
 * request leave up to `POLL_START_SLACK_MS` after its start, the worst way round.
 */
import { describe, expect, it } from 'vitest';
import { pollLimiter, POLL_START_SLACK_MS } from '../../../src/pipeline/workers.js';

/** When polls that become due at `due` (ms, ascending) start through a BullMQ limiter `{ max, duration }`: each as soon as it lets it. */
function startsThrough(limiter: { max: number; duration: number }, due: number[]): number[] {
  const starts: number[] = [];
  let windowOpened = -Infinity;
  let inWindow = 0;
  for (const at of due) {
    let now = Math.max(at, starts.at(-1) ?? -Infinity);
    if (now >= windowOpened + limiter.duration) {
      windowOpened = now;
      inWindow = 0;
    } else if (inWindow >= limiter.max) {
      now = windowOpened + limiter.duration;
      windowOpened = now;
      inWindow = 0;
    }
    starts.push(now);
    inWindow += 1;
  }
  return starts;
}

/** `count` polls all due at once: the limiter alone sets the pace. */
const greedyStarts = (limiter: { max: number; duration: number }, count: number) => startsThrough(limiter, Array(count).fill(0));

/** The most requests in any half-open second. */
function busiestSecond(times: number[]): number {
  const sorted = [...times].sort((a, b) => a - b);
  let busiest = 0;
  for (let first = 0, last = 0; last < sorted.length; last += 1) {
    while (sorted[last]! - sorted[first]! >= 1000) first += 1;
    busiest = Math.max(busiest, last - first + 1);
  }
  return busiest;
}

/** The busiest second when requests leave up to `slack` ms after their starts, the worst way round: the early ones late, the later ones on time. */
function busiestSecondWithLateness(starts: number[], slack: number): number {
  let busiest = 0;
  for (let k = 0; k <= starts.length; k += 1) busiest = Math.max(busiest, busiestSecond(starts.map((start, i) => start + (i < k ? slack : 0))));
  return busiest;
}

describe('pollLimiter', () => {
  it('never lets more than the cap into any second, even with requests leaving up to the slack late', () => {
    for (const cap of [1, 2, 3, 4, 7, 20, 33, 50, 100, 250, 499, 500]) {
      const starts = greedyStarts(pollLimiter(cap), cap * 3);
      expect(busiestSecond(starts), `cap ${cap}`).toBeLessThanOrEqual(cap);
      expect(busiestSecondWithLateness(starts, POLL_START_SLACK_MS), `cap ${cap} with lateness`).toBeLessThanOrEqual(cap);
    }
  });

  it('needs the slack: one poll per 1000 / cap ms would let late requests crowd a second', () => {
    const starts = greedyStarts({ max: 1, duration: 1000 / 20 }, 60);
    expect(busiestSecond(starts)).toBe(20);
    expect(busiestSecondWithLateness(starts, POLL_START_SLACK_MS)).toBe(21);
  });

  it('spaces polls evenly, at most 6% below the cap for the usual settings', () => {
    expect(pollLimiter(20)).toEqual({ max: 1, duration: 53 });
    expect(pollLimiter(100)).toEqual({ max: 1, duration: 11 });
    for (const cap of [4, 20, 50]) expect(1000 / pollLimiter(cap).duration).toBeGreaterThanOrEqual(cap * 0.94);
  });

  it('holds caps beyond a start per millisecond at 1,000 per second', () => {
    expect(pollLimiter(5_000)).toEqual({ max: 1, duration: 1 });
    expect(busiestSecond(greedyStarts(pollLimiter(5_000), 5_000))).toBe(1000);
  });

  it('where the fixed one-second window it replaces let nearly twice the cap through', () => {
    const cap = 100;
    // One poll opens a window; the rest come due at its end, and as many again right after.
    const due = [0, ...Array<number>(cap * 3).fill(999)];
    expect(busiestSecond(startsThrough({ max: cap, duration: 1000 }, due))).toBe(2 * cap - 1);
    expect(busiestSecond(startsThrough(pollLimiter(cap), due))).toBeLessThanOrEqual(cap);
  });
});
