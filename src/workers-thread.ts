/**
 * The workers on a thread of their own, for a process that also runs a front (ROLE=all,
 * WORKERS_IN_THREAD): submissions, deliveries, progress edits and polls get their own event loop
 * and core, and a member's command never waits behind them. The thread is the worker role of the
 * same app (workers-thread-main.ts), on the Postgres and Redis this process has started; its log
 * lines go to the same output with `thread: "workers"`, and its metrics join this process's
 * `/metrics`. A thread that exits unasked is started again (the entries it held are taken over
 * when their lock lapses). Why: docs/decisions/workers-on-a-thread.md
 */
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { Worker } from 'node:worker_threads';
import type { Config } from './config.js';
import type { Logger } from './logger.js';
import type { Metrics, MetricsJson } from './metrics.js';

/** What the thread is handed: the configuration (its services already started) and the app's data-only overrides. */
export interface WorkersThreadData {
  readonly config: Config;
  readonly overrides: { readonly queuePrefix?: string; readonly reconcileIntervalMs?: number; readonly lockDurationMs?: number };
}

/** Messages from the host to the thread. */
export type ToWorkersThread = { readonly type: 'metrics'; readonly id: number } | { readonly type: 'stop'; readonly withinMs: number | null };

/** Messages from the thread to the host. */
export type FromWorkersThread =
  | { readonly type: 'started' }
  | { readonly type: 'start-failed'; readonly message: string }
  | { readonly type: 'metrics'; readonly id: number; readonly metrics: MetricsJson };

export interface WorkersThread {
  /** The thread's metrics (empty while it restarts or does not answer within a second). */
  metrics(): Promise<MetricsJson>;
  /** Tells the thread to stop within `withinMs` and waits for it; one still running 250 ms after is terminated. */
  stop(withinMs: number): Promise<void>;
}

/** How long a scrape waits for the thread's metrics. */
const METRICS_TIMEOUT_MS = 1_000;
/** The pause before a crashed thread is started again, doubled for each crash within a minute of the last (at most 30 s). */
const RESTART_AFTER_MS = 1_000;
const RESTART_AT_MOST_MS = 30_000;
const TERMINATE_AFTER_MS = 250;

/**
 * Starts the thread and resolves once its workers run (after its reconcile pass), or rejects
 * with its start-up failure. `metrics` counts the restarts.
 */
export async function startWorkersThread(data: WorkersThreadData, deps: { readonly logger: Logger; readonly metrics: Metrics }): Promise<WorkersThread> {
  const { logger, metrics } = deps;
  let worker: Worker;
  let stopping = false;
  let nextId = 0;
  const answers = new Map<number, (metrics: MetricsJson) => void>();
  let crashes = 0;
  let lastCrashAt = Number.NEGATIVE_INFINITY;
  let restartTimer: NodeJS.Timeout | undefined;
  let everStarted = false;

  // Its entries in hand are taken over as stalled once their lock lapses: nothing is lost.
  const restartLater = (code: number) => {
    const now = performance.now();
    crashes = now - lastCrashAt < 60_000 ? crashes + 1 : 1;
    lastCrashAt = now;
    const afterMs = Math.min(RESTART_AT_MOST_MS, RESTART_AFTER_MS * 2 ** (crashes - 1));
    logger.error({ code, afterMs }, 'the workers thread exited; starting another');
    metrics.workersThreadRestarts.inc();
    restartTimer = setTimeout(() => {
      restartTimer = undefined;
      if (!stopping) launch().catch((err: unknown) => logger.error({ err }, 'the workers thread did not start again'));
    }, afterMs);
  };

  const launch = (): Promise<void> =>
    new Promise<void>((resolve, reject) => {
      let started = false;
      worker = openThread(data);
      worker.on('message', (message: FromWorkersThread) => {
        if (message.type === 'started') {
          started = true;
          everStarted = true;
          resolve();
        } else if (message.type === 'start-failed') {
          reject(new Error(message.message));
        } else {
          answers.get(message.id)?.(message.metrics);
          answers.delete(message.id);
        }
      });
      worker.on('error', (err) => logger.error({ err }, 'the workers thread failed'));
      worker.on('exit', (code) => {
        for (const answer of answers.values()) answer([]);
        answers.clear();
        if (!started) reject(new Error(`the workers thread exited during start-up (code ${code})`));
        // The first start's failure is start-up's; after that, one that dies (or fails to start again) is started again.
        if (!stopping && everStarted) restartLater(code);
      });
    });

  await launch();

  return {
    metrics() {
      const id = (nextId += 1);
      return new Promise((resolve) => {
        const timer = setTimeout(() => {
          answers.delete(id);
          resolve([]);
        }, METRICS_TIMEOUT_MS);
        answers.set(id, (values) => {
          clearTimeout(timer);
          resolve(values);
        });
        worker.postMessage({ type: 'metrics', id } satisfies ToWorkersThread);
      });
    },
    async stop(withinMs) {
      stopping = true;
      clearTimeout(restartTimer);
      if (worker.threadId === -1) return;
      const exited = new Promise<void>((resolve) => worker.once('exit', () => resolve()));
      worker.postMessage({ type: 'stop', withinMs: Number.isFinite(withinMs) ? Math.max(0, withinMs) : null } satisfies ToWorkersThread);
      if (!Number.isFinite(withinMs)) return exited;
      let timer: NodeJS.Timeout | undefined;
      const late = new Promise<'late'>((resolve) => (timer = setTimeout(() => resolve('late'), Math.max(0, withinMs) + TERMINATE_AFTER_MS)));
      const outcome = await Promise.race([exited, late]);
      clearTimeout(timer);
      if (outcome === 'late') {
        logger.warn({ withinMs }, 'the workers thread did not stop in time; terminated');
        await worker.terminate();
      }
    },
  };
}

/**
 * The thread, from the build's JavaScript, or from the TypeScript sources (`node --import tsx`),
 * where it registers tsx itself: a worker does not inherit the loader hooks of its starter.
 */
function openThread(data: WorkersThreadData): Worker {
  const options = { workerData: data, stdout: false, stderr: false };
  if (!import.meta.url.endsWith('.ts')) return new Worker(new URL('./workers-thread-main.js', import.meta.url), options);
  const manifest = createRequire(import.meta.url).resolve('tsx/package.json');
  const api = (JSON.parse(readFileSync(manifest, 'utf8')) as { exports: Record<string, { import: { default: string } }> }).exports['./esm/api']!.import.default;
  const tsx = pathToFileURL(path.join(path.dirname(manifest), api)).href;
  const entry = new URL('./workers-thread-main.ts', import.meta.url).href;
  const code = `import(${JSON.stringify(tsx)}).then(({ register }) => { register(); return import(${JSON.stringify(entry)}); });`;
  return new Worker(code, { ...options, eval: true });
}
