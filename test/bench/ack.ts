/**
 * `npm run bench -- ack`: how fast a member gets the first answer to a spending command.
 *
 * 500 `/song` commands from 50 members in 5 guilds, at 250/s and then as one burst, timed from
 * the emulator's dispatch to the bot's first callback. Three bots answer the same commands, on
 * the same Postgres server, each with its own Discord emulator:
 * - the floor: a bare discord.js client that runs one guarded balance decrement
 *   (`UPDATE … WHERE n >= cost RETURNING`) and then replies with a message;
 * - a bare discord.js client that only defers (for the ratio the issue asks as well);
 * - the bot, as `npm start` runs it, whose first answer carries the checks and the reservation.
 * Target: the bot's first-answer p99 at most 2× the floor's, at both rates.
 */
import { spawn } from 'node:child_process';
import path from 'node:path';
import { parseArgs } from 'node:util';
import pg from 'pg';
import { startDiscordEmulator, type DiscordEmulator } from '../../src/sandbox/discord-emulator/index.js';
import { atRate, BOT_TOKEN, ROOT, printTable, ratio, round, startBenchWorld, summarize, writeResult, type Summary } from './support.js';

const { values: flags } = parseArgs({ options: { commands: { type: 'string', default: '500' }, rate: { type: 'string', default: '250' } }, strict: false });
const COMMANDS = Number(flags.commands);
const RATE = Number(flags.rate);
const GUILDS = 5;
const MEMBERS_PER_GUILD = 10;
const WARM_UP = 30;

interface Place {
  guildId: string;
  channelId: string;
  userId: string;
}

function populate(emulator: DiscordEmulator): Place[] {
  const places: Place[] = [];
  for (let g = 0; g < GUILDS; g += 1) {
    const guild = emulator.createGuild({ name: `Bench ${g}` });
    const channel = emulator.createChannel(guild.id, { name: 'songs' });
    for (let m = 0; m < MEMBERS_PER_GUILD; m += 1) {
      const member = emulator.addMember(guild.id, { username: `member-${g}-${m}` });
      places.push({ guildId: guild.id, channelId: channel.id, userId: member.id });
    }
  }
  return places;
}

/** Runs `count` commands at `perSecond` and returns the dispatch-to-first-callback times, in ms. */
async function measure(emulator: DiscordEmulator, places: Place[], count: number, perSecond: number, tag: string): Promise<number[]> {
  const timings = await atRate(count, perSecond, async (i) => {
    const place = places[i % places.length]!;
    const started = performance.now();
    const handle = emulator.runCommand({ ...place, name: 'song', options: { prompt: `${tag} ${i}` } });
    await handle.waitForResponse(30_000);
    return performance.now() - started;
  });
  return Promise.all(timings);
}

async function runPhases(emulator: DiscordEmulator, places: Place[], tag: string): Promise<{ steady: Summary; burst: Summary }> {
  await measure(emulator, places, WARM_UP, 50, `${tag}-warm`);
  const steady = summarize(await measure(emulator, places, COMMANDS, RATE, `${tag}-steady`));
  const burst = summarize(await measure(emulator, places, COMMANDS, Number.POSITIVE_INFINITY, `${tag}-burst`));
  return { steady, burst };
}

/** The floor bot (floor-bot.ts) in its own process, on its own emulator, in `mode`. */
async function bareBot(mode: 'decide' | 'defer', env: NodeJS.ProcessEnv): Promise<{ steady: Summary; burst: Summary }> {
  const emulator = await startDiscordEmulator({ botToken: BOT_TOKEN, validateRequests: false });
  const places = populate(emulator);
  const child = spawn(process.execPath, ['--import', 'tsx', path.join(ROOT, 'test/bench/floor-bot.ts'), mode], {
    cwd: ROOT,
    env: { ...env, DISCORD_API_URL: emulator.apiUrl, FLOOR_GUILDS: String(GUILDS) },
    stdio: ['ignore', 'ignore', 'inherit'],
  });
  try {
    await emulator.waitForBotReady(30_000);
    return await runPhases(emulator, places, `bare-${mode}`);
  } finally {
    child.kill('SIGTERM');
    await new Promise((resolve) => child.once('exit', resolve));
    await emulator.close();
  }
}

const world = await startBenchWorld();
try {
  const floorDb = new pg.Pool({ connectionString: world.postgresUrl, max: 10 });
  await floorDb.query('create table bench_floor (id int primary key, n int not null)');
  await floorDb.query(`insert into bench_floor select g, 100000000 from generate_series(0, ${GUILDS - 1}) g`);
  const floor = await bareBot('decide', world.env());
  const deferOnly = await bareBot('defer', world.env());
  await floorDb.end();

  const places = populate(world.emulator);
  await world.deployCommands();
  world.spawnBot('all', {
    STARTING_CREDITS: '100000000',
    UPSTREAM_MAX_IN_FLIGHT: '100000',
    // Tasks run for an hour and are found by webhook: no poll weighs on the measurement.
    EXPECTED_SECONDS: 'song=3600',
  });
  await world.emulator.waitForBotReady(60_000);
  const bot = await runPhases(world.emulator, places, 'bot');

  const rows = (['steady', 'burst'] as const).map((phase) => ({
    load: phase === 'steady' ? `${COMMANDS} at ${RATE}/s` : `${COMMANDS} at once`,
    'bot p50 ms': bot[phase].p50,
    'bot p99 ms': bot[phase].p99,
    'bot max ms': bot[phase].max,
    'floor p50 ms': floor[phase].p50,
    'floor p99 ms': floor[phase].p99,
    'p99 / floor': ratio(bot[phase].p99, floor[phase].p99),
    'defer-only p99 ms': deferOnly[phase].p99,
    'p99 / defer-only': ratio(bot[phase].p99, deferOnly[phase].p99),
    'target ≤ 2×': ratio(bot[phase].p99, floor[phase].p99) <= 2 ? 'met' : 'missed',
  }));
  printTable('first answer: dispatch to the first callback', rows);
  await writeResult('ack', {
    workload: { commands: COMMANDS, rate: RATE, guilds: GUILDS, members: GUILDS * MEMBERS_PER_GUILD, warmUp: WARM_UP, command: '/song' },
    target: 'first-answer p99 ≤ 2× the floor at both rates',
    floor: 'bare discord.js client: one guarded UPDATE … RETURNING, then reply',
    results: { bot, floor, deferOnly },
    ratios: Object.fromEntries(
      (['steady', 'burst'] as const).map((phase) => [
        phase,
        { p99ToFloor: ratio(bot[phase].p99, floor[phase].p99), p99ToDeferOnly: ratio(bot[phase].p99, deferOnly[phase].p99), p50ToFloor: ratio(bot[phase].p50, floor[phase].p50) },
      ]),
    ),
    met: rows.every((row) => row['target ≤ 2×'] === 'met'),
    seconds: round(performance.now() / 1000, 1),
  });
} finally {
  await world.close();
}
