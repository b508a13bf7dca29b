/**
 * What every benchmark shares: the world it runs in (an embedded Postgres, a redis-server,
 * the music-API simulator and the Discord emulator, each real), the bot started the way
 * operators start it, statistics, and the result file `bench/results/<name>.json` with the
 * machine and the commit it was measured on (`npm run bench:docs` renders docs/performance.md
 * from those files). Benchmarks print figures and ratios; they assert nothing.
 */
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { mkdir, mkdtemp, readdir, readFile, rm, writeFile, chmod } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { startEmbeddedPostgres } from '../../src/embedded/embedded-postgres.js';
import { findFreePort } from '../../src/embedded/free-port.js';
import { startRedisServer } from '../../src/embedded/redis-server.js';
import { startDiscordEmulator, type DiscordEmulator, type DiscordEmulatorOptions } from '@music-bot/discord-emulator';
import { startMusicApiSim, type MusicApiSim, type MusicApiSimOptions } from '@music-bot/music-api-sim';

export const ROOT = path.resolve(import.meta.dirname, '../..');
export const SIM_KEY = 'bench-sim-key';
export const BOT_TOKEN = 'MTA5ODc2NTQzMjEwOTg3NjU0.emulator.bench-bot-token';

// ---- statistics ----

export interface Summary {
  readonly n: number;
  readonly p50: number;
  readonly p95: number;
  readonly p99: number;
  readonly max: number;
  readonly mean: number;
}

export function percentile(sorted: readonly number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1))] ?? Number.NaN;
}

export function summarize(values: readonly number[]): Summary {
  const sorted = [...values].sort((a, b) => a - b);
  const sum = sorted.reduce((total, value) => total + value, 0);
  return {
    n: sorted.length,
    p50: round(percentile(sorted, 50)),
    p95: round(percentile(sorted, 95)),
    p99: round(percentile(sorted, 99)),
    max: round(sorted.at(-1) ?? Number.NaN),
    mean: round(sorted.length ? sum / sorted.length : Number.NaN),
  };
}

export function round(value: number, digits = 2): number {
  const factor = 10 ** digits;
  return Math.round(value * factor) / factor;
}

export function ratio(value: number, floor: number): number {
  return round(value / floor, 2);
}

// ---- output ----

export function machine() {
  return {
    cores: os.cpus().length,
    cpu: os.cpus()[0]?.model ?? 'unknown',
    memoryGiB: round(os.totalmem() / 1024 ** 3, 1),
    node: process.version,
    platform: `${os.platform()} ${os.release()}`,
  };
}

/** Prints a table of rows (objects with the same keys). */
export function printTable(title: string, rows: ReadonlyArray<Record<string, string | number | boolean | null>>): void {
  console.log(`\n${title}`);
  if (rows.length === 0) return;
  const columns = Object.keys(rows[0]!);
  const cells = rows.map((row) => columns.map((column) => String(row[column] ?? '')));
  const widths = columns.map((column, i) => Math.max(column.length, ...cells.map((row) => row[i]!.length)));
  const line = (values: string[]) => `| ${values.map((value, i) => value.padEnd(widths[i]!)).join(' | ')} |`;
  console.log(line(columns));
  console.log(`|${widths.map((width) => '-'.repeat(width + 2)).join('|')}|`);
  for (const row of cells) console.log(line(row));
}

/**
 * The commit being measured, and whether the checkout differs from it outside bench/results;
 * nothing when git or the repository is missing.
 */
export function measuredCommit(): { commit: string; commitDirty: boolean } | Record<string, never> {
  const git = (...args: string[]) => execFileSync('git', args, { cwd: ROOT, encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] }).trim();
  try {
    const commit = git('rev-parse', 'HEAD');
    const changed = git('status', '--porcelain', '--untracked-files=no', '--', '.', ':(exclude)bench/results');
    return { commit, commitDirty: changed !== '' };
  } catch {
    return {};
  }
}

/** Writes `bench/results/<name>.json`: the figures, the targets and how they fared, the machine, the date and the commit. */
export async function writeResult(name: string, result: Record<string, unknown>): Promise<string> {
  const folder = path.join(ROOT, 'bench/results');
  await mkdir(folder, { recursive: true });
  const file = path.join(folder, `${name}.json`);
  const header = { benchmark: name, date: new Date().toISOString(), ...measuredCommit(), machine: machine() };
  await writeFile(file, `${JSON.stringify({ ...header, ...result }, null, 2)}\n`);
  console.log(`\nwritten: ${path.relative(ROOT, file)}`);
  return file;
}

// ---- timing ----

export const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

export async function waitUntil(what: string, check: () => Promise<boolean> | boolean, timeoutMs: number, everyMs = 100): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out: ${what}`);
    await sleep(everyMs);
  }
}

/** Runs `start(i)` for i in 0..count-1 at `perSecond` (Infinity: all at once); resolves with their promises. */
export async function atRate<T>(count: number, perSecond: number, start: (i: number) => T): Promise<T[]> {
  const out: T[] = [];
  const first = performance.now();
  for (let i = 0; i < count; i += 1) {
    if (Number.isFinite(perSecond)) {
      const wait = first + (i * 1000) / perSecond - performance.now();
      if (wait > 0) await sleep(wait);
    }
    out.push(start(i));
  }
  return out;
}

// ---- the world ----

async function writeBusiestStatements(db: pg.Pool, file: string): Promise<void> {
  const { rows } = await db.query<{ calls: string; total_ms: number; mean_ms: number; rows: string; query: string }>(
    `select calls, round(total_exec_time::numeric, 1)::float as total_ms, round(mean_exec_time::numeric, 3)::float as mean_ms, rows, query
       from pg_stat_statements order by total_exec_time desc limit 40`,
  );
  const text = rows.map((row) => `${row.total_ms} ms total, ${row.calls} calls, ${row.mean_ms} ms mean, ${row.rows} rows\n  ${row.query.replace(/\s+/g, ' ')}\n`).join('\n');
  await writeFile(file, text);
}

/** What `npm start` needs to run on a world of stand-ins: its services' addresses and keys, and a data folder in `temp`. */
export function botEnvironment(world: {
  emulator: DiscordEmulator;
  sim: MusicApiSim;
  postgresUrl: string;
  redisUrl: string;
  httpPort: number;
  temp: string;
}): NodeJS.ProcessEnv {
  return {
    PATH: process.env.PATH ?? '',
    HOME: process.env.HOME ?? world.temp,
    DISCORD_TOKEN: BOT_TOKEN,
    DISCORD_APPLICATION_ID: world.emulator.applicationId,
    DISCORD_API_URL: world.emulator.apiUrl,
    MUSIC_API_URL: world.sim.url,
    MUSIC_API_KEY: SIM_KEY,
    DATABASE_URL: world.postgresUrl,
    REDIS_URL: world.redisUrl,
    HTTP_PORT: String(world.httpPort),
    ATTACH_AUDIO: 'false',
    DATA_DIR: path.join(world.temp, 'data'),
  };
}

export interface BenchWorld {
  readonly temp: string;
  readonly postgresUrl: string;
  readonly redisUrl: string;
  readonly sim: MusicApiSim;
  readonly emulator: DiscordEmulator;
  /** A pool on the bot's database, for the benchmark's own reads and floors. */
  readonly db: pg.Pool;
  /** The environment `npm start` would get for this world. */
  env(extra?: Record<string, string>): NodeJS.ProcessEnv;
  /** `npm start` as a child process with a role; stopped (SIGTERM) with the world. */
  spawnBot(role: 'all' | 'gateway' | 'worker' | 'http', extra?: Record<string, string>): ChildProcess;
  /** Registers the commands (`npm run deploy-commands`). */
  deployCommands(): Promise<void>;
  close(): Promise<void>;
}

export async function startBenchWorld(
  options: { sim?: Partial<MusicApiSimOptions>; emulator?: Partial<DiscordEmulatorOptions>; httpPort?: number } = {},
): Promise<BenchWorld> {
  const temp = await mkdtemp(path.join(os.tmpdir(), 'bench-'));
  await chmod(temp, 0o755);
  const cleanups: Array<() => Promise<unknown>> = [() => rm(temp, { recursive: true, force: true })];
  // BENCH_PG_STATEMENTS=<file> writes Postgres's busiest statements there when the world closes
  // (pg_stat_statements: calls, total and mean time), to see what a benchmark's database time went to.
  const statementsFile = process.env.BENCH_PG_STATEMENTS;
  const postgres = await startEmbeddedPostgres({
    dataDir: path.join(temp, 'pg'),
    settings: statementsFile ? { shared_preload_libraries: 'pg_stat_statements', 'pg_stat_statements.track': 'all' } : {},
  });
  cleanups.unshift(() => postgres.stop());
  const redis = await startRedisServer({ dataDir: path.join(temp, 'redis'), persistent: false });
  cleanups.unshift(() => redis.stop());
  const sim = await startMusicApiSim({
    apiKey: SIM_KEY,
    credits: 100_000_000,
    taskMs: 3_600_000,
    allowHttpWebhooks: true,
    concurrencyLimit: 1_000_000,
    ...options.sim,
  });
  cleanups.unshift(() => sim.close());
  const emulator = await startDiscordEmulator({ botToken: BOT_TOKEN, validateRequests: false, ...options.emulator });
  cleanups.unshift(() => emulator.close());
  const db = new pg.Pool({ connectionString: postgres.url, max: 8 });
  cleanups.unshift(() => db.end());
  if (statementsFile) {
    await db.query('create extension if not exists pg_stat_statements');
    cleanups.unshift(() => writeBusiestStatements(db, path.resolve(statementsFile)));
  }
  const httpPort = options.httpPort ?? (await findFreePort());

  const env = (extra: Record<string, string> = {}): NodeJS.ProcessEnv => ({
    ...botEnvironment({ emulator, sim, postgresUrl: postgres.url, redisUrl: redis.url, httpPort, temp }),
    PUBLIC_URL: `http://127.0.0.1:${httpPort}`,
    LOG_LEVEL: 'warn',
    ...extra,
  });

  const children: ChildProcess[] = [];
  return {
    temp,
    postgresUrl: postgres.url,
    redisUrl: redis.url,
    sim,
    emulator,
    db,
    env,
    spawnBot(role, extra = {}) {
      // node --import tsx, not the tsx binary: the bot is then this process's child, and its pid is the bot's.
      // BENCH_BOT_PROFILE=<dir> writes a V8 CPU profile of each bot process there (open it in Chrome's DevTools).
      const profile = process.env.BENCH_BOT_PROFILE ? ['--cpu-prof', '--cpu-prof-dir', path.resolve(process.env.BENCH_BOT_PROFILE)] : [];
      // BENCH_BOT_NODE_ARGS adds node flags (for example `--require ./count-queries.cjs`).
      const extraArgs = (process.env.BENCH_BOT_NODE_ARGS ?? '').split(' ').filter(Boolean);
      const child = spawn(process.execPath, [...profile, ...extraArgs, '--import', 'tsx', path.join(ROOT, 'src/main.ts')], {
        cwd: ROOT,
        env: env({ ...extra, ROLE: role }),
        // BENCH_BOT_LOGS=1 shows the bot's own log lines (at LOG_LEVEL, warn by default).
        stdio: ['ignore', process.env.BENCH_BOT_LOGS === '1' ? 'inherit' : 'ignore', 'inherit'],
      });
      children.push(child);
      return child;
    },
    async deployCommands() {
      await new Promise<void>((resolve, reject) => {
        const deploy = spawn(process.execPath, ['--import', 'tsx', path.join(ROOT, 'src/scripts/deploy-commands.ts')], {
          cwd: ROOT,
          env: env(),
          stdio: ['ignore', 'ignore', 'inherit'],
        });
        deploy.once('exit', (code) => (code === 0 ? resolve() : reject(new Error(`deploy-commands exited ${code}`))));
      });
    },
    async close() {
      for (const child of children) {
        if (child.exitCode !== null || child.signalCode !== null) continue;
        child.kill('SIGTERM');
        await Promise.race([new Promise((resolve) => child.once('exit', resolve)), sleep(35_000)]);
      }
      for (const cleanup of cleanups) await cleanup().catch(() => {});
    },
  };
}

/**
 * Lets Postgres finish what earlier phases left it (dirty pages, autovacuum of the tables they
 * wrote), so that a phase pays for its own writes and not for those of the contender before it:
 * a checkpoint, then no autovacuum worker running.
 */
export async function settlePostgres(db: pg.Pool): Promise<void> {
  await db.query('checkpoint');
  await waitUntil(
    'autovacuum to finish',
    async () => (await db.query<{ n: number }>("select count(*)::integer as n from pg_stat_activity where backend_type = 'autovacuum worker'")).rows[0]!.n === 0,
    120_000,
    100,
  );
}

/** Where a member runs a command: their guild, its channel, and them. */
export interface Place {
  readonly guildId: string;
  readonly channelId: string;
  readonly userId: string;
}

/** `guilds` guilds named `<name> <n>`, each with a channel and `members` members: every member's place. */
export function populateGuilds(emulator: DiscordEmulator, guilds: number, members: number, name = 'Bench'): Place[] {
  const places: Place[] = [];
  for (let g = 0; g < guilds; g += 1) {
    const guild = emulator.createGuild({ name: `${name} ${g}` });
    const channel = emulator.createChannel(guild.id, { name: 'songs' });
    for (let m = 0; m < members; m += 1) {
      places.push({ guildId: guild.id, channelId: channel.id, userId: emulator.addMember(guild.id, { username: `member-${g}-${m}` }).id });
    }
  }
  return places;
}

/** Resident memory of a process, in MB (from /proc). */
export async function rssMegabytes(pid: number): Promise<number> {
  const status = await readFile(`/proc/${pid}/status`, 'utf8');
  const kb = Number(/VmRSS:\s+(\d+)/.exec(status)?.[1] ?? Number.NaN);
  return round(kb / 1024, 1);
}

/** CPU time a process has used so far (user + system), in ms (from /proc; clock ticks of 10 ms). */
export async function cpuMs(pid: number): Promise<number> {
  const stat = await readFile(`/proc/${pid}/stat`, 'utf8').catch(() => '');
  // Fields after the command name (which may hold spaces): utime and stime are the 12th and 13th.
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return (Number(fields[11] ?? 0) + Number(fields[12] ?? 0)) * 10;
}

/** CPU time used so far by every process named `name` (e.g. `postgres`: the server and its backends), in ms. */
export async function cpuMsOfCommand(name: string): Promise<number> {
  let total = 0;
  for (const entry of await readdir('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    const command = await readFile(`/proc/${entry}/comm`, 'utf8').catch(() => '');
    if (command.trim() === name) total += await cpuMs(Number(entry));
  }
  return total;
}
