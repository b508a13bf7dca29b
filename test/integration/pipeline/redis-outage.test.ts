/**
 * Redis gone while members ask for songs. The job is reserved and recorded in
 * Postgres, so the member is answered at once, acknowledgement included: the chaos suite saw
 * it wait for the whole outage, on an enqueue that waits for Redis instead of failing. And the
 * job is not lost: it is queued, and made, once Redis is back.
 */
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { startApp, type App } from '../../../src/app.js';
import { loadConfig } from '../../../src/config.js';
import { silentLogger } from '../../../src/logger.js';
import { found } from '../../support/found.js';
import { jobRow, ledgerOfJob } from '../../support/ledger.js';
import { workerOnly } from '../../support/pipeline-harness.js';
import { startStack, type Stack } from '../../support/stack.js';
import { tcpProxy, type TcpProxy } from '@music-bot/test-world';

describe('a request while Redis is down', () => {
  let stack: Stack;
  let redis: TcpProxy;
  let app: App;

  beforeAll(async () => {
    stack = await startStack({ startingCredits: 100, sim: { taskMs: 300 } });
    redis = await tcpProxy(stack.redisUrl);
    const config = loadConfig({ env: { ...stack.env, REDIS_URL: redis.url, ATTACH_AUDIO: 'false', LOG_LEVEL: 'silent' } });
    app = await startApp(config, silentLogger, workerOnly(stack.prefix));
  });
  afterAll(async () => {
    redis.restore();
    await app.stop().catch(() => {});
    await redis.close();
    await stack.close();
  });

  it('is accepted and answered at once, and made once Redis is back', async () => {
    const prompt = 'while redis sleeps';
    redis.cut();
    try {
      // The caller sends the member's acknowledgement when submit returns: while Redis is still away, not after the outage.
      const accepted = await app.pipeline.submit({
        requester: { guildId: stack.guild.id, channelId: stack.channelId, userId: stack.members.alice },
        request: { kind: 'song', prompt },
      });
      expect((await jobRow(stack.db.db, accepted.jobId))?.state).toBe('queued');
      redis.restore();

      const row = await vi.waitFor(async () => {
        const current = await jobRow(stack.db.db, accepted.jobId);
        return found(current?.deliveryState === 'delivered' ? current : undefined, 'the job made and delivered after Redis came back');
      }, 30_000);
      expect(row.state).toBe('succeeded');
      expect(stack.sim.listTasks().filter((task) => task.body.sound === prompt)).toHaveLength(1);
      expect(await ledgerOfJob(stack.db.db, accepted.jobId)).toEqual([{ kind: 'reserve', amount: -10, key: `job:${accepted.jobId}:debit` }]);
    } finally {
      redis.restore();
    }
  }, 60_000);
});
