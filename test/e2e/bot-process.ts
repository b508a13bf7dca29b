/**
 * The bot as a user runs it: its commands registered as `npm run deploy-commands` registers them
 * (from the test's process unless a file asks for the script), then `npm start` in a child
 * process (the test world's BotProcess), on the test stack (../support/stack.ts). Tests act
 * only as Discord members (and, for forged webhooks, as the internet).
 */
import { eq } from 'drizzle-orm';
import { afterEach, vi } from 'vitest';
import { jobs } from '../../src/db/schema.js';
import type { DiscordEmulatorOptions, EmulatorMessage, InteractionHandle, RunCommandInput } from '@music-bot/discord-emulator';
import type { MusicApiSimOptions } from '@music-bot/music-api-sim';
import type { BotEntry, LogLine } from '@music-bot/test-world';
import { found } from '../support/found.js';
import { registerCommands } from '../support/register-commands.js';
import { startStack, type Stack } from '../support/stack.js';

export type { LogLine } from '@music-bot/test-world';

export interface E2E extends Stack {
  readonly httpUrl: string;
  /** The environment the bot runs with, for another process of it (a twin gateway). */
  readonly botEnv: Readonly<Record<string, string>>;
  readonly webhooks: boolean;
  /** Everything the bot process wrote to stdout and stderr. */
  readonly output: () => string;
  /** Waits for a log line of the bot that `match` accepts, and returns it. */
  waitForLog(match: (line: LogLine) => boolean, what: string, timeoutMs?: number): Promise<LogLine>;
  /** Waits until the bot has finished with an interaction: handled, refused or failed. Returns that log line. */
  settled(handle: InteractionHandle, timeoutMs?: number): Promise<LogLine>;
  run(userId: string, input: Omit<RunCommandInput, 'guildId' | 'channelId' | 'userId'>): InteractionHandle;
  /** The job id the bot's ephemeral acknowledgement names. */
  jobIdOf(handle: InteractionHandle): Promise<string>;
  /** The public message of a job once its result (not its progress) is in it. */
  result(handle: InteractionHandle, jobId: string, timeoutMs?: number): Promise<EmulatorMessage>;
  jobState(jobId: string): Promise<{ state: string; deliveryState: string } | undefined>;
  /** Waits until the bot has recorded the job's delivery, then returns its state. */
  delivered(jobId: string, timeoutMs?: number): Promise<{ state: string; deliveryState: string }>;
  /** SIGKILL, as a crash or an OOM kill would. */
  kill(): Promise<void>;
  /** The bot process's id while it runs. */
  readonly pid: number | undefined;
  /** SIGTERM, as `docker stop` sends it through the image's init, and the way the process ended. */
  stop(): Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  /** `npm start` again on the same Postgres and Redis. */
  start(): Promise<void>;
}

export interface E2EOptions {
  readonly webhooks: boolean;
  /**
   * How Discord brings interactions: over the gateway (the default), or POSTed to the bot's
   * `/interactions` (INTERACTIONS=http), the emulator's endpoint set as the developer portal sets it.
   */
  readonly interactions?: 'gateway' | 'http';
  readonly startingCredits?: number;
  readonly sim?: Partial<MusicApiSimOptions>;
  /** The emulator's options (its SKUs, …). */
  readonly emulator?: Partial<DiscordEmulatorOptions>;
  /**
   * What runs: the sources through tsx (`npm start`), the compiled build as the image runs it
   * (`node build/src/main.js`), or the suite's bundle of that build. By default the bundle where
   * the global setup made one (MUSIC_BOT_BUILD_DIR), else the sources.
   */
  readonly entry?: BotEntry;
  /**
   * How the commands are registered before the bot starts: `npm run deploy-commands` run from
   * `entry` (a process of its own), or the same call from the test's process (the default).
   */
  readonly deployCommands?: 'script' | 'in-process';
  /** More of the bot's environment (VOICE_IDLE_SECONDS, …). */
  readonly env?: Readonly<Record<string, string>>;
  /** Points the bot at the simulator's moderation stand-in (MODERATION_URL, MODERATION_API_KEY), up and flagging nothing until a test says. */
  readonly moderationService?: boolean;
  /** Flags for node before the bot's entry (a preloaded script), for the bot process (the gateway's with `splitRoles`). */
  readonly nodeArgs?: readonly string[];
  /**
   * Runs the roles apart: `ROLE=gateway`, `ROLE=worker` and `ROLE=http`, one process each (with
   * `interactions: 'http'`, interactions reach the http process, and the gateway's work through
   * Redis). `stop`, `kill` and `start` then act on the gateway process; `output` is every process's.
   */
  readonly splitRoles?: boolean;
  /**
   * Serves the moderators' dashboard: DISCORD_CLIENT_SECRET and DISCORD_WEB_URL of the emulator
   * (needs `webhooks`, which sets PUBLIC_URL), its callback registered as the developer portal would.
   */
  readonly dashboard?: boolean;
}

/**
 * Call at the top of an end-to-end file: when a test fails, the bot's warnings and errors are
 * printed, since the bot runs in another process and its logs are otherwise out of sight.
 */
export function printBotLogsOnFailure(bot: () => E2E | undefined): void {
  afterEach(({ task }) => {
    if (task.result?.state !== 'fail') return;
    const lines = (bot()?.output() ?? '').split('\n').filter((line) => /"level":(40|50|60)/.test(line) || /^\w*Error/.test(line));
    console.log(`bot warnings and errors around "${task.name}":\n${lines.slice(-40).join('\n')}`);
  });
}

export async function startE2E(options: E2EOptions): Promise<E2E> {
  const stack = await startStack({ startingCredits: options.startingCredits ?? 200, sim: { taskMs: 400, ...options.sim }, ...(options.emulator && { emulator: options.emulator }) });
  const { world } = stack;
  const httpUrl = world.httpUrl;

  // On top of the world's own (its HTTP_PORT among them).
  const env: Record<string, string> = {
    ...stack.env,
    DISCORD_DEV_GUILD_ID: stack.guild.id,
    ...(options.webhooks && { PUBLIC_URL: httpUrl }),
    LOG_LEVEL: 'debug',
    EXPECTED_SECONDS: 'song=0.5,lyrics=0.5,video=0.5,upload=0.5,download=0.5,voice=0.5,persona_song=0.5',
    POLL_INTERVAL_MIN_MS: '200',
    POLL_INTERVAL_MAX_MS: '1000',
    ...(options.interactions === 'http' && { INTERACTIONS: 'http', DISCORD_PUBLIC_KEY: stack.emulator.publicKey }),
    ...(options.moderationService && world.moderationEnv),
    ...(options.dashboard && { DISCORD_CLIENT_SECRET: stack.emulator.clientSecret, DISCORD_WEB_URL: stack.emulator.webUrl }),
    ...options.env,
  };

  if (options.dashboard) stack.emulator.setOAuth2Redirects([`${httpUrl}/dashboard/callback`]);
  const entry = options.entry;
  if (options.deployCommands === 'script') await world.deployCommands({ entry, env });
  else await registerCommands(env);
  const bot = world.bot({ env: options.splitRoles ? { ...env, ROLE: 'gateway' } : env, entry, ...(options.nodeArgs && { nodeArgs: options.nodeArgs }) });
  const others = options.splitRoles ? [world.bot({ env: { ...env, ROLE: 'worker' }, entry }), world.bot({ env: { ...env, ROLE: 'http' }, entry })] : [];
  await bot.start();
  for (const other of others) await other.start();
  const all = [bot, ...others];
  if (options.interactions === 'http') await stack.emulator.setInteractionsEndpoint(`${httpUrl}/interactions`);

  const ephemeralJobId = /Job `([0-9a-f-]{36})`/;
  const e2e: E2E = {
    ...stack,
    httpUrl,
    botEnv: env,
    webhooks: options.webhooks,
    output: () => all.map((process) => process.output()).join('\n'),
    waitForLog(match, what, timeoutMs = 10_000) {
      return vi.waitFor(() => found(all.flatMap((process) => process.logLines()).find(match), `the bot to log ${what}`), timeoutMs);
    },
    settled(handle, timeoutMs) {
      const ends = ['interaction handled', 'interaction refused', 'interaction failed'];
      return e2e.waitForLog((line) => line.interactionId === handle.id && ends.includes(String(line.msg)), `the end of interaction ${handle.id}`, timeoutMs);
    },
    run(userId, input) {
      return stack.emulator.runCommand({ guildId: stack.guild.id, channelId: stack.channelId, userId, ...input });
    },
    async jobIdOf(handle) {
      const ack = await handle.waitForFollowUp((m) => ephemeralJobId.test(m.content ?? ''), 15_000);
      return ephemeralJobId.exec(ack.content ?? '')![1]!;
    },
    async result(handle, jobId, timeoutMs = 20_000) {
      const isResult = (m: EmulatorMessage) =>
        (m.embeds ?? []).some((e) => (e.footer?.text ?? '').includes(jobId) && !(e.title ?? '').startsWith('Making your'));
      const current = handle.original();
      if (current && isResult(current)) return current;
      return handle.waitForEdit(isResult, timeoutMs);
    },
    async jobState(jobId) {
      const [row] = await stack.db.db.select({ state: jobs.state, deliveryState: jobs.deliveryState }).from(jobs).where(eq(jobs.id, jobId));
      return row;
    },
    async delivered(jobId, timeoutMs = 20_000) {
      return vi.waitFor(async () => {
        const row = await e2e.jobState(jobId);
        return found(row && row.deliveryState !== 'pending' ? row : undefined, `job ${jobId} delivered`);
      }, timeoutMs);
    },
    kill: () => bot.kill(),
    get pid() {
      return bot.pid;
    },
    async stop() {
      const exit = await bot.stop();
      if (!exit) throw new Error('the bot is not running');
      return exit;
    },
    start: () => bot.start(),
    // The world stops the bot (SIGTERM, then SIGKILL) before the stand-ins.
    close: () => stack.close(),
  };
  return e2e;
}
