/**
 * The bot on a real Redis Cluster of three primaries: with a hash-tagged QUEUE_PREFIX its queues
 * (submit, poll, deliver) carry a song from the command to the channel, and the bot's own
 * multi-key writes (the voice store's transactions, pending choices, health records, the
 * reconciler's pipelined reads) stay in one slot. Without the tag BullMQ's scripts are refused.
 */
import { randomUUID } from 'node:crypto';
import { Cluster } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { createPendingChoices } from '../../../src/discord/pending-choices.js';
import { reconcile } from '../../../src/pipeline/reconcile.js';
import type { SubmitResult } from '../../../src/pipeline/requests.js';
import { writeShardHeartbeats } from '../../../src/queue/health-records.js';
import { createQueues } from '../../../src/queue/queues.js';
import { createPlayerStore } from '../../../src/voice/store.js';
import { found } from '../../support/found.js';
import { jobRow, ledgerOfJob } from '../../support/ledger.js';
import { startHarness, type Harness } from '../../support/pipeline-harness.js';
import { startRedisCluster, type RedisCluster } from '../../support/redis-topology.js';

let cluster: RedisCluster;
let h: Harness;
let prefix: string;

beforeAll(async () => {
  cluster = await startRedisCluster();
  prefix = `{test-${randomUUID()}}`;
  h = await startHarness({
    webhooks: false,
    startingCredits: 100,
    sim: { taskMs: 500 },
    env: { REDIS_URL: '', REDIS_CLUSTER_NODES: cluster.ports.map((port) => `127.0.0.1:${port}`).join(','), QUEUE_PREFIX: prefix },
    overrides: { queuePrefix: prefix },
  });
}, 60_000);

// Run last to first, each within its own limit: a bot that does not stop still leaves the nodes stopped.
afterAll(async () => cluster?.stop(), 30_000);
afterAll(async () => h?.close(), 60_000);

describe('the bot on a Redis Cluster', () => {
  it('makes and delivers a song through its queues on the cluster', async () => {
    const { result } = await h.request({ kind: 'song', prompt: 'clustered' });
    const { jobId } = result as SubmitResult;
    const row = await vi.waitFor(async () => {
      const current = await jobRow(h.db.db, jobId);
      return found(current?.deliveryState === 'delivered' ? current : undefined, 'the song delivered');
    }, 30_000);
    expect(row.state).toBe('succeeded');
    expect(await ledgerOfJob(h.db.db, jobId)).toEqual([{ kind: 'reserve', amount: -10, key: `job:${jobId}:debit` }]);
    // Polled, not told by a webhook: the poll queue carried it too.
    expect(h.sim.listTasks().filter((task) => task.body.sound === 'clustered')).toHaveLength(1);
    expect(h.sim.requests.some((request) => request.method === 'GET' && `${request.path}?${request.query}`.includes(row.upstreamTaskId!))).toBe(true);

    // The queues' keys are on the cluster, every one in the prefix's slot.
    const redis = h.app.deps.redis as Cluster;
    expect(redis).toBeInstanceOf(Cluster);
    const slot = Number(await redis.call('CLUSTER', 'KEYSLOT', prefix));
    const keys = (await Promise.all(redis.nodes('master').map((node) => node.keys(`${prefix}:*`)))).flat();
    expect(keys.length).toBeGreaterThan(0);
    for (const key of keys) expect(Number(await redis.call('CLUSTER', 'KEYSLOT', key))).toBe(slot);
  }, 60_000);

  it("keeps the bot's own multi-key writes in one slot", async () => {
    const redis = h.app.deps.redis;
    const store = createPlayerStore(redis, prefix);
    const state = { voiceChannelId: '1', textChannelId: '2', guildLocale: 'en-US', nowPlayingMessageId: null, current: null, paused: false, radio: null, stay: false };
    await store.write('g1', state);
    expect(await store.activeGuilds()).toEqual(['g1']);
    expect(await store.vote('g1', 'u1')).toBe(1);
    await store.clear('g1');
    expect(await store.activeGuilds()).toEqual([]);

    const choices = createPendingChoices(redis, prefix);
    await choices.keep('i1', { prompt: 'kept' });
    expect(await choices.take('i1')).toEqual({ prompt: 'kept' });

    await writeShardHeartbeats(redis, prefix, [{ id: 0, status: 'ready', pingMs: 10, at: Date.now() }]);
    expect(await reconcile(h.app.deps)).toEqual({ submit: 0, poll: 0, deliver: 0 });
  });

  it('refuses BullMQ a prefix without a hash tag: its keys would span slots', async () => {
    const untagged = createQueues(h.app.deps.redis, { prefix: `test-${randomUUID()}` });
    try {
      await expect(untagged.enqueueSubmit(randomUUID())).rejects.toThrow(/CROSSSLOT|same slot/);
    } finally {
      await untagged.close();
    }
  });
});
