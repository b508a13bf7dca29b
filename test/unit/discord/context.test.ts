/** What the command handlers are handed of the configuration: the settings they read, and no secret. */
import { describe, expect, it } from 'vitest';
import { loadConfig } from '../../../src/config.js';
import { commandSettings } from '../../../src/discord/context.js';
import { COMPLETE_ENV } from '../../support/config-env.js';

describe("the handlers' settings", () => {
  it('carry what the commands read and none of the tokens, keys or secrets', () => {
    const env = {
      ...COMPLETE_ENV,
      DISCORD_PUBLIC_KEY: 'ab'.repeat(32),
      DATABASE_URL: 'postgres://bot:database-password@db:5432/music',
      METRICS_TOKEN: 'metrics-token-0123456789',
      MUSIC_MODELS: 'chirp-v4,chirp-v3-5',
      BOT_OWNER_IDS: '123456789012345678',
    };
    const settings = commandSettings(loadConfig({ env }));
    expect(settings).toMatchObject({ musicModels: ['chirp-v4', 'chirp-v3-5'], botOwnerIds: ['123456789012345678'] });
    const written = JSON.stringify(settings);
    for (const secret of [env.DISCORD_TOKEN, env.MUSIC_API_KEY, 'database-password', env.METRICS_TOKEN, env.DISCORD_PUBLIC_KEY]) expect(written).not.toContain(secret);
    expect(Object.isFrozen(settings)).toBe(true);
  });
});
