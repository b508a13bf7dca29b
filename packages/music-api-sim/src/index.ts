/** The music-API simulator's public API, for tests, the playground and the CLI. */
export * from './faults.js';
export { mediaFor, melodyWav, sineWav } from './media.js';
export * from './server.js';
export type { WebhookAttempt, WebhookRetry } from './webhooks.js';
export { DEFAULT_WEBHOOK_RETRY } from './webhooks.js';
export { MODERATION_CATEGORIES, MODERATION_PATH } from './moderation.js';
export type { ModerationMode, ModerationSettings, ModerationState } from './moderation.js';
