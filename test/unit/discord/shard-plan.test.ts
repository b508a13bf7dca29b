/**
 * SHARD_COUNT and SHARD_IDS as the gateway hands them to discord.js: `auto` when neither is
 * set; ids without a count take the count Discord recommends (GET /gateway/bot, here the
 * emulator's), and ids beyond it are refused before any shard connects.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { shardPlan } from '../../../src/discord/gateway.js';
import { startDiscordEmulator, type DiscordEmulator } from '@music-bot/discord-emulator';

let emulator: DiscordEmulator;
beforeAll(async () => {
  emulator = await startDiscordEmulator({ shards: { recommended: 4 } });
});
afterAll(async () => emulator?.close());

const settings = (shards: { shardCount?: number; shardIds?: readonly number[] }) => ({
  discordApiUrl: emulator.apiUrl,
  discordToken: emulator.botToken,
  shardCount: shards.shardCount,
  shardIds: shards.shardIds,
});

describe('the shard plan', () => {
  it('is auto when nothing is set: discord.js asks Discord', async () => {
    expect(await shardPlan(settings({}))).toEqual({ shards: 'auto' });
  });

  it('runs every shard of SHARD_COUNT, or the SHARD_IDS of it', async () => {
    expect(await shardPlan(settings({ shardCount: 3 }))).toEqual({ shards: [0, 1, 2], shardCount: 3 });
    expect(await shardPlan(settings({ shardCount: 3, shardIds: [2] }))).toEqual({ shards: [2], shardCount: 3 });
  });

  it("takes Discord's recommended count for SHARD_IDS alone, and refuses ids beyond it", async () => {
    expect(await shardPlan(settings({ shardIds: [1, 3] }))).toEqual({ shards: [1, 3], shardCount: 4 });
    await expect(shardPlan(settings({ shardIds: [3, 4, 5] }))).rejects.toThrow(/SHARD_IDS 4, 5 are not below the shard count, 4/);
  });
});
