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
];

/** A pino logger with secrets redacted, writing to stdout unless given a `destination`. */
export function createLogger(options: { level?: string; name?: string } & LoggerOptions = {}, destination?: DestinationStream): Logger {
  const settings: LoggerOptions = {
    level: options.level ?? 'info',
    redact: { paths: REDACTED_PATHS, censor: '[redacted]' },
    base: options.name ? { name: options.name } : undefined,
    ...options,
  };
  return destination ? pino(settings, destination) : pino(settings);
}

/** A logger that writes nothing, for tests and library defaults. */
export const silentLogger: Logger = pino({ level: 'silent' });
