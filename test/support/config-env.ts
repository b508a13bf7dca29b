/** What the configuration tests share: an environment that loads, and the problems one reports. */
import { ConfigError, loadConfig } from '../../src/config.js';

/** The least environment `loadConfig` takes: Discord's and the music service's credentials. */
export const COMPLETE_ENV = {
  DISCORD_TOKEN: 'MTIzNDU2Nzg5MDEyMzQ1Njc4.GhIjKl.abcdefghijklmnopqrstuvwxyz0123',
  DISCORD_APPLICATION_ID: '123456789012345678',
  MUSIC_API_URL: 'https://api.example.com/',
  MUSIC_API_KEY: 'key-123',
};

/** The problems `loadConfig` reports for `env` (none when it loads); any other error is thrown. */
export function problemsOf(env: Record<string, string | undefined>, require?: Array<'discord' | 'musicApi'>): string[] {
  try {
    loadConfig({ env, ...(require ? { require } : {}) });
  } catch (error) {
    if (error instanceof ConfigError) return [...error.problems];
    throw error;
  }
  return [];
}
