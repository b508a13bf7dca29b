/**
 * BENCH_TRACE=<dir>: what a process of a benchmark stopped for, with wall-clock times, written to
 * <dir>/<ROLE or bench>-<pid>.log: `gc <at ms> <pause ms> <kind>` (V8's kinds: 1 scavenge,
 * 2 minor mark-sweep, 4 mark-compact, 8 incremental, 16 weak callbacks) and `stall <at ms> <ms>`
 * (the event loop late by more than 30 ms). Loaded with `--require` into the bot processes
 * (test/bench/support.ts) and by the benchmark itself.
 */
/* global process, performance, setInterval */
const { PerformanceObserver } = process.getBuiltinModule('node:perf_hooks');
const fs = process.getBuiltinModule('node:fs');
const path = process.getBuiltinModule('node:path');

const dir = process.env.BENCH_TRACE;
if (dir && !globalThis.benchTraceStarted) {
  globalThis.benchTraceStarted = true;
  fs.mkdirSync(dir, { recursive: true });
  const file = path.join(dir, `${process.env.ROLE ?? 'bench'}-${process.pid}.log`);
  const lines = [];
  const flush = () => {
    if (lines.length > 0) fs.appendFileSync(file, `${lines.splice(0).join('\n')}\n`);
  };
  setInterval(flush, 1000).unref();
  process.on('exit', flush);
  new PerformanceObserver((list) => {
    for (const entry of list.getEntries()) {
      if (entry.duration >= 5) lines.push(`gc ${Math.round(performance.timeOrigin + entry.startTime)} ${entry.duration.toFixed(1)} ${entry.detail?.kind ?? 0}`);
    }
  }).observe({ entryTypes: ['gc'] });
  const TICK_MS = 10;
  let last = Date.now();
  setInterval(() => {
    const now = Date.now();
    if (now - last - TICK_MS > 30) lines.push(`stall ${last} ${now - last - TICK_MS}`);
    last = now;
  }, TICK_MS).unref();
}
