/**
 * The poll schedule (processors/poll.ts) worked out for the workload of issue 12's poll
 * benchmark: tasks spread evenly over 30–180 s (0.5–3× the song's expected 60 s), with the
 * default bounds of 5 s and 60 s between polls. A tiny deterministic simulation of the
 * schedule alone (no queueing, no poll cost): the figures the benchmark calls "schedule alone".
 */
import { describe, expect, it } from 'vitest';
import {
  FIRST_POLL_SHARE,
  initialPollDelayMs,
  nextPollDelayMs,
  POLL_SPACING_SHARE,
} from '../../../../src/pipeline/processors/poll.js';

const EXPECTED_SECONDS = 60;
const INTERVAL = { min: 5_000, max: 60_000 };

/** Times (ms after submission) the schedule polls a task that ends at `durationMs`, up to and including the one that finds it. */
function pollsUntilFound(durationMs: number, interval = INTERVAL, expectedSeconds = EXPECTED_SECONDS): number[] {
  const polls = [initialPollDelayMs(expectedSeconds, interval)];
  while (polls.at(-1)! < durationMs) polls.push(polls.at(-1)! + nextPollDelayMs(polls.at(-1)!, interval));
  return polls;
}

interface Figures {
  readonly tasks: number;
  /** Delay from the task's end to the poll that finds it, in % of the task's length. */
  readonly delayP50: number;
  readonly delayP99: number;
  readonly delayMax: number;
  /** All polls over all task time, per 10 s. */
  readonly pollsPer10s: number;
}

function quantile(sorted: readonly number[], q: number): number {
  return sorted[Math.min(sorted.length - 1, Math.ceil(q * sorted.length) - 1)]!;
}

function figures(durationsMs: readonly number[], interval = INTERVAL): Figures {
  let polls = 0;
  const shares = durationsMs
    .map((duration) => {
      const times = pollsUntilFound(duration, interval);
      polls += times.length;
      return ((times.at(-1)! - duration) / duration) * 100;
    })
    .sort((a, b) => a - b);
  const taskMs = durationsMs.reduce((sum, d) => sum + d, 0);
  return {
    tasks: durationsMs.length,
    delayP50: quantile(shares, 0.5),
    delayP99: quantile(shares, 0.99),
    delayMax: shares.at(-1)!,
    pollsPer10s: (polls / taskMs) * 10_000,
  };
}

/** 15,000 task lengths evenly over [from, to) s, in ms. */
function evenly(from: number, to: number, count = 15_000): number[] {
  return Array.from({ length: count }, (_, i) => Math.round((from + ((to - from) * (i + 0.5)) / count) * 1000));
}

/** The benchmark's own 1,000 lengths (test/bench/poll.ts, golden-ratio sequence over 30–180 s). */
const benchLengths = Array.from({ length: 1000 }, (_, i) => Math.round((30 + 150 * ((i * 0.6180339887) % 1)) * 1000));

describe('initialPollDelayMs', () => {
  it('polls first at a little over half the expected duration', () => {
    expect(FIRST_POLL_SHARE).toBe(0.55);
    expect(initialPollDelayMs(60, INTERVAL)).toBe(33_000);
    expect(initialPollDelayMs(120, INTERVAL)).toBe(66_000);
  });

  it('waits at least the shortest interval and never past the deadline', () => {
    expect(initialPollDelayMs(2, INTERVAL)).toBe(5_000);
    expect(initialPollDelayMs(60, INTERVAL, 20_000)).toBe(20_000);
    expect(initialPollDelayMs(60, INTERVAL, -5)).toBe(0);
  });
});

describe('nextPollDelayMs', () => {
  it('waits a fixed share of the time since submission', () => {
    expect(POLL_SPACING_SHARE).toBe(0.12);
    expect(nextPollDelayMs(100_000, INTERVAL)).toBe(12_000);
    expect(nextPollDelayMs(250_000, INTERVAL)).toBe(30_000);
  });

  it('stays within the configured bounds', () => {
    expect(nextPollDelayMs(0, INTERVAL)).toBe(5_000);
    expect(nextPollDelayMs(30_000, INTERVAL)).toBe(5_000);
    expect(nextPollDelayMs(-1_000, INTERVAL)).toBe(5_000);
    expect(nextPollDelayMs(10 * 60_000, INTERVAL)).toBe(60_000);
    expect(nextPollDelayMs(1_000_000, { min: 50, max: 50 })).toBe(50);
  });

  it('never waits past the deadline', () => {
    expect(nextPollDelayMs(100_000, INTERVAL, 3_000)).toBe(3_000);
    expect(nextPollDelayMs(100_000, INTERVAL, 0)).toBe(0);
    expect(nextPollDelayMs(100_000, INTERVAL, -10)).toBe(0);
  });

  it('is the same spacing for the same elapsed time: late polls catch up instead of drifting', () => {
    // The schedule depends on the clock, not on how many polls came before.
    expect(nextPollDelayMs(80_000, INTERVAL)).toBe(nextPollDelayMs(80_000, INTERVAL));
    expect(nextPollDelayMs(90_000, INTERVAL)).toBeGreaterThan(nextPollDelayMs(80_000, INTERVAL));
  });
});

describe('the schedule on tasks of 0.5–3× the expected duration (30–180 s at 60 s)', () => {
  it('finds tasks within 12% of their length past the 5 s floor, with about one poll per 10 s', () => {
    const all = figures(evenly(30, 180));
    // Worked out: p50 6.0%, p99 12.0%, max 15.1% (a 33–38 s task found by the 5 s floor), 0.999 polls per 10 s.
    expect(all.delayP50).toBeLessThan(6.5);
    expect(all.delayP99).toBeLessThanOrEqual(12.1);
    expect(all.delayMax).toBeLessThan(15.5);
    expect(all.pollsPer10s).toBeLessThanOrEqual(1);
    expect(all.pollsPer10s).toBeGreaterThan(0.95);
    // The benchmark's own lengths give the same figures.
    const bench = figures(benchLengths);
    expect(bench.delayP99).toBeLessThanOrEqual(12.1);
    expect(bench.pollsPer10s).toBeLessThanOrEqual(1);
  });

  it('by task length: the floor sets the worst delay of short tasks, the share that of the rest', () => {
    const short = figures(evenly(30, 60));
    const middle = figures(evenly(60, 120));
    const long = figures(evenly(120, 180));
    // 30–60 s: 0.85 polls per 10 s; delay p50 6%, p99 14%, max 15% (5 s gaps are 10–15% of 33–50 s).
    expect(short.pollsPer10s).toBeLessThan(0.9);
    expect(short.delayMax).toBeLessThan(15.5);
    // 60–120 s and 120–180 s: the delay never reaches the spacing share; 1.09 and 0.97 polls per 10 s.
    for (const band of [middle, long]) expect(band.delayMax).toBeLessThanOrEqual(POLL_SPACING_SHARE * 100 + 0.1);
    expect(middle.pollsPer10s).toBeLessThan(1.1);
    expect(long.pollsPer10s).toBeLessThan(1);
    // The old schedule (first at 0.8×, then 5 s × 1.5^n up to 60 s) gave p99 52% and max 60% on the same tasks.
  });

  it('finds a task of exactly half the expected duration within 10% of its length', () => {
    const [first] = pollsUntilFound(30_000);
    expect((first! - 30_000) / 30_000).toBeLessThanOrEqual(0.1);
  });

  it('reaches the longest interval only for tasks far longer than expected', () => {
    // 12% of elapsed reaches 60 s at 500 s elapsed, over 8× the expected duration.
    const times = pollsUntilFound(30 * 60_000);
    const gaps = times.slice(1).map((t, i) => t - times[i]!);
    expect(Math.max(...gaps)).toBe(60_000);
    const firstLong = times[gaps.indexOf(60_000)]!;
    expect(firstLong).toBeGreaterThanOrEqual(500_000);
  });

  it('with a lower floor, the delay of short tasks follows the share too (why the floor, not the share, sets p99)', () => {
    const all = figures(evenly(30, 180), { min: 2_500, max: 60_000 });
    expect(all.delayMax).toBeLessThanOrEqual(POLL_SPACING_SHARE * 100 + 0.1);
    // ... at more polls than the target allows.
    expect(all.pollsPer10s).toBeGreaterThan(1);
  });
});
