/**
 * The bot on a Redis that Sentinel watches: a primary, a replica and three sentinels. The
 * primary is killed (SIGKILL) in the middle of a batch of songs; the sentinels promote the
 * replica, every connection of the bot (its queues and BullMQ's workers) finds it through them,
 * and every song is delivered and charged exactly once. Replication is asynchronous and nothing
 * here waits for it (no WAIT): the replica is cut off a moment before the primary dies, so what
 * the bot wrote in that moment is lost, and Postgres, through the reconciler, makes up for it.
 * Stopped, the bot leaves no connection on the sentinels.
 */
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { createLogger } from '../../../src/logger.js';
import type { SubmitResult } from '../../../src/pipeline/requests.js';
import { found } from '../../support/found.js';
import { balanceOf, jobRow, ledgerOfJob, ledgerSum } from '../../support/ledger.js';
import { resultPostCount, startHarness, type Harness } from '../../support/pipeline-harness.js';
import { startSentinelGroup, withAdmin, type SentinelGroup } from '../../support/redis-topology.js';

const PASSWORD = 'data-pw-5d0e-never-logged';
const SENTINEL_PASSWORD = 'sentinel-pw-9b3a-never-logged';
const SONGS = 10;

let group: SentinelGroup;
let h: Harness;
const log: string[] = [];
const lines = (msg: string) => log.map((line) => JSON.parse(line) as { msg: string; redis?: string }).filter((line) => line.msg === msg);

beforeAll(async () => {
  group = await startSentinelGroup({ password: PASSWORD, sentinelPassword: SENTINEL_PASSWORD });
  h = await startHarness({
    webhooks: true,
    startingCredits: 500,
    // Tasks end when the test ends them, until it lets them run (1 s each): "the middle" of the batch is the test's, not the machine's load's.
    sim: { taskMs: 600_000 },
    // A few songs at the service at a time: when the primary dies some are made, some are being made, some wait.
    settings: { upstreamMaxInFlight: 3 },
    overrides: { reconcileIntervalMs: 3_000 },
    env: {
      REDIS_URL: '',
      REDIS_SENTINELS: group.sentinelPorts.map((port) => `127.0.0.1:${port}`).join(','),
      REDIS_SENTINEL_NAME: group.name,
      REDIS_PASSWORD: PASSWORD,
      REDIS_SENTINEL_PASSWORD: SENTINEL_PASSWORD,
    },
    logger: createLogger({ level: 'info' }, { write: (line: string) => void log.push(line) }),
  });
}, 60_000);

// Run last to first, each within its own limit: a bot that does not stop still leaves the servers stopped.
afterAll(async () => group?.stop(), 30_000);
afterAll(async () => h?.close(), 60_000);

describe('a Redis primary killed under a batch of songs', () => {
  it('fails over through the sentinels, and every song is delivered and charged once', async () => {
    const jobIds: string[] = [];
    for (let i = 0; i < SONGS; i += 1) {
      const { result } = await h.request({ kind: 'song', prompt: `failover ${i}` });
      jobIds.push((result as SubmitResult).jobId);
    }
    // The bot's queues are on the sentinels' primary.
    const firstPrimary = await group.primaryPort();
    expect(firstPrimary).toBe(group.dataPorts[0]);
    expect(await withAdmin(firstPrimary, PASSWORD, (redis) => redis.keys(`${h.prefix}:*`))).not.toHaveLength(0);

    const delivered = async () => (await Promise.all(jobIds.map((id) => jobRow(h.db.db, id)))).filter((row) => row?.deliveryState === 'delivered').length;
    const prompts = jobIds.map((_, i) => `failover ${i}`);
    const running = () => h.sim.listTasks().filter((task) => prompts.includes(String(task.body.sound)) && !task.endedAt);
    // Ends one song the service is making (three at a time), once it has one.
    const finishOne = async () => {
      const [task] = await vi.waitFor(() => found(running().length > 0 ? running() : undefined, 'a song at the service'), 15_000);
      h.sim.completeTask(task!.taskId);
    };
    // In the middle: a song delivered, three at the service, the others waiting their turn.
    await finishOne();
    await vi.waitFor(async () => found((await delivered()) >= 1 ? true : undefined, 'a song delivered'), 15_000);
    const deliveredAtCut = await delivered();
    expect((await Promise.all(jobIds.map((id) => jobRow(h.db.db, id)))).filter((row) => row?.state === 'queued').length).toBeGreaterThanOrEqual(2);
    // The replica falls behind, as asynchronous replication may when the primary dies: what the
    // bot writes from now on (a song delivered at least) is acknowledged and lost with the primary.
    const replicaOffset = await group.cutReplication();
    await finishOne();
    await vi.waitFor(async () => found((await delivered()) > deliveredAtCut ? true : undefined, 'a song delivered after the cut'), 15_000);
    const primaryOffset = await group.primaryOffset();
    const killed = await group.killPrimary();
    expect(primaryOffset).toBeGreaterThan(replicaOffset);
    // From now on the songs are made in a second each.
    h.sim.setTaskMs(1_000);

    // The sentinels promote the replica, and the bot's connections find it.
    await vi.waitFor(async () => found((await group.primaryPort()) !== killed ? true : undefined, 'a new primary'), 30_000);
    await vi.waitFor(() => expect(lines('redis connection restored').map((line) => line.redis)).toEqual(expect.arrayContaining(['main', 'workers'])), 30_000);
    // Those the service was making at the kill end now.
    for (const task of running()) h.sim.completeTask(task.taskId);

    const rows = await vi.waitFor(async () => {
      const current = await Promise.all(jobIds.map((id) => jobRow(h.db.db, id)));
      return found(current.every((row) => row?.deliveryState === 'delivered') ? current : undefined, 'every song delivered');
    }, 60_000);
    expect(rows.map((row) => row?.state)).toEqual(jobIds.map(() => 'succeeded'));
    for (const jobId of jobIds) {
      expect(resultPostCount(h, jobId)).toBe(1);
      expect(await ledgerOfJob(h.db.db, jobId)).toEqual([{ kind: 'reserve', amount: -10, key: `job:${jobId}:debit` }]);
    }
    // One upstream task per song, and the balance is the ledger's sum.
    expect(h.sim.listTasks().filter((task) => prompts.includes(String(task.body.sound)))).toHaveLength(SONGS);
    expect(await ledgerSum(h.db.db, h.guildId)).toBe(await balanceOf(h.db.db, h.guildId));
    // The outage was logged, and no password with it.
    expect(lines('redis connection lost; reconnecting').map((line) => line.redis)).toEqual(expect.arrayContaining(['main', 'workers']));
    expect(log.join('\n')).not.toContain(PASSWORD);
    expect(log.join('\n')).not.toContain(SENTINEL_PASSWORD);
  }, 90_000);
});

describe('the bot stopped', () => {
  it('leaves no connection watching the sentinels for a failover', async () => {
    // Each sentinel's clients subscribed to its events: the bot's failover watch (the sentinels' own links are not subscribers).
    const watchers = async () => {
      const counts = await Promise.all(
        group.sentinelPorts.map((port) =>
          withAdmin(port, SENTINEL_PASSWORD, async (redis) => {
            const list = String(await redis.call('CLIENT', 'LIST'));
            return list.split('\n').filter((line) => /\b(sub|psub)=[1-9]/.test(line)).length;
          }),
        ),
      );
      return counts.reduce((sum, count) => sum + count, 0);
    };
    await expect.poll(watchers, { timeout: 10_000, message: 'the bot never watched the sentinels' }).toBeGreaterThan(0);
    await h.app.stop();
    // Left behind, a watch reconnects every minute to sentinels long gone, with no one to hear its errors.
    await expect.poll(watchers, { timeout: 5_000, message: 'connections still watch the sentinels' }).toBe(0);
  }, 60_000);
});
