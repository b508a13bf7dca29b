/**
 * `npm start` without DATABASE_URL and REDIS_URL runs an embedded Postgres and redis-server.
 * A bot killed with SIGKILL (a crash, an OOM kill) runs no exit handler, yet both stop, cleanly,
 * within seconds, and the next start on the same DATA_DIR finds Postgres shut down properly.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { chmod, mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it, onTestFinished } from 'vitest';
import { findFreePort } from '../../../src/embedded/free-port.js';
import { startRedisServer } from '../../../src/embedded/redis-server.js';
import { startDiscordEmulator, type DiscordEmulator } from '@music-bot/discord-emulator';
import { startMusicApiSim, type MusicApiSim } from '@music-bot/music-api-sim';
import { root } from './cli.js';

const SIM_KEY = 'sim-key-of-the-killed-bot';
// Shaped as the developer portal's, as the configuration requires.
const BOT_TOKEN = 'MTA5ODc2NTQzMjEwOTg3NjU0.emulator.killed-bot-token';

interface Proc {
  readonly pid: number;
  readonly ppid: number;
  readonly comm: string;
  readonly state: string;
  /** Clock ticks after boot: with the pid, names one process even if the pid is used again. */
  readonly start: string;
}

function readProc(pid: number): Proc | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    // "pid (comm) state ppid ...": comm may hold spaces and parentheses.
    const close = stat.lastIndexOf(')');
    const fields = stat.slice(close + 2).split(' ');
    return { pid, comm: stat.slice(stat.indexOf('(') + 1, close), state: fields[0]!, ppid: Number(fields[1]), start: fields[19]! };
  } catch {
    return undefined;
  }
}

/** Every process below `pid`, at this moment. */
function descendantsOf(pid: number): Proc[] {
  const all = readdirSync('/proc').filter((name) => /^\d+$/.test(name)).map((name) => readProc(Number(name))).filter((proc) => proc !== undefined);
  const found: Proc[] = [];
  for (let parents = new Set([pid]); parents.size > 0; ) {
    const children = all.filter((proc) => parents.has(proc.ppid));
    found.push(...children);
    parents = new Set(children.map((proc) => proc.pid));
  }
  return found;
}

/** Those of `procs` still running (a zombie has stopped). */
function stillRunning(procs: readonly Proc[]): Proc[] {
  return procs.filter((proc) => {
    const now = readProc(proc.pid);
    return now !== undefined && now.start === proc.start && now.state !== 'Z';
  });
}

function running(procs: readonly Proc[]): string[] {
  return stillRunning(procs).map((proc) => `${proc.pid} ${proc.comm}`);
}

interface Bot {
  readonly child: ChildProcess;
  /** The bot's log lines, parsed. */
  readonly lines: Array<Record<string, unknown>>;
  exited(): Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
}

let emulator: DiscordEmulator;
let sim: MusicApiSim;
let temp: string;
const bots: Bot[] = [];
/** Processes a failed test may leave behind, killed after it (their data is thrown away). */
const seen: Proc[] = [];

beforeAll(async () => {
  emulator = await startDiscordEmulator({ botToken: BOT_TOKEN });
  sim = await startMusicApiSim({ apiKey: SIM_KEY, credits: 1_000, allowHttpWebhooks: true });
  temp = await mkdtemp(path.join(os.tmpdir(), 'bot-killed-'));
  // Open to all, so that run as root the postgres user can enter it and nothing is relocated.
  await chmod(temp, 0o755);
});
afterEach(async () => {
  for (const bot of bots.splice(0)) {
    if (bot.child.exitCode === null && bot.child.signalCode === null) bot.child.kill('SIGKILL');
  }
  for (const proc of stillRunning(seen.splice(0))) process.kill(proc.pid, 'SIGKILL');
});
afterAll(async () => {
  await emulator?.close();
  await sim?.close();
  if (temp) await rm(temp, { recursive: true, force: true });
});

/** `npm start` (node with tsx as a loader, so that a kill reaches the bot itself) until it says it started. */
async function startBot(dataDir: string): Promise<Bot> {
  const env = {
    PATH: process.env.PATH ?? '',
    DISCORD_TOKEN: emulator.botToken,
    DISCORD_APPLICATION_ID: emulator.applicationId,
    DISCORD_API_URL: emulator.apiUrl,
    MUSIC_API_URL: sim.url,
    MUSIC_API_KEY: SIM_KEY,
    DATA_DIR: dataDir,
    HTTP_PORT: String(await findFreePort()),
    // Trace: what postgres says as it starts.
    LOG_LEVEL: 'trace',
  };
  // From the test folder, so that no .env is read.
  const child = spawn(process.execPath, ['--import', 'tsx', path.join(root, 'src/main.ts')], { cwd: path.join(root, 'test'), env, stdio: ['ignore', 'pipe', 'pipe'] });
  const exit = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) => child.once('exit', (code, signal) => resolve({ code, signal })));
  const bot: Bot = { child, lines: [], exited: () => exit };
  bots.push(bot);
  let output = '';
  let partial = '';
  await new Promise<void>((resolve, reject) => {
    child.stdout!.on('data', (chunk: Buffer) => {
      output += chunk.toString();
      const lines = (partial + chunk.toString()).split('\n');
      partial = lines.pop() ?? '';
      for (const line of lines) {
        if (!line.startsWith('{')) continue;
        const parsed = JSON.parse(line) as Record<string, unknown>;
        bot.lines.push(parsed);
        if (parsed.msg === 'bot started') resolve();
      }
    });
    child.stderr!.on('data', (chunk: Buffer) => (output += chunk.toString()));
    void exit.then(({ code, signal }) => reject(new Error(`the bot exited (${code ?? signal}) before it started: ${output.slice(-3000)}`)));
  });
  return bot;
}

/** The embedded servers of a running bot and their watchdogs: every process below it but esbuild, tsx's compiler. */
function servicesOf(bot: Bot): Proc[] {
  const services = descendantsOf(bot.child.pid!).filter((proc) => proc.comm !== 'esbuild');
  seen.push(...services);
  return services;
}

describe('a bot killed with SIGKILL', () => {
  it('leaves no embedded Postgres or redis-server running; both shut down cleanly, and the next start finds Postgres shut down properly', async () => {
    const dataDir = path.join(temp, 'data');
    const first = await startBot(dataDir);
    const services = servicesOf(first);
    expect(services.filter((proc) => proc.comm === 'postgres').length).toBeGreaterThan(1);
    expect(services.filter((proc) => proc.comm === 'redis-server')).toHaveLength(1);
    const postmasterPid = path.join(dataDir, 'postgres', 'postmaster.pid');
    const redisPid = path.join(dataDir, 'redis', 'redis.pid');
    expect([existsSync(postmasterPid), existsSync(redisPid)]).toEqual([true, true]);

    const killed = Date.now();
    first.child.kill('SIGKILL');
    expect(await first.exited()).toEqual({ code: null, signal: 'SIGKILL' });
    await expect.poll(() => running(services), { timeout: 15_000, interval: 50 }).toEqual([]);
    const goneAfter = Date.now() - killed;
    // A server that shut down removed its pid file; a killed one leaves it behind.
    expect([existsSync(postmasterPid), existsSync(redisPid)]).toEqual([false, false]);

    const second = await startBot(dataDir);
    const said = second.lines.filter((line) => line.msg === 'postgres output').map((line) => String(line.line));
    expect(said).toContainEqual(expect.stringMatching(/database system was shut down at /));
    expect(said.filter((line) => /not properly shut down|interrupted|recovery/.test(line))).toEqual([]);

    // A bot stopped as usual has stopped its servers by the time it exits.
    const again = servicesOf(second);
    const stopping = Date.now();
    second.child.kill('SIGTERM');
    expect(await second.exited()).toEqual({ code: 0, signal: null });
    const stoppedAfter = Date.now() - stopping;
    expect(running(again)).toEqual([]);
    console.log(`[figure] embedded Postgres and redis-server gone ${goneAfter} ms after a SIGKILL to the bot; a SIGTERM stopped the bot and both in ${stoppedAfter} ms`);
  }, 120_000);
});

describe('an embedded redis-server that dies', () => {
  it('takes its watchdog with it, so that stopping it afterwards returns at once', async () => {
    const dataDir = path.join(temp, 'redis-dies');
    const redis = await startRedisServer({ dataDir, persistent: false });
    onTestFinished(() => redis.stop());
    const pid = Number(readFileSync(path.join(dataDir, 'redis.pid'), 'utf8').trim());
    const server = readProc(pid)!;
    const watchdog = readProc(server.ppid)!;
    seen.push(server);
    expect(watchdog.comm).toBe('sh');
    process.kill(pid, 'SIGKILL');
    await expect.poll(() => running([watchdog]), { timeout: 5_000, interval: 50 }).toEqual([]);
    const stopping = Date.now();
    await redis.stop();
    expect(Date.now() - stopping).toBeLessThan(1_000);
  });
});
