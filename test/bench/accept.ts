/**
 * `npm run bench -- accept [--commands 500] [--rate 250] [--roles all|split]`: from a member's
 * command to the job being submitted to the music service.
 *
 * The ack benchmark's workload (500 `/song` from 50 members in 5 guilds, at 250/s), against the
 * bot as `npm start` runs it (`--roles split`: a gateway and a worker process), with
 * `UPSTREAM_MAX_IN_FLIGHT` far above the load so the cap never binds. Reports jobs/s end to
 * end and where the time goes, per job:
 * - ack: dispatch to the first callback;
 * - decide: dispatch to the job's row (checks and the reservation transaction);
 * - to upstream: the row to the create request reaching the simulator (the queue entry, the
 *   wait in the submit queue, the processor's own reads);
 * - upstream: the create reaching the simulator to the job marked submitted;
 * - progress edit: marked submitted to the first edit of the reply that shows the job running.
 * The burst target: ≥ 150 jobs/s end to end on 2 cores.
 *
 * Then the sustained phase, on the same bot: `--sustained-commands` (10,000) `/song` at a steady
 * `--sustained-rate` (150/s) across `--sustained-guilds` (100) guilds of 5 members, measured from
 * the first command to the last job received by the service. The floor (test/bench/floor-bot.ts:
 * a bare discord.js bot, one guarded `UPDATE`, then reply) answers the same commands at the same
 * rate in the same shape, with its own emulator, just before the bot in each of
 * `--sustained-rounds` (3) rounds. Targets, on the median of the rounds: the service receives the
 * jobs at ≥ the rate, and the first answer's p99 is under 2× the floor's in every 10 s window.
 * The rate cannot pass the pace the commands are sent at, and it counts how long the last job
 * took to reach the service after the last command: both are printed beside it.
 * `--sustained-commands 0` skips it.
 *
 * Last, unmeasured: the round trips of one `/song` per stage (Postgres statements, Redis
 * commands, Discord calls, service requests; test/support/round-trips.ts), counted on a bot
 * started in this process once the measured bots have stopped, as the round-trip test counts
 * them: wrapping every call of a measured process would change what it measures.
 */
import { parseArgs } from 'node:util';
import { startDiscordEmulator, type DiscordEmulator } from '@music-bot/discord-emulator';
import { BOT_TOKEN, populateGuilds, waitFor, type Place } from '@music-bot/test-world';
import { pino } from 'pino';
import { startApp } from '../../src/app.js';
import { loadConfig } from '../../src/config.js';
import { countTrips, songStages, type CountedStage, type StageCounts } from '../support/round-trips.js';
import { atRate, cpuMsOfAll, cpuMsOfCommands, medianOf, printTable, ratio, round, spawnFloorBot, startBenchWorld, stopChild, summarize, target, writeResult, type Target } from './support.js';

const { values: flags } = parseArgs({
  options: {
    commands: { type: 'string', default: '500' },
    rate: { type: 'string', default: '250' },
    roles: { type: 'string', default: 'all' },
    'sustained-commands': { type: 'string', default: '10000' },
    'sustained-rate': { type: 'string', default: '150' },
    'sustained-guilds': { type: 'string', default: '100' },
    'sustained-rounds': { type: 'string', default: '3' },
    help: { type: 'boolean', default: false },
  },
  strict: false,
});
if (flags.help === true) {
  console.log('npm run bench -- accept [--commands 500] [--rate 250] [--roles all|split] [--sustained-commands 10000] [--sustained-rate 150] [--sustained-guilds 100] [--sustained-rounds 3]');
  process.exit(0);
}
const COMMANDS = Number(flags.commands);
const RATE = Number(flags.rate);
const SPLIT = flags.roles === 'split';
const GUILDS = 5;
const MEMBERS_PER_GUILD = 10;
const TARGET = 150;
const SUSTAINED = Number(flags['sustained-commands']);
const SUSTAINED_RATE = Number(flags['sustained-rate']);
const SUSTAINED_GUILDS = Math.max(1, Number(flags['sustained-guilds']));
const SUSTAINED_ROUNDS = Math.max(1, Number(flags['sustained-rounds']));
const SUSTAINED_MEMBERS = 5;
/** The sustained phase's first answers are judged by windows of this many seconds of dispatch. */
const WINDOW_S = 10;

/** Place of the i-th command: guilds in turn, and each guild's members in turn. */
const placeOf = (places: readonly Place[], guilds: number, i: number) => places[(i % guilds) * (places.length / guilds) + (Math.floor(i / guilds) % (places.length / guilds))]!;

/**
 * Sends `count` /song at `perSecond` to `emulator`; the first-answer time of each answered, with
 * when (ms from the first) it was sent, and how many got no answer within 30 s.
 */
async function firstAnswers(emulator: DiscordEmulator, places: readonly Place[], guilds: number, count: number, perSecond: number, tag: string) {
  const first = performance.now();
  const handles = await atRate(count, perSecond, async (i) => {
    const sentAt = performance.now();
    const answered = await emulator
      .runCommand({ ...placeOf(places, guilds, i), name: 'song', options: { prompt: `${tag} ${i}` } })
      .waitForResponse(30_000)
      .then(() => true, () => false);
    return answered ? { at: sentAt - first, ms: performance.now() - sentAt } : undefined;
  });
  const all = await Promise.all(handles);
  const answers = all.filter((answer) => answer !== undefined);
  return Object.assign(answers, { unanswered: all.length - answers.length });
}

/**
 * CPU used so far (ms) by the contender's processes, Postgres (server and backends), Redis, and
 * this process (the emulator, the simulator and the driver): where a job's cost goes on the
 * machine's 2 cores, read before and after a phase.
 */
async function cpuByProcess(pids: readonly number[]) {
  const [contender, servers] = await Promise.all([cpuMsOfAll(pids), cpuMsOfCommands(['postgres', 'redis-server'])]);
  const usage = process.cpuUsage();
  return { contender, postgres: servers.postgres, redis: servers['redis-server'], world: (usage.user + usage.system) / 1000 };
}

/** CPU ms per job of each part between two readings of {@link cpuByProcess}. */
function cpuPerJob(before: Awaited<ReturnType<typeof cpuByProcess>>, after: Awaited<ReturnType<typeof cpuByProcess>>, jobs: number) {
  const per = (key: keyof typeof before) => round((after[key] - before[key]) / Math.max(1, jobs), 2);
  const parts = { contender: per('contender'), postgres: per('postgres'), redis: per('redis'), world: per('world') };
  return { ...parts, total: round(parts.contender + parts.postgres + parts.redis + parts.world, 2) };
}

/** p99 of the first answers by window of dispatch time. */
const byWindow = (answers: ReadonlyArray<{ at: number; ms: number }>) => {
  const windows = new Map<number, number[]>();
  for (const answer of answers) {
    const w = Math.floor(answer.at / (WINDOW_S * 1000));
    windows.set(w, [...(windows.get(w) ?? []), answer.ms]);
  }
  return [...windows].sort((a, b) => a[0] - b[0]).map(([w, values]) => ({ fromS: w * WINDOW_S, n: values.length, p99: summarize(values).p99 }));
};


/**
 * One `/song` at `place`, counted per stage by a bot of the same settings started in this
 * process (the measured ones stopped first). The first is counted too and dropped: it warms the
 * new process's connections and the queues' scripts.
 */
async function roundTripsOfOneSong(world: Awaited<ReturnType<typeof startBenchWorld>>, env: Record<string, string>, place: Place): Promise<readonly CountedStage[]> {
  const app = await startApp(loadConfig({ env: world.env({ ...env, ROLE: 'all' }) }), pino({ level: 'warn' }), { parts: { gateway: true, worker: true, http: false } });
  try {
    await app.gatewayReady;
    let counted: readonly CountedStage[] = [];
    for (const prompt of ['trips warm', 'trips counted']) {
      let interaction = '';
      const counter = countTrips({ stages: songStages(() => interaction), discord: world.emulator, service: world.sim, skipPools: [world.db] });
      try {
        interaction = world.emulator.runCommand({ ...place, name: 'song', options: { prompt } }).id;
        counted = await Promise.race([counter.ended, new Promise<never>((_, reject) => setTimeout(() => reject(new Error('the counted /song did not reach the service and its progress edit in 30 s')), 30_000))]);
      } finally {
        counter.stop();
      }
    }
    return counted;
  } finally {
    await app.stop();
  }
}

interface SustainedRound {
  answers: Awaited<ReturnType<typeof firstAnswers>>;
  floorAnswers: Awaited<ReturnType<typeof firstAnswers>>;
  floorCpu: ReturnType<typeof cpuPerJob>;
  first: ReturnType<typeof summarize>;
  windows: ReturnType<typeof byWindow>;
  worstWindow: number;
  received: number;
  receivedPerSecond: number;
  secondsToLastJob: number;
  sentPerSecond: number;
  lastJobLagMs: number;
  cpu: ReturnType<typeof cpuPerJob>;
}

const world = await startBenchWorld();
try {
  const places = populateGuilds(world.emulator, GUILDS, MEMBERS_PER_GUILD);
  const sustainedPlaces = SUSTAINED > 0 ? populateGuilds(world.emulator, SUSTAINED_GUILDS, SUSTAINED_MEMBERS, 'Sustained') : [];
  await world.deployCommands();
  const env = { STARTING_CREDITS: '100000000', UPSTREAM_MAX_IN_FLIGHT: '100000', EXPECTED_SECONDS: 'song=3600' };
  const bots = (SPLIT ? ['gateway', 'worker'] : ['all']).map((role) => world.bot({ env: { ...env, ROLE: role } }));
  for (const bot of bots) bot.spawn();
  await world.emulator.waitForBotReady(60_000);

  // Warm up (JIT, connections), then forget what the warm-up left in the records.
  const warm = await atRate(30, 50, (i) =>
    world.emulator.runCommand({ ...places[i % places.length]!, name: 'song', options: { prompt: `warm ${i}` } }).waitForResponse(30_000),
  );
  await Promise.all(warm);
  await waitFor('the warm-up submitted', () => world.sim.requests.filter((r) => r.path === '/api/v1/producer/create').length >= 30, { timeoutMs: 60_000 });
  const createsBefore = world.sim.requests.length;
  const editsBefore = world.emulator.requests.length;

  const dispatchedAt = new Map<string, number>();
  const ackMs: number[] = [];
  const first = Date.now();
  const handles = await atRate(COMMANDS, RATE, (i) => {
    const prompt = `accept ${i}`;
    const started = performance.now();
    dispatchedAt.set(prompt, Date.now());
    const handle = world.emulator.runCommand({ ...places[i % places.length]!, name: 'song', options: { prompt } });
    return handle.waitForResponse(60_000).then(() => ackMs.push(performance.now() - started));
  });
  await Promise.all(handles);
  const creates = () => world.sim.requests.slice(createsBefore).filter((r) => r.path === '/api/v1/producer/create');
  await waitFor('every job submitted upstream', () => creates().length >= COMMANDS, { timeoutMs: 300_000, everyMs: 50 });
  const last = Math.max(...creates().map((r) => r.at));
  const seconds = (last - first) / 1000;

  const { rows } = await world.db.query<{ prompt: string; created: Date; submitted: Date | null; token: string }>(
    `select request->>'prompt' as prompt, created_at as created, submitted_at as submitted, interaction_token as token
       from jobs where request->>'prompt' like 'accept %'`,
  );
  const arrival = new Map(creates().map((r) => [String((r.body as { gpt_description_prompt?: string; prompt?: string; sound?: string }).sound ?? ''), r.at]));
  const editsByToken = new Map<string, number[]>();
  for (const request of world.emulator.requests.slice(editsBefore)) {
    if (request.method !== 'PATCH' || !/\/messages\/(@|%40)original$/.test(request.path) || request.status >= 300) continue;
    const token = /\/webhooks\/\d+\/([^/]+)\//.exec(request.path)?.[1];
    if (token) editsByToken.set(token, [...(editsByToken.get(token) ?? []), request.at]);
  }
  /** The first edit of the reply once the job was submitted: the progress that shows it running. */
  const firstEditAfter = (token: string, at: number) => editsByToken.get(token)?.find((editedAt) => editedAt >= at);
  const stage = { decide: [] as number[], toUpstream: [] as number[], upstream: [] as number[], progressEdit: [] as number[] };
  for (const row of rows) {
    const dispatched = dispatchedAt.get(row.prompt)!;
    const reached = arrival.get(row.prompt);
    stage.decide.push(row.created.getTime() - dispatched);
    if (reached !== undefined) stage.toUpstream.push(reached - row.created.getTime());
    if (reached !== undefined && row.submitted) stage.upstream.push(row.submitted.getTime() - reached);
    const edited = row.submitted ? firstEditAfter(row.token, row.submitted.getTime()) : undefined;
    if (edited !== undefined && row.submitted) stage.progressEdit.push(edited - row.submitted.getTime());
  }
  const jobsPerSecond = round(COMMANDS / seconds, 1);
  const stages = {
    ack: summarize(ackMs),
    decide: summarize(stage.decide),
    toUpstream: summarize(stage.toUpstream),
    upstream: summarize(stage.upstream),
    progressEdit: summarize(stage.progressEdit),
  };
  printTable(`accept: ${COMMANDS} /song at ${RATE}/s, roles ${SPLIT ? 'gateway + worker' : 'all in one'}`, [
    { figure: 'jobs/s end to end', value: jobsPerSecond, target: `≥ ${TARGET}`, met: jobsPerSecond >= TARGET ? 'yes' : 'no' },
    { figure: 'last job upstream after the first dispatch', value: `${round(seconds, 1)} s`, target: '', met: '' },
  ]);
  printTable(
    'per stage (ms per job)',
    Object.entries(stages).map(([name, s]) => ({ stage: name, p50: s.p50, p99: s.p99, max: s.max, mean: s.mean, n: s.n })),
  );
  const targets: Target[] = [target('burst: jobs/s end to end', jobsPerSecond, `≥ ${TARGET}`, jobsPerSecond >= TARGET)];

  /** One round of the sustained load on the bot: its first answers, and when the service received each job. */
  const sustainedRound = async (r: number): Promise<Omit<SustainedRound, 'floorAnswers' | 'floorCpu'>> => {
    const createsFrom = world.sim.requests.length;
    const botPids = bots.map((bot) => bot.pid!);
    const cpuBefore = await cpuByProcess(botPids);
    const firstAt = Date.now();
    const answers = await firstAnswers(world.emulator, sustainedPlaces, SUSTAINED_GUILDS, SUSTAINED, SUSTAINED_RATE, `sustained ${r}`);
    const sustainedCreates = () => world.sim.requests.slice(createsFrom).filter((request) => request.path === '/api/v1/producer/create');
    const expected = SUSTAINED - answers.unanswered;
    await waitFor('every sustained job received by the service', () => sustainedCreates().length >= expected, { timeoutMs: 600_000, everyMs: 100 }).catch(() => {});
    const lastAt = Math.max(...sustainedCreates().map((request) => request.at));
    const received = sustainedCreates().length;
    const cpu = cpuPerJob(cpuBefore, await cpuByProcess(botPids), received);
    // What bounds the rate: the driver's own pace, and how far the last job trailed its command.
    const lastSentMs = Math.max(...answers.map((answer) => answer.at));
    const windows = byWindow(answers);
    return {
      answers,
      first: summarize(answers.map((answer) => answer.ms)),
      windows,
      worstWindow: Math.max(...windows.map((w) => w.p99)),
      received,
      receivedPerSecond: round(received / ((lastAt - firstAt) / 1000), 1),
      secondsToLastJob: round((lastAt - firstAt) / 1000, 2),
      sentPerSecond: round((answers.length - 1) / (lastSentMs / 1000), 1),
      lastJobLagMs: round(lastAt - firstAt - lastSentMs),
      cpu,
    };
  };

  // ---- sustained: in each round the floor (its own emulator, same shape and rate), then the bot ----
  let sustained: Record<string, unknown> | undefined;
  if (SUSTAINED > 0) {
    const floorEmulator = await startDiscordEmulator({ botToken: BOT_TOKEN, validateRequests: false });
    const floorPlaces = populateGuilds(floorEmulator, SUSTAINED_GUILDS, SUSTAINED_MEMBERS, 'Sustained');
    const floorBot = await spawnFloorBot(world, 'decide', floorEmulator, SUSTAINED_GUILDS);
    const rounds: SustainedRound[] = [];
    try {
      await floorEmulator.waitForBotReady(60_000);
      await firstAnswers(floorEmulator, floorPlaces, SUSTAINED_GUILDS, Math.min(300, SUSTAINED), 100, 'floor-warm');
      for (let r = 0; r < SUSTAINED_ROUNDS; r += 1) {
        const floorBefore = await cpuByProcess([floorBot.pid!]);
        const floorAnswers = await firstAnswers(floorEmulator, floorPlaces, SUSTAINED_GUILDS, SUSTAINED, SUSTAINED_RATE, `floor ${r}`);
        const floorCpu = cpuPerJob(floorBefore, await cpuByProcess([floorBot.pid!]), SUSTAINED);
        rounds.push({ ...(await sustainedRound(r)), floorAnswers, floorCpu });
        const last = rounds.at(-1)!;
        console.log(`sustained round ${r + 1} of ${SUSTAINED_ROUNDS}: ${last.receivedPerSecond}/s received, the last job ${last.lastJobLagMs} ms after the last command, first-answer p99 ${last.first.p99} ms (floor ${summarize(floorAnswers.map((a) => a.ms)).p99})`);
      }
    } finally {
      await stopChild(floorBot);
      await floorEmulator.close();
    }

    const spreadOf = (values: number[]) => ({ median: round(medianOf(values), 2), min: round(Math.min(...values), 2), max: round(Math.max(...values), 2) });
    const floorOf = (round_: SustainedRound) => summarize(round_.floorAnswers.map((answer) => answer.ms));
    const perRound = rounds.map((r) => ({
      receivedPerSecond: r.receivedPerSecond,
      received: r.received,
      unanswered: r.answers.unanswered,
      floorUnanswered: r.floorAnswers.unanswered,
      secondsToLastJob: r.secondsToLastJob,
      sentPerSecond: r.sentPerSecond,
      lastJobLagMs: r.lastJobLagMs,
      firstAnswerMs: { p50: r.first.p50, p99: r.first.p99 },
      floorFirstAnswerMs: { p50: floorOf(r).p50, p99: floorOf(r).p99 },
      worstWindowP99: r.worstWindow,
      byWindow: r.windows,
      cpuMsPerJob: r.cpu,
      floorCpuMsPerCommand: r.floorCpu,
    }));
    const received = spreadOf(perRound.map((r) => r.receivedPerSecond));
    const lag = spreadOf(perRound.map((r) => r.lastJobLagMs));
    const worst = spreadOf(perRound.map((r) => r.worstWindowP99));
    const first = summarize(rounds.flatMap((r) => r.answers.map((answer) => answer.ms)));
    const floorFirst = summarize(rounds.flatMap((r) => r.floorAnswers.map((answer) => answer.ms)));
    const floorP99 = spreadOf(perRound.map((r) => r.floorFirstAnswerMs.p99));
    const bound = round(2 * floorP99.median);
    const medianCpu = (pick: (r: (typeof perRound)[number]) => Record<string, number>) =>
      Object.fromEntries(['contender', 'postgres', 'redis', 'world', 'total'].map((k) => [k, round(medianOf(perRound.map((r) => pick(r)[k]!)), 2)])) as ReturnType<typeof cpuPerJob>;
    const cpu = medianCpu((r) => r.cpuMsPerJob);
    const floorCpu = medianCpu((r) => r.floorCpuMsPerCommand);
    const notReceived = perRound.reduce((sum, r) => sum + (SUSTAINED - r.received), 0);
    const range = (s: { median: number; min: number; max: number }) => `${s.median} (${s.min}–${s.max})`;
    printTable(`sustained: ${SUSTAINED} /song at ${SUSTAINED_RATE}/s across ${SUSTAINED_GUILDS} guilds, median (lowest–highest) of ${SUSTAINED_ROUNDS} rounds`, [
      { figure: 'received by the service, per second (first command to last job)', value: range(received), floor: '', target: `≥ ${SUSTAINED_RATE}` },
      { figure: 'commands sent per second by the driver', value: range(spreadOf(perRound.map((r) => r.sentPerSecond))), floor: '', target: '' },
      { figure: 'the last job reached the service after the last command, ms', value: range(lag), floor: '', target: '' },
      { figure: 'first answer p50 / p99 ms (all rounds)', value: `${first.p50} / ${first.p99}`, floor: `${floorFirst.p50} / ${floorFirst.p99}`, target: '' },
      { figure: `worst ${WINDOW_S} s window's first-answer p99 ms`, value: range(worst), floor: range(floorP99), target: `< ${bound} (2× the floor)` },
    ]);
    printTable('sustained: CPU ms per job, by process (the floor: per command), median of the rounds', [
      { process: SPLIT ? 'bot (gateway + worker)' : 'bot', bot: cpu.contender, floor: floorCpu.contender },
      { process: 'Postgres (server and backends)', bot: cpu.postgres, floor: floorCpu.postgres },
      { process: 'Redis', bot: cpu.redis, floor: floorCpu.redis },
      { process: 'emulator, simulator and driver (this process)', bot: cpu.world, floor: floorCpu.world },
      { process: 'total', bot: cpu.total, floor: floorCpu.total },
    ]);
    targets.push(
      target('sustained: jobs received by the service per second (median of the rounds)', received.median, `≥ ${SUSTAINED_RATE}`, received.median >= SUSTAINED_RATE),
      target(`sustained: worst ${WINDOW_S} s window's first-answer p99, ms (median of the rounds)`, worst.median, `< 2× the floor's p99 (${bound})`, worst.median < bound),
      target('sustained: commands unanswered, or jobs not received', notReceived, `0 (floor: ${perRound.reduce((sum, r) => sum + r.floorUnanswered, 0)} unanswered)`, notReceived === 0),
    );
    const middle = perRound.find((r) => r.receivedPerSecond === received.median) ?? perRound[0]!;
    sustained = {
      workload: { commands: SUSTAINED, rate: SUSTAINED_RATE, guilds: SUSTAINED_GUILDS, members: SUSTAINED_GUILDS * SUSTAINED_MEMBERS, windowSeconds: WINDOW_S, rounds: SUSTAINED_ROUNDS },
      floor: 'bare discord.js bot (test/bench/floor-bot.ts): one guarded UPDATE on its guild\'s row, then reply; the same commands, rate and guilds, its own emulator, before the bot in each round',
      receivedPerSecond: received.median,
      receivedPerSecondSpread: received,
      received: middle.received,
      unanswered: perRound.reduce((sum, r) => sum + r.unanswered, 0),
      floorUnanswered: perRound.reduce((sum, r) => sum + r.floorUnanswered, 0),
      secondsToLastJob: middle.secondsToLastJob,
      sentPerSecond: medianOf(perRound.map((r) => r.sentPerSecond)),
      lastJobLagMs: lag.median,
      lastJobLagMsSpread: lag,
      firstAnswerMs: first,
      floorFirstAnswerMs: floorFirst,
      p99ToFloor: ratio(first.p99, floorFirst.p99),
      p50ToFloor: ratio(first.p50, floorFirst.p50),
      worstWindowP99: worst,
      worstWindowP99ToFloor: ratio(worst.median, floorP99.median),
      byWindow: middle.byWindow,
      cpuMsPerJob: cpu,
      floorCpuMsPerCommand: floorCpu,
      cpuNote: 'CPU ms per job from /proc, first command to last job received, the median of the rounds: the bot\'s processes, Postgres, Redis, and the benchmark process (emulator, simulator, driver); the floor\'s per command in its own run',
      rounds: perRound,
    };
  }

  // ---- round trips of one /song, unmeasured, once the measured bots have stopped ----
  await Promise.all(bots.map((bot) => bot.stop()));
  const stagesCounted = await roundTripsOfOneSong(world, env, places[0]!);
  const kinds: ReadonlyArray<keyof StageCounts> = ['postgres', 'redis', 'discord', 'service'];
  const inAll = Object.fromEntries(kinds.map((kind) => [kind, stagesCounted.reduce((sum, stage) => sum + stage.counts[kind], 0)])) as StageCounts;
  const roundTrips = [...stagesCounted.map((stage) => ({ stage: stage.name, ...stage.counts })), { stage: 'in all', ...inAll }];
  printTable('round trips of one /song, per stage (a bot in this process, after the measured phases)', roundTrips);

  await writeResult('accept', {
    workload: { commands: COMMANDS, rate: RATE, guilds: GUILDS, members: GUILDS * MEMBERS_PER_GUILD, roles: SPLIT ? 'gateway+worker' : 'all' },
    target: `≥ ${TARGET} jobs/s end to end on 2 cores`,
    jobsPerSecond,
    ratioToTarget: ratio(jobsPerSecond, TARGET),
    secondsToLastSubmission: round(seconds, 2),
    stagesMs: stages,
    roundTrips,
    ...(sustained && { sustained }),
  }, targets);
} finally {
  await world.close();
}
