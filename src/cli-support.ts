/**
 * Shared by the command-line entry points: configuration errors and other expected
 * failures are printed as plain lines, never as stack traces.
 */
import { ConfigError } from './config.js';
import { RedisNotInstalledError } from './embedded/redis-server.js';
import { ServiceStartError } from './embedded/service-start-error.js';

/**
 * Whether `error` is an expected failure whose message alone tells a person what went wrong
 * (bad configuration, a service that cannot start): nothing to log beside it, no stack to show.
 */
export function isExpectedFailure(error: unknown): boolean {
  return error instanceof ConfigError || error instanceof RedisNotInstalledError || error instanceof ServiceStartError;
}

/** Prints `error` to stderr (plain lines for an expected failure, one `error:` line otherwise) and exits 1. */
export function exitWithError(error: unknown): never {
  if (error instanceof ConfigError) {
    for (const problem of error.problems) process.stderr.write(`${problem}\n`);
  } else if (isExpectedFailure(error)) {
    process.stderr.write(`${(error as Error).message}\n`);
  } else {
    const message = error instanceof Error ? error.message : String(error);
    process.stderr.write(`error: ${message}\n`);
  }
  process.exit(1);
}
