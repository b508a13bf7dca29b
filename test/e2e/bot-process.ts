/**
 * The bot as a user runs it: `npm run deploy-commands`, then `npm start`, each in a child
 * process, on the test stack (../support/stack.ts). Tests act only as Discord members (and,
 * for forged webhooks, as the internet).
 */
import { spawn, type ChildProcess } from 'node:child_process';
import path from 'node:path';
import { eq } from 'drizzle-orm';
import { afterEach, vi } from 'vitest';
import { jobs } from '../../src/db/schema.js';
import type { EmulatorMessage, InteractionHandle, RunCommandInput } from '@music-bot/discord-emulator';
import type { MusicApiSimOptions } from '@music-bot/music-api-sim';
import { findFreePort } from '../../src/embedded/free-port.js';
import { found } from '../support/found.js';
import { startStack, type Stack } from '../support/stack.js';

const root = path.resolve(import.meta.dirname, '../..');
const tsx = path.join(root, 'node_modules/.bin/tsx');

export type LogLine = Record<string, unknown>;

export interface E2E extends Stack {
  readonly httpUrl: string;
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
  /**
   * What runs: the sources through tsx (`npm start`, the default), or the compiled build as the
   * image runs it (`node build/src/main.js`; `npm run build` first).
   */
  readonly entry?: 'source' | 'build';
}

function runToEnd(command: string, args: string[], env: NodeJS.ProcessEnv): Promise<string> {
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, { cwd: root, env, stdio: ['ignore', 'pipe', 'pipe'] });
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
  const stack = await startStack({ startingCredits: options.startingCredits ?? 200, sim: { taskMs: 400, ...options.sim } });
  const httpPort = await findFreePort();
  const httpUrl = `http://127.0.0.1:${httpPort}`;

  const env: NodeJS.ProcessEnv = {
    PATH: process.env.PATH ?? '',
    HOME: process.env.HOME ?? '/tmp',
    ...stack.env,
    DISCORD_DEV_GUILD_ID: stack.guild.id,
    HTTP_PORT: String(httpPort),
    ...(options.webhooks && { PUBLIC_URL: httpUrl }),
    LOG_LEVEL: 'debug',
    EXPECTED_SECONDS: 'song=0.5,lyrics=0.5,video=0.5,upload=0.5,download=0.5,voice=0.5,persona_song=0.5',
    POLL_INTERVAL_MIN_MS: '200',
    POLL_INTERVAL_MAX_MS: '1000',
    ...(options.interactions === 'http' && { INTERACTIONS: 'http', DISCORD_PUBLIC_KEY: stack.emulator.publicKey }),
  };

  const built = options.entry === 'build';
  await runToEnd(
    built ? process.execPath : tsx,
    [path.join(root, built ? 'build/src/scripts/deploy-commands.js' : 'src/scripts/deploy-commands.ts')],
    env,
  );
  // Node itself, with tsx as a loader for the sources: through the tsx binary, kill() would kill
  // only tsx's wrapper and leave the real bot running, and the restart test would prove nothing.
  const entryArgs = built ? [path.join(root, 'build/src/main.js')] : ['--import', 'tsx', path.join(root, 'src/main.ts')];

  let child: ChildProcess | undefined;
  let output = '';
  const logLines: LogLine[] = [];
  async function start(): Promise<void> {
    const process_ = spawn(process.execPath, entryArgs, { cwd: root, env, stdio: ['ignore', 'pipe', 'pipe'] });
    child = process_;
    let partial = '';
    await new Promise<void>((resolve, reject) => {
      process_.stdout!.on('data', (chunk: Buffer) => {
        output += chunk.toString();
        const lines = (partial + chunk.toString()).split('\n');
        partial = lines.pop() ?? '';
        for (const line of lines) {
          const parsed = parseLogLine(line);
          if (!parsed) continue;
          logLines.push(parsed);
          if (parsed.msg === 'bot started') resolve();
        }
      });
      process_.stderr!.on('data', (chunk: Buffer) => (output += chunk.toString()));
      process_.once('exit', (code) => reject(new Error(`bot exited with ${code}: ${output.slice(-3000)}`)));
    });
  }
  await start();
  if (options.interactions === 'http') await stack.emulator.setInteractionsEndpoint(`${httpUrl}/interactions`);

  const ephemeralJobId = /Job `([0-9a-f-]{36})`/;
  const e2e: E2E = {
    ...stack,
    httpUrl,
    webhooks: options.webhooks,
    output: () => output,
    waitForLog(match, what, timeoutMs = 10_000) {
      return vi.waitFor(() => found(logLines.find(match), `the bot to log ${what}`), timeoutMs);
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
    async kill() {
      const current = child;
      if (!current || current.exitCode !== null) return;
      current.removeAllListeners('exit');
      const exited = new Promise((resolve) => current.once('exit', resolve));
      current.kill('SIGKILL');
      await exited;
    },
    get pid() {
      return child?.exitCode === null ? child.pid : undefined;
    },
    async stop() {
      const current = child;
      if (!current) throw new Error('the bot is not running');
      if (current.exitCode !== null || current.signalCode !== null) return { code: current.exitCode, signal: current.signalCode };
      current.removeAllListeners('exit');
      const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
        current.once('exit', (code, signal) => resolve({ code, signal })),
      );
      current.kill('SIGTERM');
      return exited;
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
      await stack.close();
    },
  };
  return e2e;
}

function parseLogLine(line: string): LogLine | undefined {
  if (!line.startsWith('{')) return undefined;
  try {
    return JSON.parse(line) as LogLine;
  } catch {
    return undefined;
  }
}
