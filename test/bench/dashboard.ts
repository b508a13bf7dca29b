/**
 * `npm run bench -- dashboard`: how long the dashboard's overview page takes on the server
 * side for a busy guild after a year of history: its data read (the figures `/credits` shows,
 * the pace, 90 days of credits per day by kind with what came in, the top members, songs per
 * day) and its HTML rendered, timed from the first read to the last byte of markup.
 *
 * The world is the history benchmark's (history-seed.ts: one busy guild of 100,000 movements
 * and 20,000 songs in a deployment of 10,000 guilds, 2,000,000 jobs and 5,000,000 movements
 * at `--scale 1`; the busy guild keeps its size at any scale), in an embedded Postgres, read
 * through the bot's own pool settings. The floor is the same figures the simplest way: the
 * guild's row, then its 90 days of movements grouped by day, movement and job kind straight
 * from the ledger in one statement, with no summaries, no songs or members and no rendering.
 *
 * Then `EXPLAIN (ANALYZE, BUFFERS)` of every statement the page sent, into
 * `bench/results/dashboard-plans.txt` (the indexes each read uses), and the time migration
 * 0026's online fill (`credit_flows_backfill`) takes to count the whole ledger again.
 *
 * Target: the page's p99 under 300 ms. Flags: `--scale S` (1), `--rounds N` (200),
 * `--report-only`. Another scale than 1 writes `dashboard-<scale>.json`.
 */
import { writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { ROOT } from '@music-bot/test-world';
import { connectDatabase } from '../../src/db/client.js';
import { runMigrations } from '../../src/db/migrate.js';
import { loadCharts, LONG_DAYS } from '../../src/dashboard/data/charts.js';
import { loadOverview } from '../../src/dashboard/data/overview.js';
import { renderOverview } from '../../src/dashboard/views/overview.js';
import { english } from '../../src/i18n/index.js';
import { scaled, seedHistory, YEAR } from './history-seed.js';
import { printTable, ratio, round, settlePostgres, startBenchWorld, summarize, target, writeResult } from './support.js';
import { observeStatements } from '../support/sent-statements.js';

const { values: flags } = parseArgs({ options: { scale: { type: 'string', default: '1' }, rounds: { type: 'string', default: '200' } }, strict: false });
const SCALE = Number(flags.scale);
if (!(SCALE > 0)) {
  console.error(`--scale takes a positive number (got ${String(flags.scale)})`);
  process.exit(2);
}
const ROUNDS = Math.max(20, Number(flags.rounds));
const WARM_UP = 20;
const TARGET_P99_MS = 300;
const SIZE = scaled(SCALE, YEAR);
const GUILD = '900000000000000001';
const MEMBERS = Array.from({ length: 40 }, (_, i) => String(900000000000001000n + BigInt(i)));

const world = await startBenchWorld();
const database = connectDatabase(world.postgresUrl, { max: 4, applicationName: 'bench-dashboard' });
/** The statements the page sends while `capturing`: their plans go to bench/results/dashboard-plans.txt. */
const sent: Array<{ text: string; values: unknown[] }> = [];
let capturing = false;
observeStatements(database.pool, ({ text, values }) => {
  if (capturing && /^\s*(with|select)/i.test(text)) sent.push({ text, values: [...values] });
});
try {
  await runMigrations(world.postgresUrl);
  const seedStarted = performance.now();
  const steps = await seedHistory(world.db, SIZE, [{ guildId: GUILD, members: MEMBERS }]);
  const seedSeconds = round((performance.now() - seedStarted) / 1000, 1);
  await settlePostgres(world.db);
  const { rows: sized } = await world.db.query<{ movements: number; songs: number }>(
    `select (select count(*)::int from credit_ledger where guild_id = $1) as movements,
            (select count(*)::int from jobs where guild_id = $1 and state = 'succeeded' and kind in ('song', 'persona_song')) as songs`,
    [GUILD],
  );
  const names = new Map(MEMBERS.map((id, i) => [id, `Member ${i}`]));

  /** The page: its data, then its markup. */
  const page = async () => {
    const now = new Date();
    const [overview, charts] = await Promise.all([loadOverview(database.db, GUILD, now), loadCharts(database.db, GUILD, now)]);
    const body = renderOverview(
      { overview, charts, range: 30, now, memberNames: names, alertChannelName: undefined, links: { range: (days) => `?range=${days}`, memberHistory: (id) => `history?member=${id}` } },
      english,
    );
    return body.text.length;
  };
  /**
   * The floor: the same figures the simplest way, straight from the ledger in one statement (the
   * guild's row, then its 90 days grouped by day, movement and job kind, returns on their own
   * day), with no summaries, no songs or members, and no rendering.
   */
  const floor = async () => {
    const since = new Date(Date.now() - LONG_DAYS * 86_400_000).toISOString();
    await world.db.query('select balance, frozen, monthly_allowance, alert_below from guilds where id = $1', [GUILD]);
    const { rows } = await world.db.query(
      `select (l.created_at at time zone 'UTC')::date as day, l.kind, j.kind as job_kind, sum(l.amount) as amount
         from credit_ledger l left join jobs j on j.id = l.job_id
        where l.guild_id = $1 and l.created_at >= $2
        group by 1, 2, 3`,
      [GUILD, since],
    );
    return rows.length;
  };
  const time = async (work: () => Promise<number>) => {
    const started = performance.now();
    await work();
    return performance.now() - started;
  };
  const measure = async (work: () => Promise<number>) => {
    for (let i = 0; i < WARM_UP; i += 1) await work();
    const times: number[] = [];
    for (let i = 0; i < ROUNDS; i += 1) times.push(await time(work));
    return summarize(times);
  };
  const load = () => os.loadavg().map((n) => round(n, 2));
  const loadBefore = load();
  const pageBytes = await page();
  const floorRows = await floor();
  // Alternated halves, so that a busy moment on the shared machine weighs on both alike.
  const first = { page: await measure(page), floor: await measure(floor) };
  const second = { floor: await measure(floor), page: await measure(page) };
  const loadAfter = load();
  printTable(`dashboard overview, busy guild (${sized[0]!.movements} movements, ${sized[0]!.songs} songs), ${ROUNDS} rounds × 2`, [
    { what: 'overview page (data + HTML)', ...first.page, second: second.page.p99 },
    { what: 'floor (guild row + 90 days grouped from the ledger)', ...first.floor, second: second.floor.p99 },
  ]);
  console.log(`load average before ${loadBefore.join(' ')}, after ${loadAfter.join(' ')}`);
  capturing = true;
  await page();
  capturing = false;
  const plans: string[] = [];
  for (const statement of sent) {
    const plan = await world.db
      .query<{ 'QUERY PLAN': string }>(`explain (analyze, buffers) ${statement.text}`, statement.values)
      .then(({ rows }) => rows.map((row) => row['QUERY PLAN']).join('\n'))
      .catch((error: unknown) => `(no plan: ${String(error)})`);
    plans.push(`-- ${statement.text.replace(/\s+/g, ' ').trim()}\n${plan}\n`);
  }
  // Migration 0026's online fill of the daily flows on this ledger, emptied first as an upgrade finds it.
  const charted = JSON.stringify((await loadCharts(database.db, GUILD, new Date())).flows);
  await world.db.query('truncate credit_flows_daily');
  const fillStarted = performance.now();
  await world.db.query('call credit_flows_backfill()');
  const backfillSeconds = round((performance.now() - fillStarted) / 1000, 1);
  if (JSON.stringify((await loadCharts(database.db, GUILD, new Date())).flows) !== charted) throw new Error('the filled flows differ from those the triggers kept');
  await writeFile(path.join(ROOT, 'bench/results', SCALE === 1 ? 'dashboard-plans.txt' : `dashboard-${SCALE}-plans.txt`), `${plans.join('\n')}`);
  const pick = (a: ReturnType<typeof summarize>, b: ReturnType<typeof summarize>) => (a.p99 >= b.p99 ? a : b);
  const overviewPage = pick(first.page, second.page);
  const floorQuery = pick(first.floor, second.floor);
  await writeResult(
    SCALE === 1 ? 'dashboard' : `dashboard-${SCALE}`,
    {
      workload: { ...SIZE, scale: SCALE, rounds: ROUNDS, warmUp: WARM_UP, busyGuild: sized[0], pageBytes, floorRows },
      target: `overview page p99 < ${TARGET_P99_MS} ms`,
      seeding: { seconds: seedSeconds, steps },
      backfillSeconds,
      loadAverage: { before: loadBefore, after: loadAfter },
      note: 'The worse half (by p99) of two alternated halves is reported for each.',
      p50: overviewPage.p50,
      p99: overviewPage.p99,
      floorP50: floorQuery.p50,
      floorP99: floorQuery.p99,
      ratioP99: ratio(overviewPage.p99, floorQuery.p99),
      results: { page: { first: first.page, second: second.page }, floor: { first: first.floor, second: second.floor } },
    },
    [target('overview page p99', overviewPage.p99, `< ${TARGET_P99_MS} ms`, overviewPage.p99 < TARGET_P99_MS)],
  );
} finally {
  await database.close().catch(() => {});
  await world.close();
}
