/**
 * The pipeline as `npm start` builds it (worker and http parts, through `startApp`), on the
 * test stack (./stack.ts). A real discord.js client, logged in to the emulator, plays the
 * part of the command layer: it defers the interaction and calls `pipeline.submit`, as the
 * command handlers do.
 */
import { Client, Events, GatewayIntentBits } from 'discord.js';
import { once } from 'node:events';
import { startApp, type App, type AppOverrides } from '../../src/app.js';
import { loadConfig } from '../../src/config.js';
import { silentLogger, type Logger } from '../../src/logger.js';
import type { PipelineSettings } from '../../src/pipeline/deps.js';
import type { GenerationRequest, SubmitResult } from '../../src/pipeline/requests.js';
import type { MusicApiSimOptions } from '@music-bot/music-api-sim';
import type { DiscordEmulatorOptions, InteractionHandle } from '@music-bot/discord-emulator';
import { findFreePort } from '../../src/embedded/free-port.js';
import { startStack, type Stack } from './stack.js';

export { SIM_KEY } from './stack.js';

/** Quick timings so that a test waits seconds, not minutes. */
export const FAST_SETTINGS: Partial<PipelineSettings> = {
  expectedSeconds: { song: 0.3, lyrics: 0.3, video: 0.3, upload: 0.3, download: 0.3, voice: 0.3, persona_song: 0.3 },
  pollIntervalMs: { min: 150, max: 600 },
  submitBackoffMs: 100,
  capWaitMs: 150,
  progressEditIntervalMs: 200,
};

/** `startApp`'s overrides for a process that runs only the workers on the test stack, at the test timings. */
export function workerOnly(queuePrefix: string, settings: Partial<PipelineSettings> = {}): AppOverrides {
  return {
    parts: { gateway: false, worker: true, http: false },
    queuePrefix,
    settings: { ...FAST_SETTINGS, attachAudio: false, ...settings },
    reconcileIntervalMs: 60_000,
    lockDurationMs: 4_000,
  };
}

export interface HarnessOptions {
  readonly webhooks: boolean;
  readonly sim?: Partial<MusicApiSimOptions>;
  readonly settings?: Partial<PipelineSettings>;
  readonly startingCredits?: number;
  readonly overrides?: AppOverrides;
  /** Extra environment for the bot's configuration; a function when it names the stack's parts (the emulator's public key). */
  readonly env?: Record<string, string> | ((stack: Stack) => Record<string, string>);
  /** The Discord emulator's options, e.g. its rate limits. */
  readonly emulator?: Partial<DiscordEmulatorOptions>;
  /** The bot's logger. @defaultValue silentLogger */
  readonly logger?: Logger;
}

export interface Harness extends Stack {
  readonly guildId: string;
  /** The member requests come from (alice). */
  readonly userId: string;
  readonly app: App;
  readonly publicUrl: string | undefined;
  /** Runs `/test-submit` as a member: the client defers and submits `request`. */
  request(request: GenerationRequest, options?: { userId?: string }): Promise<{ handle: InteractionHandle; result: SubmitResult | Error }>;
}

/**
 * How many times a job's result was posted: requests Discord took (a 429 posts nothing and is
 * retried), progress edits and the files' uploads left out.
 */
export function resultPostCount(h: Pick<Harness, 'emulator'>, jobId: string): number {
  return h.emulator.requests.filter((r) => {
    if (r.status >= 300) return false;
    const body = JSON.stringify(r.body ?? {});
    return (
      ((r.method === 'PATCH' && /\/messages\/(@|%40)original$/.test(r.path)) || (r.method === 'POST' && r.path.endsWith('/messages'))) &&
      body.includes(`Job ${jobId}`) &&
      !body.includes('Making your') &&
      r.files.length === 0
    );
  }).length;
}

/** Call in `beforeAll`; the database is dropped after the file. */
export async function startHarness(options: HarnessOptions): Promise<Harness> {
  const stack = await startStack({ startingCredits: options.startingCredits ?? 100, sim: options.sim, emulator: options.emulator });
  const httpPort = await findFreePort();
  const publicUrl = options.webhooks ? `http://127.0.0.1:${httpPort}` : undefined;
  const config = loadConfig({
    env: { ...stack.env, HTTP_PORT: String(httpPort), PUBLIC_URL: publicUrl, LOG_LEVEL: 'silent', POLL_MAX_PER_SECOND: '50', ...(typeof options.env === 'function' ? options.env(stack) : options.env) },
  });
  const app = await startApp(config, options.logger ?? silentLogger, {
    parts: { gateway: false, worker: true, http: true },
    queuePrefix: stack.prefix,
    settings: { ...FAST_SETTINGS, ...options.settings },
    reconcileIntervalMs: 60_000,
    lockDurationMs: 4_000,
    ...options.overrides,
  });

  const client = new Client({ intents: [GatewayIntentBits.Guilds], rest: { api: stack.emulator.apiUrl } });
  const pending = new Map<string, { request: GenerationRequest; resolve: (r: SubmitResult | Error) => void }>();
  client.on(Events.InteractionCreate, async (interaction) => {
    if (!interaction.isChatInputCommand() || interaction.commandName !== 'test-submit') return;
    const entry = pending.get(interaction.options.getString('key', true));
    if (!entry) return;
    await interaction.deferReply();
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
  await client.login(stack.emulator.botToken);
  await ready;

  let counter = 0;
  return {
    ...stack,
    guildId: stack.guild.id,
    userId: stack.members.alice,
    app,
    publicUrl,
    async request(request, opts = {}) {
      counter += 1;
      const key = `k${counter}`;
      const result = new Promise<SubmitResult | Error>((resolve) => pending.set(key, { request, resolve }));
      const handle = stack.emulator.runCommand({
        guildId: stack.guild.id,
        channelId: stack.channelId,
        userId: opts.userId ?? stack.members.alice,
        name: 'test-submit',
        options: { key },
      });
      return { handle, result: await result };
    },
    async close() {
      await client.destroy();
      await app.stop();
      await stack.close();
    },
  };
}
