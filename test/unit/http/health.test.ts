/** What `/healthz` makes of the records in Redis: the gateway's shards and the music service's answers. */
import { describe, expect, it } from 'vitest';
import { gatewayHealth, serviceHealth, SERVICE_FAILING_AFTER_MS } from '../../../src/http/health-routes.js';
import { SHARD_STALE_MS } from '../../../src/queue/health-records.js';

const now = 1_700_000_000_000;
const shard = (id: number, status: string, ageMs: number, shardCount?: number) => ({ id, status, pingMs: 40, at: now - ageMs, ...(shardCount && { shardCount }) });
/** The record as Redis holds it: the heartbeats, and the count the last writer published. */
const record = (shards: ReturnType<typeof shard>[], shardCount?: number) => ({ shards, shardCount });

describe('gatewayHealth', () => {
  it('is ok when every shard is ready and heard from', () => {
    expect(gatewayHealth(record([shard(0, 'ready', 1_000), shard(1, 'ready', SHARD_STALE_MS)]), true, now).status).toBe('ok');
  });

  it('is degraded when a shard is not ready or not heard from, down when none is heard from', () => {
    expect(gatewayHealth(record([shard(0, 'ready', 0), shard(1, 'reconnecting', 0)]), false, now).status).toBe('degraded');
    expect(gatewayHealth(record([shard(0, 'ready', 0), shard(1, 'ready', SHARD_STALE_MS + 1)]), false, now).status).toBe('degraded');
    expect(gatewayHealth(record([shard(0, 'ready', SHARD_STALE_MS + 1)]), false, now).status).toBe('down');
  });

  it('names the shards of the published count that no live heartbeat holds, and is down when none is held', () => {
    const report = gatewayHealth(record([shard(0, 'ready', 0, 4), shard(1, 'ready', SHARD_STALE_MS + 1, 4), shard(3, 'ready', 0, 4)], 4), false, now);
    expect(report).toMatchObject({ status: 'degraded', shardCount: 4, missingShards: [1, 2] });
    expect(gatewayHealth(record([shard(0, 'ready', SHARD_STALE_MS + 1, 2)], 2), false, now)).toMatchObject({ status: 'down', missingShards: [0, 1] });
    // Every process stopped cleanly: no heartbeat left, the count kept.
    expect(gatewayHealth(record([], 2), false, now)).toEqual({ status: 'down', shardCount: 2, missingShards: [0, 1], shards: [] });
    expect(gatewayHealth(record([shard(0, 'ready', 0, 2), shard(1, 'ready', 0, 2)], 2), false, now)).toMatchObject({ status: 'ok', missingShards: [] });
  });

  it("judges each heartbeat by the window its writer named (GATEWAY_HEARTBEAT_MS), the default's without one", () => {
    const named = (id: number, ageMs: number, staleAfterMs: number) => ({ ...shard(id, 'ready', ageMs, 3), staleAfterMs });
    const report = gatewayHealth({ shards: [named(0, 2_999, 3_000), named(1, 3_001, 3_000), { ...shard(2, 'ready', SHARD_STALE_MS - 1, 3) }], shardCount: 3 }, false, now);
    expect(report).toMatchObject({ status: 'degraded', shardCount: 3, missingShards: [1] });
    expect(gatewayHealth({ shards: [{ ...shard(0, 'ready', SHARD_STALE_MS + 1, 1), staleAfterMs: 60_000 }], shardCount: 1 }, false, now)).toMatchObject({ status: 'ok', missingShards: [] });
  });

  it('takes the count from the live heartbeats over the record, and a shard of another count holds nothing', () => {
    // Resharded from 3 to 2: the new processes are live, the old one wrote last and was killed.
    const resharded = record([shard(0, 'ready', 0, 2), shard(1, 'ready', 0, 2), shard(2, 'ready', SHARD_STALE_MS + 1, 3)], 3);
    expect(gatewayHealth(resharded, false, now)).toMatchObject({ status: 'ok', shardCount: 2, missingShards: [] });
    // Two layouts live at once: shard 1 of 2 is not shard 1 of 3.
    expect(gatewayHealth(record([shard(0, 'ready', 0, 3), shard(1, 'ready', 0, 2)], 2), false, now)).toMatchObject({ shardCount: 3, missingShards: [1, 2] });
  });

  it('tells no gateway apart from one expected here, and from a record it could not read', () => {
    expect(gatewayHealth(record([]), false, now).status).toBe('absent');
    expect(gatewayHealth(record([]), true, now).status).toBe('down');
    expect(gatewayHealth(undefined, true, now).status).toBe('unknown');
  });
});

describe('serviceHealth', () => {
  const record = { lastAnswerAt: now - 2_000, lastOkAt: undefined, lastErrorAt: now - 2_000, lastError: 'internal (500)' };

  it('is failing once every answer for five minutes was a failure, not before', () => {
    expect(serviceHealth({ ...record, failingSince: now - SERVICE_FAILING_AFTER_MS + 1_000 }, now)).toEqual({
      status: 'ok',
      lastAnswerSecondsAgo: 2,
      lastError: 'internal (500)',
      failingForSeconds: 299,
    });
    expect(serviceHealth({ ...record, failingSince: now - SERVICE_FAILING_AFTER_MS }, now).status).toBe('failing');
  });

  it('is ok after a success, and unknown before any answer', () => {
    expect(serviceHealth({ ...record, lastOkAt: now, failingSince: undefined }, now).status).toBe('ok');
    expect(serviceHealth({ lastAnswerAt: undefined, lastOkAt: undefined, lastErrorAt: undefined, lastError: undefined, failingSince: undefined }, now)).toEqual({ status: 'unknown' });
  });
});
