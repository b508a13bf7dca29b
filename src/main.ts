/** `npm start`: the bot, in the role that ROLE names (all parts in one process by default). */
import { exitWithError, isExpectedFailure } from './cli-support.js';
import { loadConfig, type Config } from './config.js';
import { createLogger } from './logger.js';
import type { App } from './app.js';

/**
 * A stop has SHUTDOWN_LIMIT_MS (30 s, Kubernetes' grace period) for the drain and for workers to
 * finish the entries in hand; it is told so, less a second for the exit, and an entry that would
 * outlast it is left to the next worker instead.
 */
const EXIT_MARGIN_MS = 1_000;

let config: Config;
try {
  config = loadConfig();
} catch (error) {
  exitWithError(error);
}

const logger = createLogger({ level: config.logLevel, role: config.role });
let app: App | undefined;
let signalled: NodeJS.Signals | undefined;
/** When the signal came (performance.now()): the stop's time counts from there, start-up included. */
let signalledAt = 0;

function shutdown(signal: NodeJS.Signals): void {
  if (signalled) return;
  signalled = signal;
  signalledAt = performance.now();
  logger.info({ signal }, 'shutting down');
  // A part that cannot finish (Redis gone, say, while workers close) must not keep the
  // process alive for ever: a supervisor waits, then the work in hand is taken over anyway.
  setTimeout(() => {
    logger.error({ afterMs: config.shutdownLimitMs }, 'shutdown did not finish in time; exiting');
    process.exit(1);
  }, config.shutdownLimitMs).unref();
  // A signal during start-up is handled once the app is up (see below).
  if (app) stopAndExit(app);
}

function stopAndExit(running: App): void {
  running
    .stop({ drainMs: config.shutdownDrainMs, withinMs: config.shutdownLimitMs - EXIT_MARGIN_MS - (performance.now() - signalledAt) })
    .then(() => {
      logger.info('stopped');
      process.exit(0);
    })
    .catch((err: unknown) => {
      logger.error({ err }, 'shutdown failed');
      process.exit(1);
    });
}

// Logged and counted, and the process runs on rather than crash as Node would: one stray
// rejection must not drop a gateway's sessions and the interactions in hand.
// Why: docs/decisions/health-for-schedulers.md
let unhandledBeforeStart = 0;
process.on('unhandledRejection', (reason) => {
  logger.error({ err: reason }, 'unhandled rejection');
  if (app) app.deps.metrics.unhandledRejections.inc();
  else unhandledBeforeStart += 1;
});

// Listening before start-up: a SIGTERM that arrives while the bot starts must stop it cleanly,
// not kill it with the default action.
process.on('SIGTERM', shutdown);
process.on('SIGINT', shutdown);

try {
  // Imported only once the configuration is known to be good: a bad one fails in milliseconds.
  const { startApp } = await import('./app.js');
  app = await startApp(config, logger, { workersInThread: config.workersInThread });
  app.deps.metrics.unhandledRejections.inc(unhandledBeforeStart);
  if (signalled) stopAndExit(app);
} catch (error) {
  // An expected failure (a service that cannot start) is the one line exitWithError prints.
  if (!isExpectedFailure(error)) logger.error({ err: error }, 'start-up failed');
  exitWithError(error);
}
