/**
 * A guard on a test worker's event loop, for the projects whose files run in forks (a setup
 * file). A loop that never yields (a `for (;;)`, or promises that each start the next) holds the
 * event loop: no timer fires, vitest's test and hook timeouts included, and the run waits for
 * ever. A thread beside the test reads a heartbeat the loop writes every second; when it stops
 * for {@link HELD_LIMIT_MS}, the thread prints the file and test, where the loop is held (the
 * main thread's stack, through the inspector), and ends the fork, so that vitest reports the
 * file failed and the run goes on. Not for worker threads: ending the process would end vitest.
 */
import { Worker } from 'node:worker_threads';
import { beforeAll, beforeEach, expect } from 'vitest';

/** How long the event loop may be held before the fork is ended; `EVENT_LOOP_HELD_LIMIT_MS` overrides it. */
export const HELD_LIMIT_MS = 120_000;

/** The watching thread: plain JavaScript, started with `eval`. */
const WATCHER = `
const { workerData } = require('node:worker_threads');
const { Session } = require('node:inspector');
const { writeSync } = require('node:fs');
const { heartbeat, where, limitMs } = workerData;

// The main thread's stack, paused through the inspector (which reaches a busy thread), or why not.
function mainThreadStack() {
  return new Promise((resolve) => {
    const session = new Session();
    const done = (text) => { clearTimeout(timer); resolve(text); };
    const timer = setTimeout(() => done('(the inspector did not answer)'), 10000);
    try {
      session.connectToMainThread();
      session.on('Debugger.paused', ({ params }) => {
        const frames = params.callFrames.map((f) => '    at ' + (f.functionName || '<anonymous>') + ' (' + f.url + ':' + (f.location.lineNumber + 1) + ')');
        let parent = params.asyncStackTrace;
        while (parent) {
          frames.push('  -- ' + parent.description);
          for (const f of parent.callFrames) frames.push('    at ' + (f.functionName || '<anonymous>') + ' (' + f.url + ':' + (f.lineNumber + 1) + ')');
          parent = parent.parent;
        }
        done(frames.join('\\n'));
      });
      session.post('Debugger.enable', () => session.post('Debugger.setAsyncCallStackDepth', { maxDepth: 16 }, () => session.post('Debugger.pause')));
    } catch (error) {
      done('(no stack: ' + error.message + ')');
    }
  });
}

const check = setInterval(async () => {
  const heldMs = Date.now() - Number(Atomics.load(heartbeat, 0));
  if (heldMs < limitMs) return;
  clearInterval(check);
  const place = Buffer.from(where).toString('utf8').replace(/\\0+$/, '') || '(no file started yet)';
  const stack = await mainThreadStack();
  writeSync(2, '\\n[event-loop watchdog] this test worker\\'s event loop has been held for ' + Math.round(heldMs / 1000) + ' s, in ' + place +
    ': no timeout can fire, so the worker is ended. Where the loop is held:\\n' + stack + '\\n');
  process.kill(process.pid, 'SIGKILL');
}, 1000);
`;

interface Watchdog {
  readonly where: Uint8Array;
}

const KEY = Symbol.for('music-bot.event-loop-watchdog');
const shared = globalThis as typeof globalThis & { [KEY]?: Watchdog };

/** One watcher per fork, however many files the fork runs. */
function start(): Watchdog {
  const heartbeat = new BigInt64Array(new SharedArrayBuffer(8));
  const beat = () => Atomics.store(heartbeat, 0, BigInt(Date.now()));
  beat();
  setInterval(beat, 1_000).unref();
  const where = new Uint8Array(new SharedArrayBuffer(2_048));
  const limitMs = Number(process.env.EVENT_LOOP_HELD_LIMIT_MS ?? HELD_LIMIT_MS);
  const watcher = new Worker(WATCHER, { eval: true, workerData: { heartbeat, where, limitMs } });
  watcher.unref();
  return { where };
}

/** Writes what runs now where the watcher reads it. */
function runningNow(text: string): void {
  const { where } = (shared[KEY] ??= start());
  const bytes = new TextEncoder().encode(text).subarray(0, where.length);
  where.fill(0);
  where.set(bytes);
}

beforeAll(() => runningNow(expect.getState().testPath ?? '(unknown file)'));
beforeEach((context) => runningNow(`${expect.getState().testPath ?? '(unknown file)'} > ${context.task.name}`));
