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
 *
 * These machines share their cores with their neighbours, and one phase can be twice as slow
 * as the same phase a minute later. So the three bots run side by side, and the phases take
 * turns in ROUNDS rounds (floor, defer-only, bot; steady, then burst); each figure is the
 * median of its rounds, so that a slow moment weighs on one round, not on one bot. Before a
 * phase, the bot's workers have sent every job of the previous one to the service, so a phase
 * never pays for another's work, and Postgres has checkpointed and finished any autovacuum
 * (without that, the floor's p99 once went from 30 to 340 ms while Postgres vacuumed the
 * bot's tables). CPU per command (the process's, and Postgres's, in ms) says
 * what a command costs, which the latencies alone hide once a machine is busy.
 *
 * Flags: `--commands N`, `--rate R`, `--rounds K`, `--warm-up N` (300), `--role all|gateway|split` (`gateway`: the
 * bot without its workers, jobs only queue; `split`: gateway and worker as two processes),
 * `--interactions gateway|http` (`http`: the emulator POSTs each interaction to the bot's
 * `/interactions`, signed, and the response is the first answer; the floors stay on the gateway).
 * Another workload than 500 at 250/s in one process writes `ack-<commands>-at-<rate>[-<role>].json`
 * (`npm run bench -- ack --commands 250 --rate 25`: a busy server's pace rather than a flood).
 */
import { spawn, type ChildProcess } from 'node:child_process';
import path from 'node:path';
import { parseArgs } from 'node:util';
import pg from 'pg';
import { startDiscordEmulator, type DiscordEmulator } from '@music-bot/discord-emulator';
import { BOT_TOKEN, populateGuilds, ROOT, waitFor, type Place } from '@music-bot/test-world';
import { atRate, cpuMs, cpuMsOfCommand, printTable, ratio, round, settlePostgres, startBenchWorld, summarize, writeResult, type Summary } from './support.js';

const { values: flags } = parseArgs({
  options: {
    commands: { type: 'string', default: '500' },
    rate: { type: 'string', default: '250' },
    rounds: { type: 'string', default: '3' },
    role: { type: 'string', default: 'all' },
    interactions: { type: 'string', default: 'gateway' },
    'warm-up': { type: 'string', default: '300' },
  },
  strict: false,
});
const COMMANDS = Number(flags.commands);
const RATE = Number(flags.rate);
const ROUNDS = Math.max(1, Number(flags.rounds));
const ROLE = flags.role === 'gateway' || flags.role === 'split' ? flags.role : 'all';
/** `http`: the emulator POSTs each interaction to the bot's /interactions (INTERACTIONS=http), and the answer is the response. */
const INTERACTIONS = flags.interactions === 'http' ? 'http' : 'gateway';
const GUILDS = 5;
const MEMBERS_PER_GUILD = 10;
/**
 * Commands each contender answers before anything is measured, at WARM_UP_RATE: enough for V8
 * to have compiled the bot's path (30 were not: its first second at 250/s then answered in up
 * to 760 ms, the floor's far smaller path in 75). The bot is measured as a server that has been
 * up a while; a cold start is what the accept benchmark measures.
 */
const WARM_UP = Number(flags['warm-up']);
const WARM_UP_RATE = 100;
const PHASES = ['steady', 'burst'] as const;
type Phase = (typeof PHASES)[number];

interface Contender {
  readonly name: 'floor' | 'deferOnly' | 'bot';
  readonly emulator: DiscordEmulator;
  readonly places: Place[];
  readonly pids: () => number[];
  /** Resolves once the contender has no work left from earlier commands. */
  readonly idle: () => Promise<void>;
  readonly stop: () => Promise<void>;
}

interface PhaseRun {
  readonly summary: Summary;
  /** CPU per command, in ms: the contender's processes, and Postgres (the server and every backend). */
  readonly cpuPerCommand: { readonly process: number; readonly postgres: number };
}


/** Runs `count` commands at `perSecond` and returns the dispatch-to-first-callback times, in ms. */
async function measure(contender: Contender, count: number, perSecond: number, tag: string): Promise<number[]> {
  const timings = await atRate(count, perSecond, async (i) => {
    const place = contender.places[i % contender.places.length]!;
    const started = performance.now();
    const handle = contender.emulator.runCommand({ ...place, name: 'song', options: { prompt: `${tag} ${i}` } });
    await handle.waitForResponse(30_000);
    return performance.now() - started;
  });
  const all = await Promise.all(timings);
  // BENCH_DUMP=<file> appends each phase's timings in dispatch order (where in a phase its slow answers fall).
  if (process.env.BENCH_DUMP) (await import('node:fs')).appendFileSync(process.env.BENCH_DUMP, `${tag} ${all.map((t) => Math.round(t)).join(',')}\n`);
  return all;
}

async function cpuOf(pids: number[]): Promise<number> {
  let total = 0;
  for (const pid of pids) total += await cpuMs(pid);
  return total;
}

async function runPhase(contender: Contender, phase: Phase, tag: string): Promise<PhaseRun> {
  await contender.idle();
  await settlePostgres(world.db);
  const [processBefore, postgresBefore] = await Promise.all([cpuOf(contender.pids()), cpuMsOfCommand('postgres')]);
  const timings = await measure(contender, COMMANDS, phase === 'steady' ? RATE : Number.POSITIVE_INFINITY, tag);
  // The work a command causes after its answer (the bot's follow-up, its workers) counts too.
  await contender.idle();
  const [processAfter, postgresAfter] = await Promise.all([cpuOf(contender.pids()), cpuMsOfCommand('postgres')]);
  return {
    summary: summarize(timings),
    cpuPerCommand: { process: round((processAfter - processBefore) / COMMANDS), postgres: round((postgresAfter - postgresBefore) / COMMANDS) },
  };
}

function spawnFloor(mode: 'decide' | 'defer', env: NodeJS.ProcessEnv, emulator: DiscordEmulator): ChildProcess {
  return spawn(process.execPath, ['--import', 'tsx', path.join(ROOT, 'test/bench/floor-bot.ts'), mode], {
    cwd: ROOT,
    env: { ...env, DISCORD_API_URL: emulator.apiUrl, FLOOR_GUILDS: String(GUILDS) },
    stdio: ['ignore', 'ignore', 'inherit'],
  });
}

async function stopChild(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  child.kill('SIGTERM');
  await new Promise((resolve) => child.once('exit', resolve));
}

const median = (values: number[]): number => round([...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!);

const world = await startBenchWorld();
const contenders: Contender[] = [];
try {
  const floorDb = new pg.Pool({ connectionString: world.postgresUrl, max: 2 });
  await floorDb.query('create table bench_floor (id int primary key, n int not null)');
  await floorDb.query(`insert into bench_floor select g, 1000000000 from generate_series(0, ${GUILDS - 1}) g`);
  await floorDb.end();

  for (const [name, mode] of [['floor', 'decide'], ['deferOnly', 'defer']] as const) {
    const emulator = await startDiscordEmulator({ botToken: BOT_TOKEN, validateRequests: false });
    const places = populateGuilds(emulator, GUILDS, MEMBERS_PER_GUILD);
    const child = spawnFloor(mode, world.env(), emulator);
    await emulator.waitForBotReady(30_000);
    contenders.push({
      name,
      emulator,
      places,
      pids: () => [child.pid!],
      idle: async () => {},
      stop: async () => {
        await stopChild(child);
        await emulator.close();
      },
    });
  }

  const places = populateGuilds(world.emulator, GUILDS, MEMBERS_PER_GUILD);
  await world.deployCommands();
  const botEnv = {
    STARTING_CREDITS: '1000000000',
    UPSTREAM_MAX_IN_FLIGHT: '100000',
    // Tasks run for an hour and are found by webhook: no poll weighs on the measurement.
    EXPECTED_SECONDS: 'song=3600',
  };
  if (INTERACTIONS === 'http') Object.assign(botEnv, { INTERACTIONS: 'http', DISCORD_PUBLIC_KEY: world.emulator.publicKey });
  const botRoles = ROLE === 'split' ? (['gateway', 'worker'] as const) : ([ROLE] as const);
  // Over HTTP the process that takes the interactions is the http role: `gateway` and `split` run it beside their gateway part.
  const bots = botRoles.map((role) => world.bot({ env: { ...botEnv, ROLE: INTERACTIONS === 'http' && role === 'gateway' ? 'http' : role } }).spawn());
  if (INTERACTIONS === 'http') {
    const endpoint = `${world.httpUrl}/interactions`;
    await waitFor('the bot to take interactions by HTTP', () => world.emulator.setInteractionsEndpoint(endpoint).then(() => true, () => false), { timeoutMs: 60_000, everyMs: 250 });
  } else {
    await world.emulator.waitForBotReady(60_000);
  }
  let sent = 0;
  contenders.push({
    name: 'bot',
    emulator: world.emulator,
    places,
    pids: () => bots.map((bot) => bot.pid!),
    // Every command answered so far has reached the service (not with the gateway alone, whose jobs only queue).
    idle: async () => {
      if (ROLE !== 'gateway') await waitFor('the bot to submit every job', () => world.sim.listTasks().length >= sent, { timeoutMs: 120_000, everyMs: 50 });
    },
    stop: async () => {},
  });
  const bot = contenders.at(-1)!;
  const countSent = (contender: Contender, n: number) => {
    if (contender === bot) sent += n;
  };

  for (const contender of contenders) {
    await measure(contender, WARM_UP, WARM_UP_RATE, `${contender.name}-warm`);
    countSent(contender, WARM_UP);
  }
  const runs = new Map<string, PhaseRun[]>();
  for (let r = 0; r < ROUNDS; r += 1) {
    for (const phase of PHASES) {
      for (const contender of contenders) {
        const run = await runPhase(contender, phase, `${contender.name}-${phase}-${r}`);
        countSent(contender, COMMANDS);
        const key = `${contender.name}/${phase}`;
        runs.set(key, [...(runs.get(key) ?? []), run]);
      }
    }
  }

  const figures = (name: Contender['name'], phase: Phase) => {
    const all = runs.get(`${name}/${phase}`)!;
    return {
      p50: median(all.map((run) => run.summary.p50)),
      p99: median(all.map((run) => run.summary.p99)),
      max: median(all.map((run) => run.summary.max)),
      cpuMsPerCommand: median(all.map((run) => run.cpuPerCommand.process)),
      postgresCpuMsPerCommand: median(all.map((run) => run.cpuPerCommand.postgres)),
      rounds: all.map((run) => ({ ...run.summary, cpuPerCommand: run.cpuPerCommand })),
    };
  };
  const results = Object.fromEntries(
    (['bot', 'floor', 'deferOnly'] as const).map((name) => [name, Object.fromEntries(PHASES.map((phase) => [phase, figures(name, phase)]))]),
  ) as Record<Contender['name'], Record<Phase, ReturnType<typeof figures>>>;

  const rows = PHASES.map((phase) => {
    const [b, f, d] = [results.bot[phase], results.floor[phase], results.deferOnly[phase]];
    return {
      load: phase === 'steady' ? `${COMMANDS} at ${RATE}/s` : `${COMMANDS} at once`,
      'bot p50 ms': b.p50,
      'bot p99 ms': b.p99,
      'floor p50 ms': f.p50,
      'floor p99 ms': f.p99,
      'p99 / floor': ratio(b.p99, f.p99),
      'defer-only p99 ms': d.p99,
      'p99 / defer-only': ratio(b.p99, d.p99),
      'bot cpu ms/cmd': b.cpuMsPerCommand,
      'floor cpu ms/cmd': f.cpuMsPerCommand,
      'pg cpu ms/cmd bot | floor': `${b.postgresCpuMsPerCommand} | ${f.postgresCpuMsPerCommand}`,
      'target ≤ 2×': ratio(b.p99, f.p99) <= 2 ? 'met' : 'missed',
    };
  });
  printTable(`first answer: dispatch to the first callback (median of ${ROUNDS} rounds)`, rows);
  // Another workload than the issue's goes to a file of its own (e.g. `ack-250-at-25.json`), beside ack.json.
  const resultName =
    COMMANDS === 500 && RATE === 250 && ROLE === 'all' && INTERACTIONS === 'gateway'
      ? 'ack'
      : `ack-${COMMANDS}-at-${RATE}${ROLE === 'all' ? '' : `-${ROLE}`}${INTERACTIONS === 'http' ? '-http' : ''}`;
  await writeResult(resultName, {
    workload: { role: ROLE, interactions: INTERACTIONS, commands: COMMANDS, rate: RATE, rounds: ROUNDS, guilds: GUILDS, members: GUILDS * MEMBERS_PER_GUILD, warmUp: WARM_UP, warmUpRate: WARM_UP_RATE, command: '/song' },
    target: 'first-answer p99 ≤ 2× the floor at both rates',
    floor: 'bare discord.js client: one guarded UPDATE … RETURNING, then reply',
    results,
    ratios: Object.fromEntries(
      PHASES.map((phase) => [
        phase,
        {
          p99ToFloor: ratio(results.bot[phase].p99, results.floor[phase].p99),
          p99ToDeferOnly: ratio(results.bot[phase].p99, results.deferOnly[phase].p99),
          p50ToFloor: ratio(results.bot[phase].p50, results.floor[phase].p50),
          cpuToFloor: ratio(results.bot[phase].cpuMsPerCommand, results.floor[phase].cpuMsPerCommand),
        },
      ]),
    ),
    met: rows.every((row) => row['target ≤ 2×'] === 'met'),
    seconds: round(performance.now() / 1000, 1),
  });
} finally {
  for (const contender of contenders) await contender.stop().catch(() => {});
  await world.close();
}
