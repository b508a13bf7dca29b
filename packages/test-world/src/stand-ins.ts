/** The Discord emulator and the music-API simulator, started together, and what the bot needs to reach them. */
import { startDiscordEmulator, type DiscordEmulator, type DiscordEmulatorOptions } from '@music-bot/discord-emulator';
import { MODERATION_PATH, startMusicApiSim, type MusicApiSim, type MusicApiSimOptions } from '@music-bot/music-api-sim';
import { BOT_TOKEN, MODERATION_KEY, SIM_KEY } from './secrets.js';

export interface StandIns {
  readonly sim: MusicApiSim;
  readonly emulator: DiscordEmulator;
  /**
   * The bot's settings for them: DISCORD_TOKEN, DISCORD_APPLICATION_ID, DISCORD_API_URL, DISCORD_CDN_URLS,
   * MUSIC_API_URL, MUSIC_API_KEY, and NODE_EXTRA_CA_CERTS (Node's own: trust for the emulator's voice gateway certificate).
   */
  readonly env: Readonly<Record<string, string>>;
  /**
   * MODERATION_URL and MODERATION_API_KEY of the simulator's moderation stand-in, for a bot that
   * is to check requests with it (not in `env`: most bots of the world run without one).
   */
  readonly moderationEnv: Readonly<Record<string, string>>;
  close(): Promise<void>;
}

/**
 * Starts the simulator (a million credits, tasks of a second, webhooks to http allowed, the
 * world's key) and the emulator (the world's token), each with `options` on top.
 */
export async function startStandIns(options: { sim?: Partial<MusicApiSimOptions>; emulator?: Partial<DiscordEmulatorOptions> } = {}): Promise<StandIns> {
  const apiKey = options.sim?.apiKey ?? SIM_KEY;
  const moderationApiKey = options.sim?.moderationApiKey ?? MODERATION_KEY;
  const sim = await startMusicApiSim({ credits: 100_000_000, taskMs: 1_000, allowHttpWebhooks: true, ...options.sim, apiKey, moderationApiKey });
  const emulator = await startDiscordEmulator({ botToken: BOT_TOKEN, ...options.emulator }).catch(async (error: unknown) => {
    await sim.close();
    throw error;
  });
  return {
    sim,
    emulator,
    env: {
      DISCORD_TOKEN: emulator.botToken,
      DISCORD_APPLICATION_ID: emulator.applicationId,
      DISCORD_API_URL: emulator.apiUrl,
      // Attachments are read only from the emulator's CDN, as the bot reads them only from Discord's.
      DISCORD_CDN_URLS: options.emulator?.cdnUrl ?? emulator.origin,
      MUSIC_API_URL: sim.url,
      MUSIC_API_KEY: apiKey,
      NODE_EXTRA_CA_CERTS: emulator.voiceCaPath,
    },
    moderationEnv: { MODERATION_URL: `${sim.url}${MODERATION_PATH}`, MODERATION_API_KEY: moderationApiKey },
    async close() {
      await emulator.close();
      await sim.close();
    },
  };
}
