/**
 * The bot as a user runs it: `npm run deploy-commands`, then `npm start`, each in a child
 * process, against the Discord emulator, the music-API simulator and a real Postgres and
 * Redis. Tests act only as Discord members (and, for forged webhooks, as the internet).
 */
import { spawn, type ChildProcess } from 'node:child_process';
import path from 'node:path';
import { PermissionFlagsBits, type APIRole } from 'discord-api-types/v10';
import { eq, sql } from 'drizzle-orm';
import { afterEach } from 'vitest';
import { creditLedger, guilds, jobs } from '../../src/db/schema.js';
import { startDiscordEmulator, type EmulatorGuild } from '../../src/sandbox/discord-emulator/index.js';
import type { EmulatorMessage, InteractionHandle, RunCommandInput } from '../../src/sandbox/discord-emulator/types.js';
import { startMusicApiSim, type MusicApiSim, type MusicApiSimOptions } from '../../src/sandbox/music-api-sim/index.js';
import { findFreePort } from '../../src/services/free-port.js';
import { createTestDatabase, testRedis, type TestDatabase } from '../support/database.js';

const root = path.resolve(import.meta.dirname, '../..');
const tsx = path.join(root, 'node_modules/.bin/tsx');
export const SIM_KEY = 'e2e-sim-secret-key';
const BOT_TOKEN = 'MTA5ODc2NTQzMjEwOTg3NjU0.emulator.e2e-bot-token-secret';

export type Emulator = Awaited<ReturnType<typeof startDiscordEmulator>>;

export interface E2EMembers {
  readonly alice: string;
  readonly bob: string;
  /** Holds Manage Server. */
  readonly manager: string;
  /** In BOT_OWNER_IDS. */
  readonly owner: string;
}

export interface E2E {
  readonly db: TestDatabase;
  readonly sim: MusicApiSim;
  readonly emulator: Emulator;
  readonly guild: EmulatorGuild;
  readonly channelId: string;
  readonly members: E2EMembers;
  readonly capRole: APIRole;
  readonly httpUrl: string;
  readonly webhooks: boolean;
  /** Everything the bot process wrote to stdout and stderr. */
  readonly output: () => string;
  run(userId: string, input: Omit<RunCommandInput, 'guildId' | 'channelId' | 'userId'>): InteractionHandle;
  /** The job id the bot's ephemeral acknowledgement names. */
  jobIdOf(handle: InteractionHandle): Promise<string>;
  /** The public message of a job once its result (not its progress) is in it. */
  result(handle: InteractionHandle, jobId: string, timeoutMs?: number): Promise<EmulatorMessage>;
  balance(): Promise<number>;
  ledgerRows(): Promise<number>;
  jobRows(): Promise<number>;
  jobState(jobId: string): Promise<{ state: string; deliveryState: string } | undefined>;
  /** Waits until the bot has recorded the job's delivery, then returns its state. */
  delivered(jobId: string, timeoutMs?: number): Promise<{ state: string; deliveryState: string }>;
  /** SIGKILL, as a crash or an OOM kill would. */
  kill(): Promise<void>;
  /** `npm start` again on the same Postgres and Redis. */
  start(): Promise<void>;
  close(): Promise<void>;
}

export interface E2EOptions {
  readonly webhooks: boolean;
  readonly startingCredits?: number;
  readonly sim?: Partial<MusicApiSimOptions>;
}

function runToEnd(args: string[], env: NodeJS.ProcessEnv): Promise<string> {
  return new Promise((resolve, reject) => {
    const child = spawn(tsx, args, { cwd: root, env, stdio: ['ignore', 'pipe', 'pipe'] });
    let output = '';
    child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
    child.once('exit', (code) => (code === 0 ? resolve(output) : reject(new Error(`${args.join(' ')} exited ${code}: ${output}`))));
  });
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
  const db = await createTestDatabase();
  const { url: redisUrl, prefix } = testRedis();
  const sim = await startMusicApiSim({ apiKey: SIM_KEY, credits: 100_000, taskMs: 400, allowHttpWebhooks: true, ...options.sim });
  const emulator = await startDiscordEmulator({ botToken: BOT_TOKEN });
  const guild = emulator.createGuild({ name: 'E2E music makers' });
  const channel = emulator.createChannel(guild.id, { name: 'music' });
  const capRole = emulator.createRole(guild.id, { name: 'Generous' });
  const members: E2EMembers = {
    alice: emulator.addMember(guild.id, { username: 'alice' }).id,
    bob: emulator.addMember(guild.id, { username: 'bob', roles: [capRole.id] }).id,
    manager: emulator.addMember(guild.id, {
      username: 'manager',
      permissions: PermissionFlagsBits.ManageGuild | PermissionFlagsBits.ViewChannel | PermissionFlagsBits.SendMessages,
    }).id,
    owner: emulator.addMember(guild.id, { username: 'owner' }).id,
  };
  const httpPort = await findFreePort();
  const httpUrl = `http://127.0.0.1:${httpPort}`;

  const env: NodeJS.ProcessEnv = {
    PATH: process.env.PATH ?? '',
    HOME: process.env.HOME ?? '/tmp',
    DISCORD_TOKEN: emulator.botToken,
    DISCORD_APPLICATION_ID: emulator.applicationId,
    DISCORD_API_URL: emulator.apiUrl,
    DISCORD_DEV_GUILD_ID: guild.id,
    BOT_OWNER_IDS: members.owner,
    MUSIC_API_URL: sim.url,
    MUSIC_API_KEY: SIM_KEY,
    DATABASE_URL: db.url,
    REDIS_URL: redisUrl,
    QUEUE_PREFIX: prefix,
    HTTP_PORT: String(httpPort),
    ...(options.webhooks && { PUBLIC_URL: httpUrl }),
    LOG_LEVEL: 'debug',
    STARTING_CREDITS: String(options.startingCredits ?? 200),
    EXPECTED_SECONDS: 'song=0.5,lyrics=0.5,video=0.5,upload=0.5,download=0.5,voice=0.5,persona_song=0.5',
    POLL_INTERVAL_MIN_MS: '200',
    POLL_INTERVAL_MAX_MS: '1000',
  };

  await runToEnd([path.join(root, 'src/scripts/deploy-commands.ts')], env);

  let child: ChildProcess | undefined;
  let output = '';
  async function start(): Promise<void> {
    // Node itself, with tsx as a loader: through the tsx binary, kill() would kill only tsx's
    // wrapper and leave the real bot running, and the restart test would prove nothing.
    const process_ = spawn(process.execPath, ['--import', 'tsx', path.join(root, 'src/main.ts')], { cwd: root, env, stdio: ['ignore', 'pipe', 'pipe'] });
    child = process_;
    await new Promise<void>((resolve, reject) => {
      const onData = (chunk: Buffer) => {
        output += chunk.toString();
        if (output.includes('"bot started"')) resolve();
      };
      process_.stdout!.on('data', onData);
      process_.stderr!.on('data', (chunk: Buffer) => (output += chunk.toString()));
      process_.once('exit', (code) => reject(new Error(`bot exited with ${code}: ${output.slice(-3000)}`)));
    });
  }
  await start();

  const ephemeralJobId = /Job `([0-9a-f-]{36})`/;
  const e2e: E2E = {
    db,
    sim,
    emulator,
    guild,
    channelId: channel.id,
    members,
    capRole,
    httpUrl,
    webhooks: options.webhooks,
    output: () => output,
    run(userId, input) {
      return emulator.runCommand({ guildId: guild.id, channelId: channel.id, userId, ...input });
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
    async balance() {
      const [row] = await db.db.select({ balance: guilds.balance }).from(guilds).where(eq(guilds.id, guild.id));
      return row?.balance ?? Number.NaN;
    },
    async ledgerRows() {
      const [row] = await db.db.select({ n: sql<number>`count(*)::int` }).from(creditLedger).where(eq(creditLedger.guildId, guild.id));
      return row?.n ?? 0;
    },
    async jobRows() {
      const [row] = await db.db.select({ n: sql<number>`count(*)::int` }).from(jobs).where(eq(jobs.guildId, guild.id));
      return row?.n ?? 0;
    },
    async jobState(jobId) {
      const [row] = await db.db.select({ state: jobs.state, deliveryState: jobs.deliveryState }).from(jobs).where(eq(jobs.id, jobId));
      return row;
    },
    async delivered(jobId, timeoutMs = 20_000) {
      const deadline = Date.now() + timeoutMs;
      for (;;) {
        const row = await e2e.jobState(jobId);
        if (row && row.deliveryState !== 'pending') return row;
        if (Date.now() > deadline) throw new Error(`job ${jobId} not delivered in ${timeoutMs} ms`);
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
    },
    async kill() {
      const current = child;
      if (!current || current.exitCode !== null) return;
      current.removeAllListeners('exit');
      const exited = new Promise((resolve) => current.once('exit', resolve));
      current.kill('SIGKILL');
      await exited;
    },
    start,
    async close() {
      const current = child;
      if (current && current.exitCode === null) {
        current.removeAllListeners('exit');
        const exited = new Promise((resolve) => current.once('exit', resolve));
        current.kill('SIGTERM');
        await Promise.race([exited, new Promise((resolve) => setTimeout(resolve, 10_000))]);
        if (current.exitCode === null) current.kill('SIGKILL');
      }
      await emulator.close();
      await sim.close();
    },
  };
  return e2e;
}
