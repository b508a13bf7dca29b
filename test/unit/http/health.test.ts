/** What `/healthz` makes of the records in Redis: the gateway's shards and the music service's answers. */
import { describe, expect, it } from 'vitest';
import { gatewayHealth, serviceHealth, SERVICE_FAILING_AFTER_MS } from '../../../src/http/health.js';
import { SHARD_STALE_MS } from '../../../src/queue/health.js';

const now = 1_700_000_000_000;
const shard = (id: number, status: string, ageMs: number) => ({ id, status, pingMs: 40, at: now - ageMs });

describe('gatewayHealth', () => {
  it('is ok when every shard is ready and heard from', () => {
    expect(gatewayHealth([shard(0, 'ready', 1_000), shard(1, 'ready', SHARD_STALE_MS)], true, now).status).toBe('ok');
  });

  it('is degraded when a shard is not ready or not heard from, down when none is heard from', () => {
    expect(gatewayHealth([shard(0, 'ready', 0), shard(1, 'reconnecting', 0)], false, now).status).toBe('degraded');
    expect(gatewayHealth([shard(0, 'ready', 0), shard(1, 'ready', SHARD_STALE_MS + 1)], false, now).status).toBe('degraded');
    expect(gatewayHealth([shard(0, 'ready', SHARD_STALE_MS + 1)], false, now).status).toBe('down');
  });

  it('tells no gateway apart from one expected here, and from a record it could not read', () => {
    expect(gatewayHealth([], false, now).status).toBe('absent');
    expect(gatewayHealth([], true, now).status).toBe('down');
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
