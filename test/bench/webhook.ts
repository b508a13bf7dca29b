/**
 * `npm run bench -- webhook` (or `npm run bench:webhook -- [--rate 100] [--seconds 60] [--webhooks n] [--jobs n] [--runs 5] [--floor-seconds 20]`):
 * how fast a finished task reaches the channel.
 *
 * The bot runs as operators scale it out: three processes (`ROLE=gateway`, `worker`, `http`)
 * on a real Postgres and Redis, the Discord emulator and the music-API simulator. Members
 * first ask for `--jobs` songs (default: one per webhook), which the simulator keeps running
 * for an hour; then the benchmark, as the music service would, sends a signed completion
 * webhook for `--webhooks` of them (default `--rate` × `--seconds`, 6,000) at `--rate` per
 * second, and times each from the moment it sends the webhook to the moment the emulator
 * receives the Discord call that posts the result.
 *
 * Floor, in the same run and at the same rate: a bare loopback POST to a tiny node:http server
 * in this process that runs one Postgres transaction on the same server and answers.
 *
 * `--runs` (5) runs, one after another in the same world, each submitting its own `--jobs`
 * first, so that every run starts with as many jobs in flight. Reported: the median and the
 * worst of the runs' figures, never the best. Target: p99 < 100 ms in every run, reported
 * beside its ratio to the floor.
 *
 * BENCH_TRACE=<dir>: what the slow deliveries overlapped. Every process (the bots, this one)
 * records its GC pauses and event-loop stalls there (test/bench/trace-preload.cjs); this one
 * adds each delivery's times and Postgres's waits (backends on I/O or locks, the checkpointer
 * at work, sampled every 100 ms) in `webhook-run-<n>.log`, and prints, for the deliveries over
 * the target, how many each kind of event overlapped.
 */
import { once } from 'node:events';
import { appendFile, readdir, readFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import path from 'node:path';
import { createServer, type IncomingMessage } from 'node:http';
import type { AddressInfo } from 'node:net';
import { parseArgs } from 'node:util';
import pg from 'pg';
import { signWebhookBody } from '@music-bot/music-api-sim/contract.js';
import { sleep, waitFor } from '@music-bot/test-world';
import { atRate, autovacuumDone, medianOf, printTable, ratio, round, rssMegabytes, settlePostgres, startBenchWorld, summarize, target, writeResult, type Summary } from './support.js';

const { values } = parseArgs({
  options: {
    rate: { type: 'string', default: '100' },
    seconds: { type: 'string', default: '60' },
    webhooks: { type: 'string' },
    jobs: { type: 'string' },
    runs: { type: 'string', default: '5' },
    'floor-seconds': { type: 'string', default: '20' },
    'report-only': { type: 'boolean' },
  },
});
const RUNS = Math.max(1, Number(values.runs));
const rate = Number(values.rate);
const webhookCount = Number(values.webhooks ?? rate * Number(values.seconds));
const jobCount = Math.max(Number(values.jobs ?? webhookCount), 1);
const completions = Math.min(webhookCount, jobCount);
const TARGET_P99_MS = 100;
const FLOOR_SECONDS = Number(values['floor-seconds']);
const COST = 10;
/** The colour of a finished song's embed (src/pipeline/render.ts): progress edits are told apart by it. */
const SUCCESS_COLOUR = 0x57f287;
const JOB_IN_FOOTER = /([0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12})/;

const TRACE_DIR = process.env.BENCH_TRACE ? path.resolve(process.env.BENCH_TRACE) : undefined;
if (TRACE_DIR) createRequire(import.meta.url)('./trace-preload.cjs');

/** Postgres's waits every 100 ms while a run sends (BENCH_TRACE): `pg <at> io=<n>:<waits> lock=<n> checkpointer=<wait>`, only when any. */
function samplePostgres(db: pg.Pool): { stop(): string[] } {
  const lines: string[] = [];
  const timer = setInterval(() => {
    const at = Date.now();
    void db
      .query<{ io: number; waits: string | null; lock: number; checkpointer: string | null }>(
        `select count(*) filter (where backend_type = 'client backend' and wait_event_type = 'IO')::int as io,
                string_agg(distinct wait_event, ',') filter (where backend_type = 'client backend' and wait_event_type = 'IO') as waits,
                count(*) filter (where wait_event_type = 'Lock')::int as lock,
                max(wait_event) filter (where backend_type = 'checkpointer' and wait_event <> 'CheckpointerMain') as checkpointer
           from pg_stat_activity`,
      )
      .then(({ rows: [row] }) => {
        if (row && (row.io > 0 || row.lock > 0 || row.checkpointer)) lines.push(`pg ${at} io=${row.io}:${row.waits ?? '-'} lock=${row.lock} checkpointer=${row.checkpointer ?? '-'}`);
      }, () => {});
  }, 100);
  return { stop: () => (clearInterval(timer), lines) };
}

/**
 * For deliveries of `slowMs` or more, how many overlapped each kind of event in the trace folder:
 * a process's GC pause or stall (by role), Postgres's I/O or lock waits, the checkpointer at work.
 */
async function slowDeliveriesOverlap(dir: string, deliveries: ReadonlyArray<{ sent: number; received: number }>, pgLines: readonly string[], slowMs: number) {
  const events: Array<{ kind: string; from: number; to: number }> = [];
  for (const name of await readdir(dir)) {
    if (!name.endsWith('.log') || name.startsWith('webhook-run-')) continue;
    const role = name.replace(/-\d+\.log$/, '');
    for (const line of (await readFile(path.join(dir, name), 'utf8')).split('\n')) {
      const [kind, at, ms] = line.split(' ');
      if ((kind === 'gc' && Number(ms) >= 20) || kind === 'stall') events.push({ kind: `${role} ${kind}`, from: Number(at), to: Number(at) + Number(ms) });
    }
  }
  for (const line of pgLines) {
    const [, at, io, lock, checkpointer] = line.split(' ');
    const when = { from: Number(at), to: Number(at) + 100 };
    if (!io?.startsWith('io=0:')) events.push({ kind: 'postgres I/O wait', ...when });
    if (lock !== 'lock=0') events.push({ kind: 'postgres lock wait', ...when });
    if (checkpointer !== 'checkpointer=-') events.push({ kind: 'checkpointer at work', ...when });
  }
  const slow = deliveries.filter((d) => d.received - d.sent >= slowMs);
  const counts = new Map<string, number>([['none of these', 0]]);
  for (const d of slow) {
    const kinds = new Set(events.filter((e) => e.from < d.received && e.to > d.sent).map((e) => e.kind));
    if (kinds.size === 0) counts.set('none of these', counts.get('none of these')! + 1);
    for (const kind of kinds) counts.set(kind, (counts.get(kind) ?? 0) + 1);
  }
  return { slow: slow.length, overlapped: [...counts].map(([event, n]) => ({ event, 'slow deliveries overlapping it': n })) };
}

/** The floor: a loopback POST to a node:http server that runs one transaction, then answers. */
async function measureFloor(postgresUrl: string, run: number): Promise<{ latency: Summary; failed: number }> {
  const pool = new pg.Pool({ connectionString: postgresUrl, max: 10 });
  await pool.query('create table if not exists bench_webhook_floor (key text primary key, at timestamptz not null default now())');
  const server = createServer((request: IncomingMessage, response) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      void pool
        .query('insert into bench_webhook_floor (key) values ($1) on conflict do nothing returning key', [request.url])
        .then(
          () => response.writeHead(200, { 'content-type': 'application/json' }).end('{"ok":true}'),
          () => response.writeHead(500).end(),
        );
    });
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  let failed = 0;
  try {
    const body = JSON.stringify({ code: 200, status: 'SUCCESS', data: [{ clip_id: 'floor' }] });
    const timings = await atRate(rate * FLOOR_SECONDS, rate, async (i) => {
      const started = performance.now();
      const response = await fetch(`${url}/floor/${run}-${i}`, { method: 'POST', headers: { 'content-type': 'application/json' }, body });
      await response.arrayBuffer();
      if (!response.ok) failed += 1;
      return performance.now() - started;
    });
    return { latency: summarize(await Promise.all(timings)), failed };
  } finally {
    server.close();
    await pool.end();
  }
}

const world = await startBenchWorld();
try {
  const guild = world.emulator.createGuild({ name: 'Bench' });
  const channel = world.emulator.createChannel(guild.id, { name: 'bench' });
  const member = world.emulator.addMember(guild.id, { username: 'bencher' });
  await world.deployCommands();
  const botEnv = {
    STARTING_CREDITS: String(RUNS * jobCount * COST + 100),
    UPSTREAM_MAX_IN_FLIGHT: String(RUNS * jobCount + 10),
    // Tasks run for an hour and end by the benchmark's webhook: no poll weighs on the measurement.
    EXPECTED_SECONDS: 'song=3600',
  };
  const worker = world.bot({ env: { ...botEnv, ROLE: 'worker' } });
  for (const bot of [worker, world.bot({ env: { ...botEnv, ROLE: 'http' } }), world.bot({ env: { ...botEnv, ROLE: 'gateway' } })]) bot.spawn();
  await world.emulator.waitForBotReady(60_000);
  const httpUrl = world.httpUrl;
  await waitFor('http server up', async () => (await fetch(`${httpUrl}/healthz`).catch(() => undefined))?.ok === true, { timeoutMs: 60_000, everyMs: 250 });
  await sleep(2_000);
  const idleRss = await rssMegabytes(worker.pid!);

  // One run: its own jobs submitted (every one upstream before the first webhook), then their completions.
  const oneRun = async (run: number) => {
    // The checkpoint comes before the run writes its jobs, not between them and the timed
    // phases: after a checkpoint, the first change to each page writes the whole page to the
    // WAL, and a checkpoint between the submissions and the completions puts that on the
    // completions' first seconds, for every page of the jobs they update
    // (docs/decisions/benchmark-floors-and-targets.md).
    // A run lasts about 2 minutes, under the 5 minutes between timed checkpoints.
    await settlePostgres(world.db);
    // Members ask for songs; every one is submitted upstream before the first webhook.
    const submitStarted = performance.now();
    for (let i = 0; i < jobCount; i += 50) {
      const handles = Array.from({ length: Math.min(50, jobCount - i) }, (_, j) =>
        world.emulator.runCommand({ guildId: guild.id, channelId: channel.id, userId: member.id, name: 'song', options: { prompt: `bench ${run}-${i + j}` } }),
      );
      await Promise.all(handles.map((handle) => handle.waitForResponse(30_000)));
    }
    const submitted = async () =>
      (await world.db.query<{ n: number }>("select count(*)::int as n from jobs where state = 'submitted'")).rows[0]!.n;
    await waitFor('every job submitted upstream', async () => (await submitted()) >= jobCount, { timeoutMs: 900_000, everyMs: 500 });
    const submitSeconds = round((performance.now() - submitStarted) / 1000, 1);
    const loadedRss = await rssMegabytes(worker.pid!);

    // Postgres's autovacuum after 6,000 new jobs is no part of either figure.
    await autovacuumDone(world.db);
    const floor = await measureFloor(world.postgresUrl, run);
    await autovacuumDone(world.db);

    // The service reports completions at `rate`; each is timed to the Discord call that posts it.
    const { rows } = await world.db.query<{ id: string; secret: string; task: string }>(
      "select id, webhook_secret as secret, upstream_task_id as task from jobs where state = 'submitted' order by created_at limit $1",
      [completions],
    );
    const sentAt = new Map<string, number>();
    const latencies: Array<{ at: number; ms: number }> = [];
    const pgSampler = TRACE_DIR ? samplePostgres(world.db) : undefined;
    let refused = 0;
    let allDelivered: () => void = () => {};
    const delivered = new Promise<void>((resolve) => (allDelivered = resolve));
    const stopListening = world.emulator.onMessage((message, change) => {
      if (change === 'delete') return;
      const embed = message.embeds?.[0];
      if (embed?.color !== SUCCESS_COLOUR) return;
      const jobId = JOB_IN_FOOTER.exec(embed.footer?.text ?? '')?.[1];
      const sent = jobId === undefined ? undefined : sentAt.get(jobId);
      if (jobId === undefined || sent === undefined) return;
      const now = performance.now();
      sentAt.delete(jobId);
      latencies.push({ at: sent, ms: now - sent });
      if (latencies.length === rows.length) allDelivered();
    });
    const firstAt = performance.now();
    const rateLimitedBefore = world.emulator.rateLimited.length;
    const posts = await atRate(rows.length, rate, async (i) => {
      const job = rows[i]!;
      const body = JSON.stringify({
        code: 200,
        message: 'success',
        status: 'SUCCESS',
        task_id: job.task,
        data: [{ clip_id: `clip-${i}`, title: `Bench ${i}`, audio_url: `${world.sim.url}/producer/clip-${i}.m4a`, image_url: `${world.sim.url}/producer/clip-${i}-img.jpg` }],
      });
      const headers = { 'content-type': 'application/json', ...signWebhookBody(body, job.secret, 'spec') };
      sentAt.set(job.id, performance.now());
      const response = await fetch(`${httpUrl}/webhooks/music/${job.id}`, { method: 'POST', headers, body });
      await response.arrayBuffer();
      if (!response.ok) refused += 1;
    });
    const sendSeconds = (performance.now() - firstAt) / 1000;
    await Promise.all(posts);
    await Promise.race([delivered, sleep(30_000)]);
    stopListening();
    const pgLines = pgSampler?.stop() ?? [];

    const latency = summarize(latencies.map((l) => l.ms));
    if (TRACE_DIR) {
      // Wall-clock times, to line up with the other processes' traces.
      const deliveries = latencies.map((l) => ({ sent: Math.round(performance.timeOrigin + l.at), received: Math.round(performance.timeOrigin + l.at + l.ms) }));
      await appendFile(path.join(TRACE_DIR, `webhook-run-${run}.log`), [...deliveries.map((d) => `delivery ${d.sent} ${d.received}`), ...pgLines].join('\n') + '\n');
      const overlap = await slowDeliveriesOverlap(TRACE_DIR, deliveries, pgLines, TARGET_P99_MS);
      printTable(`run ${run + 1}: the ${overlap.slow} deliveries of ${TARGET_P99_MS} ms or more, and what they overlapped (BENCH_TRACE)`, overlap.overlapped);
    }
    // Discord's 429s during the run: a delivery that waits out a bucket's retry_after shows as a slow one.
    const rateLimited = world.emulator.rateLimited.slice(rateLimitedBefore);
    // BENCH_DUMP=<file>: the slowest delivery of each second of sending (where the slow ones fall).
    if (process.env.BENCH_DUMP) {
      const worst = new Map<number, number>();
      for (const l of latencies) worst.set(Math.floor((l.at - firstAt) / 1000), Math.max(worst.get(Math.floor((l.at - firstAt) / 1000)) ?? 0, Math.round(l.ms)));
      const seconds = [...worst.keys()].sort((a, b) => a - b);
      await appendFile(process.env.BENCH_DUMP, `webhook ${seconds.map((second) => `${second}:${worst.get(second)}`).join(' ')}\n`);
    }
    // p99 by 10-second window: a latency that climbs during the run shows here.
    const windows: Array<{ from: number; n: number; p50: number; p99: number }> = [];
    for (let from = 0; from * 1000 < sendSeconds * 1000; from += 10) {
      const inWindow = latencies.filter((l) => l.at - firstAt >= from * 1000 && l.at - firstAt < (from + 10) * 1000).map((l) => l.ms);
      if (inWindow.length > 0) windows.push({ from, n: inWindow.length, ...pick(summarize(inWindow)) });
    }
    const met = latency.p99 < TARGET_P99_MS && latencies.length === rows.length;
    printTable(`run ${run + 1} of ${RUNS}: webhook arrival → the Discord call that posts the result, ${rows.length} completions at ${rate}/s, ${jobCount} jobs in flight`, [
      {
        path: 'the bot (gateway, worker, http apart)',
        delivered: `${latencies.length}/${rows.length}`,
        'p50 ms': latency.p50,
        'p95 ms': latency.p95,
        'p99 ms': latency.p99,
        'max ms': latency.max,
        'p99 / floor p99': ratio(latency.p99, floor.latency.p99),
        [`target p99 < ${TARGET_P99_MS} ms`]: met ? 'met' : 'missed',
      },
      {
        path: 'floor: loopback POST + one transaction',
        delivered: `${floor.latency.n - floor.failed}/${floor.latency.n}`,
        'p50 ms': floor.latency.p50,
        'p95 ms': floor.latency.p95,
        'p99 ms': floor.latency.p99,
        'max ms': floor.latency.max,
        'p99 / floor p99': 1,
        [`target p99 < ${TARGET_P99_MS} ms`]: '',
      },
    ]);
    printTable(`run ${run + 1}: the bot, by 10-second window of sending`, windows.map((w) => ({ 'from s': w.from, n: w.n, 'p50 ms': w.p50, 'p99 ms': w.p99 })));
    console.log(
      `\nsent at ${round(rows.length / sendSeconds, 1)}/s; webhooks refused: ${refused}; Discord 429s: ${rateLimited.length}; ${jobCount} jobs submitted in ${submitSeconds} s; worker RSS ${idleRss} MB idle, ${loadedRss} MB with them in flight`,
    );
    return { latency, floor, met, delivered: latencies.length, completions: rows.length, refused, rateLimited, sendSeconds, windows, submitSeconds, loadedRss };
  };
  const runs: Array<Awaited<ReturnType<typeof oneRun>>> = [];
  for (let run = 0; run < RUNS; run += 1) runs.push(await oneRun(run));
  const mid = <T>(values: readonly T[], by: (value: T) => number) => round(medianOf(values.map(by)));
  const worst = <T>(values: readonly T[], by: (value: T) => number) => round(Math.max(...values.map(by)));
  const across = (pickOne: (run: (typeof runs)[number]) => Summary) => ({
    p50: { median: mid(runs, (r) => pickOne(r).p50), worst: worst(runs, (r) => pickOne(r).p50) },
    p99: { median: mid(runs, (r) => pickOne(r).p99), worst: worst(runs, (r) => pickOne(r).p99) },
    max: { median: mid(runs, (r) => pickOne(r).max), worst: worst(runs, (r) => pickOne(r).max) },
  });
  const bot = across((r) => r.latency);
  const floorAcross = across((r) => r.floor.latency);
  const undelivered = runs.reduce((sum, r) => sum + r.completions - r.delivered, 0);
  printTable(`across ${RUNS} runs (median, worst)`, [
    { path: 'the bot', 'p50 ms': `${bot.p50.median}, ${bot.p50.worst}`, 'p99 ms': `${bot.p99.median}, ${bot.p99.worst}`, 'max ms': `${bot.max.median}, ${bot.max.worst}` },
    { path: 'floor', 'p50 ms': `${floorAcross.p50.median}, ${floorAcross.p50.worst}`, 'p99 ms': `${floorAcross.p99.median}, ${floorAcross.p99.worst}`, 'max ms': `${floorAcross.max.median}, ${floorAcross.max.worst}` },
  ]);
  const last = runs.at(-1)!;
  const { latency, floor, rateLimited, windows, submitSeconds, loadedRss, refused } = last;
  const sendSeconds = last.sendSeconds;
  const rows = { length: last.completions };
  const latencies = { length: last.delivered };
  const targets = [
    target(`worst run's p99 (of ${RUNS}), ms`, bot.p99.worst, `< ${TARGET_P99_MS} in every run`, bot.p99.worst < TARGET_P99_MS),
    target('completions not delivered, all runs', undelivered, '0', undelivered === 0),
  ];
  await writeResult('webhook', {
    workload: { rate, completions: rows.length, jobsInFlight: jobCount, runs: RUNS, floorSeconds: FLOOR_SECONDS, roles: ['gateway', 'worker', 'http'] },
    target: `p99 < ${TARGET_P99_MS} ms from webhook arrival to the Discord call that posts the result, in every one of ${RUNS} runs`,
    // Each figure across the runs: their median and their worst.
    acrossRuns: { bot, floor: floorAcross, undelivered, byRun: runs.map((r) => ({ bot: r.latency, floor: r.floor.latency, delivered: r.delivered, completions: r.completions })) },
    floor: 'loopback POST to a node:http server in the bench process that runs one Postgres transaction (INSERT … ON CONFLICT DO NOTHING) and answers',
    results: {
      bot: latency,
      delivered: latencies.length,
      refusedWebhooks: refused,
      discordRateLimited: rateLimited.length,
      discordRateLimitedRoutes: [...new Set(rateLimited.map((hit) => `${hit.method} ${hit.route ?? hit.path}`))],
      sentPerSecond: round(rows.length / sendSeconds, 1),
      byWindow: windows,
      floor: floor.latency,
      floorFailed: floor.failed,
      submitSeconds,
      workerRssMb: { idle: idleRss, withJobsInFlight: loadedRss },
    },
    ratios: { p99ToFloor: ratio(bot.p99.median, floorAcross.p99.median), p50ToFloor: ratio(bot.p50.median, floorAcross.p50.median), worstP99ToFloor: ratio(bot.p99.worst, floorAcross.p99.median) },
    seconds: round(performance.now() / 1000, 1),
  }, targets);
} finally {
  await world.close();
}

function pick(summary: Summary): { p50: number; p99: number } {
  return { p50: summary.p50, p99: summary.p99 };
}
