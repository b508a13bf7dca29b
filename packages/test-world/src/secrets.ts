/**
 * The world's bot token, music-service key and moderation-service key: distinctive, so that a test can look for them
 * where they must never appear (a log line, a message to Discord).
 */
export const BOT_TOKEN = 'MTA5ODc2NTQzMjEwOTg3NjU0.emulator.test-world-bot-token-secret';
export const SIM_KEY = 'sim-secret-key-of-the-test-world';
export const MODERATION_KEY = 'moderation-secret-key-of-the-test-world';
