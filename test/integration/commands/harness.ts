/**
 * The bot as `npm start` builds it (gateway, worker; through `startApp`) on the test stack
 * (../../support/stack.ts), with the commands registered by `deployCommands`. Tests act as
 * members: they run commands, click buttons and submit forms in the emulator, and look at
 * what Discord, the database and the service saw. Files that ask for the same bot share it, one
 * after another (see `startBot` for what a file may and may not do to it).
 */
import { Writable } from 'node:stream';
import { and, desc, eq } from 'drizzle-orm';
import { pino } from 'pino';
import { applicationCommandDefinitions } from '../../../commands/index.js';
import { startApp, type App } from '../../../src/app.js';
import { loadConfig, type Config } from '../../../src/config.js';
import { auditLog, jobs } from '../../../src/db/schema.js';
import type { AutocompleteChoice, AutocompleteInput, DiscordEmulatorOptions, EmulatorMessage, InteractionHandle, RunCommandInput } from '@music-bot/discord-emulator';
import { deployCommands } from '../../../src/discord/deploy.js';
import { REDACTED_PATHS } from '../../../src/logger.js';
import type { PipelineSettings } from '../../../src/pipeline/deps.js';
import { InteractionResponseType } from 'discord-api-types/v10';
import { expect, vi } from 'vitest';
import { found } from '../../support/found.js';
import { startStack, type Stack, type StackGuild } from '../../support/stack.js';

export { SIM_KEY } from '../../support/stack.js';

/** Seconds, not minutes. */
const FAST: Partial<PipelineSettings> = {
  expectedSeconds: { song: 0.2, lyrics: 0.2, video: 0.2, upload: 0.2, download: 0.2, voice: 0.2, persona_song: 0.2 },
  pollIntervalMs: { min: 100, max: 400 },
  submitBackoffMs: 100,
  capWaitMs: 150,
  progressEditIntervalMs: 200,
  attachAudio: false,
  // Long enough that the simulator's 200 ms tasks stay short on a busy machine.
  notifyAfterMs: 5_000,
};

export interface BotHarness extends Stack {
  readonly config: Config;
  /** Every log line the bot wrote, parsed. */
  readonly logs: Array<Record<string, unknown>>;
  /** Every log line as written, to look for secrets. */
  readonly rawLogs: string[];
  readonly app: App;
  /** A member runs a command in the music channel (unless told otherwise). */
  run(userId: string, input: Omit<RunCommandInput, 'guildId' | 'channelId' | 'userId'> & { channelId?: string }): InteractionHandle;
  /** The choices the bot offers `userId` typing in a command's option, in the harness's guild and channel. */
  autocomplete(userId: string, input: Omit<AutocompleteInput, 'guildId' | 'channelId' | 'userId'>): Promise<AutocompleteChoice[]>;
  /** Stops the whole bot (as SIGTERM would) and starts it again on the same Postgres and Redis. */
  restart(): Promise<void>;
  /** Resolves once the job's result has been posted, with the message it was posted in. */
  delivered(jobId: string, timeoutMs?: number): Promise<EmulatorMessage>;
  /** The same bot, seen from a new guild of the stack: a clean slate for one test (see `Stack.newGuild`). */
  inNewGuild(): BotHarness;
}

/** What a file asks of its bot; files that ask the same share a world (see `startBot`). */
export interface BotOptions {
  readonly startingCredits?: number;
  readonly settings?: Partial<PipelineSettings>;
  /** Variables added to the test stack's; a function when they name the stack's parts (`world.moderationEnv`). */
  readonly env?: Readonly<Record<string, string>> | ((stack: Stack) => Readonly<Record<string, string>>);
  /** What the emulator sells (the SKUs CREDIT_PACKS and SUBSCRIPTION_ALLOWANCES name). */
  readonly skus?: DiscordEmulatorOptions['skus'];
  /** The emulated Discord's upload limit per file, in bytes. @defaultValue 32 MiB */
  readonly attachmentSizeLimit?: number;
  /**
   * A world of the file's own, started for it and closed with it: for a file that reads what the
   * whole bot or process counted (`/metrics`), or leaves the world changed for good.
   */
  readonly ownWorld?: boolean;
}

/** A started bot on its stack; files see it through `inGuild`. */
interface BotWorld {
  readonly stack: Stack;
  readonly config: Config;
  readonly app: App;
  /** Where the bot's log lines go: each file's `logs` while it uses the world. */
  readonly logSinks: Set<(line: string) => void>;
  restart(): Promise<void>;
  close(): Promise<void>;
}

async function bootWorld(options: BotOptions, shared: boolean): Promise<BotWorld> {
  const stack = await startStack({
    startingCredits: options.startingCredits ?? 100,
    sim: { taskMs: 200 },
    // Room for the refusal of a file over the bot's own 20 MB limit.
    emulator: { attachmentSizeLimit: options.attachmentSizeLimit ?? 32 * 1024 * 1024, ...(options.skus && { skus: options.skus }) },
    shared,
  });
  const extraEnv = typeof options.env === 'function' ? options.env(stack) : options.env;
  const config = loadConfig({ env: { ...stack.env, LOG_LEVEL: 'debug', POLL_MAX_PER_SECOND: '50', ...extraEnv } });
  await deployCommands(config, applicationCommandDefinitions);

  const logSinks = new Set<(line: string) => void>();
  const sink = new Writable({
    write(chunk: Buffer, _encoding, done) {
      for (const line of chunk.toString('utf8').split('\n')) {
        if (line.trim() === '') continue;
        for (const write of logSinks) write(line);
      }
      done();
    },
  });
  const logger = pino({ level: 'debug', redact: { paths: REDACTED_PATHS, censor: '[redacted]' } }, sink);
  // As the test world's bot process: the tests command a bot whose gateway is ready.
  const start = async () => {
    const started = await startApp(config, logger, {
      parts: { gateway: true, worker: true, http: false },
      queuePrefix: stack.prefix,
      settings: { ...FAST, ...options.settings },
      reconcileIntervalMs: 60_000,
      lockDurationMs: 4_000,
    });
    await started.gatewayReady;
    return started;
  };
  let app = await start();
  return {
    stack,
    config,
    get app() {
      return app;
    },
    logSinks,
    async restart() {
      await app.stop();
      app = await start();
    },
    async close() {
      await app.stop();
      await stack.close();
    },
  };
}

/** The worker's shared worlds by the options that started them; `inUse` while a file has one. */
const SHARED_WORLDS = Symbol.for('music-bot.shared-bot-worlds');
type SharedWorlds = Map<string, { world: Promise<BotWorld>; inUse: boolean }>;
const sharedWorlds: SharedWorlds = ((globalThis as { [SHARED_WORLDS]?: SharedWorlds })[SHARED_WORLDS] ??= new Map());

/** How long a file's leftover work (queued jobs) may take to finish before its world is closed instead of shared. */
const SETTLE_MS = 15_000;

/** Whether the bot's job queues have nothing waiting, running or scheduled. */
/** Whether no entry of the bot's job queues waits, runs or is due later. */
export async function queuesIdle(app: App): Promise<boolean> {
  const { submit, poll, complete, deliver, consume } = app.deps.queues;
  for (const queue of [submit, poll, complete, deliver, consume]) {
    const counts = await queue.getJobCounts('waiting', 'active', 'delayed', 'prioritized', 'waiting-children');
    if (Object.values(counts).some((count) => count > 0)) return false;
  }
  return true;
}

/**
 * Starts the bot for a test file (call in `beforeAll`, and `close()` in `afterAll`).
 *
 * Files of a worker that ask for the same options share one started world, the bot, its stack
 * and its database (docs/decisions/shared-test-worlds.md): each file gets a guild and members of
 * its own (the owner is the same user), its own `logs`, and a simulator as the stack started it
 * with its request records emptied, and the emulator's records emptied. So a file may change
 * its guild, its members and the simulator for a test (`setSimForThisTest`), and `restart` the
 * bot; it must not read the database, the queues or the simulator's tasks beyond its own guild's
 * and its own requests' (others' rows are there), nor stop the app or the stand-ins. `close()`
 * hands the world back once the bot's queues are idle, or closes it when they do not settle.
 * A file that needs a bot nobody else touched asks for `ownWorld`; one with `env` given as a
 * function gets its own too.
 */
export async function startBot(options: BotOptions = {}): Promise<BotHarness> {
  const own = options.ownWorld === true || typeof options.env === 'function';
  const key = own ? undefined : JSON.stringify([options.startingCredits ?? 100, options.settings, options.env, options.skus, options.attachmentSizeLimit]);
  const entry = key === undefined ? undefined : sharedWorlds.get(key);
  if (key === undefined || entry?.inUse) return viewOf(await bootWorld(options, false), { shared: false });

  if (entry) {
    entry.inUse = true;
    const world = await entry.world;
    world.stack.resetSim();
    world.stack.emulator.clearRecords();
    return viewOf(world, { shared: true, release: () => release(key, world) });
  }
  const world = bootWorld(options, true);
  const fresh = { world, inUse: true };
  sharedWorlds.set(key, fresh);
  world.catch(() => sharedWorlds.delete(key));
  const started = await world;
  return viewOf(started, { shared: true, first: true, release: () => release(key, started) });
}

/** Hands a shared world back for the next file once its queues are idle, or closes it. */
async function release(key: string, world: BotWorld): Promise<void> {
  const settled = Date.now() + SETTLE_MS;
  const idleNow = () => queuesIdle(world.app).catch(() => false);
  let idle = await idleNow();
  while (!idle && Date.now() < settled) {
    await new Promise((resolve) => setTimeout(resolve, 100));
    idle = await idleNow();
  }
  const entry = sharedWorlds.get(key);
  if (idle && entry) {
    entry.inUse = false;
    return;
  }
  sharedWorlds.delete(key);
  await world.close();
}

/** A file's view of a world: a guild of its own (the stack's first for the world's first file), and its own logs. */
function viewOf(world: BotWorld, how: { shared: boolean; first?: boolean; release?: () => Promise<void> }): BotHarness {
  const { stack, config } = world;
  const logs: Array<Record<string, unknown>> = [];
  const rawLogs: string[] = [];
  const collect = (line: string) => {
    rawLogs.push(line);
    logs.push(JSON.parse(line) as Record<string, unknown>);
  };
  world.logSinks.add(collect);
  const close = async () => {
    world.logSinks.delete(collect);
    if (how.release) await how.release();
    else await world.close();
  };

  /** The bot as seen from one of the stack's guilds. */
  const inGuild = (place: StackGuild): BotHarness => ({
    ...stack,
    ...place,
    config,
    logs,
    rawLogs,
    get app() {
      return world.app;
    },
    run(userId, input) {
      return stack.emulator.runCommand({ ...input, guildId: place.guild.id, channelId: input.channelId ?? place.channelId, userId });
    },
    autocomplete(userId, input) {
      return stack.emulator.autocomplete({ ...input, guildId: place.guild.id, channelId: place.channelId, userId });
    },
    restart: () => world.restart(),
    async delivered(jobId, timeoutMs = 20_000) {
      let row: typeof jobs.$inferSelect | undefined;
      return vi.waitFor(async () => {
        [row] = await stack.db.db.select().from(jobs).where(and(eq(jobs.id, jobId), eq(jobs.guildId, place.guild.id)));
        return found(row?.deliveryState === 'delivered' && row.messageId ? stack.emulator.message(row.messageId) : undefined, () => `job ${jobId} delivered (state ${row?.state}, delivery ${row?.deliveryState})`);
      }, timeoutMs);
    },
    inNewGuild() {
      return inGuild(stack.newGuild({ members: place.members }));
    },
    close,
  });
  return inGuild(!how.shared || how.first ? stack : stack.newGuild({ members: { owner: stack.members.owner } }));
}

/**
 * The ephemeral answer a member got: the reply itself when it was ephemeral (answered at once,
 * or deferred ephemerally and edited), else the first ephemeral follow-up (after a public
 * "Starting…" reply, or after a public deferral).
 */
export async function privateAnswer(handle: InteractionHandle, timeoutMs = 10_000): Promise<EmulatorMessage> {
  const response = await handle.waitForResponse(timeoutMs);
  if (response.type === InteractionResponseType.ChannelMessageWithSource && response.ephemeral) {
    const message = handle.original();
    if (!message) throw new Error('replied, but no message');
    return message;
  }
  if (response.type === InteractionResponseType.DeferredChannelMessageWithSource && response.ephemeral) {
    return handle.waitForEdit(() => true, timeoutMs);
  }
  return handle.waitForFollowUp((message) => message.ephemeral, timeoutMs);
}

/** The first answer to a public command: the reply itself, or the deferred reply once edited. */
export async function publicAnswer(handle: InteractionHandle): Promise<EmulatorMessage> {
  const response = await handle.waitForResponse();
  if (response.type === InteractionResponseType.ChannelMessageWithSource) return handle.original()!;
  expect(response.type).toBe(InteractionResponseType.DeferredChannelMessageWithSource);
  return handle.waitForEdit();
}

/**
 * Starts an interaction with `run` and records every message Discord creates for it from then
 * on, deleted ones included (a "thinking…" reply that vanished still counts); `stop` ends it.
 */
export function createdFor(
  emulator: BotHarness['emulator'],
  run: () => InteractionHandle,
): { handle: InteractionHandle; created: () => EmulatorMessage[]; stop: () => void } {
  const created: EmulatorMessage[] = [];
  const stop = emulator.onMessage((message, change) => {
    if (change === 'create') created.push(message);
  });
  const handle = run();
  return { handle, created: () => created.filter((message) => message.interactionId === handle.id), stop };
}

/** The job id an acknowledgement names. */
/** What a refused request must leave as it was: the guild's balance and jobs, and the service's tasks. */
export async function accountsOf(g: BotHarness): Promise<{ balance: number; jobs: number; tasks: number }> {
  return { balance: await g.balance(), jobs: await g.jobCount(), tasks: g.sim.listTasks().length };
}

/** The guild's audit rows of `action`, newest first. */
export function auditsOf(g: BotHarness, action: string) {
  return g.db.db.select().from(auditLog).where(and(eq(auditLog.guildId, g.guild.id), eq(auditLog.action, action))).orderBy(desc(auditLog.id));
}

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
