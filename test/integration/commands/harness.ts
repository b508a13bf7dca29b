/**
 * The bot as `npm start` builds it (gateway, worker; through `startApp`) against a real
 * Postgres and Redis, the music-API simulator and the Discord emulator, with the commands
 * registered by `deployCommands`. Tests act as members: they run commands, click buttons and
 * submit forms in the emulator, and look at what Discord, the database and the service saw.
 */
import { Writable } from 'node:stream';
import { and, eq } from 'drizzle-orm';
import { pino } from 'pino';
import { commandDefinitions } from '../../../commands/index.js';
import { startApp, type App } from '../../../src/app.js';
import { loadConfig, type Config } from '../../../src/config.js';
import { creditLedger, guilds, jobs } from '../../../src/db/schema.js';
import { startDiscordEmulator, type EmulatorGuild } from '../../../src/sandbox/discord-emulator/index.js';
import type { EmulatorMessage, InteractionHandle, RunCommandInput } from '../../../src/sandbox/discord-emulator/types.js';
import { deployCommands } from '../../../src/discord/deploy.js';
import { REDACTED_PATHS } from '../../../src/logger.js';
import { startMusicApiSim, type MusicApiSim } from '../../../src/sandbox/music-api-sim/index.js';
import type { PipelineSettings } from '../../../src/pipeline/deps.js';
import { InteractionResponseType, PermissionFlagsBits, type APIRole } from 'discord-api-types/v10';
import { createTestDatabase, testRedis, type TestDatabase } from '../../support/database.js';

export const SIM_KEY = 'sim-secret-key-commands';
const BOT_TOKEN = 'MTA5ODc2NTQzMjEwOTg3NjU0.emulator.commands-test-token';

/** Seconds, not minutes. */
const FAST: Partial<PipelineSettings> = {
  expectedSeconds: { song: 0.2, lyrics: 0.2, video: 0.2, upload: 0.2, download: 0.2, voice: 0.2, persona_song: 0.2 },
  pollIntervalMs: { min: 100, max: 400 },
  submitBackoffMs: 100,
  capWaitMs: 150,
  progressEditIntervalMs: 200,
  attachAudio: false,
};

export type Emulator = Awaited<ReturnType<typeof startDiscordEmulator>>;

export interface Members {
  /** A member with no special rights. */
  readonly alice: string;
  readonly bob: string;
  /** Holds Manage Server. */
  readonly manager: string;
  /** Holds the guild's moderator role (once /settings moderator-role sets it). */
  readonly roleModerator: string;
  /** In BOT_OWNER_IDS, without Manage Server. */
  readonly owner: string;
}

export interface BotHarness {
  readonly db: TestDatabase;
  readonly sim: MusicApiSim;
  readonly emulator: Emulator;
  readonly config: Config;
  readonly guild: EmulatorGuild;
  readonly channelId: string;
  readonly otherChannelId: string;
  readonly members: Members;
  readonly moderatorRole: APIRole;
  readonly djRole: APIRole;
  /** Every log line the bot wrote, parsed. */
  readonly logs: Array<Record<string, unknown>>;
  /** Every log line as written, to look for secrets. */
  readonly rawLogs: string[];
  app: App;
  /** A member runs a command in the music channel (unless told otherwise). */
  run(userId: string, input: Omit<RunCommandInput, 'guildId' | 'channelId' | 'userId'> & { channelId?: string }): InteractionHandle;
  /** Stops the whole bot (as SIGTERM would) and starts it again on the same Postgres and Redis. */
  restart(): Promise<void>;
  balance(): Promise<number>;
  jobCount(): Promise<number>;
  ledgerCount(): Promise<number>;
  setBalance(credits: number): Promise<void>;
  /** Resolves once the job's result has been posted, with the message it was posted in. */
  delivered(jobId: string, timeoutMs?: number): Promise<EmulatorMessage>;
  close(): Promise<void>;
}

export async function startBot(options: { startingCredits?: number; settings?: Partial<PipelineSettings> } = {}): Promise<BotHarness> {
  const db = await createTestDatabase();
  const { url: redisUrl, prefix } = testRedis();
  const sim = await startMusicApiSim({ apiKey: SIM_KEY, credits: 100_000, taskMs: 200 });
  const emulator = await startDiscordEmulator({ botToken: BOT_TOKEN, attachmentSizeLimit: 32 * 1024 * 1024 });
  const guild = emulator.createGuild({ name: 'Music makers' });
  const channel = emulator.createChannel(guild.id, { name: 'music' });
  const other = emulator.createChannel(guild.id, { name: 'general' });
  const moderatorRole = emulator.createRole(guild.id, { name: 'Music mods' });
  const djRole = emulator.createRole(guild.id, { name: 'DJ' });
  const members: Members = {
    alice: emulator.addMember(guild.id, { username: 'alice' }).id,
    bob: emulator.addMember(guild.id, { username: 'bob' }).id,
    manager: emulator.addMember(guild.id, {
      username: 'manager',
      permissions: PermissionFlagsBits.ManageGuild | PermissionFlagsBits.ViewChannel | PermissionFlagsBits.SendMessages,
    }).id,
    roleModerator: emulator.addMember(guild.id, { username: 'rolemod', roles: [moderatorRole.id] }).id,
    owner: emulator.addMember(guild.id, { username: 'owner' }).id,
  };

  const config = loadConfig({
    env: {
      DISCORD_TOKEN: emulator.botToken,
      DISCORD_APPLICATION_ID: emulator.applicationId,
      DISCORD_API_URL: emulator.apiUrl,
      BOT_OWNER_IDS: members.owner,
      MUSIC_API_URL: sim.url,
      MUSIC_API_KEY: SIM_KEY,
      DATABASE_URL: db.url,
      REDIS_URL: redisUrl,
      LOG_LEVEL: 'debug',
      STARTING_CREDITS: String(options.startingCredits ?? 100),
      POLL_MAX_PER_SECOND: '50',
    },
  });
  await deployCommands(config, commandDefinitions);

  const logs: Array<Record<string, unknown>> = [];
  const rawLogs: string[] = [];
  const sink = new Writable({
    write(chunk: Buffer, _encoding, done) {
      for (const line of chunk.toString('utf8').split('\n')) {
        if (line.trim() === '') continue;
        rawLogs.push(line);
        logs.push(JSON.parse(line) as Record<string, unknown>);
      }
      done();
    },
  });
  const logger = pino({ level: 'debug', redact: { paths: REDACTED_PATHS, censor: '[redacted]' } }, sink);
  const start = () =>
    startApp(config, logger, {
      parts: { gateway: true, worker: true, http: false },
      queuePrefix: prefix,
      settings: { ...FAST, ...options.settings },
      reconcileIntervalMs: 60_000,
      lockDurationMs: 4_000,
    });
  let app = await start();

  const one = async <T>(query: Promise<T[]>) => (await query)[0];
  const harness: BotHarness = {
    db,
    sim,
    emulator,
    config,
    guild,
    channelId: channel.id,
    otherChannelId: other.id,
    members,
    moderatorRole,
    djRole,
    logs,
    rawLogs,
    get app() {
      return app;
    },
    set app(value) {
      app = value;
    },
    run(userId, input) {
      return emulator.runCommand({ ...input, guildId: guild.id, channelId: input.channelId ?? channel.id, userId });
    },
    async restart() {
      await app.stop();
      app = await start();
    },
    async balance() {
      const row = await one(db.db.select({ balance: guilds.balance }).from(guilds).where(eq(guilds.id, guild.id)));
      return row?.balance ?? Number.NaN;
    },
    async jobCount() {
      return (await db.db.select({ id: jobs.id }).from(jobs).where(eq(jobs.guildId, guild.id))).length;
    },
    async ledgerCount() {
      return (await db.db.select({ id: creditLedger.id }).from(creditLedger).where(eq(creditLedger.guildId, guild.id))).length;
    },
    async setBalance(credits) {
      // Through the ledger's own rules would need an actor; a test sets the stage directly, keeping balance == sum.
      const current = await harness.balance();
      if (Number.isNaN(current)) throw new Error('the guild has no account yet');
      const { grant, take } = await import('../../../src/credits/index.js');
      const key = `test-${Date.now()}-${Math.random()}`;
      if (credits > current) await grant(db.db, { guildId: guild.id, amount: credits - current, actorId: members.owner, key, reason: 'test' });
      if (credits < current) await take(db.db, { guildId: guild.id, amount: current - credits, actorId: members.owner, key, reason: 'test' });
    },
    async delivered(jobId, timeoutMs = 20_000) {
      const deadline = Date.now() + timeoutMs;
      for (;;) {
        const row = await one(
          db.db.select().from(jobs).where(and(eq(jobs.id, jobId), eq(jobs.guildId, guild.id))),
        );
        if (row?.deliveryState === 'delivered' && row.messageId) {
          const message = emulator.message(row.messageId);
          if (message) return message;
        }
        if (Date.now() > deadline) throw new Error(`job ${jobId} was not delivered (state ${row?.state}, delivery ${row?.deliveryState})`);
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
    },
    async close() {
      await app.stop();
      await emulator.close();
      await sim.close();
    },
  };
  return harness;
}

/** The ephemeral answer a member got: the edited reply when deferred ephemerally, else the first ephemeral follow-up. */
export async function privateAnswer(handle: InteractionHandle, timeoutMs = 10_000): Promise<EmulatorMessage> {
  const response = await handle.waitForResponse(timeoutMs);
  if (response.type === InteractionResponseType.ChannelMessageWithSource) {
    const message = handle.original();
    if (!message) throw new Error('replied, but no message');
    return message;
  }
  if (response.ephemeral) {
    return handle.waitForEdit(() => true, timeoutMs);
  }
  return handle.waitForFollowUp((message) => message.ephemeral, timeoutMs);
}

/** The job id an acknowledgement names. */
export function jobIdIn(message: EmulatorMessage): string {
  const match = /Job `([0-9a-f-]{36})`/.exec(message.content ?? '');
  if (!match?.[1]) throw new Error(`no job id in: ${message.content}`);
  return match[1];
}

/** The custom ids of the buttons on a message. */
export function buttonsOf(message: EmulatorMessage): string[] {
  const ids: string[] = [];
  for (const row of message.components ?? []) {
    for (const component of 'components' in row ? row.components : []) {
      if ('custom_id' in component && typeof component.custom_id === 'string') ids.push(component.custom_id);
    }
  }
  return ids;
}
