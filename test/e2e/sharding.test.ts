/**
 * Gateway sharding: two gateway processes (`npm start` with ROLE=gateway), one shard
 * each of two, against the emulator, which sends each guild to shard `(guild_id >> 22) % 2`.
 * Twenty guilds spread across them: every guild's commands are answered, exactly once, by the
 * process that runs the guild's shard.
 */
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import type { BotProcess } from '@music-bot/test-world';
import { registerCommands } from '../support/register-commands.js';
import { startStack, type Stack } from '../support/stack.js';

const GUILDS = 20;

let stack: Stack;
const gateways: BotProcess[] = [];

beforeAll(async () => {
  // Discord recommends two shards, and lets both identify at once (max_concurrency 2).
  stack = await startStack({ startingCredits: 50, emulator: { shards: { recommended: 2, maxConcurrency: 2 } } });
  await registerCommands(stack.env);
  for (const shardId of [0, 1]) {
    gateways.push(stack.world.bot({ name: `gateway ${shardId}`, env: { ...stack.env, ROLE: 'gateway', SHARD_COUNT: '2', SHARD_IDS: String(shardId), LOG_LEVEL: 'debug' } }));
  }
  await Promise.all(gateways.map((gateway) => gateway.start()));
  // Each process handles a first command before the burst: a process's first commands load
  // and warm what every command uses, which this test of shard routing does not measure.
  const even = ((BigInt(Date.now()) - 1_420_070_400_000n - 120_000n) / 2n) * 2n;
  for (const shard of [0n, 1n]) {
    // (id >> 22) % 2 is the shard.
    const guild = stack.emulator.createGuild({ id: String((even + shard) << 22n), name: `Warm-up ${shard}` });
    const channel = stack.emulator.createChannel(guild.id, { name: 'songs' });
    const member = stack.emulator.addMember(guild.id, { username: `warm-up-${shard}` });
    const handle = stack.emulator.runCommand({ guildId: guild.id, channelId: channel.id, userId: member.id, name: 'help' });
    await vi.waitFor(() => expect(gateways[Number(shard)]!.output()).toContain(handle.id), { timeout: 30_000, interval: 50 });
  }
}, 120_000);

afterAll(async () => stack?.close(), 60_000);

describe('two gateway processes, one shard each', () => {
  it("answer every guild's commands exactly once, each on its own shard", async () => {
    // Guilds made a millisecond apart: (id >> 22) is the time, so they alternate between the shards.
    const places: Array<{ guildId: string; channelId: string; userId: string }> = [];
    const since = BigInt(Date.now()) - 1_420_070_400_000n - 60_000n;
    for (let i = 0; i < GUILDS; i += 1) {
      const id = String((since + BigInt(i)) << 22n);
      const guild = stack.emulator.createGuild({ id, name: `Sharded ${i}` });
      const channel = stack.emulator.createChannel(guild.id, { name: 'songs' });
      const member = stack.emulator.addMember(guild.id, { username: `member-${i}` });
      places.push({ guildId: guild.id, channelId: channel.id, userId: member.id });
    }
    const shardOf = (guildId: string) => Number((BigInt(guildId) >> 22n) % 2n);
    expect(places.filter((place) => shardOf(place.guildId) === 0)).toHaveLength(GUILDS / 2);

    const handles = places.map((place) => stack.emulator.runCommand({ ...place, name: 'credits' }));
    const answers = await Promise.all(handles.map((handle) => handle.waitForResponse(30_000)));
    expect(answers.every((answer) => typeof answer.type === 'number')).toBe(true);
    // A later command on each shard, answered and logged by its process: each process has read every interaction before it.
    const later = [0, 1].map((shard) => stack.emulator.runCommand({ ...places.find((place) => shardOf(place.guildId) === shard)!, name: 'credits' }));
    await Promise.all(later.map((handle) => handle.waitForResponse(30_000)));
    for (const [shard, handle] of later.entries()) await vi.waitFor(() => expect(gateways[shard]!.output()).toContain(handle.id), { timeout: 10_000 });

    // One answer each: one callback sent per interaction, from either process.
    const callbacks = stack.emulator.requests.filter((request) => /^\/interactions\/\d+\/[^/]+\/callback$/.test(request.path));
    for (const handle of handles) {
      expect(callbacks.filter((request) => request.path.startsWith(`/interactions/${handle.id}/`))).toHaveLength(1);
    }
    // And each by the process of the guild's shard: the one that logs it as handled.
    for (const [i, handle] of handles.entries()) {
      const shard = shardOf(places[i]!.guildId);
      await vi.waitFor(() => expect(gateways[shard]!.output()).toContain(handle.id), { timeout: 10_000 });
      expect(gateways[1 - shard]!.output()).not.toContain(handle.id);
    }
  }, 90_000);
});
