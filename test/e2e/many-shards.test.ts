/**
 * Many shards, two gateway processes: Discord (the emulator) recommends twelve shards at
 * max_concurrency 1 and refuses an IDENTIFY within a window of another (3 s here, Discord's 5 s,
 * GATEWAY_IDENTIFY_WINDOW_MS). Two `npm start` with ROLE=gateway, SHARD_IDS 0-5 and 6-11, start
 * at the same moment: they share one identify queue, stay up while it takes more than the 30 s a
 * start-up once had, say "not yet" on /readyz meanwhile, and then answer
 * a command on every shard once. One is killed: the http process names its shards as missing,
 * three of the gateways' heartbeats after their last (one every 2 s here, GATEWAY_HEARTBEAT_MS).
 */
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import type { BotProcess } from '@music-bot/test-world';
import { findFreePort } from '../../src/embedded/free-port.js';
import { found } from '../support/found.js';
import { parseSamples } from '../support/metrics.js';
import { registerCommands } from '../support/register-commands.js';
import { startStack, type Stack } from '../support/stack.js';

const SHARDS = 12;
/** The identify window, the emulator's and the bot's: twelve shards take eleven of them, over 30 s. */
const WINDOW_MS = 3_000;
const HALVES = [
  [0, 1, 2, 3, 4, 5],
  [6, 7, 8, 9, 10, 11],
] as const;

let stack: Stack;
let http: BotProcess;
const gateways: Array<{ process: BotProcess; opsUrl: string }> = [];
/** One guild per shard: `places[s]` is on shard s. */
const places: Array<{ guildId: string; channelId: string; userId: string }> = [];

interface Readyz {
  status: string;
  gateway?: { ready: boolean; starting?: number[] };
}

async function readyz(opsUrl: string): Promise<{ code: number; body: Readyz }> {
  const response = await fetch(`${opsUrl}/readyz`);
  return { code: response.status, body: (await response.json()) as Readyz };
}

beforeAll(async () => {
  stack = await startStack({ startingCredits: 50, emulator: { shards: { recommended: SHARDS, maxConcurrency: 1, identifyWindowMs: WINDOW_MS } } });
  await registerCommands(stack.env);
  // (id >> 22) % 12 is the shard: twelve consecutive timestamps, starting at a multiple of twelve.
  const base = ((BigInt(Date.now()) - 1_420_070_400_000n - 120_000n) / 12n) * 12n;
  for (let shard = 0; shard < SHARDS; shard += 1) {
    const guild = stack.emulator.createGuild({ id: String((base + BigInt(shard)) << 22n), name: `Shard ${shard}` });
    const channel = stack.emulator.createChannel(guild.id, { name: 'songs' });
    const member = stack.emulator.addMember(guild.id, { username: `member-${shard}` });
    places.push({ guildId: guild.id, channelId: channel.id, userId: member.id });
  }
  // The deployment's health and gauges are the http role's.
  http = stack.world.bot({ name: 'http', env: { ...stack.env, ROLE: 'http' } });
  await http.start();
}, 120_000);

afterAll(async () => stack?.close(), 60_000);

// The processes' warnings and errors, out of sight otherwise, when a test fails.
afterEach(({ task }) => {
  if (task.result?.state !== 'fail') return;
  for (const process of [http, ...gateways.map((gateway) => gateway.process)]) {
    const lines = (process?.output() ?? '').split('\n').filter((line) => /"level":(40|50|60)/.test(line) || /^\w*Error/.test(line));
    console.log(`${process?.name} warnings and errors:\n${lines.slice(-30).join('\n')}\nits last lines:\n${(process?.output() ?? '').split('\n').slice(-8).join('\n')}`);
  }
});

describe('twelve shards in two gateway processes at max_concurrency 1', () => {
  it('start at the same moment, stay up while they identify in turn, and answer every shard once', async () => {
    for (const [i, ids] of HALVES.entries()) {
      const port = await findFreePort();
      const env = {
        ...stack.env,
        ROLE: 'gateway',
        SHARD_COUNT: String(SHARDS),
        SHARD_IDS: `${ids[0]}-${ids.at(-1)}`,
        METRICS_PORT: String(port),
        LOG_LEVEL: 'debug',
        GATEWAY_HEARTBEAT_MS: '2000',
        GATEWAY_IDENTIFY_WINDOW_MS: String(WINDOW_MS),
      };
      gateways.push({ process: stack.world.bot({ name: `gateway ${i}`, env }), opsUrl: `http://127.0.0.1:${port}` });
    }
    const started = performance.now();
    // The same moment: neither waits for the other.
    for (const gateway of gateways) gateway.process.spawn();

    // Up while its shards wait their turn: alive, and not ready yet, naming the shards still starting.
    const notYet = await vi.waitFor(async () => {
      const answer = await readyz(gateways[1]!.opsUrl).catch(() => undefined);
      return found(answer?.body.status === 'not_yet' ? answer : undefined, 'a "not yet" from the second gateway');
    }, 60_000);
    expect(notYet.code).toBe(503);
    expect(notYet.body.gateway?.starting?.length).toBeGreaterThan(0);
    expect(notYet.body.gateway?.starting?.every((id) => (HALVES[1] as readonly number[]).includes(id))).toBe(true);

    // Twelve identifies a window apart: over 30 s; both ready well within two minutes.
    for (const gateway of gateways) {
      await vi.waitFor(async () => found((await readyz(gateway.opsUrl)).code === 200 ? true : undefined, `${gateway.process.name} ready`), { timeout: 120_000, interval: 1_000 });
    }
    const elapsedMs = performance.now() - started;
    expect(gateways.map((gateway) => gateway.process.running)).toEqual([true, true]);
    expect(stack.emulator.gatewayStats).toMatchObject({ identifies: SHARDS, identifiesRefused: 0 });
    // Not faster than the identify limit lets twelve shards in: eleven windows.
    expect(elapsedMs).toBeGreaterThan(11 * WINDOW_MS);

    // Each process handles a first command before the twelve: a just-started process loads and
    // warms what every command uses over its first ones, which this test does not measure.
    for (const [i, gateway] of gateways.entries()) {
      const warmUp = stack.emulator.runCommand({ ...places[HALVES[i]![0]]!, name: 'help' });
      await vi.waitFor(() => expect(gateway.process.output()).toContain(warmUp.id), { timeout: 30_000, interval: 50 });
    }
    const handles = places.map((place) => stack.emulator.runCommand({ ...place, name: 'credits' }));
    const answers = await Promise.all(
      handles.map((handle, shard) =>
        handle.waitForResponse(30_000).catch((error: unknown) => {
          const holder = gateways[shard < 6 ? 0 : 1]!.process;
          console.log(`shard ${shard}'s interaction ${handle.id} unanswered; its process's lines about it:\n${holder.output().split('\n').filter((line) => line.includes(handle.id)).join('\n')}`);
          throw error;
        }),
      ),
    );
    expect(answers.every((answer) => typeof answer.type === 'number')).toBe(true);
    const callbacks = stack.emulator.requests.filter((request) => /^\/interactions\/\d+\/[^/]+\/callback$/.test(request.path));
    for (const [shard, handle] of handles.entries()) {
      expect(callbacks.filter((request) => request.path.startsWith(`/interactions/${handle.id}/`))).toHaveLength(1);
      // Handled by the process that holds the shard, and its log line names the process's shards.
      const holder = gateways[shard < 6 ? 0 : 1]!.process;
      const line = await vi.waitFor(() => found(holder.logLines().find((entry) => entry['interactionId'] === handle.id), `shard ${shard}'s command in its process's log`), 10_000);
      expect(line['shards']).toEqual([...HALVES[shard < 6 ? 0 : 1]]);
      expect(gateways[shard < 6 ? 1 : 0]!.process.output()).not.toContain(handle.id);
    }
  }, 180_000);

  it("names a killed process's shards as missing on the http process's /healthz and /metrics within a minute", async () => {
    const missingNow = async () => {
      const health = (await (await fetch(`${stack.world.httpUrl}/healthz`)).json()) as { gateway: { missingShards: number[]; shardCount: number } };
      const samples = parseSamples(await (await fetch(`${stack.world.httpUrl}/metrics`)).text());
      return { missingShards: health.gateway.missingShards, shardCount: health.gateway.shardCount, gauge: samples.get('musicbot_gateway_shards_missing') };
    };
    // Every shard held first: the signal that the record is read at all.
    expect(await missingNow()).toEqual({ missingShards: [], shardCount: SHARDS, gauge: 0 });

    await gateways[1]!.process.kill();
    const seen = await vi.waitFor(async () => {
      const now = await missingNow();
      return found(now.missingShards.length > 0 && now.gauge === 6 ? now : undefined, 'the killed shards missing');
    }, { timeout: 60_000, interval: 1_000 });
    expect(seen).toEqual({ missingShards: [...HALVES[1]], shardCount: SHARDS, gauge: 6 });
    expect(gateways[0]!.process.running).toBe(true);
  }, 90_000);
});
