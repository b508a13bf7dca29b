/**
 * The event-loop watch behind `/livez`, on fake timers: moving the system time without running
 * timers is a stall (the ticks come late, as after SIGSTOP or a long synchronous task).
 */
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { LIVENESS_WINDOW_MS, watchEventLoop, type Liveness } from '../../../src/http/liveness.js';

const LIMIT_MS = 1_000;
let watch: Liveness;

beforeEach(() => {
  vi.useFakeTimers();
  watch = watchEventLoop({ stallLimitMs: LIMIT_MS, now: () => Date.now() });
});
afterEach(() => {
  watch.stop();
  vi.useRealTimers();
});

/** The process does not run for `ms`: the clock moves, no timer fires. */
const stall = (ms: number) => vi.setSystemTime(Date.now() + ms);

describe('watchEventLoop', () => {
  it('is live while the loop keeps turning', () => {
    vi.advanceTimersByTime(5_000);
    expect(watch.check()).toEqual({ live: true, stallMs: 0 });
  });

  it('sees a stall past the limit at once, before the late tick has run', () => {
    vi.advanceTimersByTime(980);
    stall(1_500);
    expect(watch.check()).toMatchObject({ live: false });
    expect(watch.check().stallMs).toBeGreaterThanOrEqual(1_450);
  });

  it('remembers the stall through the window whichever second it fell in, then is live again', () => {
    for (const offset of [0, 20, 960, 990]) {
      vi.advanceTimersByTime(LIVENESS_WINDOW_MS + offset);
      expect(watch.check().live, `steady before the stall (offset ${offset})`).toBe(true);
      stall(1_500);
      vi.advanceTimersByTime(50);
      expect(watch.check(), `just after the stall (offset ${offset})`).toMatchObject({ live: false });
      vi.advanceTimersByTime(LIVENESS_WINDOW_MS - 2_000);
      expect(watch.check().live, `within the window (offset ${offset})`).toBe(false);
      vi.advanceTimersByTime(3_000);
      expect(watch.check(), `after the window (offset ${offset})`).toEqual({ live: true, stallMs: 0 });
    }
  });

  it('is live through a stall under the limit, and reports it', () => {
    vi.advanceTimersByTime(500);
    stall(600);
    vi.advanceTimersByTime(100);
    expect(watch.check()).toMatchObject({ live: true });
    expect(watch.check().stallMs).toBeGreaterThanOrEqual(550);
  });
});
