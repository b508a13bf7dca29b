/**
 * The workers' thread (started by workers-thread.ts): the app's worker role on the services the
 * host process started, with its own pools and connections. It answers the host's requests for
 * its metrics, and stops when told, within the time it is given.
 */
import { parentPort, workerData } from 'node:worker_threads';
import { startApp, type App } from './app.js';
import { createLogger } from './logger.js';
import type { FromWorkersThread, ToWorkersThread, WorkersThreadData } from './workers-thread.js';

const { config, overrides } = workerData as WorkersThreadData;
const port = parentPort!;
const post = (message: FromWorkersThread) => port.postMessage(message);
const logger = createLogger({ level: config.logLevel, role: config.role }).child({ thread: 'workers' });

let app: App | undefined;
// As on the main thread: a stray rejection is logged and counted, and the workers run on.
process.on('unhandledRejection', (reason) => {
  logger.error({ err: reason }, 'unhandled rejection');
  app?.deps.metrics.unhandledRejections.inc();
});

const started = startApp(config, logger, { ...overrides, parts: { gateway: false, worker: true, http: false }, inThread: true });

port.on('message', (message: ToWorkersThread) => {
  if (message.type === 'metrics') {
    void started
      .then((running) => running.deps.metrics.registry.getMetricsAsJSON())
      .then((metrics) => post({ type: 'metrics', id: message.id, metrics }))
      .catch(() => post({ type: 'metrics', id: message.id, metrics: [] }));
    return;
  }
  void started
    .then((running) => running.stop(message.withinMs === null ? {} : { withinMs: message.withinMs }))
    .catch((err: unknown) => logger.error({ err }, 'stopping the workers thread failed'))
    .finally(() => exitFlushed(0));
});

try {
  app = await started;
  post({ type: 'started' });
} catch (error) {
  logger.error({ err: error }, 'the workers thread did not start');
  post({ type: 'start-failed', message: error instanceof Error ? error.message : String(error) });
  exitFlushed(1);
}

/** Ends the thread once its log lines are written: pino writes asynchronously, and a thread's exit drops what is still pending. */
function exitFlushed(code: number): void {
  const exit = () => process.exit(code);
  setTimeout(exit, 1_000);
  logger.flush(exit);
}
