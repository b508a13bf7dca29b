/**
 * Postgres going away at the worst moment for a worker: just after the music service accepted
 * a task, and just after Discord took a result. The chaos suite's Postgres outage
 * found both: a job left 'submitting' without its task id (never finished, or refunded while
 * the service kept the credits), and a result posted twice. The effect that already happened
 * must be recorded once Postgres is back, and never repeated.
 *
 * The worker reaches Postgres, the service and Discord through proxies of this file, so that
 * its database connections can be cut at the exact request, while the shared test Postgres
 * stays up for everyone else.
 */
import http from 'node:http';
import type net from 'node:net';
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { startApp, type App } from '../../../src/app.js';
import { loadConfig, type Config } from '../../../src/config.js';
import { createLogger } from '../../../src/logger.js';
import type { GenerationRequest } from '../../../src/pipeline/requests.js';
import { found } from '../../support/found.js';
import { jobRow, ledgerOfJob } from '../../support/ledger.js';
import { workerOnly } from '../../support/pipeline-harness.js';
import { startStack, type Stack } from '../../support/stack.js';
import { tcpProxy, type TcpProxy } from '@music-bot/test-world';

/** An HTTP proxy that calls `before` with each request, and forwards it once that resolves. */
async function httpProxy(target: string, before: (method: string, path: string) => void) {
  const server = http.createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      before(request.method ?? 'GET', request.url ?? '/');
      const headers = Object.fromEntries(
        Object.entries(request.headers).filter(([name]) => !['host', 'content-length', 'connection'].includes(name)),
      ) as Record<string, string>;
      const body = chunks.length > 0 ? Buffer.concat(chunks) : undefined;
      fetch(`${target}${request.url ?? '/'}`, { method: request.method ?? 'GET', headers, ...(body && { body }) })
        .then(async (answer) => {
          const skip = ['content-length', 'content-encoding', 'transfer-encoding', 'connection'];
          response.writeHead(answer.status, Object.fromEntries([...answer.headers].filter(([name]) => !skip.includes(name))));
          response.end(Buffer.from(await answer.arrayBuffer()));
        })
        .catch(() => response.destroy());
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as net.AddressInfo).port}`,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}

const song = (prompt: string): GenerationRequest => ({ kind: 'song', prompt });

describe('Postgres gone at the moment a worker records what it did', () => {
  let stack: Stack;
  let app: App;
  let impatient: App;
  let config: Config;
  let database: TcpProxy;
  const closers: Array<{ name: string; close: () => Promise<unknown> }> = [];
  const workerLog: string[] = [];
  /** Cut the worker's database connections when a request matching this arrives (then restore them after `outageMs`). */
  let cutOn: ((method: string, path: string) => boolean) | undefined;
  const outageMs = 1_500;

  beforeAll(async () => {
    stack = await startStack({ startingCredits: 100, sim: { taskMs: 300 } });
    closers.push({ name: 'the stack', close: () => stack.close() });
    database = await tcpProxy(stack.env.DATABASE_URL!);
    closers.push({ name: 'the database proxy', close: () => database.close() });
    const cutting = (method: string, path: string) => {
      if (!cutOn?.(method, path)) return;
      cutOn = undefined;
      database.cut();
      setTimeout(() => database.restore(), outageMs);
    };
    const musicApi = await httpProxy(stack.sim.url, cutting);
    const discord = await httpProxy(stack.emulator.apiUrl.replace(/\/api(\/v\d+)?\/?$/, ''), cutting);
    closers.push({ name: 'the music API proxy', close: musicApi.close }, { name: 'the Discord proxy', close: discord.close });
    config = loadConfig({
      env: {
        ...stack.env,
        DATABASE_URL: database.url,
        MUSIC_API_URL: musicApi.url,
        DISCORD_API_URL: stack.emulator.apiUrl.replace(/^http:\/\/127\.0\.0\.1:\d+/, discord.url),
        ATTACH_AUDIO: 'false',
        LOG_LEVEL: 'silent',
      },
    });
    // Webhooks off: a job whose task id was lost could only be refunded, while the service keeps its charge.
    // The worker's log is kept, to be shown should it ever be slow to stop.
    const logger = createLogger({ level: 'debug' }, { write: (line: string) => void workerLog.push(line) });
    app = await startApp(config, logger, workerOnly(stack.prefix));
    closers.unshift({ name: 'the bot', close: () => app.stop() });
    // A worker of its own (its own queues), whose patience runs out well within an outage.
    impatient = await startApp(config, logger, workerOnly(`${stack.prefix}-impatient`, { recordPatienceMs: 200 }));
    closers.unshift({ name: 'the impatient bot', close: () => impatient.stop() });
  });
  afterEach(() => {
    cutOn = undefined;
    database.restore();
  });
  afterAll(async () => {
    for (const { name, close } of closers) {
      // A part that is slow to stop names itself, with the worker's last log lines; after 60 s the
      // others are closed anyway, so that the file's own servers do not outlive it.
      let timer: NodeJS.Timeout | undefined;
      const slow = new Promise<'slow'>((resolve) => (timer = setTimeout(() => resolve('slow'), 60_000)));
      const outcome = await Promise.race([close().catch(() => 'failed'), slow]);
      clearTimeout(timer);
      if (outcome === 'slow') console.error(`${name} is still stopping after 60 s; the worker's last log lines:\n${workerLog.slice(-40).join('')}`);
    }
  });

  const submit = (prompt: string) =>
    app.pipeline.submit({ requester: { guildId: stack.guild.id, channelId: stack.channelId, userId: stack.members.alice }, request: song(prompt) });

  it('records a task the service accepted while Postgres was away, and never sends it twice', async () => {
    const prompt = 'accepted in the dark';
    cutOn = (method, path) => method === 'POST' && path.startsWith('/api/v1/');
    const { jobId } = await submit(prompt);

    const row = await vi.waitFor(async () => {
      const current = await jobRow(stack.db.db, jobId);
      return found(current?.deliveryState === 'delivered' ? current : undefined, 'the job delivered');
    }, 30_000);
    expect(cutOn).toBeUndefined();
    expect(row.state).toBe('succeeded');
    expect(stack.sim.listTasks().filter((task) => task.body.sound === prompt)).toHaveLength(1);
    expect(await ledgerOfJob(stack.db.db, jobId)).toEqual([{ kind: 'reserve', amount: -10, key: `job:${jobId}:debit` }]);
  }, 60_000);

  it('keeps a task id it could not record within its patience with the queue entry, and records it once Postgres is back: the job is not refunded', async () => {
    const prompt = 'accepted past patience';
    cutOn = (method, path) => method === 'POST' && path.startsWith('/api/v1/');
    const { jobId } = await impatient.pipeline.submit({
      requester: { guildId: stack.guild.id, channelId: stack.channelId, userId: stack.members.alice },
      request: song(prompt),
    });

    const row = await vi.waitFor(async () => {
      const current = await jobRow(stack.db.db, jobId);
      return found(current && current.deliveryState !== 'pending' ? current : undefined, 'the job delivered');
    }, 30_000);
    expect(cutOn).toBeUndefined();
    expect(row).toMatchObject({ state: 'succeeded', error: null, submitUncertainAt: null });
    const tasks = stack.sim.listTasks().filter((task) => task.body.sound === prompt);
    expect(tasks).toHaveLength(1);
    expect(row.upstreamTaskId).toBe(tasks[0]!.taskId);
    expect(await ledgerOfJob(stack.db.db, jobId)).toEqual([{ kind: 'reserve', amount: -10, key: `job:${jobId}:debit` }]);
  }, 60_000);

  it('records a result Discord took while Postgres was away, and posts it once', async () => {
    const prompt = 'posted in the dark';
    cutOn = (method, path) => method === 'POST' && path.endsWith(`/channels/${stack.channelId}/messages`);
    const { jobId } = await submit(prompt);

    // Within the delivery claim's hold (60 s): a retry of the post would come only after it.
    await vi.waitFor(async () => found((await jobRow(stack.db.db, jobId))?.deliveryState === 'delivered' || undefined, 'the job delivered'), 20_000);
    expect(cutOn).toBeUndefined();
    const posted = stack.emulator
      .channelMessages(stack.channelId)
      .filter((message) => (message.embeds ?? []).some((embed) => (embed.footer?.text ?? '').includes(jobId)));
    expect(posted).toHaveLength(1);
  }, 60_000);
});
