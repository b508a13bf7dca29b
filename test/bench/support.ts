/**
 * What every benchmark shares: its world (packages/test-world, with the benchmarks' settings),
 * statistics, and the result file `bench/results/<name>.json` with the machine and the commit it
 * was measured on (`npm run bench:docs` renders docs/performance.md from those files).
 * Each states its targets in its result (`targets`: name, value, target, met) and exits non-zero
 * when one is missed, unless given `--report-only`; `npm test` runs none of them.
 */
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { appendFile, mkdir, readdir, readFile, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import pg from 'pg';
import type { DiscordEmulator } from '@music-bot/discord-emulator';
import { ROOT, sleep, startWorld, waitFor, type BotProcess, type BotProcessOptions, type World, type WorldOptions } from '@music-bot/test-world';

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

/** The median of a few rounds' figures; with an even count, the upper of the two middle ones. */
export function medianOf(values: readonly number[]): number {
  return [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)] ?? Number.NaN;
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

/** One target of a benchmark: what is measured, its value, the bound it must keep, and whether it did. */
export interface Target {
  readonly name: string;
  readonly value: number | string;
  readonly target: string;
  readonly met: boolean;
}

export function target(name: string, value: number | string, bound: string, met: boolean): Target {
  return { name, value, target: bound, met };
}

/** `--report-only` (or BENCH_REPORT_ONLY=1, as `npm run bench` passes it on): report missed targets without failing. */
export const REPORT_ONLY = process.argv.includes('--report-only') || process.env.BENCH_REPORT_ONLY === '1';

/**
 * Writes `bench/results/<name>.json`: the figures, the targets and how they fared, the machine,
 * the date and the commit. Given `targets`, prints them, records `met` (all met), sets the exit
 * code to 1 when one is missed (not with `--report-only`), and, when `BENCH_TARGETS_FILE` names a
 * file (as `npm run bench` does), appends a line `{ result, missed }` to it.
 */
export async function writeResult(name: string, result: Record<string, unknown>, targets?: readonly Target[]): Promise<string> {
  const folder = path.join(ROOT, 'bench/results');
  await mkdir(folder, { recursive: true });
  const file = path.join(folder, `${name}.json`);
  const header = { benchmark: name, date: new Date().toISOString(), ...measuredCommit(), machine: machine() };
  const judged = targets ? { targets, met: targets.every((t) => t.met) } : {};
  await writeFile(file, `${JSON.stringify({ ...header, ...result, ...judged }, null, 2)}\n`);
  console.log(`\nwritten: ${path.relative(ROOT, file)}`);
  if (targets) {
    printTable(`targets of ${name}`, targets.map((t) => ({ target: t.name, value: t.value, bound: t.target, met: t.met ? 'met' : 'MISSED' })));
    const missed = targets.filter((t) => !t.met).map((t) => `${t.name} (${t.value}; ${t.target})`);
    if (process.env.BENCH_TARGETS_FILE) await appendFile(process.env.BENCH_TARGETS_FILE, `${JSON.stringify({ result: name, missed })}\n`);
    if (missed.length > 0) {
      console.log(`\n${name}: ${missed.length} target${missed.length === 1 ? '' : 's'} missed${REPORT_ONLY ? ' (--report-only: exit code 0)' : ''}`);
      if (!REPORT_ONLY) process.exitCode = 1;
    }
  }
  return file;
}

// ---- timing ----

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

/** Postgres's busiest statements (pg_stat_statements: calls, total and mean time, plans made and time planning), written to `file`. */
export async function writeBusiestStatements(db: pg.Pool, file: string): Promise<void> {
  const { rows } = await db.query<{ calls: string; total_ms: number; mean_ms: number; rows: string; plans: string; plan_ms: number; query: string }>(
    `select calls, round(total_exec_time::numeric, 1)::float as total_ms, round(mean_exec_time::numeric, 3)::float as mean_ms, rows,
            plans, round(total_plan_time::numeric, 1)::float as plan_ms, query
       from pg_stat_statements order by total_exec_time desc limit 40`,
  );
  const text = rows.map((row) => `${row.total_ms} ms total (+ ${row.plans} plans in ${row.plan_ms} ms), ${row.calls} calls, ${row.mean_ms} ms mean, ${row.rows} rows\n  ${row.query.replace(/\s+/g, ' ')}\n`).join('\n');
  await writeFile(file, text);
}

/** What every benchmark's bot gets on top of the world's environment: webhooks on, few log lines, no audio attached to results. */
function benchBotEnv(world: World): Record<string, string> {
  return {
    PUBLIC_URL: world.httpUrl,
    LOG_LEVEL: process.env.BENCH_BOT_LOG_LEVEL ?? 'warn',
    ATTACH_AUDIO: 'false',
    ...(process.env.BENCH_TRACE && { BENCH_TRACE: path.resolve(process.env.BENCH_TRACE) }),
  };
}

/**
 * How a benchmark's bot process runs, from the environment: BENCH_BOT_PROFILE=<dir> writes a V8
 * CPU profile of each bot process there (open it in Chrome's DevTools); BENCH_BOT_NODE_ARGS adds
 * node flags (for example `--require ./count-queries.cjs`); BENCH_BOT_LOGS=1 shows the bot's own
 * log lines (at LOG_LEVEL, warn by default), which are dropped otherwise; BENCH_TRACE=<dir>
 * records each bot process's GC pauses and event-loop stalls there (test/bench/trace-preload.cjs).
 */
function benchBotOptions(): Pick<BotProcessOptions, 'nodeArgs' | 'output' | 'entry'> {
  const profile = process.env.BENCH_BOT_PROFILE ? ['--cpu-prof', '--cpu-prof-dir', path.resolve(process.env.BENCH_BOT_PROFILE)] : [];
  const trace = process.env.BENCH_TRACE ? ['--require', path.join(ROOT, 'test/bench/trace-preload.cjs')] : [];
  const extraArgs = (process.env.BENCH_BOT_NODE_ARGS ?? '').split(' ').filter(Boolean);
  return {
    nodeArgs: [...profile, ...trace, ...extraArgs],
    output: process.env.BENCH_BOT_LOGS === '1' ? 'inherit' : 'ignore',
    ...(process.env.BENCH_BOT_ENTRY === 'build' && { entry: 'build' as const }),
  };
}

/**
 * The test world (packages/test-world) with the benchmarks' settings: credits and concurrency
 * that never bind, tasks that run for an hour unless finished, the emulator's request checks
 * off; `env()` and `bot()` add the bench's bot settings and BENCH_* switches.
 */
export interface BenchWorld extends World {
  /** A pool on the bot's database, for the benchmark's own reads and floors. */
  readonly db: pg.Pool;
}

export async function startBenchWorld(options: Pick<WorldOptions, 'sim' | 'emulator' | 'httpPort'> = {}): Promise<BenchWorld> {
  // BENCH_PG_STATEMENTS=<file> writes Postgres's busiest statements there when the world closes,
  // to see what a benchmark's database time went to.
  const statementsFile = process.env.BENCH_PG_STATEMENTS;
  const world = await startWorld({
    postgres: { settings: statementsFile ? { shared_preload_libraries: 'pg_stat_statements', 'pg_stat_statements.track': 'all', 'pg_stat_statements.track_planning': 'on' } : {} },
    sim: { credits: 100_000_000, taskMs: 3_600_000, concurrencyLimit: 1_000_000, ...options.sim },
    emulator: { validateRequests: false, ...options.emulator },
    ...(options.httpPort !== undefined && { httpPort: options.httpPort }),
  });
  const db = new pg.Pool({ connectionString: world.postgresUrl, max: 8 });
  try {
    if (statementsFile) await db.query('create extension if not exists pg_stat_statements');
  } catch (error) {
    await db.end().catch(() => {});
    await world.close();
    throw error;
  }
  const bots: BotProcess[] = [];
  return {
    ...world,
    db,
    env: (extra = {}) => world.env({ ...benchBotEnv(world), ...extra }),
    bot(botOptions = {}) {
      const bot = world.bot({ ...benchBotOptions(), ...botOptions, env: { ...benchBotEnv(world), ...botOptions.env } });
      bots.push(bot);
      return bot;
    },
    deployCommands: ({ entry, env } = {}) => world.deployCommands({ ...(entry && { entry }), env: { ...benchBotEnv(world), ...env } }),
    async close() {
      // The bots first, so that the statements they ran to the end are counted.
      await Promise.all(bots.map((bot) => bot.stop()));
      if (statementsFile) await writeBusiestStatements(db, path.resolve(statementsFile)).catch(() => {});
      await db.end().catch(() => {});
      await world.close();
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
  await autovacuumDone(db);
}

/** Waits until no autovacuum worker runs (without a checkpoint: see `settlePostgres`). */
export async function autovacuumDone(db: pg.Pool): Promise<void> {
  await waitFor(
    'autovacuum to finish',
    async () => (await db.query<{ n: number }>("select count(*)::integer as n from pg_stat_activity where backend_type = 'autovacuum worker'")).rows[0]!.n === 0,
    { timeoutMs: 120_000, everyMs: 100 },
  );
}

/** Resident memory of a process, in MB (from /proc). */
export async function rssMegabytes(pid: number): Promise<number> {
  const status = await readFile(`/proc/${pid}/status`, 'utf8');
  const kb = Number(/VmRSS:\s+(\d+)/.exec(status)?.[1] ?? Number.NaN);
  return round(kb / 1024, 1);
}

/**
 * CPU time a process has used so far (user + system), in ms (from /proc; clock ticks of 10 ms).
 * `children`: with that of its children that have ended (and been waited for).
 */
export async function cpuMs(pid: number, { children = false } = {}): Promise<number> {
  const stat = await readFile(`/proc/${pid}/stat`, 'utf8').catch(() => '');
  // Fields after the command name (which may hold spaces): utime and stime are the 12th and 13th,
  // cutime and cstime (ended children) the 14th and 15th.
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  const own = Number(fields[11] ?? 0) + Number(fields[12] ?? 0);
  return (own + (children ? Number(fields[13] ?? 0) + Number(fields[14] ?? 0) : 0)) * 10;
}

/** CPU time used so far by the processes `pids` (their own, not their children's), in ms. */
export async function cpuMsOfAll(pids: readonly number[]): Promise<number> {
  const each = await Promise.all(pids.map((pid) => cpuMs(pid)));
  return each.reduce((sum, ms) => sum + ms, 0);
}

/**
 * CPU time used so far by every process of each name in `names` (e.g. `postgres`: the server and
 * its backends), in ms, with their ended children's, in one walk of /proc: a backend whose
 * connection closed counts on in the server's total, so the figure never falls when a pool lets
 * a connection go.
 */
export async function cpuMsOfCommands<Name extends string>(names: readonly Name[]): Promise<Record<Name, number>> {
  const totals = Object.fromEntries(names.map((name) => [name, 0])) as Record<Name, number>;
  for (const entry of await readdir('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    const command = (await readFile(`/proc/${entry}/comm`, 'utf8').catch(() => '')).trim() as Name;
    if (command in totals) totals[command] += await cpuMs(Number(entry), { children: true });
  }
  return totals;
}

/** {@link cpuMsOfCommands} of one name. */
export async function cpuMsOfCommand(name: string): Promise<number> {
  return (await cpuMsOfCommands([name]))[name]!;
}

// ---- the floor bot ----

/**
 * Creates `bench_floor` (one row per guild, credits to spare) on the world's database, unless
 * there, and starts test/bench/floor-bot.ts against `emulator`: `decide` answers each command
 * with one guarded decrement and a reply, `defer` only defers. Wait for
 * `emulator.waitForBotReady` before sending commands.
 */
export async function spawnFloorBot(world: World, mode: 'decide' | 'defer', emulator: DiscordEmulator, guilds: number): Promise<ChildProcess> {
  const db = new pg.Pool({ connectionString: world.postgresUrl, max: 1 });
  try {
    await db.query('create table if not exists bench_floor (id int primary key, n int not null)');
    await db.query(`insert into bench_floor select g, 1000000000 from generate_series(0, $1::int - 1) g on conflict (id) do nothing`, [guilds]);
  } finally {
    await db.end();
  }
  return spawn(process.execPath, ['--import', 'tsx', path.join(ROOT, 'test/bench/floor-bot.ts'), mode], {
    cwd: ROOT,
    env: { ...world.env(), DISCORD_API_URL: emulator.apiUrl, FLOOR_GUILDS: String(guilds) },
    stdio: ['ignore', 'ignore', 'inherit'],
  });
}

export async function stopChild(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  child.kill('SIGTERM');
  await new Promise((resolve) => child.once('exit', resolve));
}
