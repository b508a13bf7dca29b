/**
 * The poll schedule (processors/poll.ts) worked out for the workload of the poll
 * benchmark: tasks spread evenly over 30–180 s (0.5–3× the song's expected 60 s), with the
 * default bounds of 5 s and 60 s between polls. A tiny deterministic simulation of the
 * schedule alone (no queueing, no poll cost): the figures the benchmark calls "schedule alone".
 * Both modes: webhooks off (polls find every end) and webhooks on (polls only the backup).
 */
import { describe, expect, it } from 'vitest';
import { DEFAULT_SETTINGS, type PipelineDeps } from '../../../../src/pipeline/deps.js';
import {
  BACKUP_FIRST_POLL_SHARE,
  BACKUP_POLL_SPACING_SHARE,
  FIRST_POLL_SHARE,
  initialPollDelayMs,
  nextPollDelayMs,
  POLL_SPACING_SHARE,
  webhooksOn,
} from '../../../../src/pipeline/processors/poll.js';
import { firstPollDelayMs } from '../../../../src/pipeline/processors/send-to-service.js';

const EXPECTED_SECONDS = 60;
const INTERVAL = { min: 5_000, max: 60_000 };

/** Times (ms after submission) the schedule polls a task that ends at `durationMs`, up to and including the one that finds it. */
function pollsUntilFound(durationMs: number, interval = INTERVAL, webhooks = false, expectedSeconds = EXPECTED_SECONDS): number[] {
  const polls = [initialPollDelayMs(expectedSeconds, interval, Infinity, webhooks)];
  while (polls.at(-1)! < durationMs) polls.push(polls.at(-1)! + nextPollDelayMs(polls.at(-1)!, interval, Infinity, webhooks));
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
  /** Polls per task, up to and including the one that finds it. */
  readonly pollsPerTask: number;
  /** Polls per task before it ends: all a task costs when its webhook arrives. */
  readonly pollsBeforeEndPerTask: number;
}

function quantile(sorted: readonly number[], q: number): number {
  return sorted[Math.min(sorted.length - 1, Math.ceil(q * sorted.length) - 1)]!;
}

function figures(durationsMs: readonly number[], interval = INTERVAL, webhooks = false): Figures {
  let polls = 0;
  let beforeEnd = 0;
  const shares = durationsMs
    .map((duration) => {
      const times = pollsUntilFound(duration, interval, webhooks);
      polls += times.length;
      beforeEnd += times.filter((at) => at < duration).length;
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
    pollsPerTask: polls / durationsMs.length,
    pollsBeforeEndPerTask: beforeEnd / durationsMs.length,
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

describe('webhooks on: polls only as the backup', () => {
  it('polls first at the expected duration, then every 40% of the time since submission', () => {
    expect(BACKUP_FIRST_POLL_SHARE).toBe(1);
    expect(BACKUP_POLL_SPACING_SHARE).toBe(0.4);
    expect(initialPollDelayMs(60, INTERVAL, Infinity, true)).toBe(60_000);
    expect(nextPollDelayMs(60_000, INTERVAL, Infinity, true)).toBe(24_000);
    expect(nextPollDelayMs(100_000, INTERVAL, Infinity, true)).toBe(40_000);
  });

  it('keeps the same bounds and never waits past the deadline', () => {
    expect(initialPollDelayMs(2, INTERVAL, Infinity, true)).toBe(5_000);
    expect(initialPollDelayMs(60, INTERVAL, 20_000, true)).toBe(20_000);
    expect(initialPollDelayMs(60, INTERVAL, -5, true)).toBe(0);
    expect(nextPollDelayMs(0, INTERVAL, Infinity, true)).toBe(5_000);
    expect(nextPollDelayMs(150_000, INTERVAL, Infinity, true)).toBe(60_000);
    expect(nextPollDelayMs(10 * 60_000, INTERVAL, Infinity, true)).toBe(60_000);
    expect(nextPollDelayMs(100_000, INTERVAL, 3_000, true)).toBe(3_000);
    expect(nextPollDelayMs(100_000, INTERVAL, -10, true)).toBe(0);
  });

  it('is chosen by PUBLIC_URL: the submit processor times the first poll by it', () => {
    const deps = (publicUrl: string | undefined) => ({ settings: { ...DEFAULT_SETTINGS, publicUrl } }) as unknown as PipelineDeps;
    expect(webhooksOn({ publicUrl: undefined }, 'song')).toBe(false);
    expect(webhooksOn({ publicUrl: '' }, 'song')).toBe(false);
    expect(webhooksOn({ publicUrl: 'https://bot.example.com' }, 'song')).toBe(true);
    // A persona song's operation (sonic create) takes no webhook: its polls are not a backup.
    expect(webhooksOn({ publicUrl: 'https://bot.example.com' }, 'persona_song')).toBe(false);
    expect(firstPollDelayMs(deps(undefined), { kind: 'song' })).toBe(33_000);
    expect(firstPollDelayMs(deps('https://bot.example.com'), { kind: 'song' })).toBe(60_000);
    expect(firstPollDelayMs(deps('https://bot.example.com'), { kind: 'voice' })).toBe(120_000);
    expect(firstPollDelayMs(deps('https://bot.example.com'), { kind: 'persona_song' })).toBe(66_000);
  });
});

describe('polls per task in each mode (60 s expected)', () => {
  it('a 60 s and a 180 s task', () => {
    // Webhooks off: 33, 38, 43, 48.2, 53.9, 60.4 s for the 60 s task; 16 polls up to 187.6 s for the 180 s one.
    expect(pollsUntilFound(60_000)).toHaveLength(6);
    expect(pollsUntilFound(180_000)).toHaveLength(16);
    // Webhooks on: 60 s finds the 60 s task; 60, 84, 117.6, 164.6, 224.6 s the 180 s one.
    expect(pollsUntilFound(60_000, INTERVAL, true)).toEqual([60_000]);
    expect(pollsUntilFound(180_000, INTERVAL, true)).toEqual([60_000, 84_000, 117_600, 164_640, 224_640]);
    // With its webhook arriving, a task costs only the polls before its end: none and 4.
    expect(pollsUntilFound(60_000, INTERVAL, true).filter((at) => at < 60_000)).toHaveLength(0);
    expect(pollsUntilFound(180_000, INTERVAL, true).filter((at) => at < 180_000)).toHaveLength(4);
  });

  it('over 30–180 s: 10.5 polls per task with webhooks off, 3.0 (2.0 before the end) with them on', () => {
    const off = figures(evenly(30, 180));
    const on = figures(evenly(30, 180), INTERVAL, true);
    // Worked out: off 10.49 polls per task (0.999 per 10 s); on 2.96 (0.282 per 10 s), 1.96 of them before the end.
    expect(off.pollsPerTask).toBeGreaterThan(10.4);
    expect(off.pollsPerTask).toBeLessThan(10.6);
    expect(on.pollsPerTask).toBeGreaterThan(2.9);
    expect(on.pollsPerTask).toBeLessThan(3);
    expect(on.pollsBeforeEndPerTask).toBeLessThan(2);
    expect(on.pollsPer10s).toBeLessThan(0.3);
    // The same on the benchmark's own lengths.
    expect(figures(benchLengths, INTERVAL, true).pollsPerTask).toBeLessThan(3);
  });

  it('webhooks on, a lost webhook is still found: within 40% of a task that ran the expected time or longer, 100% of one that ran half', () => {
    // Worked out: delay p50 21%, p99 90%, max 100% over 30–180 s; max 40% over 60–180 s.
    const all = figures(evenly(30, 180), INTERVAL, true);
    expect(all.delayMax).toBeLessThanOrEqual(100);
    expect(figures(evenly(60, 180), INTERVAL, true).delayMax).toBeLessThanOrEqual(BACKUP_POLL_SPACING_SHARE * 100 + 0.1);
  });
});

describe('the schedule\'s bounds, whatever the task and however late its polls run', () => {
  /** A fixed pseudo-random lateness per poll, up to `maxMs` (the same every run). */
  const lateness = (k: number, maxMs: number) => Math.round(maxMs * ((k * 0.7548776662) % 1));

  /**
   * A task of `durationMs` polled as the processor does it: each poll runs late by some amount,
   * and the next is timed from when it ran. The delay past the end, less the lateness of the
   * poll that finds the task, and the number of polls.
   */
  function polledLate(durationMs: number, maxLateMs: number, interval = INTERVAL) {
    let due = initialPollDelayMs(EXPECTED_SECONDS, interval);
    let ran = due + lateness(0, maxLateMs);
    let polls = 1;
    let lastGap = 0;
    while (ran < durationMs) {
      lastGap = nextPollDelayMs(ran, interval);
      due = ran + lastGap;
      ran = due + lateness(polls, maxLateMs);
      polls += 1;
    }
    return { polls, scheduledDelayMs: due - durationMs, lastGap };
  }

  it('the gap after a poll is never more than the spacing share of the time since submission, past the floor', () => {
    for (let elapsed = 0; elapsed <= 20 * 60_000; elapsed += 250) {
      const gap = nextPollDelayMs(elapsed, INTERVAL);
      expect(gap).toBeGreaterThanOrEqual(INTERVAL.min);
      expect(gap).toBeLessThanOrEqual(Math.max(INTERVAL.min, Math.ceil(POLL_SPACING_SHARE * elapsed)));
    }
  });

  it('a late poll delays only itself: the next one is again within the share of the task\'s time', () => {
    for (const maxLateMs of [0, 2_000, 10_000]) {
      for (let duration = 30_000; duration <= 600_000; duration += 1_337) {
        const { scheduledDelayMs } = polledLate(duration, maxLateMs);
        // Due no later than the share (or the floor) past the end: what adds to it is that poll's own lateness.
        expect(scheduledDelayMs).toBeLessThanOrEqual(Math.max(INTERVAL.min, Math.ceil(POLL_SPACING_SHARE * duration)));
      }
    }
  });

  it('spends at most 1.2 polls per 10 s of any task of half the expected time or longer (1 on average, above), the finding one counted; late polls spend fewer', () => {
    for (let duration = 30_000; duration <= 600_000; duration += 1_337) {
      const onTime = polledLate(duration, 0);
      // The most, 1.19 per 10 s, is for tasks of about 76 s, polled at the 5 s floor early on.
      expect(onTime.polls / (duration / 10_000)).toBeLessThanOrEqual(1.2);
      expect(polledLate(duration, 10_000).polls).toBeLessThanOrEqual(onTime.polls);
    }
  });
});
