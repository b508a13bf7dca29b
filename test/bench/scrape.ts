/**
 * `npm run bench -- scrape [--jobs 50000] [--scrapes 15]`: what one `/metrics` scrape of the
 * http role costs with `--jobs` jobs in the table (most finished, as history piles up).
 *
 * The bot runs as `ROLE=http`; the jobs are written straight into Postgres. Two kinds of
 * scrape, each timed from request to the last byte: `fresh`, a scrape after the gauges'
 * cache has run out (as one Prometheus every 15 s sees it: each scrape reads Redis and
 * Postgres), and `cached`, a scrape soon after another (a second scraper, a dashboard). The
 * Postgres time per refresh is the figure that grows with history.
 */
import { parseArgs } from 'node:util';
import { sleep, waitFor } from '@music-bot/test-world';
import { printTable, round, startBenchWorld, summarize, writeResult } from './support.js';

const { values } = parseArgs({ options: { jobs: { type: 'string', default: '50000' }, scrapes: { type: 'string', default: '15' }, 'max-age-ms': { type: 'string', default: '10000' } } });
const jobCount = Number(values.jobs);
const scrapes = Number(values.scrapes);
/** The cache's age (GAUGES_MAX_AGE_MS): a fresh scrape waits this long after the one before. */
const maxAgeMs = Number(values['max-age-ms']);

const world = await startBenchWorld();
try {
  const bot = world.bot({ env: { ROLE: 'http' } });
  bot.spawn();
  const base = world.httpUrl;
  await waitFor('the bot ready', async () => (await fetch(`${base}/readyz`).catch(() => undefined))?.status === 200, { timeoutMs: 120_000 });

  await world.db.query(`insert into guilds (id) values ('bench-guild') on conflict do nothing`);
  // A finished song's row: its request, its two clips and its lyrics (about 1.5 kB), as the table holds them.
  await world.db.query(
    `insert into jobs (guild_id, channel_id, user_id, kind, request, state, cost, webhook_secret, result, delivery_state, completed_at)
     select 'bench-guild', 'channel', 'user-' || (i % 500), (array['song','lyrics','voice','persona_song'])[1 + i % 4],
            jsonb_build_object('prompt', 'a song about the number ' || i, 'model', 'V4_5'),
            case when i % 200 = 0 then 'submitted' when i % 50 = 0 then 'failed' else 'succeeded' end,
            10, md5(i::text),
            jsonb_build_object('clips', jsonb_build_array(jsonb_build_object('id', md5(i::text || 'a'), 'audioUrl', 'https://cdn.example/' || i || '-a.mp3', 'title', 'Song ' || i),
                                                          jsonb_build_object('id', md5(i::text || 'b'), 'audioUrl', 'https://cdn.example/' || i || '-b.mp3', 'title', 'Song ' || i)),
                               'lyrics', repeat('la la la, a line of lyrics ' || i || E'\n', 40)),
            'delivered', now() - (i || ' seconds')::interval
     from generate_series(1, $1::int) as i`,
    [jobCount],
  );
  await world.db.query('vacuum analyze jobs');
  const rows = Number((await world.db.query('select count(*) as n from jobs')).rows[0].n);

  const scrape = async () => {
    const started = performance.now();
    const response = await fetch(`${base}/metrics`);
    await response.text();
    if (response.status !== 200) throw new Error(`/metrics answered ${response.status}`);
    return performance.now() - started;
  };
  const timeQuery = async (text: string) => {
    const started = performance.now();
    await world.db.query(text);
    return performance.now() - started;
  };
  /** Every job, as each scrape counted them before the finished ones were counted apart. */
  const ALL = 'select kind, state, count(*)::int as n from jobs group by kind, state';
  const OPEN = "select kind, state, count(*)::int as n from jobs where state in ('queued', 'submitting', 'submitted') group by kind, state";
  const plan = (await world.db.query(`explain ${OPEN}`)).rows.map((row: Record<string, string>) => Object.values(row)[0]).join('\n');

  await scrape();
  const fresh: number[] = [];
  const cached: number[] = [];
  const all: number[] = [];
  const open: number[] = [];
  for (let i = 0; i < scrapes; i += 1) {
    await sleep(maxAgeMs + 100);
    fresh.push(await scrape());
    cached.push(await scrape());
    all.push(await timeQuery(ALL));
    open.push(await timeQuery(OPEN));
  }
  const [freshMs, cachedMs, allMs, openMs] = [summarize(fresh), summarize(cached), summarize(all), summarize(open)];
  printTable(`/metrics of ROLE=http with ${rows} jobs (ms)`, [
    { scrape: 'fresh (gauges read again)', p50: round(freshMs.p50), p95: round(freshMs.p95), max: round(freshMs.max) },
    { scrape: 'cached (within the max age)', p50: round(cachedMs.p50), p95: round(cachedMs.p95), max: round(cachedMs.max) },
    { scrape: 'query: every job by kind and state', p50: round(allMs.p50), p95: round(allMs.p95), max: round(allMs.max) },
    { scrape: 'query: open jobs by kind and state', p50: round(openMs.p50), p95: round(openMs.p95), max: round(openMs.max) },
  ]);
  console.log(`plan of the open jobs count:\n${plan}`);
  const file = await writeResult('scrape', { jobs: rows, scrapes, maxAgeMs, freshMs, cachedMs, allJobsCountMs: allMs, openJobsCountMs: openMs, openJobsCountPlan: plan });
  console.log(`written to ${file}`);
  await bot.stop();
} finally {
  await world.close();
}
