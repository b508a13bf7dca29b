/**
 * The pipeline as `npm start` builds it (worker and http parts, through `startApp`), against
 * a real Postgres and Redis, the music-API simulator and the Discord emulator. A real
 * discord.js client, logged in to the emulator, plays the part of the command layer: it
 * defers the interaction and calls `pipeline.submit`, as the command handlers do.
 */
import { Client, Events, GatewayIntentBits, type ChatInputCommandInteraction } from 'discord.js';
import { once } from 'node:events';
import { startApp, type App, type AppOverrides } from '../../src/app.js';
import { loadConfig } from '../../src/config.js';
import { startDiscordEmulator } from '../../src/sandbox/discord-emulator/index.js';
import type { InteractionHandle } from '../../src/sandbox/discord-emulator/types.js';
import { silentLogger } from '../../src/logger.js';
import { startMusicApiSim, type MusicApiSim, type MusicApiSimOptions } from '../../src/sandbox/music-api-sim/index.js';
import type { PipelineSettings } from '../../src/pipeline/deps.js';
import type { GenerationRequest, SubmitResult } from '../../src/pipeline/requests.js';
import { findFreePort } from '../../src/services/free-port.js';
import { createTestDatabase, testRedis, type TestDatabase } from './database.js';

export const SIM_KEY = 'sim-secret-key-123';

/** Quick timings so that a test waits seconds, not minutes. */
export const FAST_SETTINGS: Partial<PipelineSettings> = {
  expectedSeconds: { song: 0.3, lyrics: 0.3, video: 0.3, upload: 0.3, download: 0.3, voice: 0.3, persona_song: 0.3 },
  pollIntervalMs: { min: 150, max: 600 },
  submitBackoffMs: 100,
  capWaitMs: 150,
  progressEditIntervalMs: 200,
};

export interface HarnessOptions {
  readonly webhooks: boolean;
  readonly sim?: Partial<MusicApiSimOptions>;
  readonly settings?: Partial<PipelineSettings>;
  readonly startingCredits?: number;
  readonly overrides?: AppOverrides;
  /** Extra environment for the bot's configuration. */
  readonly env?: Record<string, string>;
}

export type Emulator = Awaited<ReturnType<typeof startDiscordEmulator>>;

export interface Harness {
  readonly db: TestDatabase;
  readonly sim: MusicApiSim;
  readonly emulator: Emulator;
  readonly guildId: string;
  readonly channelId: string;
  readonly userId: string;
  app: App;
  readonly client: Client;
  readonly redisUrl: string;
  readonly prefix: string;
  readonly publicUrl: string | undefined;
  /** Runs `/test-submit` as a member: the client defers and submits `request`. */
  request(request: GenerationRequest, options?: { userId?: string }): Promise<{ handle: InteractionHandle; result: SubmitResult | Error }>;
  /** Stops the app (as SIGTERM would) and builds it again on the same Postgres and Redis. */
  restartApp(overrides?: AppOverrides): Promise<void>;
  close(): Promise<void>;
}

/** Call in `beforeAll`; the database is dropped after the file. */
export async function startHarness(options: HarnessOptions): Promise<Harness> {
  const db = await createTestDatabase();
  const { url: redisUrl, prefix } = testRedis();
  const sim = await startMusicApiSim({ apiKey: SIM_KEY, credits: 100_000, taskMs: 300, allowHttpWebhooks: true, ...options.sim });
  const emulator = await startDiscordEmulator({ botToken: 'MTA5ODc2NTQzMjEwOTg3NjU0.emulator.test-bot-token' });
  const guild = emulator.createGuild({ name: 'Test guild' });
  const channel = emulator.createChannel(guild.id, { name: 'music' });
  const member = emulator.addMember(guild.id, { username: 'alice' });
  const httpPort = await findFreePort();
  const publicUrl = options.webhooks ? `http://127.0.0.1:${httpPort}` : undefined;

  const config = loadConfig({
    env: {
      DISCORD_TOKEN: emulator.botToken,
      DISCORD_APPLICATION_ID: emulator.applicationId,
      DISCORD_API_URL: emulator.apiUrl,
      MUSIC_API_URL: sim.url,
      MUSIC_API_KEY: SIM_KEY,
      DATABASE_URL: db.url,
      REDIS_URL: redisUrl,
      HTTP_PORT: String(httpPort),
      PUBLIC_URL: publicUrl,
      LOG_LEVEL: 'silent',
      STARTING_CREDITS: String(options.startingCredits ?? 100),
      POLL_MAX_PER_SECOND: '50',
      ...options.env,
    },
  });
  const baseOverrides: AppOverrides = {
    parts: { gateway: false, worker: true, http: true },
    queuePrefix: prefix,
    settings: { ...FAST_SETTINGS, ...options.settings },
    reconcileIntervalMs: 60_000,
    lockDurationMs: 4_000,
    ...options.overrides,
  };
  let app = await startApp(config, silentLogger, baseOverrides);

  const client = new Client({ intents: [GatewayIntentBits.Guilds], rest: { api: emulator.apiUrl } });
  const pending = new Map<string, { request: GenerationRequest; resolve: (r: SubmitResult | Error) => void }>();
  client.on(Events.InteractionCreate, async (interaction) => {
    if (!interaction.isChatInputCommand() || interaction.commandName !== 'test-submit') return;
    const key = interaction.options.getString('key', true);
    const entry = pending.get(key);
    if (!entry) return;
    await (interaction as ChatInputCommandInteraction).deferReply();
    try {
      const result = await app.pipeline.submit({
        requester: { guildId: interaction.guildId!, channelId: interaction.channelId, userId: interaction.user.id },
        request: entry.request,
        reply: { applicationId: interaction.applicationId, interactionToken: interaction.token, createdAt: interaction.createdAt },
      });
      await interaction.editReply(`Accepted job ${result.jobId}: ${result.cost} credits, ${result.balance} left.`);
      entry.resolve(result);
    } catch (error) {
      await interaction.editReply('Refused.');
      entry.resolve(error as Error);
    }
  });
  const ready = once(client, Events.ClientReady);
  await client.login(emulator.botToken);
  await ready;

  let counter = 0;
  const harness: Harness = {
    db,
    sim,
    emulator,
    guildId: guild.id,
    channelId: channel.id,
    userId: member.id,
    get app() {
      return app;
    },
    set app(value) {
      app = value;
    },
    client,
    redisUrl,
    prefix,
    publicUrl,
    async request(request, opts = {}) {
      counter += 1;
      const key = `k${counter}`;
      const result = new Promise<SubmitResult | Error>((resolve) => pending.set(key, { request, resolve }));
      const handle = emulator.runCommand({
        guildId: guild.id,
        channelId: channel.id,
        userId: opts.userId ?? harness.userId,
        name: 'test-submit',
        options: { key },
      });
      return { handle, result: await result } as never;
    },
    async restartApp(overrides) {
      await app.stop();
      app = await startApp(config, silentLogger, { ...baseOverrides, ...overrides });
    },
    async close() {
      await client.destroy();
      await app.stop();
      await emulator.close();
      await sim.close();
    },
  };
  return harness;
}

/** Polls `check` until it returns a value, or fails after `timeoutMs`. */
export async function eventually<T>(check: () => Promise<T | undefined | false>, timeoutMs = 15_000, what = 'condition'): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await check();
    if (value !== undefined && value !== false) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}
