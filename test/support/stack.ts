/**
 * What every harness that runs the bot starts from: the test world (@music-bot/test-world) on
 * a database and a Redis key prefix of the test file's own, with the music-API simulator and
 * the Discord emulator, and one guild of the cast: its channels, two roles and members. The
 * harnesses put the bot on top of it: in this process (./pipeline-harness.ts,
 * ../integration/commands/harness.ts) or as `npm start` in a child process (../e2e/bot-process.ts).
 */
import { randomUUID } from 'node:crypto';
import { eq, sql } from 'drizzle-orm';
import { Redis } from 'ioredis';
import { onTestFinished } from 'vitest';
import { ensureGuild, grant, take } from '../../src/credits/index.js';
import { creditLedger, jobs } from '../../src/db/schema.js';
import { createQueues, entryId, type Queues } from '../../src/queue/queues.js';
import type { DiscordEmulator, DiscordEmulatorOptions } from '@music-bot/discord-emulator';
import type { MusicApiSim, MusicApiSimOptions, SimFault } from '@music-bot/music-api-sim';
import { seedCast, startWorld, type CastGuild, type Members, type World } from '@music-bot/test-world';
import { createTestDatabase, testRedis, type TestDatabase } from './database.js';

/** Distinctive, so that tests can look for it where it must never appear. */
export { SIM_KEY } from '@music-bot/test-world';
export type { Members } from '@music-bot/test-world';

export type Emulator = DiscordEmulator;

export interface StackOptions {
  /** What a guild's account opens with (STARTING_CREDITS). */
  readonly startingCredits: number;
  readonly sim?: Partial<MusicApiSimOptions>;
  readonly emulator?: Partial<DiscordEmulatorOptions>;
  /** The bot's database, when not a fresh clone of the migrated template (see createTestDatabase's options). */
  readonly database?: TestDatabase;
  /** Outlives the file that started it, for the next files of its worker: its database is kept for the run. */
  readonly shared?: boolean;
}

/** Simulator settings a test may change for itself. */
export interface SimChange {
  readonly taskMs?: number;
  readonly credits?: number;
  readonly faults?: readonly SimFault[];
}

/** Where a job's queue entries are; absent once they ran their course. */
export type QueueEntries = Partial<Record<'submit' | 'poll' | 'complete' | 'deliver', string>>;

/** A guild of the stack (see `seedCast`), and what its account holds. */
export interface StackGuild extends CastGuild {
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
  /** The world the stack is: a bot process in it (`world.bot`) gets `env` and an HTTP port of its own. */
  readonly world: World;
  /** The bot's configuration for this stack: Discord, the music service, Postgres, Redis, owners, credits. */
  readonly env: Readonly<Record<string, string>>;
  /**
   * Another guild, with channels and roles of its own and the same members (the same users):
   * a clean slate for a test that needs one, in a file whose other tests change their guild.
   * Given `members`, those users join it, and new users stand for the ones left out (the owner
   * is best kept: BOT_OWNER_IDS names one user).
   */
  newGuild(options?: { members?: Partial<Members> }): StackGuild;
  /** Changes the simulator for the running test only: it is put back when the test ends, passed or failed. */
  setSimForThisTest(change: SimChange): void;
  /** Puts the simulator back as the stack started it (task time, credits, no faults) and forgets the requests it saw. */
  resetSim(): void;
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
  const db = options.database ?? (await createTestDatabase({ keep: options.shared ?? false }));
  const { url: redisUrl, prefix } = testRedis();
  const simOptions = { credits: 100_000, taskMs: 300, allowHttpWebhooks: true, ...options.sim } satisfies Partial<MusicApiSimOptions>;
  const world = await startWorld({
    postgres: { url: db.url },
    redis: { url: redisUrl, prefix },
    sim: simOptions,
    ...(options.emulator && { emulator: options.emulator }),
  });
  const { sim, emulator } = world;

  const first = withAccount(seedCast(emulator), db, options.startingCredits);
  const { members } = first;
  // What the bot needs here, without the world's HTTP_PORT and DATA_DIR: a bot in this process
  // that serves HTTP names its own port, as before.
  const { HTTP_PORT: _port, DATA_DIR: _data, ...worldEnv } = world.env();
  const env = { ...worldEnv, BOT_OWNER_IDS: members.owner, STARTING_CREDITS: String(options.startingCredits) };

  let queues: { redis: Redis; queues: Queues } | undefined;
  let guilds = 1;
  const stack: Stack = {
    ...first,
    db,
    redisUrl,
    prefix,
    sim,
    emulator,
    world,
    env,
    newGuild({ members: joining = members } = {}) {
      guilds += 1;
      return withAccount(seedCast(emulator, { name: `Music makers ${guilds}`, members: joining }), db, options.startingCredits);
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
    resetSim() {
      sim.setTaskMs(simOptions.taskMs);
      sim.setCredits(simOptions.credits);
      sim.clearFaults();
      sim.clearRecords();
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
        ['complete', complete, entryId.complete(jobId, 'succeeded')],
        ['complete', complete, entryId.complete(jobId, 'failed')],
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
      await world.close();
    },
  };
  return stack;
}

/** A cast guild with its account in the bot's database, read and moved through the credits module. */
function withAccount(cast: CastGuild, db: TestDatabase, startingCredits: number): StackGuild {
  const { guild, members } = cast;
  const account: StackGuild = {
    ...cast,
    async balance() {
      return (await ensureGuild(db.db, guild.id, { startingCredits })).balance;
    },
    async setBalance(credits) {
      const current = await account.balance();
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
  return account;
}
