/**
 * Why an embedded service (Postgres, redis-server) did not start, in one line a person can act
 * on: the service, the line of its own output that says what went wrong, and what else to do.
 * The command-line entry points print the message alone, without a stack trace.
 */
export class ServiceStartError extends Error {
  constructor(
    readonly service: 'postgres' | 'redis-server',
    /** Quoted from the service's own output where it said why, else the system error. */
    readonly reason: string,
    readonly hint?: string,
  ) {
    super(`${service} could not start: ${reason}${hint ? `; ${hint}` : ''}`);
    this.name = 'ServiceStartError';
  }

  /**
   * `error` as a ServiceStartError when it is one already or a system error (a folder in the
   * way, a binary that cannot be run: its message is the reason); anything else, a bug, as is.
   */
  static from(service: ServiceStartError['service'], error: unknown, hint?: string): unknown {
    if (error instanceof ServiceStartError) return error;
    if (error instanceof Error && typeof (error as NodeJS.ErrnoException).code === 'string') {
      return new ServiceStartError(service, error.message, hint);
    }
    return error;
  }
}
