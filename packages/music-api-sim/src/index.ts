/** The music-API simulator's public API, for tests, the playground and the CLI. */
export * from './faults.js';
export { mediaFor, melodyWav, sineWav } from './media.js';
export * from './server.js';
export type { WebhookAttempt, WebhookRetry } from './webhooks.js';
export { DEFAULT_WEBHOOK_RETRY } from './webhooks.js';
