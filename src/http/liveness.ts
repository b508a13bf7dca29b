/**
 * What `/livez` answers: whether this process's event loop has kept turning. It measures the
 * loop's delays (`perf_hooks.monitorEventLoopDelay`) and keeps the longest of each second for
 * the last {@link LIVENESS_WINDOW_MS}; the process is live while none of them passed the limit.
 * It reads no dependency: an outage of Postgres or Redis must not make an orchestrator restart
 * every process at once. Why: docs/decisions/health-for-schedulers.md
 */
import { monitorEventLoopDelay } from 'node:perf_hooks';

/** How long a stall is remembered: a stall that does not recur fails at most one probe in ten seconds. */
export const LIVENESS_WINDOW_MS = 10_000;
const SLOT_MS = 1_000;

export interface Liveness {
  /** Live unless the event loop stalled longer than the limit within the window; `stallMs`: the longest stall seen there. */
  check(): { readonly live: boolean; readonly stallMs: number };
  stop(): void;
}

export function watchEventLoop(options: { readonly stallLimitMs: number }): Liveness {
  const histogram = monitorEventLoopDelay({ resolution: 20 });
  histogram.enable();
  // The longest delay of each past second, newest last.
  const slots: number[] = [];
  const rotate = setInterval(() => {
    slots.push(histogram.max / 1e6);
    histogram.reset();
    if (slots.length > LIVENESS_WINDOW_MS / SLOT_MS) slots.shift();
  }, SLOT_MS);
  rotate.unref();
  return {
    check() {
      // The current second too: a stall that just ended is in the histogram, not yet in a slot.
      const stallMs = Math.round(Math.max(histogram.max / 1e6, ...slots));
      return { live: stallMs <= options.stallLimitMs, stallMs };
    },
    stop() {
      clearInterval(rotate);
      histogram.disable();
    },
  };
}
