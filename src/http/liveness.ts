/**
 * What `/livez` answers: whether this process's event loop has kept turning. A timer ticks every
 * {@link TICK_MS}; how late each tick comes is the loop's stall, and the longest of each second is
 * kept for the last {@link LIVENESS_WINDOW_MS}. The process is live while none passed the limit.
 * It reads no dependency: an outage of Postgres or Redis must not make an orchestrator restart
 * every process at once. Why: docs/decisions/health-for-schedulers.md
 */
import { performance } from 'node:perf_hooks';

/** How long a stall is remembered: a stall that does not recur fails at most one probe in ten seconds. */
export const LIVENESS_WINDOW_MS = 10_000;
const SLOT_MS = 1_000;
const TICK_MS = 50;

export interface Liveness {
  /** Live unless the event loop stalled longer than the limit within the window; `stallMs`: the longest stall seen there. */
  check(): { readonly live: boolean; readonly stallMs: number };
  stop(): void;
}

export function watchEventLoop(options: { readonly stallLimitMs: number; readonly now?: () => number }): Liveness {
  const now = options.now ?? (() => performance.now());
  // The longest stall of each past second, newest last; `current` is this second's so far.
  const slots: number[] = [];
  let current = 0;
  let slotStart = now();
  let lastTick = now();
  const tick = setInterval(() => {
    const at = now();
    current = Math.max(current, at - lastTick - TICK_MS);
    lastTick = at;
    if (at - slotStart < SLOT_MS) return;
    slots.push(current);
    if (slots.length > LIVENESS_WINDOW_MS / SLOT_MS) slots.shift();
    current = 0;
    slotStart = at;
  }, TICK_MS);
  tick.unref();
  return {
    check() {
      // A stall that just ended, whose late tick has not run yet, counts too.
      const pending = now() - lastTick - TICK_MS;
      const stallMs = Math.max(0, Math.round(Math.max(current, pending, ...slots)));
      return { live: stallMs <= options.stallLimitMs, stallMs };
    },
    stop() {
      clearInterval(tick);
    },
  };
}
