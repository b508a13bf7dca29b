/** Reading what an embedded server (postgres, redis-server) writes while it starts and runs. */
import type { ChildProcess } from 'node:child_process';
import { createInterface } from 'node:readline';
import type { Logger } from '../logger.js';
import { ServiceStartError } from './service-start-error.js';

/** Calls `onLine` for each line the child writes, stdout and stderr alike, for as long as it runs. */
export function readLines(child: ChildProcess, onLine: (line: string) => void): void {
  for (const stream of [child.stdout, child.stderr]) if (stream) createInterface({ input: stream }).on('line', onLine);
}

export interface ReadyOptions {
  readonly service: ServiceStartError['service'];
  /** Text of the line that says the server accepts connections. */
  readonly readyLine: string;
  /** The line of its output that says why it stopped, if one does. */
  readonly problem: (lines: readonly string[]) => string | undefined;
  readonly hint: string;
  readonly logger: Logger;
}

/**
 * Resolves once the child says it is ready; rejects with a {@link ServiceStartError} quoting
 * its own words when it exits first. Its output is read (and logged at trace) for as long as
 * it runs: a full pipe would block it.
 */
export function waitUntilReady(child: ChildProcess, options: ReadyOptions): Promise<void> {
  return new Promise((resolve, reject) => {
    const lines: string[] = [];
    let ready = false;
    readLines(child, (line) => {
      options.logger.trace({ line }, `${options.service} output`);
      if (ready) return;
      lines.push(line);
      if (line.includes(options.readyLine)) {
        ready = true;
        resolve();
      }
    });
    child.once('error', reject);
    child.once('close', (code) => {
      if (!ready) reject(new ServiceStartError(options.service, options.problem(lines) ?? `exited with code ${code}`, options.hint));
    });
  });
}
