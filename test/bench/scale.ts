/**
 * `npm run bench -- scale [--jobs 50000]`: what 50,000 open jobs across 100 guilds cost, and
 * how fast the bot drains them.
 *
 * The bot runs as operators split it: a worker (`ROLE=worker`) and the webhook receiver
 * (`ROLE=http`), each `npm start` in its own process, against the simulator and the Discord
 * emulator. Creating 50,000 jobs through Discord interactions would take most of the suite's
 * budget, so this process accepts them through the pipeline's own `submit` (the function the
 * command handlers call, as an operator's retry does: no interaction to answer), which checks,
 * reserves credits and writes the job in one transaction and queues it. The worker then sends
 * every job upstream, where the simulator keeps it running (tasks last an hour).
 *
 * With every job in flight upstream it measures the worker's resident memory (/proc of its
 * pid), Redis `used_memory` and the Postgres size of each table and its indexes, each before
 * and after, per job. Then the simulator finishes every task (webhooks to the http role, at a
 * bounded number in flight) and the drain is timed: jobs made final per second, and results
 * delivered to Discord per second. Discord allows a bot 50 requests per second across all
 * routes (the emulator enforces it), so delivery cannot drain faster than 50 jobs/s; that is
 * the ceiling the delivery rate is compared with. A phase that cannot finish in its time
 * budget is measured as far as it got, and the result says so.
 * Targets: all the jobs asked accepted within the accept budget, worker RSS < 500 MB (the
 * extrapolation to the jobs asked when the budget ran out), Redis < 2 KB per job.
 */
import { parseArgs } from 'node:util';
import { startApp } from '../../src/app.js';
import { loadConfig } from '../../src/config.js';
import { silentLogger } from '../../src/logger.js';
import { sleep } from '@music-bot/test-world';
import { printTable, round, rssMegabytes, startBenchWorld, target, writeResult } from './support.js';

const { values } = parseArgs({ options: { jobs: { type: 'string', default: '50000' } }, allowPositionals: true });
const JOBS = Number(values.jobs);
const GUILDS = 100;
const SUBMITTERS = 24;
/** Time budgets of the phases, so the benchmark fits the suite's 15 minutes. */
const ACCEPT_BUDGET_MS = 180_000;
const UPSTREAM_BUDGET_MS = 90_000;
const DRAIN_WINDOW_MS = 60_000;
/** Webhooks the simulator has under way at once while finishing tasks. */
const WEBHOOKS_IN_FLIGHT = 200;
const DISCORD_GLOBAL_PER_SECOND = 50;
const TARGET_RSS_MB = 500;
const TARGET_REDIS_BYTES_PER_JOB = 2048;

const world = await startBenchWorld({ sim: { taskMs: 3_600_000 } });
const botEnv = {
  STARTING_CREDITS: '1000000000',
  UPSTREAM_MAX_IN_FLIGHT: '1000000',
  // Found by webhook; the first poll of an hour-long task is far away.
  EXPECTED_SECONDS: 'song=3600',
};
const app = await startApp(loadConfig({ env: world.env(botEnv) }), silentLogger, { parts: { gateway: false, worker: false, http: false } });
try {
  const places = Array.from({ length: GUILDS }, (_, g) => {
    const guild = world.emulator.createGuild({ name: `Scale ${g}` });
    const channel = world.emulator.createChannel(guild.id, { name: 'songs' });
    const member = world.emulator.addMember(guild.id, { username: `member-${g}` });
    return { guildId: guild.id, channelId: channel.id, userId: member.id };
  });

  const redisUsedMemory = async () => Number(/used_memory:(\d+)/.exec(await app.deps.redis.info('memory'))?.[1] ?? Number.NaN);
  const tableSizes = async () => {
    const { rows } = await world.db.query<{ name: string; table: string; indexes: string }>(
      `select c.relname as name, pg_table_size(c.oid) as table, pg_indexes_size(c.oid) as indexes
         from pg_class c join pg_namespace n on n.oid = c.relnamespace
        where n.nspname = 'public' and c.relkind = 'r'`,
    );
    return new Map(rows.map((row) => [row.name, { table: Number(row.table), indexes: Number(row.indexes) }]));
  };
  const countJobs = async (where: string) => Number((await world.db.query(`select count(*)::int as n from jobs where ${where}`)).rows[0].n);

  const worker = world.bot({ env: { ...botEnv, ROLE: 'worker' } });
  worker.spawn();
  world.bot({ env: { ...botEnv, ROLE: 'http' } }).spawn();
  const rssSamples: Array<{ at: number; mb: number }> = [];
  const sampler = setInterval(() => {
    if (worker.pid) void rssMegabytes(worker.pid).then((mb) => rssSamples.push({ at: performance.now(), mb }), () => {});
  }, 1000);
  await sleep(8000);
  const idleRss = await rssMegabytes(worker.pid!);
  const redisBefore = await redisUsedMemory();
  const pgBefore = await tableSizes();

  // ---- accept: the pipeline's submit, 24 at a time, spread over the guilds ----
  const acceptStarted = performance.now();
  let next = 0;
  let accepted = 0;
  await Promise.all(
    Array.from({ length: SUBMITTERS }, async () => {
      while (next < JOBS && performance.now() - acceptStarted < ACCEPT_BUDGET_MS) {
        const i = next++;
        const requester = places[i % GUILDS]!;
        await app.pipeline.submit({ requester, request: { kind: 'song', prompt: `scale ${i}` } });
        accepted += 1;
      }
    }),
  );
  const acceptSeconds = (performance.now() - acceptStarted) / 1000;

  // ---- upstream: the worker sends them; wait until every one is in flight at the service ----
  const upstreamStarted = performance.now();
  while (performance.now() - upstreamStarted < UPSTREAM_BUDGET_MS && (await countJobs(`state in ('queued', 'submitting')`)) > 0) await sleep(1000);
  const inFlightUpstream = await countJobs(`state = 'submitted'`);
  const stillQueued = await countJobs(`state in ('queued', 'submitting')`);
  const sendSeconds = (performance.now() - acceptStarted) / 1000;
  await sleep(3000);

  const loadedRss = await rssMegabytes(worker.pid!);
  const redisAfter = await redisUsedMemory();
  const pgAfter = await tableSizes();
  const open = accepted;
  const redisPerJob = (redisAfter - redisBefore) / open;
  const tables = [...pgAfter.entries()]
    .map(([name, after]) => {
      const before = pgBefore.get(name) ?? { table: 0, indexes: 0 };
      return { name, table: after.table - before.table, indexes: after.indexes - before.indexes };
    })
    .filter((row) => row.table + row.indexes > 0)
    .sort((a, b) => b.table + b.indexes - (a.table + a.indexes));
  const pgTotal = tables.reduce((sum, row) => sum + row.table + row.indexes, 0);

  // ---- drain: the simulator finishes every task (webhook to the http role) ----
  world.sim.setTaskMs(1000); // jobs the worker had not yet sent finish a second after they are
  const drainStarted = performance.now();
  const finalBefore = await countJobs(`state in ('succeeded', 'failed', 'timed_out')`);
  const deliveredBefore = await countJobs(`delivery_state = 'delivered'`);
  const taskIds = world.sim.listTasks().filter((task) => task.state === 'PENDING' || task.state === 'RUNNING').map((task) => task.taskId);
  const attemptsAtStart = world.sim.webhookAttempts.length;
  let finished = 0;
  const finisher = (async () => {
    for (const taskId of taskIds) {
      if (performance.now() - drainStarted > DRAIN_WINDOW_MS) break;
      while (finished - (world.sim.webhookAttempts.length - attemptsAtStart) >= WEBHOOKS_IN_FLIGHT) await sleep(5);
      if (world.sim.completeTask(taskId, 'success')) finished += 1;
    }
  })();
  const progress: Array<{ seconds: number; final: number; delivered: number }> = [];
  while (performance.now() - drainStarted < DRAIN_WINDOW_MS) {
    await sleep(5000);
    const final = (await countJobs(`state in ('succeeded', 'failed', 'timed_out')`)) - finalBefore;
    const delivered = (await countJobs(`delivery_state = 'delivered'`)) - deliveredBefore;
    progress.push({ seconds: round((performance.now() - drainStarted) / 1000, 1), final, delivered });
    if (delivered >= open) break;
  }
  await finisher;
  clearInterval(sampler);
  const drainSeconds = (performance.now() - drainStarted) / 1000;
  const last = progress.at(-1) ?? { seconds: drainSeconds, final: 0, delivered: 0 };
  const finalPerSecond = last.final / last.seconds;
  const deliveredPerSecond = last.delivered / last.seconds;
  const drainedAll = last.delivered >= open;
  const peakRss = Math.max(idleRss, loadedRss, ...rssSamples.map((sample) => sample.mb));
  const discord429 = world.emulator.rateLimited.length;

  const kb = (bytes: number) => round(bytes / 1024, 2);
  printTable(`open jobs: ${open.toLocaleString('en')} accepted across ${GUILDS} guilds, ${inFlightUpstream.toLocaleString('en')} in flight upstream`, [
    { figure: 'worker RSS, idle', value: `${idleRss} MB`, target: '', met: '' },
    { figure: 'worker RSS, jobs open', value: `${loadedRss} MB`, target: `< ${TARGET_RSS_MB} MB`, met: loadedRss < TARGET_RSS_MB },
    { figure: 'worker RSS, peak (1 s samples)', value: `${peakRss} MB`, target: `< ${TARGET_RSS_MB} MB`, met: peakRss < TARGET_RSS_MB },
    { figure: 'Redis used_memory per job', value: `${round(redisPerJob, 0)} B`, target: '< 2048 B', met: redisPerJob < TARGET_REDIS_BYTES_PER_JOB },
    { figure: 'Postgres tables + indexes per job', value: `${kb(pgTotal / open)} KB`, target: '', met: '' },
  ]);
  printTable(
    'Postgres growth per job, by table',
    tables.map((row) => ({ table: row.name, 'table B/job': round(row.table / open, 0), 'indexes B/job': round(row.indexes / open, 0) })),
  );
  printTable('throughput', [
    { phase: 'accepted (pipeline submit, this process)', jobs: accepted, seconds: round(acceptSeconds, 1), 'jobs/s': round(accepted / acceptSeconds, 1) },
    { phase: 'sent upstream by the worker (from the first accept)', jobs: inFlightUpstream, seconds: round(sendSeconds, 1), 'jobs/s': round(inFlightUpstream / sendSeconds, 1) },
    { phase: 'drain: made final (webhook → complete)', jobs: last.final, seconds: last.seconds, 'jobs/s': round(finalPerSecond, 1) },
    { phase: 'drain: delivered to Discord', jobs: last.delivered, seconds: last.seconds, 'jobs/s': round(deliveredPerSecond, 1) },
  ]);
  const extrapolatedDrainSeconds = drainedAll ? last.seconds : round(open / deliveredPerSecond, 0);
  console.log(
    drainedAll
      ? `drained all ${open} in ${last.seconds} s`
      : `drain window ${DRAIN_WINDOW_MS / 1000} s: ${last.delivered} of ${open} delivered; at this rate all would take about ${extrapolatedDrainSeconds} s (extrapolated)`,
  );
  // When the budget cut the load short: linear in the open jobs, from the idle figure. An estimate, labelled as one.
  const extrapolated =
    accepted < JOBS
      ? {
          jobs: JOBS,
          workerRssMb: round(idleRss + ((loadedRss - idleRss) * JOBS) / open, 0),
          workerPeakRssMb: round(idleRss + ((peakRss - idleRss) * JOBS) / open, 0),
          redisMb: round((redisPerJob * JOBS) / 1024 ** 2, 1),
          postgresMb: round((pgTotal / open) * JOBS / 1024 ** 2, 1),
          method: `linear from ${open} open jobs (idle + growth × ${JOBS}/${open}); not measured`,
        }
      : undefined;
  if (extrapolated) {
    console.log(`accept budget ran out: ${accepted} of ${JOBS} accepted; per-job figures are for ${accepted}`);
    printTable(`EXTRAPOLATED to ${JOBS.toLocaleString('en')} jobs (linear, not measured)`, [
      { figure: 'worker RSS, jobs open', value: `${extrapolated.workerRssMb} MB`, target: `< ${TARGET_RSS_MB} MB` },
      { figure: 'worker RSS, peak', value: `${extrapolated.workerPeakRssMb} MB`, target: `< ${TARGET_RSS_MB} MB` },
      { figure: 'Redis used_memory', value: `${extrapolated.redisMb} MB`, target: '' },
      { figure: 'Postgres tables + indexes', value: `${extrapolated.postgresMb} MB`, target: '' },
    ]);
  }

  await writeResult('scale', {
    workload: {
      jobsAsked: JOBS,
      jobsOpen: open,
      inFlightUpstream,
      stillQueuedAtSnapshot: stillQueued,
      guilds: GUILDS,
      kind: 'song',
      how: 'accepted through the pipeline submit function (src/pipeline/submit.ts, via startApp with no roles) by 24 concurrent callers in the benchmark process, as an operator retry would (no interaction); sent upstream by the worker (ROLE=worker, npm start); completed by the simulator with webhooks to ROLE=http',
      simulatorTaskMs: 3_600_000,
      drainWindowSeconds: DRAIN_WINDOW_MS / 1000,
      webhooksInFlight: WEBHOOKS_IN_FLIGHT,
      scaling: 'none: real time; the job count is the one asked unless the accept budget ran out',
    },
    bounds: { jobsAccepted: `${JOBS} within ${ACCEPT_BUDGET_MS / 1000} s`, workerRssMb: `< ${TARGET_RSS_MB}`, redisBytesPerJob: `< ${TARGET_REDIS_BYTES_PER_JOB}` },
    results: {
      workerRssMb: { idle: idleRss, open: loadedRss, peak: peakRss },
      redis: { usedMemoryBefore: redisBefore, usedMemoryAfter: redisAfter, bytesPerJob: round(redisPerJob, 0) },
      postgres: { bytesPerJob: round(pgTotal / open, 0), byTable: tables.map((row) => ({ ...row, tableBytesPerJob: round(row.table / open, 0), indexBytesPerJob: round(row.indexes / open, 0) })) },
      throughput: {
        acceptedPerSecond: round(accepted / acceptSeconds, 1),
        sentUpstreamPerSecond: round(inFlightUpstream / sendSeconds, 1),
        drainFinalPerSecond: round(finalPerSecond, 1),
        drainDeliveredPerSecond: round(deliveredPerSecond, 1),
        drainedAll,
        drainSeconds: extrapolatedDrainSeconds,
        drainSecondsExtrapolated: !drainedAll,
        drainProgress: progress,
        deliveryCeiling: `Discord's global limit, ${DISCORD_GLOBAL_PER_SECOND} requests/s per bot`,
        deliveredToCeiling: round(deliveredPerSecond / DISCORD_GLOBAL_PER_SECOND, 2),
        discordRateLimitHits: discord429 ?? null,
      },
    },
    extrapolated: extrapolated ?? null,
    seconds: round(performance.now() / 1000, 1),
  }, [
    target(`jobs accepted within the accept budget (${ACCEPT_BUDGET_MS / 1000} s)`, accepted, `= ${JOBS}`, accepted >= JOBS),
    extrapolated
      ? target(`worker RSS, peak, extrapolated to ${JOBS} jobs, MB`, extrapolated.workerPeakRssMb, `< ${TARGET_RSS_MB}`, extrapolated.workerPeakRssMb < TARGET_RSS_MB)
      : target('worker RSS, peak, MB', peakRss, `< ${TARGET_RSS_MB}`, peakRss < TARGET_RSS_MB),
    target('Redis used_memory per job, bytes', round(redisPerJob, 0), `< ${TARGET_REDIS_BYTES_PER_JOB}`, redisPerJob < TARGET_REDIS_BYTES_PER_JOB),
  ]);
} finally {
  await app.stop();
  await world.close();
}
