/**
 * Shared by the command-line entry points: configuration errors and other expected
 * failures are printed as plain lines, never as stack traces.
 */
import { ConfigError } from './config.js';
import { RedisNotInstalledError } from './services/redis-server.js';

export function exitWithError(error: unknown): never {
  if (error instanceof ConfigError) {
    for (const problem of error.problems) process.stderr.write(`${problem}\n`);
  } else if (error instanceof RedisNotInstalledError) {
    process.stderr.write(`${error.message}\n`);
  } else {
    const message = error instanceof Error ? error.message : String(error);
    process.stderr.write(`error: ${message}\n`);
  }
  process.exit(1);
}
