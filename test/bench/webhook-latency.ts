/**
 * `npm run bench:webhook -- [--jobs 2000] [--rate 50] [--webhooks 1000]`
 *
 * Measures two of the pipeline's design targets against the bot as `npm start` runs it (a
 * child process per role: gateway, worker, http), with a real Postgres and Redis, the Discord emulator and the
 * music-API simulator:
 * - latency from a webhook reaching the bot to the Discord REST call that posts the result,
 *   at `--rate` completions per second (target: p99 under 250 ms at 50/s);
 * - the worker's resident memory with `--jobs` jobs in flight (target: 10,000 under 300 MB).
 * It prints figures; it asserts nothing (benchmarks are not tests on a shared machine).
 */
import { spawn } from 'node:child_process';
import { createHmac } from 'node:crypto';
import { chmod, mkdtemp, readFile, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import pg from 'pg';
import { startDiscordEmulator } from '../../src/sandbox/discord-emulator/index.js';
import { startMusicApiSim } from '../../src/sandbox/music-api-sim/index.js';
import { startEmbeddedPostgres } from '../../src/embedded/embedded-postgres.js';
import { findFreePort } from '../../src/embedded/free-port.js';
import { startRedisServer } from '../../src/embedded/redis-server.js';

const { values } = parseArgs({
  options: {
    jobs: { type: 'string', default: '2000' },
    rate: { type: 'string', default: '50' },
    webhooks: { type: 'string', default: '1000' },
  },
});
const jobCount = Number(values.jobs);
const rate = Number(values.rate);
const webhookCount = Math.min(Number(values.webhooks), jobCount);

const root = path.resolve(import.meta.dirname, '../..');
const SIM_KEY = 'bench-sim-key';
const TOKEN = 'MTA5ODc2NTQzMjEwOTg3NjU0.emulator.bench-bot-token';

function percentile(sorted: number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)] ?? Number.NaN;
}

async function rssMegabytes(pid: number): Promise<number> {
  const status = await readFile(`/proc/${pid}/status`, 'utf8');
  const kb = Number(/VmRSS:\s+(\d+)/.exec(status)?.[1] ?? Number.NaN);
  return kb / 1024;
}

async function waitUntil(what: string, check: () => Promise<boolean>, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out: ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 250));
  }
}

const temp = await mkdtemp(path.join(os.tmpdir(), 'bench-'));
await chmod(temp, 0o755);
const postgres = await startEmbeddedPostgres({ dataDir: path.join(temp, 'pg') });
const redis = await startRedisServer({ dataDir: path.join(temp, 'redis'), persistent: false });
const sim = await startMusicApiSim({
  apiKey: SIM_KEY,
  credits: 10_000_000,
  taskMs: 3_600_000,
  allowHttpWebhooks: true,
  concurrencyLimit: 1_000_000,
});
const emulator = await startDiscordEmulator({ botToken: TOKEN, validateRequests: false });
const guild = emulator.createGuild({ name: 'Bench' });
const channel = emulator.createChannel(guild.id, { name: 'bench' });
const member = emulator.addMember(guild.id, { username: 'bencher' });
const httpPort = await findFreePort();

const env: NodeJS.ProcessEnv = {
  PATH: process.env.PATH ?? '',
  DISCORD_TOKEN: TOKEN,
  DISCORD_APPLICATION_ID: emulator.applicationId,
  DISCORD_API_URL: emulator.apiUrl,
  DISCORD_DEV_GUILD_ID: guild.id,
  MUSIC_API_URL: sim.url,
  MUSIC_API_KEY: SIM_KEY,
  DATABASE_URL: postgres.url,
  REDIS_URL: redis.url,
  HTTP_PORT: String(httpPort),
  PUBLIC_URL: `http://127.0.0.1:${httpPort}`,
  LOG_LEVEL: 'warn',
  STARTING_CREDITS: String(jobCount * 10 + 100),
  UPSTREAM_MAX_IN_FLIGHT: String(jobCount + 10),
  // No poll during the run: completions come by webhook only.
  EXPECTED_SECONDS: 'song=3600',
  ATTACH_AUDIO: 'false',
};

const db = new pg.Pool({ connectionString: postgres.url, max: 4 });
const cleanups: Array<() => Promise<unknown>> = [
  () => db.end(),
  () => emulator.close(),
  () => sim.close(),
  () => redis.stop(),
  () => postgres.stop(),
  () => rm(temp, { recursive: true, force: true }),
];

try {
  await new Promise<void>((resolve, reject) => {
    const deploy = spawn(path.join(root, 'node_modules/.bin/tsx'), [path.join(root, 'src/scripts/deploy-commands.ts')], { env, stdio: 'ignore' });
    deploy.once('exit', (code) => (code === 0 ? resolve() : reject(new Error(`deploy-commands exited ${code}`))));
  });
  // The parts run apart, as they would scaled out: the memory target is the worker's.
  const spawnRole = (role: string) => {
    const child = spawn(path.join(root, 'node_modules/.bin/tsx'), [path.join(root, 'src/main.ts')], {
      env: { ...env, ROLE: role },
      stdio: ['ignore', 'ignore', 'inherit'],
    });
    cleanups.unshift(async () => {
      child.kill('SIGTERM');
      await new Promise((resolve) => child.once('exit', resolve));
    });
    return child;
  };
  const worker = spawnRole('worker');
  spawnRole('http');
  spawnRole('gateway');
  await emulator.waitForBotReady(60_000);
  await waitUntil('http server up', async () => (await fetch(`http://127.0.0.1:${httpPort}/healthz`).catch(() => undefined))?.ok === true, 60_000);
  // tsx runs the bot as a grandchild: measure the node process that holds the work.
  const workerPid = Number((await readFile(`/proc/${worker.pid}/task/${worker.pid}/children`, 'utf8')).trim().split(/\s+/)[0]) || worker.pid!;
  const idleRss = await rssMegabytes(workerPid);

  // Members ask for songs, as fast as the bot takes them.
  const started = Date.now();
  const batch = 50;
  for (let i = 0; i < jobCount; i += batch) {
    const handles = Array.from({ length: Math.min(batch, jobCount - i) }, (_, j) =>
      emulator.runCommand({ guildId: guild.id, channelId: channel.id, userId: member.id, name: 'song', options: { prompt: `bench ${i + j}` } }),
    );
    await Promise.all(handles.map((handle) => handle.waitForResponse(30_000)));
  }
  await waitUntil(
    'every job submitted',
    async () => (await db.query("select count(*)::int as n from jobs where state = 'submitted'")).rows[0].n >= jobCount,
    600_000,
  );
  const submitSeconds = (Date.now() - started) / 1000;
  const loadedRss = await rssMegabytes(workerPid);

  // The service reports completions at `rate` per second; each is timed to its Discord post.
  const { rows } = await db.query<{ id: string; secret: string; task: string }>(
    `select id, webhook_secret as secret, upstream_task_id as task from jobs where state = 'submitted' order by created_at limit $1`,
    [webhookCount],
  );
  const sentAt = new Map<string, number>();
  const latencies: number[] = [];
  const done = new Promise<void>((resolve) => {
    emulator.onMessage((message) => {
      const jobId = /Job ([0-9a-f-]{36})/.exec(JSON.stringify(message.embeds ?? []))?.[1];
      const sent = jobId ? sentAt.get(jobId) : undefined;
      if (!jobId || sent === undefined || !JSON.stringify(message.embeds).includes('Links')) return;
      sentAt.delete(jobId);
      latencies.push(performance.now() - sent);
      if (latencies.length === rows.length) resolve();
    });
  });
  const interval = 1000 / rate;
  const firstAt = performance.now();
  for (const [i, job] of rows.entries()) {
    const due = firstAt + i * interval;
    const wait = due - performance.now();
    if (wait > 0) await new Promise((resolve) => setTimeout(resolve, wait));
    const body = JSON.stringify({
      code: 200,
      message: 'success',
      status: 'SUCCESS',
      task_id: job.task,
      data: [{ clip_id: `clip-${i}`, title: `Bench ${i}`, audio_url: `${sim.url}/producer/clip-${i}.m4a`, image_url: `${sim.url}/producer/clip-${i}-img.jpg` }],
    });
    const signature = createHmac('sha256', job.secret).update(body).digest('hex');
    sentAt.set(job.id, performance.now());
    void fetch(`http://127.0.0.1:${httpPort}/webhooks/music/${job.id}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-webhook-signature': signature },
      body,
    });
  }
  await Promise.race([done, new Promise((resolve) => setTimeout(resolve, 60_000))]);
  const achievedRate = rows.length / ((performance.now() - firstAt) / 1000);

  const sorted = [...latencies].sort((a, b) => a - b);
  const p99 = percentile(sorted, 99);
  console.log(`jobs in flight: ${jobCount} (submitted in ${submitSeconds.toFixed(1)} s)`);
  console.log(`worker RSS: idle ${idleRss.toFixed(0)} MB, with ${jobCount} in flight ${loadedRss.toFixed(0)} MB (target < 300 MB at 10,000: ratio ${(loadedRss / 300).toFixed(2)})`);
  console.log(`webhook -> Discord post, ${sorted.length}/${rows.length} delivered at ${achievedRate.toFixed(1)}/s:`);
  console.log(
    `  p50 ${percentile(sorted, 50).toFixed(1)} ms, p95 ${percentile(sorted, 95).toFixed(1)} ms, p99 ${p99.toFixed(1)} ms, max ${(sorted.at(-1) ?? Number.NaN).toFixed(1)} ms`,
  );
  console.log(`  p99 / 250 ms target: ${(p99 / 250).toFixed(2)}`);
} finally {
  for (const cleanup of cleanups) await cleanup().catch(() => {});
}
