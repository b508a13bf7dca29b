/**
 * `npm run bench -- ack`: how fast a member gets the first answer to a spending command.
 *
 * `/song` commands timed from the emulator's dispatch to the bot's first callback, in three
 * loads: 500 at 250/s, 250 at 25/s (a busy server's pace rather than a flood), and 500 at once;
 * and in three shapes: 50 members in 5 guilds, the same 50 members in one busy guild (every
 * reservation on one balance), and 50 members of another busy guild whose jobs the bot sends on
 * to the service while their answers are measured (500 at 250/s only: `sending`, each round's
 * count of jobs the service received by the last answer and the bot's share of a core during the
 * burst recorded beside it). Three bots answer the same commands, on the same Postgres server,
 * each with its own Discord emulator:
 * - the floor: a bare discord.js client that runs one guarded balance decrement on its guild's
 *   row (`UPDATE … WHERE n >= cost RETURNING`) and then replies with a message;
 * - a bare discord.js client that only defers;
 * - the bot, as `npm start` runs it, whose first answer carries the checks and the reservation.
 * Targets, in each shape and load: the bot's CPU per command ≤ 1.5× the floor's, its p50 ≤ 2×
 * and its median p99 ≤ 2× the floor's.
 *
 * These machines share their cores with their neighbours, and one phase can be twice as slow
 * as the same phase a minute later. So the three bots run side by side, and the phases take
 * turns in ROUNDS rounds (at least 5 by default; in each, every shape and load, floor,
 * defer-only and bot one after the other); each figure is the median of its rounds, with its
 * spread (lowest–highest), so that a slow moment weighs on one round, not on one bot. Before a
 * phase, the bot's workers have sent every job of the previous one to the service, so a phase
 * never pays for another's work, and Postgres has checkpointed and finished any autovacuum
 * (without that, the floor's p99 once went from 30 to 340 ms while Postgres vacuumed the
 * bot's tables). CPU per command (the process's, and Postgres's, in ms) says what a command
 * costs, which the latencies alone hide once a machine is busy.
 *
 * Flags: `--commands N` (500), `--rate R` (250), `--slow-commands N` (250), `--slow-rate R` (25),
 * `--rounds K` (5), `--shapes five,one,sending` (all three), `--warm-up N` (300), `--role all|gateway|split`
 * (`gateway`: the bot without its workers, jobs only queue; `split`: gateway and worker as two
 * processes), `--interactions gateway|http` (`http`: the emulator POSTs each interaction to the
 * bot's `/interactions`, signed, and the response is the first answer; the floors stay on the
 * gateway). Another workload than the defaults writes `ack-<commands>-at-<rate>[-<role>].json`.
 * `--workers-in-thread true`: the `all` role's workers on a thread of their own (written to
 * `ack…-workers-in-thread.json`). A quick check: `--commands 40 --rate 40 --slow-commands 10 --slow-rate 10 --rounds 2 --warm-up 20`.
 */
import { parseArgs } from 'node:util';
import { startDiscordEmulator, type DiscordEmulator } from '@music-bot/discord-emulator';
import { BOT_TOKEN, populateGuilds, waitFor, type Place } from '@music-bot/test-world';
import { atRate, cpuMsOfAll, medianOf, cpuMsOfCommand, printTable, ratio, round, settlePostgres, spawnFloorBot, startBenchWorld, stopChild, summarize, target, writeResult, type Summary } from './support.js';

const { values: flags } = parseArgs({
  options: {
    commands: { type: 'string', default: '500' },
    rate: { type: 'string', default: '250' },
    rounds: { type: 'string', default: '5' },
    'slow-commands': { type: 'string', default: '250' },
    'slow-rate': { type: 'string', default: '25' },
    shapes: { type: 'string', default: 'five,one,sending' },
    role: { type: 'string', default: 'all' },
    interactions: { type: 'string', default: 'gateway' },
    'warm-up': { type: 'string', default: '300' },
    'workers-in-thread': { type: 'string', default: 'false' },
  },
  strict: false,
});
const COMMANDS = Number(flags.commands);
const RATE = Number(flags.rate);
const ROUNDS = Math.max(1, Number(flags.rounds));
const ROLE = flags.role === 'gateway' || flags.role === 'split' ? flags.role : 'all';
/** `http`: the emulator POSTs each interaction to the bot's /interactions (INTERACTIONS=http), and the answer is the response. */
const INTERACTIONS = flags.interactions === 'http' ? 'http' : 'gateway';
/** `true`: the `all` role's workers on a thread of their own (WORKERS_IN_THREAD=true). */
const WORKERS_IN_THREAD = flags['workers-in-thread'] === 'true';
const SLOW_COMMANDS = Number(flags['slow-commands']);
const SLOW_RATE = Number(flags['slow-rate']);
const GUILDS = 5;
const MEMBERS_PER_GUILD = 10;
/** Where the members are: 5 guilds of 10, one busy guild of 50, or another whose jobs are sent on during the burst. */
const SHAPES = (['five', 'one', 'sending'] as const).filter((shape) => String(flags.shapes).split(',').includes(shape));
type Shape = (typeof SHAPES)[number];
const SHAPE_NAMES: Record<Shape, string> = {
  five: `${GUILDS * MEMBERS_PER_GUILD} members in ${GUILDS} guilds`,
  one: `${GUILDS * MEMBERS_PER_GUILD} members in one guild`,
  sending: `${GUILDS * MEMBERS_PER_GUILD} members in one guild, the jobs sent on during the burst`,
};
/** Rows of the floor's table: one per guild of any shape. */
const FLOOR_ROWS = GUILDS + 2;
/**
 * Commands each contender answers before anything is measured, at WARM_UP_RATE: enough for V8
 * to have compiled the bot's path (30 were not: its first second at 250/s then answered in up
 * to 760 ms, the floor's far smaller path in 75). The bot is measured as a server that has been
 * up a while; a cold start is what the accept benchmark measures.
 */
const WARM_UP = Number(flags['warm-up']);
const WARM_UP_RATE = 100;
const PHASES = ['steady', 'slow', 'burst'] as const;
type Phase = (typeof PHASES)[number];
/** The loads of a shape: `sending` is the steady one alone. */
const phasesOf = (shape: Shape): readonly Phase[] => (shape === 'sending' ? ['steady'] : PHASES);
const countOf = (phase: Phase) => (phase === 'slow' ? SLOW_COMMANDS : COMMANDS);
const rateOf = (phase: Phase) => (phase === 'steady' ? RATE : phase === 'slow' ? SLOW_RATE : Number.POSITIVE_INFINITY);
const loadName = (phase: Phase) => (phase === 'burst' ? `${COMMANDS} at once` : `${countOf(phase)} at ${rateOf(phase)}/s`);

interface Contender {
  readonly name: 'floor' | 'deferOnly' | 'bot';
  readonly emulator: DiscordEmulator;
  readonly places: Record<Shape, Place[]>;
  readonly pids: () => number[];
  /** Jobs the music service has received so far (the bot's; undefined for the floors). */
  readonly received?: () => number;
  /** Resolves once the contender has no work left from earlier commands. */
  readonly idle: () => Promise<void>;
  readonly stop: () => Promise<void>;
}

interface PhaseRun {
  readonly summary: Summary;
  /** CPU per command, in ms: the contender's processes, and Postgres (the server and every backend). */
  readonly cpuPerCommand: { readonly process: number; readonly postgres: number };
  /** The contender's share of one core while the answers came (its processes' CPU ÷ the time they took). */
  readonly coreShare: number;
  /** Commands that got no first answer (counted in the timings as infinitely slow). */
  readonly unanswered: number;
  /** Of the phase's jobs, those the service had received by the last answer (the bot's). */
  readonly receivedByLastAnswer?: number;
}


/**
 * How long a command waits for its first answer. Discord refuses an answer after 3 s, so one not
 * seen by then never comes: it counts as unanswered, at an infinite time (a loaded machine's
 * late answers must not end the run).
 */
const ANSWER_WAIT_MS = 10_000;

/** Runs `count` commands at `perSecond` and returns the dispatch-to-first-callback times, in ms (Infinity: unanswered). */
async function measure(contender: Contender, shape: Shape, count: number, perSecond: number, tag: string): Promise<number[]> {
  const places = contender.places[shape];
  const timings = await atRate(count, perSecond, async (i) => {
    const place = places[i % places.length]!;
    const started = performance.now();
    const handle = contender.emulator.runCommand({ ...place, name: 'song', options: { prompt: `${tag} ${i}` } });
    return handle.waitForResponse(ANSWER_WAIT_MS).then(
      () => performance.now() - started,
      () => Number.POSITIVE_INFINITY,
    );
  });
  const all = await Promise.all(timings);
  // BENCH_DUMP=<file> appends each phase's timings in dispatch order (where in a phase its slow answers fall).
  if (process.env.BENCH_DUMP) (await import('node:fs')).appendFileSync(process.env.BENCH_DUMP, `${tag} ${all.map((t) => Math.round(t)).join(',')}\n`);
  return all;
}

async function runPhase(contender: Contender, shape: Shape, phase: Phase, tag: string): Promise<PhaseRun> {
  await contender.idle();
  await settlePostgres(world.db);
  const [processBefore, postgresBefore] = await Promise.all([cpuMsOfAll(contender.pids()), cpuMsOfCommand('postgres')]);
  const COMMANDS = countOf(phase);
  const receivedBefore = contender.received?.();
  const measureStarted = performance.now();
  const timings = await measure(contender, shape, COMMANDS, rateOf(phase), tag);
  const measuredMs = performance.now() - measureStarted;
  const [processAtLastAnswer] = await Promise.all([cpuMsOfAll(contender.pids())]);
  const receivedByLastAnswer = receivedBefore === undefined ? undefined : contender.received!() - receivedBefore;
  // The work a command causes after its answer (the bot's follow-up, its workers) counts too.
  await contender.idle();
  const [processAfter, postgresAfter] = await Promise.all([cpuMsOfAll(contender.pids()), cpuMsOfCommand('postgres')]);
  return {
    summary: summarize(timings),
    cpuPerCommand: { process: round((processAfter - processBefore) / COMMANDS), postgres: round((postgresAfter - postgresBefore) / COMMANDS) },
    coreShare: round((processAtLastAnswer! - processBefore) / measuredMs),
    unanswered: timings.filter((time) => time === Number.POSITIVE_INFINITY).length,
    ...(receivedByLastAnswer !== undefined && { receivedByLastAnswer }),
  };
}

/** A figure over the rounds: its median, lowest and highest. */
const spreadOf = (values: number[]) => ({ median: round(medianOf(values)), min: round(Math.min(...values)), max: round(Math.max(...values)) });
const populate = (emulator: DiscordEmulator): Record<Shape, Place[]> => ({
  five: populateGuilds(emulator, GUILDS, MEMBERS_PER_GUILD),
  one: populateGuilds(emulator, 1, GUILDS * MEMBERS_PER_GUILD, 'Busy'),
  sending: populateGuilds(emulator, 1, GUILDS * MEMBERS_PER_GUILD, 'Sending'),
});

const world = await startBenchWorld();
const contenders: Contender[] = [];
try {
  for (const [name, mode] of [['floor', 'decide'], ['deferOnly', 'defer']] as const) {
    const emulator = await startDiscordEmulator({ botToken: BOT_TOKEN, validateRequests: false });
    const places = populate(emulator);
    const child = await spawnFloorBot(world, mode, emulator, FLOOR_ROWS);
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

  const places = populate(world.emulator);
  await world.deployCommands();
  const botEnv = {
    STARTING_CREDITS: '1000000000',
    UPSTREAM_MAX_IN_FLIGHT: '100000',
    // Tasks run for an hour and are found by webhook: no poll weighs on the measurement.
    EXPECTED_SECONDS: 'song=3600',
    WORKERS_IN_THREAD: String(WORKERS_IN_THREAD),
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
    ...(ROLE !== 'gateway' && { received: () => world.sim.listTasks().length }),
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
    await measure(contender, SHAPES[0] ?? 'five', WARM_UP, WARM_UP_RATE, `${contender.name}-warm`);
    countSent(contender, WARM_UP);
  }
  const runs = new Map<string, PhaseRun[]>();
  for (let r = 0; r < ROUNDS; r += 1) {
    for (const shape of SHAPES) {
      for (const phase of phasesOf(shape)) {
        for (const contender of contenders) {
          const run = await runPhase(contender, shape, phase, `${contender.name}-${shape}-${phase}-${r}`);
          countSent(contender, countOf(phase));
          const key = `${shape}/${contender.name}/${phase}`;
          runs.set(key, [...(runs.get(key) ?? []), run]);
        }
      }
    }
  }

  const figures = (shape: Shape, name: Contender['name'], phase: Phase) => {
    const all = runs.get(`${shape}/${name}/${phase}`)!;
    return {
      p50: spreadOf(all.map((run) => run.summary.p50)),
      p99: spreadOf(all.map((run) => run.summary.p99)),
      max: spreadOf(all.map((run) => run.summary.max)),
      cpuMsPerCommand: spreadOf(all.map((run) => run.cpuPerCommand.process)),
      postgresCpuMsPerCommand: spreadOf(all.map((run) => run.cpuPerCommand.postgres)),
      coreShare: spreadOf(all.map((run) => run.coreShare)),
      unanswered: all.reduce((sum, run) => sum + run.unanswered, 0),
      rounds: all.map((run) => ({ ...run.summary, cpuPerCommand: run.cpuPerCommand, coreShare: run.coreShare, unanswered: run.unanswered, ...(run.receivedByLastAnswer !== undefined && { receivedByLastAnswer: run.receivedByLastAnswer }) })),
    };
  };
  type Figures = ReturnType<typeof figures>;
  const results = Object.fromEntries(
    SHAPES.map((shape) => [
      shape,
      Object.fromEntries((['bot', 'floor', 'deferOnly'] as const).map((name) => [name, Object.fromEntries(phasesOf(shape).map((phase) => [phase, figures(shape, name, phase)]))])),
    ]),
  ) as Record<Shape, Record<Contender['name'], Record<Phase, Figures>>>;
  type RoundRatio = { ratio: number; min: number; max: number };
  /** Bot ÷ floor of a figure's medians, and the spread of the same ratio round by round. */
  const ratioOf = (shape: Shape, phase: Phase, pick: (run: PhaseRun) => number, of: (f: Figures) => number): RoundRatio => {
    const bot = runs.get(`${shape}/bot/${phase}`)!;
    const floor = runs.get(`${shape}/floor/${phase}`)!;
    const byRound = bot.map((run, i) => pick(run) / pick(floor[i]!));
    return { ratio: ratio(of(results[shape].bot[phase]), of(results[shape].floor[phase])), min: round(Math.min(...byRound)), max: round(Math.max(...byRound)) };
  };
  const ratios = Object.fromEntries(
    SHAPES.map((shape) => [
      shape,
      Object.fromEntries(
        phasesOf(shape).map((phase) => [
          phase,
          {
            p50ToFloor: ratioOf(shape, phase, (run) => run.summary.p50, (f) => f.p50.median),
            p99ToFloor: ratioOf(shape, phase, (run) => run.summary.p99, (f) => f.p99.median),
            cpuToFloor: ratioOf(shape, phase, (run) => run.cpuPerCommand.process, (f) => f.cpuMsPerCommand.median),
            p99ToDeferOnly: ratio(results[shape].bot[phase].p99.median, results[shape].deferOnly[phase].p99.median),
          },
        ]),
      ),
    ]),
  ) as Record<Shape, Record<Phase, { p50ToFloor: RoundRatio; p99ToFloor: RoundRatio; cpuToFloor: RoundRatio; p99ToDeferOnly: number }>>;

  const range = (f: { median: number; min: number; max: number }) => `${f.median} (${f.min}–${f.max})`;
  for (const shape of SHAPES) {
    printTable(
      `first answer, ${SHAPE_NAMES[shape]}: dispatch to the first callback (median of ${ROUNDS} rounds, lowest–highest)`,
      phasesOf(shape).map((phase) => {
        const [b, f] = [results[shape].bot[phase], results[shape].floor[phase]];
        const r = ratios[shape][phase];
        return {
          load: loadName(phase),
          'bot p50 ms': range(b.p50),
          'floor p50 ms': range(f.p50),
          'bot p99 ms': range(b.p99),
          'floor p99 ms': range(f.p99),
          'bot cpu ms/cmd': range(b.cpuMsPerCommand),
          'floor cpu ms/cmd': range(f.cpuMsPerCommand),
          'p50, p99, cpu ÷ floor': `${r.p50ToFloor.ratio}, ${r.p99ToFloor.ratio}, ${r.cpuToFloor.ratio}`,
          'p99 ÷ defer-only': r.p99ToDeferOnly,
          'bot core share': range(b.coreShare),
          'unanswered, bot and floor': `${b.unanswered}, ${f.unanswered}`,
          ...(shape === 'sending' && { 'jobs received by the last answer': b.rounds.map((run) => run.receivedByLastAnswer ?? '–').join(', ') }),
        };
      }),
    );
  }
  const targets = SHAPES.flatMap((shape) =>
    phasesOf(shape).flatMap((phase) => {
      const r = ratios[shape][phase];
      const where = `${SHAPE_NAMES[shape]}, ${loadName(phase)}`;
      return [
        target(`${where}: CPU per command ÷ floor`, r.cpuToFloor.ratio, '≤ 1.5', r.cpuToFloor.ratio <= 1.5),
        target(`${where}: p50 ÷ floor`, r.p50ToFloor.ratio, '≤ 2', r.p50ToFloor.ratio <= 2),
        target(`${where}: median p99 ÷ floor`, r.p99ToFloor.ratio, '≤ 2', r.p99ToFloor.ratio <= 2),
      ];
    }),
  );
  // Another workload than the issue's goes to a file of its own (e.g. `ack-250-at-25.json`), beside ack.json.
  const resultName =
    COMMANDS === 500 && RATE === 250 && ROLE === 'all' && INTERACTIONS === 'gateway'
      ? 'ack'
      : `ack-${COMMANDS}-at-${RATE}${ROLE === 'all' ? '' : `-${ROLE}`}${INTERACTIONS === 'http' ? '-http' : ''}`;
  // The workers on a thread of their own are a comparison, beside the default's file.
  const resultFile = WORKERS_IN_THREAD && ROLE === 'all' ? `${resultName}-workers-in-thread` : resultName;
  await writeResult(
    resultFile,
    {
      workload: {
        role: ROLE,
        interactions: INTERACTIONS,
        commands: COMMANDS,
        rate: RATE,
        slowCommands: SLOW_COMMANDS,
        slowRate: SLOW_RATE,
        rounds: ROUNDS,
        shapes: Object.fromEntries(SHAPES.map((shape) => [shape, SHAPE_NAMES[shape]])),
        members: GUILDS * MEMBERS_PER_GUILD,
        warmUp: WARM_UP,
        warmUpRate: WARM_UP_RATE,
        command: '/song',
      },
      target: 'in each shape and load: CPU per command ≤ 1.5× the floor, p50 ≤ 2× the floor, median p99 ≤ 2× the floor',
      floor: "bare discord.js client: one guarded UPDATE … RETURNING on its guild's row, then reply",
      loads: Object.fromEntries(PHASES.map((phase) => [phase, loadName(phase)])),
      workersInThread: botEnv.WORKERS_IN_THREAD,
      // Each figure: the median of the rounds, with the lowest and highest round.
      shapes: results,
      ratios,
      seconds: round(performance.now() / 1000, 1),
    },
    targets,
  );
} finally {
  for (const contender of contenders) await contender.stop().catch(() => {});
  await world.close();
}
