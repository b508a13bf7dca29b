/**
 * `npm run bench -- history`: whether a member's commands cost the same after a year of
 * history as on the first day.
 *
 * Two deployments side by side, each a world of its own (Postgres, Redis, the music-API
 * simulator, the Discord emulator) with a bot as `npm start` runs it and one guild driven through
 * its emulator. Day 1: an empty database but for the driven guild's first day (a few pages of
 * songs and movements, so that both sides render full pages). The year: the same first day, then
 * a year of a large deployment written by `history-seed.ts` (the guild is one of its busy guilds),
 * seeded while the day-1 side waits. Then both sides are measured alternately, so that the
 * machine's state weighs on both alike: for each command, its warm-up and its `--rounds` rounds
 * go day 1, year, then year, day 1, and so on, one command at a time (the other bot idle). The
 * commands: `/song`'s first answer; the full answer of `/credits`, `/library query:` (common
 * words, and a word in no song), `/library user:`, `/jobs list`, `/credits-admin history`, and
 * `/charts` (this week by likes, and all time by plays, over the guild's million likes),
 * `/contest status` (the running contest's standings, beside a year of past contests and their
 * votes); the history's CSV export (with the bot's memory growth while it exports). The
 * maintenance passes' database work runs in this process against both: the reconciliation's
 * reads (open and undelivered jobs), the monthly allowance pass, the account check's upstream
 * spend total. Then `EXPLAIN (ANALYZE, BUFFERS)` of every statement those paths sent, on the
 * seeded database, into `bench/results/history-plans.txt`.
 *
 * Targets: each member-facing p50 and p99 within 1.2× of the empty database's; each maintenance
 * pass under a minute. Exits 1 when one is missed, unless `--report-only`.
 *
 * BENCH_PG_STATEMENTS=<file>: each side's busiest statements while its commands were measured,
 * in `<file>.day1` and `<file>.year`; `<file>` itself: the year's database over the whole run.
 *
 * Flags: `--scale S` (the issue's sizes times S), `--guilds`, `--jobs`, `--ledger`, `--songs`,
 * `--busy-movements` (the driven guild's ledger), `--rounds N` (40), `--report-only`.
 * Another size than the issue's writes `history-<scale>.json`.
 */
import { randomUUID } from 'node:crypto';
import { writeFile } from 'node:fs/promises';
import path from 'node:path';
import { parseArgs } from 'node:util';
import type pg from 'pg';
import type { EmulatorMessage, InteractionHandle, RunCommandInput } from '@music-bot/discord-emulator';
import { ROOT, seedCast, sleep, type Members } from '@music-bot/test-world';
import { applyDueAllowances, getGuildCredits, guildUsage, history as ledgerHistory, reserveForJob, returnJobCredits, spentToday, upstreamSpentTotal, usage, utcMonthStart, verifyLedger } from '../../src/credits/index.js';
import { connectDatabase, type DatabaseHandle } from '../../src/db/client.js';
import { libraryPage } from '../../src/pipeline/library.js';
import { readChart } from '../../src/pipeline/charts.js';
import { runningContest, standingsNow } from '../../src/pipeline/contests.js';
import { listJobsOfGuild, listOpenJobs, listUndelivered } from '../../src/pipeline/job-rows.js';
import { scaled, seedHistory, YEAR, type HistorySize } from './history-seed.js';
import { printTable, ratio, round, rssMegabytes, settlePostgres, startBenchWorld, summarize, target, writeBusiestStatements, writeResult, type BenchWorld, type Summary } from './support.js';
import { observeStatements } from '../support/sent-statements.js';

const { values: flags } = parseArgs({
  options: {
    scale: { type: 'string' },
    guilds: { type: 'string' },
    jobs: { type: 'string' },
    ledger: { type: 'string' },
    songs: { type: 'string' },
    'busy-movements': { type: 'string' },
    rounds: { type: 'string', default: '40' },
  },
  strict: false,
});
const SCALE = flags.scale === undefined ? 1 : Number(flags.scale);
const sized = (name: string, fallback: number) => {
  const raw = flags[name];
  if (raw === undefined) return fallback;
  const value = Number(raw);
  if (!Number.isInteger(value) || value < 1) {
    console.error(`--${name} takes a whole number of at least 1 (got ${String(raw)})`);
    process.exit(2);
  }
  return value;
};
if (!(SCALE > 0)) {
  console.error(`--scale takes a positive number (got ${String(flags.scale)})`);
  process.exit(2);
}
const base = scaled(SCALE, YEAR);
const SIZE: HistorySize = {
  guilds: sized('guilds', base.guilds),
  jobs: sized('jobs', base.jobs),
  ledger: sized('ledger', base.ledger),
  songs: Math.min(sized('songs', base.songs), sized('jobs', base.jobs)),
  busyMovements: sized('busy-movements', base.busyMovements),
  busySongs: base.busySongs,
  busyLikes: base.busyLikes,
  busyPlays: base.busyPlays,
  busyContests: base.busyContests,
  contestEntries: base.contestEntries,
  days: YEAR.days,
};
/** What the driven guild gets: its share, within half the ledger and half the songs (see history-seed.ts). */
const DRIVEN_MOVEMENTS = Math.min(SIZE.busyMovements, Math.floor(SIZE.ledger / 2));
/**
 * The first day, which the year is compared with: the driven guild has a few pages of songs
 * and movements already (so that every command renders full pages on both sides: 150 songs,
 * so that "summer rain", in one song of twelve, fills a page too), the deployment has a day
 * of rows, and its first contest runs with as many entries as the year's will; nothing else.
 */
const FIRST_DAY: HistorySize = { guilds: 2, jobs: 400, ledger: 100, songs: 300, busyMovements: 60, busySongs: 150, busyLikes: 300, busyPlays: 100, busyContests: 1, contestEntries: YEAR.contestEntries, days: 1 };
const ROUNDS = Math.max(5, Number(flags.rounds));
const WARM_UP = 20;
const TARGET_RATIO = 1.2;
const MAINTENANCE_LIMIT_MS = 60_000;
const ANSWER_MS = 60_000;
/** The library's indexes (migrations/online), whose plans are shown with and without them. */
const LIBRARY_INDEXES = ['jobs_library_guild_idx', 'jobs_library_guild_user_idx'];

type Measured =
  | 'song (first answer)'
  | 'credits'
  | 'library query'
  | 'library rare word'
  | 'library member'
  | 'jobs list'
  | 'credits-admin history'
  | 'charts'
  | 'charts all time by plays'
  | 'contest status'
  | 'history CSV export';

/** Resolves once the bot's answer is complete: a message at once, or the edit of a deferred reply. */
async function answered(handle: InteractionHandle, done: (message: EmulatorMessage) => boolean = () => true): Promise<EmulatorMessage | undefined> {
  const response = await handle.waitForResponse(ANSWER_MS);
  // 4: a message at once; 5 and 6: deferred, the answer is an edit.
  if (response.type === 4) return handle.original();
  const now = handle.original();
  if (now && response.type !== 6 && done(now) && (now.content || now.embeds?.length)) return now;
  return handle.waitForEdit(done, ANSWER_MS);
}

/** The CSV export of the driven guild's history, once: its time, its files and the bot's memory growth meanwhile. */
interface CsvExport {
  readonly ms: number;
  readonly bytes: number;
  readonly files: number;
  readonly peakRssGrowthMb: number;
}

/** One deployment measured: its world, its bot, its driven guild, and what the benchmark runs against it. */
interface Side {
  readonly world: BenchWorld;
  readonly database: DatabaseHandle;
  readonly guildId: string;
  readonly members: Members;
  /** The driven guild and its members, as `seedHistory` takes them. */
  readonly busy: Array<{ guildId: string; members: string[] }>;
  readonly commands: ReadonlyMap<Measured, () => Promise<number>>;
  exportCsv(): Promise<CsvExport>;
  /** The maintenance passes' database work, timed: what reconcile reads, the allowance pass, the account check's total. */
  maintenance(): Promise<Record<string, number>>;
}

/**
 * A deployment of its own: a world (its own Postgres, Redis, simulator and emulator, so that
 * nothing of one side, queues, in-flight counts or caches, reaches the other), the driven guild
 * on its emulator, and the bot, started and ready. Pushed onto `opened` as soon as it runs, for
 * the caller to close.
 */
async function startSide(opened: Array<{ world: BenchWorld; database: DatabaseHandle }>, label: string): Promise<Side> {
  const world = await startBenchWorld();
  const database = connectDatabase(world.postgresUrl, { max: 4, applicationName: `bench-history-${label}` });
  opened.push({ world, database });
  const cast = seedCast(world.emulator, { name: 'A year of songs' });
  const { members } = cast;
  const { alice, bob, manager } = members;
  await world.deployCommands();
  const bot = world.bot({ name: `bot (${label})`, env: { STARTING_CREDITS: '1000000000', UPSTREAM_MAX_IN_FLIGHT: '100000', EXPECTED_SECONDS: 'song=3600' } });
  bot.spawn();
  await world.emulator.waitForBotReady(60_000);
  const pid = () => bot.pid!;
  const run = (userId: string, input: Omit<RunCommandInput, 'guildId' | 'channelId' | 'userId'>) =>
    world.emulator.runCommand({ guildId: cast.guild.id, channelId: cast.channelId, userId, ...input });

  /** The history page's CSV button, pressed, and the message that carries the files. */
  const exportCsv = async (): Promise<CsvExport> => {
    const page = await answered(run(manager, { name: 'credits-admin', subcommand: 'history' }));
    const button = (page?.components ?? [])
      .flatMap((row): unknown[] => ('components' in row ? row.components : []))
      .find((c): c is { custom_id: string } => typeof c === 'object' && c !== null && 'custom_id' in c && String(c.custom_id).startsWith('history-csv:'));
    if (!page || !button) throw new Error('the history page has no CSV button');
    const before = await rssMegabytes(pid());
    let peak = before;
    let sampling = true;
    const sampler = (async () => {
      while (sampling) {
        peak = Math.max(peak, await rssMegabytes(pid()).catch(() => peak));
        await sleep(10);
      }
    })();
    const started = performance.now();
    const click = world.emulator.clickButton({ messageId: page.id, customId: button.custom_id, userId: manager });
    const withFile = await answered(click, (m) => (m.attachments?.length ?? 0) > 0);
    // A ledger over the upload limit comes as `…-<i>-of-<n>.csv`, its further files in follow-ups: up to the last.
    const of = Number(/-of-(\d+)\.csv$/.exec(withFile?.attachments?.[0]?.filename ?? '')?.[1] ?? 1);
    if (of > (withFile?.attachments?.length ?? 0)) await click.waitForFollowUp((m) => m.attachments.some((file) => file.filename.endsWith(`-${of}-of-${of}.csv`)), ANSWER_MS);
    const ms = performance.now() - started;
    sampling = false;
    await sampler;
    const files = [...(withFile?.attachments ?? []), ...click.followUps.flatMap((m) => m.attachments)];
    return { ms, bytes: files.reduce((sum, file) => sum + file.size, 0), files: files.length, peakRssGrowthMb: round(peak - before, 1) };
  };

  const commands = new Map<Measured, () => Promise<number>>([
    ['song (first answer)', async () => {
      const started = performance.now();
      await run(alice, { name: 'song', options: { prompt: `a year later ${Math.random()}` } }).waitForResponse(ANSWER_MS);
      return performance.now() - started;
    }],
    ...([
      ['credits', alice, { name: 'credits' }],
      ['library query', alice, { name: 'library', options: { query: 'summer rain' } }],
      ['library rare word', alice, { name: 'library', options: { query: 'zephyr' } }],
      ['library member', alice, { name: 'library', options: { user: bob } }],
      ['jobs list', alice, { name: 'jobs', subcommand: 'list' }],
      ['credits-admin history', manager, { name: 'credits-admin', subcommand: 'history' }],
      ['charts', alice, { name: 'charts' }],
      ['charts all time by plays', alice, { name: 'charts', options: { period: 'all', by: 'plays' } }],
      ['contest status', alice, { name: 'contest', subcommand: 'status' }],
    ] as const).map(([name, userId, input]): [Measured, () => Promise<number>] => [
      name,
      async () => {
        const started = performance.now();
        await answered(run(userId, input));
        return performance.now() - started;
      },
    ]),
  ]);

  const maintenance = async () => {
    const timed = async (fn: () => Promise<unknown>) => {
      const started = performance.now();
      await fn();
      return round(performance.now() - started, 1);
    };
    const { db } = database;
    return {
      'reconcile (open + undelivered jobs)': await timed(async () => {
        let afterId: string | undefined;
        for (;;) {
          const page = await listOpenJobs(db, 500, afterId);
          if (page.length === 0) break;
          afterId = page.at(-1)?.id;
        }
        await listUndelivered(db, 1000);
      }),
      'monthly allowances': await timed(() => applyDueAllowances(db, new Date())),
      'account check (upstream spend total)': await timed(() => upstreamSpentTotal(db)),
    };
  };

  const busy = [{ guildId: cast.guild.id, members: [alice, bob, manager, members.roleModerator, members.owner] }];
  return { world, database, guildId: cast.guild.id, members, busy, commands, exportCsv, maintenance };
}

/**
 * Each command on both sides, alternately: its warm-up, then its rounds, round i on `a` then `b`
 * when i is even and on `b` then `a` when it is odd (neither side always runs first, nor always
 * right after the other); then the CSV export, three rounds the same way. One command at a time:
 * the other side's bot is idle meanwhile.
 */
async function measureAlternately(a: Side, b: Side) {
  const inTurn = async <T>(i: number, each: (side: Side) => Promise<T>): Promise<[T, T]> => {
    if (i % 2 === 0) {
      const first = await each(a);
      return [first, await each(b)];
    }
    const second = await each(b);
    return [await each(a), second];
  };
  const times = [new Map<Measured, number[]>(), new Map<Measured, number[]>()] as const;
  for (const name of a.commands.keys()) {
    const once = (side: Side) => side.commands.get(name)!();
    for (let i = 0; i < WARM_UP; i += 1) await inTurn(i, once);
    times[0].set(name, []);
    times[1].set(name, []);
    for (let i = 0; i < ROUNDS; i += 1) {
      const [onA, onB] = await inTurn(i, once);
      times[0].get(name)!.push(onA);
      times[1].get(name)!.push(onB);
    }
  }
  // The export is slow on a long history: a few rounds.
  const exports: [CsvExport[], CsvExport[]] = [[], []];
  for (let i = 0; i < 3; i += 1) {
    const [onA, onB] = await inTurn(i, (side) => side.exportCsv());
    exports[0].push(onA);
    exports[1].push(onB);
  }
  const outcome = (side: 0 | 1) => {
    times[side].set('history CSV export', exports[side].map((e) => e.ms));
    return { summaries: new Map([...times[side]].map(([name, values]) => [name, summarize(values)])), export: exports[side].at(-1)! };
  };
  return [outcome(0), outcome(1)] as const;
}

const opened: Array<{ world: BenchWorld; database: DatabaseHandle }> = [];
try {
  console.log(`two deployments side by side, each its own world and bot: day 1, and a year of history; their commands measured alternately`);
  const dayOne = await startSide(opened, 'day 1');
  const year = await startSide(opened, 'year');

  // ---- the first day, on both: the year's history starts with it ----
  for (const side of [dayOne, year]) await seedHistory(side.world.db, FIRST_DAY, side.busy, 'd');

  // ---- a year of history on the year's side, while the day-1 side waits ----
  console.log(`\nseeding: ${SIZE.guilds} guilds, ${SIZE.jobs} jobs (${SIZE.songs} songs), ${SIZE.ledger} ledger movements (${DRIVEN_MOVEMENTS} for the driven guild), ${SIZE.busyLikes} likes and ${SIZE.busyPlays} plays of the driven guild's songs, ${SIZE.busyContests} contests of ${SIZE.contestEntries} entries…`);
  const seedStarted = performance.now();
  const seedSteps = await seedHistory(year.world.db, SIZE, year.busy, 'y');
  const seedSeconds = round((performance.now() - seedStarted) / 1000, 1);
  console.log(`seeded in ${seedSeconds} s (${Object.entries(seedSteps).map(([step, ms]) => `${step} ${round(ms / 1000, 1)} s`).join(', ')})`);
  const mismatches = await verifyLedger(year.database.db);
  console.log(`ledger verification: ${mismatches.length === 0 ? 'every balance is its ledger\'s sum' : `${mismatches.length} guilds MISMATCH`}`);
  await settlePostgres(year.world.db);
  const { rows: [other] } = await year.world.db.query<{ guild_id: string }>('select guild_id from credit_ledger where guild_id <> $1 limit 1', [year.guildId]);
  const upgrade = await summaryFill(year.database, [year.guildId, ...(other ? [other.guild_id] : [])]);
  console.log(
    `migration 0011's fill (online, guild by guild): ${upgrade.totalMs} ms in total; the longest a movement waited (its own time included): ${upgrade.slowestMovementMs} ms, of ${upgrade.movements} made meanwhile`,
  );

  // ---- both sides, settled, then measured alternately ----
  for (const side of [dayOne, year]) await settlePostgres(side.world.db);
  const emptyMaintenance = await dayOne.maintenance();
  const seededMaintenance = await year.maintenance();
  for (const side of [dayOne, year]) await statementCountersFrom(side.world.db);
  const [empty, seeded] = await measureAlternately(dayOne, year);
  await statementCountersTo(dayOne.world.db, 'day1');
  await statementCountersTo(year.world.db, 'year');

  // ---- the plans of what those paths send, on the seeded database ----
  const plans = await explainPaths(year.world.postgresUrl, year.guildId, year.members.bob);
  const plansFile = path.join(ROOT, 'bench/results', `history${SIZE.ledger === YEAR.ledger ? '' : `-${SCALE}`}-plans.txt`);

  const names = [...empty.summaries.keys()];
  const rows = names.map((name) => {
    const e = empty.summaries.get(name)!;
    const s = seeded.summaries.get(name)!;
    const memberFacing = name !== 'history CSV export';
    const met = ratio(s.p50, e.p50) <= TARGET_RATIO && ratio(s.p99, e.p99) <= TARGET_RATIO;
    return {
      command: name,
      'day 1 p50 ms': e.p50,
      'day 1 p99 ms': e.p99,
      'year p50 ms': s.p50,
      'year p99 ms': s.p99,
      'p50 ×': ratio(s.p50, e.p50),
      'p99 ×': ratio(s.p99, e.p99),
      [`target ≤ ${TARGET_RATIO}×`]: memberFacing ? (met ? 'met' : 'missed') : '(not member-facing)',
    };
  });
  printTable(`day 1 and the year alternately (day 1, year, then year, day 1, …), one at a time, ${ROUNDS} rounds each after ${WARM_UP} to warm up (the export: 3)`, rows);
  const maintenanceRows = Object.keys(seededMaintenance).map((pass) => ({
    pass,
    'day 1 ms': emptyMaintenance[pass]!,
    'year ms': seededMaintenance[pass]!,
    'target < 60 s': seededMaintenance[pass]! < MAINTENANCE_LIMIT_MS ? 'met' : 'missed',
  }));
  printTable('maintenance passes (their database work, in this process)', maintenanceRows);
  console.log(
    `\nCSV export of the driven guild (${DRIVEN_MOVEMENTS} movements): ${seeded.export.bytes} bytes in ${seeded.export.files} file(s), the bot's RSS grew by up to ${seeded.export.peakRssGrowthMb} MB (day 1: ${empty.export.peakRssGrowthMb} MB)`,
  );
  await writeFile(plansFile, plans);
  console.log(`written: ${path.relative(ROOT, plansFile)}`);

  const targets = [
    ...rows
      .filter((row) => row.command !== 'history CSV export')
      .map((row) => target(`${row.command} p50, p99 / day 1`, `${row['p50 ×']}×, ${row['p99 ×']}×`, `≤ ${TARGET_RATIO}×`, row['p50 ×'] <= TARGET_RATIO && row['p99 ×'] <= TARGET_RATIO)),
    ...maintenanceRows.map((row) => target(row.pass, `${row['year ms']} ms`, '< 60 s', row['year ms'] < MAINTENANCE_LIMIT_MS)),
    target('guilds whose balance is not their ledger\'s sum', mismatches.length, '0', mismatches.length === 0),
  ];
  const toObject = (summaries: Map<Measured, Summary>) => Object.fromEntries(summaries);
  await writeResult(SIZE.ledger === YEAR.ledger && SIZE.jobs === YEAR.jobs ? 'history' : `history-${SCALE}`, {
    workload: {
      ...SIZE,
      scale: SCALE,
      rounds: ROUNDS,
      warmUp: WARM_UP,
      drivenGuild: 'one busy guild, its members alice (commands), bob (library user:), manager (history)',
      alternated: true,
      measured:
        'day 1 and the year side by side, two deployments each with its own world (Postgres, Redis, simulator, emulator) and bot, measured alternately: each round of a command on both, day 1 first in even rounds and the year first in odd ones, one command at a time',
    },
    target: `member-facing p50 and p99 ≤ ${TARGET_RATIO}× the empty database (its first day); maintenance passes < 60 s; the ledger verifies`,
    seeding: { seconds: seedSeconds, steps: seedSteps, ledgerMismatches: mismatches.length },
    results: { empty: toObject(empty.summaries), year: toObject(seeded.summaries) },
    ratios: Object.fromEntries(rows.map((row) => [row.command, { p50: row['p50 ×'], p99: row['p99 ×'] }])),
    maintenance: { empty: emptyMaintenance, year: seededMaintenance },
    usageSummaryFill: upgrade,
    csvExport: { movements: DRIVEN_MOVEMENTS, empty: empty.export, year: seeded.export },
    seconds: round(performance.now() / 1000, 1),
  }, targets);
} finally {
  // One at a time, the year's last: with BENCH_PG_STATEMENTS, its counters are the ones left in `<file>`.
  for (const { world, database } of opened) {
    await database.close().catch(() => {});
    await world.close();
  }
}

/**
 * Migration 0011's online fill of the usage summaries (`credit_usage_backfill`) on this ledger,
 * emptied first as the upgrade finds it, timed while two writers move credits through the ledger
 * module (a charge and its release, over and over): one in the driven guild, the longest to
 * recount, one in another guild. The fill's time, and the slowest movement meanwhile, waiting for
 * the fill included. Nothing else reads the summaries meanwhile (the bot is idle).
 */
async function summaryFill(database: DatabaseHandle, guildIds: readonly string[]): Promise<{ totalMs: number; slowestMovementMs: number; movements: number }> {
  const client = await database.pool.connect();
  try {
    await client.query('truncate credit_usage_member, credit_usage_guild');
    let filling = true;
    let slowest = 0;
    let movements = 0;
    const timed = async (move: () => Promise<unknown>) => {
      const started = performance.now();
      await move();
      slowest = Math.max(slowest, performance.now() - started);
      movements += 1;
    };
    const writer = async (guildId: string) => {
      while (filling) {
        const jobId = randomUUID();
        await timed(() => reserveForJob(database.db, { guildId, jobId, userId: 'bench-fill', amount: 1 }));
        await timed(() => returnJobCredits(database.db, { jobId, kind: 'release', reason: 'bench: the fill' }));
      }
    };
    const started = performance.now();
    const writers = guildIds.map(writer);
    try {
      await client.query('call credit_usage_backfill()');
    } finally {
      filling = false;
      await Promise.all(writers);
    }
    return { totalMs: round(performance.now() - started, 0), slowestMovementMs: round(slowest, 1), movements };
  } finally {
    client.release();
  }
}

/**
 * With BENCH_PG_STATEMENTS=<file>, each side's Postgres statement counters are reset before the
 * commands and written after them to `<file>.day1` and `<file>.year`: what each statement cost
 * on the first day and after the year.
 */
async function statementCountersFrom(db: pg.Pool): Promise<void> {
  if (process.env.BENCH_PG_STATEMENTS) await db.query('select pg_stat_statements_reset()');
}

async function statementCountersTo(db: pg.Pool, phase: string): Promise<void> {
  if (process.env.BENCH_PG_STATEMENTS) await writeBusiestStatements(db, `${path.resolve(process.env.BENCH_PG_STATEMENTS)}.${phase}`);
}

/**
 * `EXPLAIN (ANALYZE, BUFFERS)` of every statement the member paths and the passes send:
 * their own functions are called on a pool that records what it is sent, then each select is
 * explained with its parameters, planned for their values and, as the bot's connections plan
 * it, without them (a generic plan).
 */
async function explainPaths(postgresUrl: string, guildId: string, member: string): Promise<string> {
  const recorder = connectDatabase(postgresUrl, { max: 1, applicationName: 'bench-history-explain' });
  const sent: Array<{ path: string; text: string; values: unknown[] }> = [];
  let current = '';
  observeStatements(recorder.pool, ({ text, values }) => {
    if (/^\s*(select|with)\b/i.test(text)) sent.push({ path: current, text, values: [...values] });
  });
  const { db } = recorder;
  const paths: Array<[string, () => Promise<unknown>]> = [
    ['/library query:', () => libraryPage(db, { guildId, query: 'summer rain' })],
    ['/library query: (a word in no song)', () => libraryPage(db, { guildId, query: 'zephyr' })],
    ['/library user:', () => libraryPage(db, { guildId, userId: member })],
    ['/library', () => libraryPage(db, { guildId })],
    ['/credits-admin history (first page)', () => ledgerHistory(db, { guildId, limit: 10 })],
    ['/credits-admin history user:', () => ledgerHistory(db, { guildId, userId: member, limit: 10 })],
    ['/credits', () => Promise.all([getGuildCredits(db, guildId), guildUsage(db, { guildId, since: utcMonthStart(new Date()) }), usage(db, { guildId, userId: member, since: utcMonthStart(new Date()) }), spentToday(db, { guildId, userId: member })])],
    ['/jobs list', () => listJobsOfGuild(db, guildId, { userId: member, limit: 15 })],
    ['/charts', () => readChart(db, { guildId, period: 'week', metric: 'likes', now: new Date() })],
    ['/charts period:all by:plays', () => readChart(db, { guildId, period: 'all', metric: 'plays', now: new Date() })],
    ['/contest status', async () => {
      const contest = await runningContest(db, guildId);
      if (contest) await standingsNow(db, contest, new Date());
    }],
    ['reconcile: open jobs', () => listOpenJobs(db, 500)],
    ['reconcile: undelivered jobs', () => listUndelivered(db, 1000)],
    ['account check: upstream spend total', () => upstreamSpentTotal(db)],
  ];
  const out: string[] = [];
  try {
    for (const [name, fn] of paths) {
      current = name;
      await fn();
    }
    const client = await recorder.pool.connect();
    try {
      for (const statement of sent) {
        const explain = async () =>
          (await client.query<{ 'QUERY PLAN': string }>(`explain (analyze, buffers) ${statement.text}`, statement.values)).rows.map((row) => row['QUERY PLAN']).join('\n');
        const plan = await explain();
        // The plan the bot runs: its connections plan every statement without the values
        // (plan_cache_mode, src/db/client.ts), which EXPLAIN of the text with its values does not.
        await client.query(`prepare bench_generic as ${statement.text}`);
        let generic: string;
        try {
          // EXECUTE takes its arguments as SQL, not as parameters of the EXPLAIN around it.
          const literal = (value: unknown): string => {
            if (value === null || value === undefined) return 'null';
            if (value instanceof Date) return client.escapeLiteral(value.toISOString());
            if (Array.isArray(value)) return client.escapeLiteral(`{${value.map((item) => `"${String(item).replace(/["\\]/g, '\\$&')}"`).join(',')}}`);
            return client.escapeLiteral(typeof value === 'object' ? JSON.stringify(value) : String(value));
          };
          const args = statement.values.length > 0 ? `(${statement.values.map(literal).join(', ')})` : '';
          generic = (await client.query<{ 'QUERY PLAN': string }>(`explain (analyze, buffers) execute bench_generic${args}`)).rows.map((row) => row['QUERY PLAN']).join('\n');
        } finally {
          await client.query('deallocate bench_generic');
        }
        // The library's plans without its own indexes too (migrations/online), dropped in a transaction rolled back.
        let without = '';
        if (statement.path.startsWith('/library')) {
          await client.query('begin');
          try {
            await client.query(`drop index if exists ${LIBRARY_INDEXES.join(', ')}`);
            without = `\n-- without ${LIBRARY_INDEXES.join(', ')}:\n${await explain()}\n`;
          } finally {
            await client.query('rollback');
          }
        }
        out.push(`== ${statement.path}\n${statement.text}\n-- ${JSON.stringify(statement.values)}\n${plan}\n\n-- as the bot plans it, without the values (a generic plan):\n${generic}\n${without}`);
      }
    } finally {
      client.release();
    }
  } finally {
    await recorder.close().catch(() => {});
  }
  return out.join('\n');
}
