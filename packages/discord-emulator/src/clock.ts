import { performance } from 'node:perf_hooks';

/**
 * The emulator's notion of "now". Real time flows, and tests can jump ahead with
 * `advance(ms)` to cross Discord's deadlines (the 3-second initial response window,
 * the 15-minute interaction token lifetime, a gap between voice frames) without waiting.
 */
export class EmulatorClock {
  #offsetMs = 0;

  /** Milliseconds since the Unix epoch, including every advance so far. */
  now(): number {
    return Date.now() + this.#offsetMs;
  }

  /** A monotonic reading in fractional ms (performance.now plus every advance), for timing intervals finely. */
  monotonic(): number {
    return performance.now() + this.#offsetMs;
  }

  /** Moves the clock forward by `ms` milliseconds. */
  advance(ms: number): void {
    if (!Number.isFinite(ms) || ms < 0) throw new RangeError(`clock.advance needs a non-negative number, got ${ms}`);
    this.#offsetMs += ms;
  }

  /** The current time as an ISO 8601 string, as Discord writes timestamps. */
  iso(): string {
    return new Date(this.now()).toISOString();
  }
}
