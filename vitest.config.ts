import { fileURLToPath } from 'node:url';
import { configDefaults, defineConfig } from 'vitest/config';
import { pathWithBundledFfmpeg } from './packages/test-world/src/tools.js';
import LongestFirst from './test/support/sequencer.js';

// expect.poll waits up to 10 s unless a test says otherwise (vitest's default is 1 s): a poll
// waits for something that happens, and on a busy machine that can take more than a second.
const patientPolls = { poll: { timeout: 10_000 } };

// A held event loop fires no timeout: a fork whose loop is held for 120 s is ended instead of
// hanging the run (docs/decisions/held-event-loop.md). Not for e2e's worker threads.
const heldLoopWatchdog = ['test/support/event-loop-watchdog.ts'];

export default defineConfig({
  test: {
    reporters: ['default', './test/support/summary-reporter.ts'],
    // Two files at a time in a pool on two cores (vitest's default is one fewer worker than cores):
    // each file has its own database and queue prefix, so they never see each other's rows.
    maxWorkers: 2,
    // Files share their worker's module cache instead of importing the bot afresh in a new
    // process each: every file builds its own app, database and queue prefix, and no file
    // mocks a module, so nothing a file does is seen by the next. It saves about a second of
    // imports per file (docs/decisions/suite-in-minutes.md).
    pool: 'forks',
    isolate: false,
    // Three forks beside the end-to-end threads: the integration and playground files mostly wait
    // (deadlines, polls, outages, a browser), and with two the forks ran longer than the threads.
    // As many at the start as at most: fewer, and vitest's pool ended a fork while it still had a
    // task (docs/decisions/suite-three-forks.md).
    poolOptions: { forks: { maxForks: 3, minForks: 3 } },
    sequence: { sequencer: LongestFirst },
    // Given to each forked worker's environment at its start, when Node reads it: the workers
    // trust the Discord emulator's self-signed voice gateway certificate (wss://127.0.0.1), and
    // they and what they start find npm's ffmpeg where the system has none.
    env: {
      NODE_EXTRA_CA_CERTS: fileURLToPath(new URL('packages/discord-emulator/certs/voice-localhost.pem', import.meta.url)),
      PATH: pathWithBundledFfmpeg(),
    },
    projects: [
      {
        test: {
          name: 'unit',
          include: ['test/unit/**/*.test.ts'],
          environment: 'node',
          expect: patientPolls,
          setupFiles: heldLoopWatchdog,
        },
      },
      {
        // The music API client against the simulator, over real sockets: no database.
        test: {
          name: 'contract',
          include: ['test/contract/**/*.test.ts'],
          environment: 'node',
          expect: patientPolls,
          setupFiles: heldLoopWatchdog,
        },
      },
      {
        // The stand-in packages' own tests: servers, no database.
        test: {
          name: 'stand-ins',
          include: ['packages/*/test/**/*.test.ts'],
          // The emulator's voice tests play real audio through real voice connections.
          testTimeout: 30_000,
          // The playground's tests drive the whole bot in a browser: they are the playground project.
          exclude: [...configDefaults.exclude, 'packages/playground/**'],
          environment: 'node',
          expect: patientPolls,
          setupFiles: heldLoopWatchdog,
        },
      },
      {
        // The bot's parts on a real Postgres and Redis, in the test's process.
        test: {
          name: 'integration',
          include: ['test/integration/**/*.test.ts'],
          environment: 'node',
          expect: patientPolls,
          globalSetup: ['test/support/global-setup.ts'],
          setupFiles: heldLoopWatchdog,
          testTimeout: 60_000,
          hookTimeout: 120_000,
        },
      },
      {
        // The bot as processes, against the emulator and the simulator. These files mostly wait on
        // the bot and the stand-ins (shards identifying 5 s apart, songs being made, restarts), so
        // they run in worker threads, a pool of their own, beside the forks' files.
        test: {
          name: 'e2e',
          pool: 'threads',
          include: ['test/e2e/**/*.test.ts'],
          environment: 'node',
          expect: patientPolls,
          globalSetup: ['test/support/global-setup.ts'],
          testTimeout: 60_000,
          hookTimeout: 120_000,
        },
      },
      {
        // The playground: the bot in a browser, and the program that serves it.
        test: {
          name: 'playground',
          include: ['packages/playground/test/**/*.test.ts'],
          environment: 'node',
          expect: patientPolls,
          setupFiles: heldLoopWatchdog,
          globalSetup: ['test/support/global-setup.ts'],
          testTimeout: 60_000,
          hookTimeout: 120_000,
        },
      },
    ],
  },
});
