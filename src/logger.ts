import { hostname } from 'node:os';
import { pino, type DestinationStream, type Logger, type LoggerOptions } from 'pino';

export type { Logger } from 'pino';

/**
 * Paths that may carry a secret somewhere in a logged object. pino replaces them with
 * "[redacted]" so a careless `log.info({ req })` still cannot leak a key or a token.
 */
export const REDACTED_PATHS = [
  'token',
  '*.token',
  'interactionToken',
  '*.interactionToken',
  'apiKey',
  '*.apiKey',
  'webhookSecret',
  '*.webhookSecret',
  'webhook_secret',
  '*.webhook_secret',
  'authorization',
  '*.authorization',
  'headers.authorization',
  '*.headers.authorization',
  'headers["x-webhook-signature"]',
  'password',
  '*.password',
  'sentinelPassword',
  '*.sentinelPassword',
  'metricsToken',
  '*.metricsToken',
  'accessToken',
  '*.accessToken',
  'refreshToken',
  '*.refreshToken',
  'clientSecret',
  '*.clientSecret',
];

/**
 * A failed query's error (drizzle's) carries the statement's values in its message and stack:
 * a job's webhook secret, a member's prompt. Logged, it keeps the driver's words, its code and
 * the statement's first line, never the values. Any other error is logged as pino logs it.
 */
export function serializeError(value: unknown): unknown {
  if (!(value instanceof Error)) return value;
  if (!('query' in value && 'params' in value)) return pino.stdSerializers.err(value);
  const cause = value.cause instanceof Error ? value.cause : undefined;
  return {
    type: value.name,
    message: `query failed: ${cause?.message ?? 'no reason given'}`,
    ...(cause && 'code' in cause && { code: cause.code }),
    statement: String(value.query).trim().split('\n')[0]!.slice(0, 120),
    ...(cause?.stack && { stack: cause.stack }),
  };
}

/**
 * The method by which an error gives its own log-safe form. Only errors that promise to have
 * taken their secrets out carry it; another error's `toJSON` may hold anything it was built from.
 */
export const LOG_FORM: unique symbol = Symbol.for('music-bot.log-form');

function hasLogForm(error: Error): error is Error & { [LOG_FORM](): Record<string, unknown> } {
  return typeof (error as Partial<Record<typeof LOG_FORM, unknown>>)[LOG_FORM] === 'function';
}

/**
 * A log-safe picture of an error, `secrets` (interaction tokens) cut out of its text. Discord's
 * REST errors carry the request URL, which holds the interaction token for every interaction
 * response: only the route's shape is kept. An error that gives its own log form ({@link LOG_FORM},
 * as the music API's errors do) is logged so; a failed query without the statement's values.
 */
export function loggableError(error: unknown, secrets: readonly string[] = []): Record<string, unknown> {
  const hide = (text: string) => secrets.reduce((out, secret) => (secret ? out.split(secret).join('[redacted]') : out), text);
  if (isDiscordApiError(error)) {
    return {
      name: error.name,
      code: error.code,
      status: error.status,
      method: error.method,
      route: hide(new URL(error.url, 'http://x').pathname).replace(/\/[\w-]{60,}(?=\/|$)/g, '/[token]'),
      message: hide(error.message),
    };
  }
  if (error instanceof Error && hasLogForm(error)) return error[LOG_FORM]();
  // A failed query's message holds the statement's values: the logger's own form leaves them out.
  if (error instanceof Error && 'query' in error && 'params' in error) return serializeError(error) as Record<string, unknown>;
  if (error instanceof Error) {
    return { name: error.name, message: hide(error.message), stack: error.stack === undefined ? undefined : hide(error.stack) };
  }
  return { value: hide(String(error)) };
}

/** discord.js's `DiscordAPIError` (named `DiscordAPIError[code]`), told by its shape: this module stays below the Discord client. */
function isDiscordApiError(error: unknown): error is Error & { code: unknown; status: number; method: string; url: string } {
  return error instanceof Error && error.name.startsWith('DiscordAPIError') && 'url' in error && 'status' in error && 'method' in error;
}

/**
 * A pino logger with secrets redacted, writing to stdout unless given a `destination`. With a
 * `role` (a process's logger), every line carries the role, the process id and the host name,
 * so lines from many processes can be told apart once gathered in one place.
 */
export function createLogger(options: { level?: string; name?: string; role?: string } & LoggerOptions = {}, destination?: DestinationStream): Logger {
  const { role, ...rest } = options;
  const base = { ...(role !== undefined && { role, pid: process.pid, hostname: hostname() }), ...(options.name !== undefined && { name: options.name }) };
  const settings: LoggerOptions = {
    level: options.level ?? 'info',
    redact: { paths: REDACTED_PATHS, censor: '[redacted]' },
    serializers: { err: serializeError, error: serializeError },
    base: Object.keys(base).length > 0 ? base : undefined,
    ...rest,
  };
  return destination ? pino(settings, destination) : pino(settings);
}

/** A logger that writes nothing, for tests and library defaults. */
export const silentLogger: Logger = pino({ level: 'silent' });
