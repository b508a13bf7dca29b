/**
 * A task the service accepted while its job was settled elsewhere: the worker that sent the
 * create lost its BullMQ lock in a Redis blip, another worker took the entry over, found the job
 * still `submitting` and refunded it as uncertain. When the first worker's answer arrives the
 * task id is recorded anyway, and the task followed like any late result: polled, and posted
 * free when it succeeds.
 *
 * The first worker reaches Redis and the service through proxies of this file: its Redis is cut
 * while the create's answer is held, long enough for its lock to lapse.
 */
import http from 'node:http';
import type net from 'node:net';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { startApp, type App } from '../../../src/app.js';
import { loadConfig } from '../../../src/config.js';
import { silentLogger } from '../../../src/logger.js';
import { found } from '../../support/found.js';
import { jobRow, ledgerOfJob } from '../../support/ledger.js';
import { workerOnly } from '../../support/pipeline-harness.js';
import { startStack, type Stack } from '../../support/stack.js';
import { tcpProxy, type TcpProxy } from '@music-bot/test-world';

/** An HTTP proxy that holds the answers of the requests `hold` picks until the test lets them go. */
async function answerHoldingProxy(target: string, hold: (method: string, path: string) => boolean) {
  const held: Array<() => void> = [];
  const waiting = new Set<() => void>();
  const server = http.createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      const headers = Object.fromEntries(
        Object.entries(request.headers).filter(([name]) => !['host', 'content-length', 'connection'].includes(name)),
      ) as Record<string, string>;
      const body = chunks.length > 0 ? Buffer.concat(chunks) : undefined;
      fetch(`${target}${request.url ?? '/'}`, { method: request.method ?? 'GET', headers, ...(body && { body }) })
        .then(async (answer) => {
          const skip = ['content-length', 'content-encoding', 'transfer-encoding', 'connection'];
          const data = Buffer.from(await answer.arrayBuffer());
          const send = () => {
            response.writeHead(answer.status, Object.fromEntries([...answer.headers].filter(([name]) => !skip.includes(name))));
            response.end(data);
          };
          if (!hold(request.method ?? 'GET', request.url ?? '/')) return send();
          held.push(send);
          for (const wake of waiting) wake();
        })
        .catch(() => response.destroy());
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as net.AddressInfo).port}`,
    /** Resolves once an answer is held (the service has answered it). */
    held: () =>
      new Promise<void>((resolve) => {
        if (held.length > 0) return resolve();
        const wake = () => {
          waiting.delete(wake);
          resolve();
        };
        waiting.add(wake);
      }),
    release: () => held.splice(0).forEach((send) => send()),
    close: () =>
      new Promise<void>((resolve) => {
        held.splice(0).forEach((send) => send());
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}

describe('a task id that arrives after its job was refunded', () => {
  let stack: Stack;
  let redis: TcpProxy;
  let musicApi: Awaited<ReturnType<typeof answerHoldingProxy>>;
  const apps: App[] = [];

  beforeAll(async () => {
    stack = await startStack({ startingCredits: 100, sim: { taskMs: 300 } });
    redis = await tcpProxy(stack.redisUrl);
    musicApi = await answerHoldingProxy(stack.sim.url, (method, path) => method === 'POST' && path.startsWith('/api/v1/producer/create'));
  });
  afterAll(async () => {
    redis?.restore();
    musicApi?.release();
    // The worker whose lock lapsed can be slow to stop (BullMQ finds its entry gone): it is given
    // a while, then the rest is closed anyway.
    for (const app of apps.reverse()) {
      let timer: NodeJS.Timeout | undefined;
      await Promise.race([app.stop().catch(() => {}), new Promise((resolve) => (timer = setTimeout(resolve, 10_000)))]);
      clearTimeout(timer);
    }
    await musicApi?.close();
    await redis?.close();
    await stack?.close();
  });

  it('is recorded anyway, its task polled, and the song posted free', async () => {
    const prompt = 'answered after the refund';
    const first = await startApp(
      loadConfig({ env: { ...stack.env, REDIS_URL: redis.url, MUSIC_API_URL: musicApi.url, ATTACH_AUDIO: 'false', LOG_LEVEL: 'silent' } }),
      silentLogger,
      workerOnly(stack.prefix),
    );
    apps.push(first);
    const { jobId } = await first.pipeline.submit({
      requester: { guildId: stack.guild.id, channelId: stack.channelId, userId: stack.members.alice },
      request: { kind: 'song', prompt },
    });

    // The service made the task and answered; the answer is held while the worker's Redis is away.
    await musicApi.held();
    redis.cut();
    const second = await startApp(loadConfig({ env: { ...stack.env, ATTACH_AUDIO: 'false', LOG_LEVEL: 'silent' } }), silentLogger, workerOnly(stack.prefix));
    apps.push(second);
    // The first worker's lock lapses; the second takes the entry over and refunds the job.
    const settled = await vi.waitFor(async () => {
      const row = await jobRow(stack.db.db, jobId);
      return found(row?.state === 'timed_out' ? row : undefined, 'the job refunded by the other worker');
    }, 30_000);
    expect(settled).toMatchObject({ upstreamTaskId: null, error: { kind: 'unconfirmed_submission', creditsReturned: 10 } });

    redis.restore();
    musicApi.release();
    const [task] = stack.sim.listTasks().filter((t) => t.body.sound === prompt);
    const done = await vi.waitFor(async () => {
      const row = await jobRow(stack.db.db, jobId);
      return found(row?.state === 'succeeded' && row.deliveryState === 'delivered' ? row : undefined, 'the late song delivered');
    }, 30_000);
    expect(done).toMatchObject({ upstreamTaskId: task!.taskId, error: { kind: 'unconfirmed_submission', creditsReturned: 10 } });
    expect(done.result?.clips?.[0]?.audioUrl).toEqual(expect.any(String));
    expect(stack.sim.listTasks().filter((t) => t.body.sound === prompt)).toHaveLength(1);
    expect(await ledgerOfJob(stack.db.db, jobId)).toEqual([
      { kind: 'reserve', amount: -10, key: `job:${jobId}:debit` },
      { kind: 'refund', amount: 10, key: `job:${jobId}:credit` },
    ]);
    const posted = stack.emulator.channelMessages(stack.channelId).filter((m) => JSON.stringify(m.embeds ?? []).includes(jobId));
    expect(posted.some((m) => JSON.stringify(m.embeds).includes('Free (credits returned)'))).toBe(true);
  }, 90_000);
});
