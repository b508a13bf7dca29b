import { describe, expect, it } from 'vitest';
import { ShardWatch, type ShardState } from '../../../src/discord/shard-watch.js';
import { createMetrics } from '../../../src/metrics.js';
import { parseSamples } from '../../support/metrics.js';

describe('ShardWatch', () => {
  it('is ready until a shard has been other than ready for longer than the grace period', () => {
    const shards: ShardState[] = [
      { id: 0, status: 'ready', pingMs: 40 },
      { id: 1, status: 'ready', pingMs: 50 },
    ];
    const watch = new ShardWatch({ graceMs: 60_000 });
    watch.watch(() => shards);
    expect(watch.readiness(0)).toEqual({ ready: true, shardsDown: [] });

    shards[1] = { id: 1, status: 'resuming', pingMs: 50 };
    expect(watch.readiness(1_000)).toEqual({ ready: true, shardsDown: [{ id: 1, status: 'resuming', downForSeconds: 0, overGrace: false }] });
    // Still down, in another status: down since the first time it was seen down.
    shards[1] = { id: 1, status: 'reconnecting', pingMs: 50 };
    expect(watch.readiness(61_000)).toEqual({ ready: true, shardsDown: [{ id: 1, status: 'reconnecting', downForSeconds: 60, overGrace: false }] });
    expect(watch.readiness(61_001)).toMatchObject({ ready: false, shardsDown: [{ id: 1, overGrace: true }] });

    // Back: the count starts again from the next drop.
    shards[1] = { id: 1, status: 'ready', pingMs: 45 };
    expect(watch.readiness(62_000)).toEqual({ ready: true, shardsDown: [] });
    shards[1] = { id: 1, status: 'connecting', pingMs: -1 };
    expect(watch.readiness(100_000)).toMatchObject({ ready: true, shardsDown: [{ id: 1, downForSeconds: 0 }] });
  });

  it('sets each shard up or down, and its ping once it has one', async () => {
    const metrics = createMetrics();
    const shards: ShardState[] = [
      { id: 0, status: 'ready', pingMs: 42 },
      { id: 3, status: 'connecting', pingMs: -1 },
    ];
    const watch = new ShardWatch({ graceMs: 1_000, metrics });
    watch.watch(() => shards);
    watch.sample();
    const samples = parseSamples(await metrics.registry.metrics());
    expect(samples.get('musicbot_gateway_shard_up{shard="0"}')).toBe(1);
    expect(samples.get('musicbot_gateway_shard_up{shard="3"}')).toBe(0);
    expect(samples.get('musicbot_gateway_ping_seconds{shard="0"}')).toBe(0.042);
    expect(samples.has('musicbot_gateway_ping_seconds{shard="3"}')).toBe(false);
  });

  it("sets each shard's guild count as the client reports it", async () => {
    const metrics = createMetrics();
    const shards: ShardState[] = [
      { id: 4, status: 'ready', pingMs: 42, guilds: 1_930 },
      { id: 5, status: 'waiting_for_guilds', pingMs: 40, guilds: 0 },
    ];
    const watch = new ShardWatch({ graceMs: 1_000, metrics });
    watch.watch(() => shards);
    watch.sample();
    shards[0] = { ...shards[0]!, guilds: 1_931 };
    watch.sample();
    const samples = parseSamples(await metrics.registry.metrics());
    expect(samples.get('musicbot_gateway_shard_guilds{shard="4"}')).toBe(1_931);
    expect(samples.get('musicbot_gateway_shard_guilds{shard="5"}')).toBe(0);
  });

  it('says "not yet", with no time limit, until every shard has been ready once; then the grace period applies', () => {
    const shards: ShardState[] = [
      { id: 6, status: 'waiting_for_guilds', pingMs: -1 },
      { id: 7, status: 'connecting', pingMs: -1 },
    ];
    const watch = new ShardWatch({ graceMs: 1_000 });
    watch.watch(() => shards);
    expect(watch.readiness(0)).toEqual({ ready: false, shardsDown: [], starting: [6, 7] });
    shards[0] = { id: 6, status: 'ready', pingMs: 30 };
    shards[1] = { id: 7, status: 'identifying', pingMs: -1 };
    // Far past the grace period: a shard waiting its turn to identify is not down.
    expect(watch.readiness(120_000)).toEqual({ ready: false, shardsDown: [], starting: [7] });
    shards[1] = { id: 7, status: 'ready', pingMs: 30 };
    expect(watch.readiness(121_000)).toEqual({ ready: true, shardsDown: [] });
    // Ready once: from now on a drop counts against the grace period.
    shards[0] = { id: 6, status: 'reconnecting', pingMs: 30 };
    expect(watch.readiness(122_000)).toEqual({ ready: true, shardsDown: [{ id: 6, status: 'reconnecting', downForSeconds: 0, overGrace: false }] });
    expect(watch.readiness(123_001)).toMatchObject({ ready: false, shardsDown: [{ id: 6, overGrace: true }] });
    expect(watch.readiness(123_001)).not.toHaveProperty('starting');
  });

  it('watches nothing, and is ready, before the gateway runs', () => {
    expect(new ShardWatch({ graceMs: 0 }).readiness()).toEqual({ ready: true, shardsDown: [] });
  });
});
