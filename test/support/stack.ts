/**
 * What every harness that runs the bot starts from: a database and a Redis key prefix of the
 * test file's own, the music-API simulator, and the Discord emulator with one guild, its
 * channels, two roles and a cast of members. The harnesses put the bot on top of it: in this
 * process (./pipeline-harness.ts, ../integration/commands/harness.ts) or as `npm start` in a
 * child process (../e2e/bot-process.ts).
 */
import { randomUUID } from 'node:crypto';
import { PermissionFlagsBits, type APIRole } from 'discord-api-types/v10';
import { eq, sql } from 'drizzle-orm';
import { Redis } from 'ioredis';
import { onTestFinished } from 'vitest';
import { ensureGuild, grant, take } from '../../src/credits/index.js';
import { creditLedger, jobs } from '../../src/db/schema.js';
import { createQueues, entryId, type Queues } from '../../src/queue/queues.js';
import { startDiscordEmulator, type EmulatorGuild } from '@music-bot/discord-emulator';
import type { DiscordEmulatorOptions } from '@music-bot/discord-emulator';
import { startMusicApiSim, type MusicApiSim, type MusicApiSimOptions, type SimFault } from '@music-bot/music-api-sim';
import { createTestDatabase, testRedis, type TestDatabase } from './database.js';

/** Distinctive, so that tests can look for them where they must never appear. */
export const SIM_KEY = 'sim-secret-key-of-the-tests';
const BOT_TOKEN = 'MTA5ODc2NTQzMjEwOTg3NjU0.emulator.test-bot-token-secret';

export type Emulator = Awaited<ReturnType<typeof startDiscordEmulator>>;

/** User ids of the guild's members. */
export interface Members {
  /** A member with no special rights. */
  readonly alice: string;
  /** Holds the DJ role. */
  readonly bob: string;
  /** Holds Manage Server. */
  readonly manager: string;
  /** Holds the "Music mods" role: a moderator once `/settings moderator-role` names it. */
  readonly roleModerator: string;
  /** In BOT_OWNER_IDS, without Manage Server. */
  readonly owner: string;
}

export interface StackOptions {
  /** What a guild's account opens with (STARTING_CREDITS). */
  readonly startingCredits: number;
  readonly sim?: Partial<MusicApiSimOptions>;
  readonly emulator?: Partial<DiscordEmulatorOptions>;
  /** The bot's database, when not a fresh clone of the migrated template (see createTestDatabase's options). */
  readonly database?: TestDatabase;
}

/** Simulator settings a test may change for itself. */
export interface SimChange {
  readonly taskMs?: number;
  readonly credits?: number;
  readonly faults?: readonly SimFault[];
}

/** Where a job's queue entries are; absent once they ran their course. */
export type QueueEntries = Partial<Record<'submit' | 'poll' | 'complete' | 'deliver', string>>;

/** A guild of the stack, with its channels, roles and members, and what its account holds. */
export interface StackGuild {
  readonly guild: EmulatorGuild;
  /** The music channel, where tests run their commands. */
  readonly channelId: string;
  readonly otherChannelId: string;
  readonly moderatorRole: APIRole;
  readonly djRole: APIRole;
  readonly members: Members;
  /** The guild's balance. Opens its account first, with the starting credits, as the bot does on first use. */
  balance(): Promise<number>;
  /** Sets the stage: grants or takes the difference, so the balance stays the ledger's sum. */
  setBalance(credits: number): Promise<void>;
  jobCount(): Promise<number>;
  ledgerCount(): Promise<number>;
}

export interface Stack extends StackGuild {
  readonly db: TestDatabase;
  readonly redisUrl: string;
  readonly prefix: string;
  readonly sim: MusicApiSim;
  readonly emulator: Emulator;
  /** The bot's configuration for this stack: Discord, the music service, Postgres, Redis, owners, credits. */
  readonly env: Readonly<Record<string, string>>;
  /**
   * Another guild, with channels and roles of its own and the same members (the same users):
   * a clean slate for a test that needs one, in a file whose other tests change their guild.
   */
  newGuild(): StackGuild;
  /** Changes the simulator for the running test only: it is put back when the test ends, passed or failed. */
  setSimForThisTest(change: SimChange): void;
  /**
   * The queue entries still to run for a job. Empty once every path that could act on the
   * job (a retry, a poll, a webhook's completion, a delivery) has run out: the signal to wait
   * for before checking that nothing more happened.
   */
  queueEntriesOf(jobId: string): Promise<QueueEntries>;
  close(): Promise<void>;
}

/** Call in `beforeAll`; the database is dropped after the file. */
export async function startStack(options: StackOptions): Promise<Stack> {
  const db = options.database ?? (await createTestDatabase());
  const { url: redisUrl, prefix } = testRedis();
  const simOptions = { apiKey: SIM_KEY, credits: 100_000, taskMs: 300, allowHttpWebhooks: true, ...options.sim } satisfies MusicApiSimOptions;
  const sim = await startMusicApiSim(simOptions);
  const emulator = await startDiscordEmulator({ botToken: BOT_TOKEN, ...options.emulator });

  const first = seedGuild(emulator, db, options.startingCredits);
  const { members } = first;
  const env = {
    DISCORD_TOKEN: emulator.botToken,
    DISCORD_APPLICATION_ID: emulator.applicationId,
    DISCORD_API_URL: emulator.apiUrl,
    BOT_OWNER_IDS: members.owner,
    MUSIC_API_URL: sim.url,
    MUSIC_API_KEY: SIM_KEY,
    DATABASE_URL: db.url,
    REDIS_URL: redisUrl,
    QUEUE_PREFIX: prefix,
    STARTING_CREDITS: String(options.startingCredits),
  };

  let queues: { redis: Redis; queues: Queues } | undefined;
  let guilds = 1;
  const stack: Stack = {
    ...first,
    db,
    redisUrl,
    prefix,
    sim,
    emulator,
    env,
    newGuild() {
      guilds += 1;
      return seedGuild(emulator, db, options.startingCredits, { name: `Music makers ${guilds}`, members });
    },
    setSimForThisTest(change) {
      onTestFinished(() => {
        if (change.taskMs !== undefined) sim.setTaskMs(simOptions.taskMs);
        if (change.credits !== undefined) sim.setCredits(simOptions.credits);
        if (change.faults !== undefined) sim.clearFaults();
      });
      if (change.taskMs !== undefined) sim.setTaskMs(change.taskMs);
      if (change.credits !== undefined) sim.setCredits(change.credits);
      for (const fault of change.faults ?? []) sim.injectFault(fault);
    },
    async queueEntriesOf(jobId) {
      if (!queues) {
        const redis = new Redis(redisUrl, { maxRetriesPerRequest: null });
        queues = { redis, queues: createQueues(redis, { prefix }) };
      }
      const { submit, poll, complete, deliver } = queues.queues;
      const entries: QueueEntries = {};
      for (const [name, queue, id] of [
        ['submit', submit, entryId.submit(jobId)],
        ['poll', poll, entryId.poll(jobId)],
        ['complete', complete, entryId.complete(jobId)],
        ['deliver', deliver, entryId.deliver(jobId)],
      ] as const) {
        // Finished entries are removed (removeOnComplete), and then read as unknown.
        const state = await queue.getJobState(id);
        if (state !== 'unknown' && state !== 'completed') entries[name] = state;
      }
      return entries;
    },
    async close() {
      if (queues) {
        await queues.queues.close();
        await queues.redis.quit();
      }
      await emulator.close();
      await sim.close();
    },
  };
  return stack;
}

/** A guild with a music and a general channel, the moderators' and the DJ role, and the cast of members. */
function seedGuild(emulator: Emulator, db: TestDatabase, startingCredits: number, again?: { name: string; members: Members }): StackGuild {
  const guild = emulator.createGuild({ name: again?.name ?? 'Music makers' });
  const channel = emulator.createChannel(guild.id, { name: 'music' });
  const other = emulator.createChannel(guild.id, { name: 'general' });
  const moderatorRole = emulator.createRole(guild.id, { name: 'Music mods' });
  const djRole = emulator.createRole(guild.id, { name: 'DJ' });
  const join = (name: keyof Members, input: { roles?: string[]; permissions?: bigint }) =>
    emulator.addMember(guild.id, { userId: again?.members[name], username: name.toLowerCase(), ...input }).id;
  const members: Members = {
    alice: join('alice', {}),
    bob: join('bob', { roles: [djRole.id] }),
    manager: join('manager', { permissions: PermissionFlagsBits.ManageGuild | PermissionFlagsBits.ViewChannel | PermissionFlagsBits.SendMessages }),
    roleModerator: join('roleModerator', { roles: [moderatorRole.id] }),
    owner: join('owner', {}),
  };

  const world: StackGuild = {
    guild,
    channelId: channel.id,
    otherChannelId: other.id,
    moderatorRole,
    djRole,
    members,
    async balance() {
      return (await ensureGuild(db.db, guild.id, { startingCredits })).balance;
    },
    async setBalance(credits) {
      const current = await world.balance();
      const movement = { guildId: guild.id, actorId: members.owner, key: `test-${randomUUID()}`, reason: 'test' };
      if (credits > current) await grant(db.db, { ...movement, amount: credits - current });
      if (credits < current) await take(db.db, { ...movement, amount: current - credits });
    },
    async jobCount() {
      const [row] = await db.db.select({ n: sql<number>`count(*)::int` }).from(jobs).where(eq(jobs.guildId, guild.id));
      return row?.n ?? 0;
    },
    async ledgerCount() {
      const [row] = await db.db.select({ n: sql<number>`count(*)::int` }).from(creditLedger).where(eq(creditLedger.guildId, guild.id));
      return row?.n ?? 0;
    },
  };
  return world;
}
