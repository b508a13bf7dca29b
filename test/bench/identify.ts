/**
 * `npm run bench -- identify [--rounds 3]`: how long a cold deployment's shards take from the
 * first IDENTIFY to the last shard ready, for 12 and 24 shards at `max_concurrency` 1 and 16.
 *
 * Each round starts two gateway processes (`npm start`, ROLE=gateway, each half of the shards,
 * SHARD_IDS) at the same moment against the emulator, which recommends the shard count, states
 * the `max_concurrency` and refuses an IDENTIFY within 5 s of another in its bucket, as Discord
 * does. The processes share the identify queue in Redis (src/discord/identify-throttler.ts).
 * Measured from the bot's own log lines: from the first process's `gateway connecting` (its
 * first shard asks for its turn to identify) to the last `shard ready` of either, and from spawn
 * to the last shard ready (start-up included). The floor is Discord's pacing alone:
 * `(ceil(shards / max_concurrency) − 1) × 5 s`, every IDENTIFY at the first moment allowed and
 * READY at once. Targets: no IDENTIFY refused, and the median within the floor plus 10 s (the
 * queue's 250 ms margin per window, polling, each shard's own READY and guilds).
 */
import { parseArgs } from 'node:util';
import type { BotProcess, LogLine } from '@music-bot/test-world';
import { populateGuilds, sleep, waitFor } from '@music-bot/test-world';
import { medianOf, printTable, round, startBenchWorld, target, writeResult, type Target } from './support.js';

const { values: flags } = parseArgs({ options: { rounds: { type: 'string', default: '3' } }, strict: false });
const ROUNDS = Math.max(1, Number(flags.rounds));
const WINDOW_S = 5;
const CASES = [
  { shards: 12, maxConcurrency: 1 },
  { shards: 12, maxConcurrency: 16 },
  { shards: 24, maxConcurrency: 1 },
  { shards: 24, maxConcurrency: 16 },
] as const;
/** Above the floor the median may take at most this (see the header). */
const ALLOWANCE_S = 10;

const floorSeconds = (shards: number, maxConcurrency: number) => (Math.ceil(shards / maxConcurrency) - 1) * WINDOW_S;
const timeOf = (line: LogLine) => Number(line['time']);

interface Round {
  readonly identifyToReadyS: number;
  readonly spawnToReadyS: number;
  readonly identifies: number;
  readonly identifiesRefused: number;
}

const rows: Array<Record<string, string | number>> = [];
const results: Array<Record<string, unknown>> = [];
const targets: Target[] = [];

for (const { shards, maxConcurrency } of CASES) {
  const world = await startBenchWorld({ emulator: { shards: { recommended: shards, maxConcurrency } } });
  try {
    // A few guilds on every shard, so that each READY is followed by guilds to wait for.
    populateGuilds(world.emulator, shards * 4, 1, 'Identify');
    await world.deployCommands();
    const rounds: Round[] = [];
    for (let r = 0; r < ROUNDS; r += 1) {
      const before = { ...world.emulator.gatewayStats };
      const halves = [Array.from({ length: shards / 2 }, (_, i) => i), Array.from({ length: shards / 2 }, (_, i) => i + shards / 2)];
      const bots: BotProcess[] = halves.map((ids, i) =>
        world.bot({
          name: `gateway ${i}`,
          output: 'keep',
          env: { ROLE: 'gateway', SHARD_COUNT: String(shards), SHARD_IDS: `${ids[0]}-${ids.at(-1)}`, LOG_LEVEL: 'info' },
        }),
      );
      const spawnedAt = Date.now();
      for (const bot of bots) bot.spawn();
      const lines = () => bots.flatMap((bot) => bot.logLines());
      const readyLines = () => lines().filter((line) => line['msg'] === 'shard ready');
      await waitFor(`${shards} shards ready`, () => (new Set(readyLines().map((line) => line['shardId'])).size >= shards ? true : undefined), {
        timeoutMs: (floorSeconds(shards, maxConcurrency) + 120) * 1000,
        everyMs: 200,
      });
      const connecting = Math.min(...lines().filter((line) => line['msg'] === 'gateway connecting').map(timeOf));
      const lastReady = Math.max(...readyLines().map(timeOf));
      const stats = world.emulator.gatewayStats;
      rounds.push({
        identifyToReadyS: round((lastReady - connecting) / 1000),
        spawnToReadyS: round((lastReady - spawnedAt) / 1000),
        identifies: stats.identifies - before.identifies,
        identifiesRefused: stats.identifiesRefused - before.identifiesRefused,
      });
      console.log(`${shards} shards, max_concurrency ${maxConcurrency}, round ${r + 1}: ${JSON.stringify(rounds.at(-1))}`);
      await Promise.all(bots.map((bot) => bot.stop()));
      // The next round starts with every bucket's window over, as a cold deployment would.
      await sleep((WINDOW_S + 1) * 1000);
    }
    const floor = floorSeconds(shards, maxConcurrency);
    const times = rounds.map((one) => one.identifyToReadyS);
    const median = medianOf(times);
    const worst = Math.max(...times);
    const refused = rounds.reduce((total, one) => total + one.identifiesRefused, 0);
    const name = `${shards} shards, max_concurrency ${maxConcurrency}`;
    rows.push({
      case: name,
      'identify→ready median s': median,
      'worst s': worst,
      'floor s': floor,
      'spawn→ready median s': medianOf(rounds.map((one) => one.spawnToReadyS)),
      identifies: rounds.map((one) => one.identifies).join('/'),
      refused,
    });
    results.push({ shards, maxConcurrency, floorSeconds: floor, identifyToReady: { median, worst, rounds: times }, spawnToReady: { median: medianOf(rounds.map((one) => one.spawnToReadyS)) }, identifiesRefused: refused, rounds });
    targets.push(target(`${name}: identify to ready, median`, median, `≤ floor ${floor} s + ${ALLOWANCE_S} s`, median <= floor + ALLOWANCE_S));
    targets.push(target(`${name}: identifies refused`, refused, '0', refused === 0));
  } finally {
    await world.close();
  }
}

printTable(`identify to ready, two gateway processes, median and worst of ${ROUNDS} rounds`, rows);
await writeResult(
  'identify',
  {
    workload: { processes: 2, rounds: ROUNDS, windowSeconds: WINDOW_S, guildsPerShard: 4 },
    target: `median ≤ Discord's pacing + ${ALLOWANCE_S} s, no identify refused`,
    cases: results,
  },
  targets,
);
