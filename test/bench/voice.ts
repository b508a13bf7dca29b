/**
 * `npm run bench -- voice [--guilds 1,20,50] [--seconds 20] [--rounds 3] [--load-rate 250]`:
 * songs played in voice channels, as the emulator's voice server receives them.
 *
 * One bot process (`ROLE=all`, the gateway holding every guild) plays a 60-second song in 1, 20
 * and 50 guilds at once, each with one member listening; then 20 guilds again while the same
 * process answers `/song` at `--load-rate` a second in other guilds. For each, in `--rounds`
 * rounds (the median, and the worst round beside it):
 * - continuity: the interval between frames as they arrive (jitter: how far from 20 ms, p99)
 *   and gaps (over 60 ms while speaking) per minute of audio;
 * - cost: CPU ms of the bot and its ffmpeg children per second of audio per playing guild, and
 *   resident memory per player;
 * - start: from the `/play` dispatch to the first frame heard.
 * The floor is ffmpeg alone decoding the same file and encoding it to Opus, as fast as it can.
 * Target: no gap and jitter p99 under 20 ms with 20 guilds under load.
 * The emulator decodes no Opus here (frames are timed as they arrive); DAVE stays on. Its UDP
 * is received on a thread of its own, which times each frame's arrival: the load this process
 * generates delays the frames' handling, not their timing, so the jitter is the bot's.
 */
import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { readdir, readFile } from 'node:fs/promises';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { parseArgs } from 'node:util';
import { ChannelType } from 'discord-api-types/v10';
import { populateGuilds, sleep, waitFor, type Place } from '@music-bot/test-world';
import { atRate, cpuMsOfAll, percentile, printTable, ratio, round, startBenchWorld, summarize, target, writeResult, type BenchWorld } from './support.js';

const { values: flags } = parseArgs({
  options: {
    guilds: { type: 'string', default: '1,20,50' },
    seconds: { type: 'string', default: '20' },
    rounds: { type: 'string', default: '3' },
    'load-rate': { type: 'string', default: '250' },
  },
  strict: false,
});
const GUILD_COUNTS = String(flags.guilds)
  .split(',')
  .map(Number)
  .filter((n) => n > 0);
const WINDOW_SECONDS = Number(flags.seconds);
const ROUNDS = Math.max(1, Number(flags.rounds));
const LOAD_RATE = Number(flags['load-rate']);
const LOADED_GUILDS = 20;
const SONG_SECONDS = 60;
const FRAME_MS = 20;
const TARGET = { gaps: 0, jitterP99Ms: 20 };

interface Stage {
  readonly place: Place;
  readonly voiceChannelId: string;
  readonly libraryId: string;
}

interface RoundFigures {
  readonly jitterP99Ms: number;
  readonly intervalP99Ms: number;
  readonly gapsPerMinute: number;
  /** Left out under load, where the commands' CPU is in the process's too. */
  readonly cpuMsPerAudioSecond?: number;
  readonly pssMbPerPlayer: number;
  readonly startP50Ms: number;
  readonly startP99Ms: number;
  readonly loadCommands?: number;
  /** `/play` and `/stop` the bot left unanswered (Discord would show "did not respond"). */
  readonly unanswered: number;
  /** Guilds not heard within a minute of their `/play`. */
  readonly notStarted: number;
  /** How late this process's (the emulator's) event loop ran, p99: the part of the jitter that is the listener's. */
  readonly emulatorLoopDelayP99Ms: number;
}

/** CPU (ms) of a process and of its live children (the bot's ffmpeg processes). */
async function treeCpuMs(pid: number): Promise<number> {
  return cpuMsOfAll([pid, ...(await childrenOf(pid))]);
}

async function childrenOf(pid: number): Promise<number[]> {
  const children: number[] = [];
  for (const entry of await readdir('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    const stat = await readFile(`/proc/${entry}/stat`, 'utf8').catch(() => '');
    const ppid = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
    if (ppid === pid) children.push(Number(entry));
  }
  return children;
}

/** Proportional memory (PSS: shared pages split between their users) of a process and its children, in MB. */
async function treePssMb(pid: number): Promise<number> {
  let kb = 0;
  for (const id of [pid, ...(await childrenOf(pid))]) {
    const rollup = await readFile(`/proc/${id}/smaps_rollup`, 'utf8').catch(() => '');
    kb += Number(/^Pss:\s+(\d+)/m.exec(rollup)?.[1] ?? 0);
  }
  return kb / 1024;
}

/** The floor: ffmpeg decoding the song and encoding it to Opus, alone; CPU ms per second of audio. */
function floorCpuMsPerSecond(file: Buffer): number {
  const started = childCpuMs();
  spawnSync('ffmpeg', ['-hide_banner', '-loglevel', 'error', '-i', 'pipe:0', '-vn', '-c:a', 'libopus', '-b:a', '96k', '-ar', '48000', '-ac', '2', '-f', 'ogg', 'pipe:1'], {
    input: file,
    maxBuffer: 64 * 1024 * 1024,
  });
  return (childCpuMs() - started) / SONG_SECONDS;
}

/** CPU of this process's waited-for children so far (cutime + cstime), in ms. */
function childCpuMs(): number {
  const stat = readFileSync(`/proc/${process.pid}/stat`, 'utf8');
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return (Number(fields[13] ?? 0) + Number(fields[14] ?? 0)) * 10;
}

/** Guilds with a voice channel, a member in it, and a finished song in the library. */
async function setStage(world: BenchWorld, count: number, name: string): Promise<Stage[]> {
  const places = populateGuilds(world.emulator, count, 1, name);
  const stages: Stage[] = [];
  for (const place of places) {
    const voice = world.emulator.createChannel(place.guildId, { name: 'Lounge', type: ChannelType.GuildVoice });
    world.emulator.joinVoice(place.userId, voice.id);
    stages.push({ place, voiceChannelId: voice.id, libraryId: '' });
  }
  await Promise.all(
    places.map((place) => world.emulator.runCommand({ ...place, name: 'song', options: { prompt: `voice bench ${place.guildId}`, instrumental: true } }).waitForResponse(30_000)),
  );
  const ids = new Map<string, string>();
  await waitFor(
    'every song in its library',
    async () => {
      const { rows } = await world.db.query<{ guild: string; id: string }>(
        `select guild_id as guild, id from jobs where guild_id = any($1) and kind = 'song' and state = 'succeeded'`,
        [places.map((place) => place.guildId)],
      );
      for (const row of rows) ids.set(row.guild, row.id);
      return ids.size >= places.length;
    },
    { timeoutMs: 120_000, everyMs: 200 },
  );
  return stages.map((stage) => ({ ...stage, libraryId: ids.get(stage.place.guildId)! }));
}

/** The bot's CPU per second while nothing plays and nothing arrives (its heartbeats, timers). */
async function idleCpuMsPerSecond(botPid: number): Promise<number> {
  const before = await treeCpuMs(botPid);
  const began = performance.now();
  await sleep(5_000);
  return ((await treeCpuMs(botPid)) - before) / ((performance.now() - began) / 1000);
}

async function playRound(world: BenchWorld, botPid: number, stages: readonly Stage[], idleCpu: number, load?: { places: Place[]; rate: number }): Promise<RoundFigures> {
  const { emulator } = world;
  for (const stage of stages) emulator.resetVoiceReception(stage.place.guildId);
  const rssBefore = await treePssMb(botPid);
  const dispatched = new Map<string, number>();
  let unanswered = 0;
  const answered = (handle: { waitForResponse(ms: number): Promise<unknown> }) => handle.waitForResponse(10_000).catch(() => void (unanswered += 1));
  await Promise.all(
    stages.map((stage) => {
      dispatched.set(stage.place.guildId, Date.now());
      return answered(emulator.runCommand({ ...stage.place, name: 'play', options: { song: stage.libraryId } }));
    }),
  );
  const heard = (stage: Stage) => emulator.voiceReception(stage.place.guildId).frames > 0;
  // A guild still silent after a minute is counted as not started, and the round goes on without it.
  await waitFor('every guild heard', () => stages.every(heard), { timeoutMs: 60_000, everyMs: 5 }).catch(() => {});
  const notStarted = stages.filter((stage) => !heard(stage)).length;
  const startMs = stages.filter(heard).map((stage) => emulator.voiceReception(stage.place.guildId).firstFrameAt! - dispatched.get(stage.place.guildId)!);
  // Measured from here: every player running.
  for (const stage of stages) emulator.resetVoiceReception(stage.place.guildId);
  const cpuBefore = await treeCpuMs(botPid);
  // Frames are timed on the listener's UDP thread; this loop's delay is shown beside, as a check.
  const loopDelay = monitorEventLoopDelay({ resolution: 5 });
  loopDelay.enable();
  const began = performance.now();
  let loadCommands = 0;
  let loading = Promise.resolve();
  if (load) {
    const count = Math.round(load.rate * WINDOW_SECONDS);
    loading = atRate(count, load.rate, (i) => {
      loadCommands += 1;
      return emulator.runCommand({ ...load.places[i % load.places.length]!, name: 'song', options: { prompt: `load ${i}` } }).waitForResponse(60_000).catch(() => undefined);
    }).then(async (handles) => void (await Promise.all(handles)));
  }
  await sleep(WINDOW_SECONDS * 1000);
  const cpu = (await treeCpuMs(botPid)) - cpuBefore;
  const elapsed = (performance.now() - began) / 1000;
  loopDelay.disable();
  const rss = await treePssMb(botPid);
  const receptions = stages.map((stage) => emulator.voiceReception(stage.place.guildId));
  await loading;
  const deviations = receptions.flatMap((reception) => reception.intervalsMs.map((interval) => Math.abs(interval - FRAME_MS))).sort((a, b) => a - b);
  const intervals = receptions.flatMap((reception) => reception.intervalsMs).sort((a, b) => a - b);
  const audioSeconds = receptions.reduce((total, reception) => total + reception.frames * (FRAME_MS / 1000), 0);
  const gaps = receptions.reduce((total, reception) => total + reception.gaps, 0);
  await Promise.all(stages.map((stage) => answered(emulator.runCommand({ ...stage.place, name: 'stop' }))));
  const playing = (stage: Stage) => emulator.voiceMembers(stage.voiceChannelId).includes(emulator.botUser.id);
  await waitFor('every player gone', () => stages.every((stage) => !playing(stage)), { timeoutMs: 30_000 }).catch(() => {
    // A stop left unanswered: a moderator disconnects the bot, so the next round starts clean.
    for (const stage of stages.filter(playing)) emulator.leaveVoice(stage.place.guildId, emulator.botUser.id);
  });
  const start = summarize(startMs);
  return {
    jitterP99Ms: round(percentile(deviations, 99)),
    intervalP99Ms: round(percentile(intervals, 99)),
    gapsPerMinute: round(gaps / (audioSeconds / 60), 2),
    // Less what the bot spends idle over the same time.
    ...(!load && { cpuMsPerAudioSecond: round((cpu - idleCpu * elapsed) / (elapsed * stages.length)) }),
    pssMbPerPlayer: round((rss - rssBefore) / stages.length, 1),
    startP50Ms: start.p50,
    startP99Ms: start.p99,
    ...(load && { loadCommands }),
    unanswered,
    notStarted,
    emulatorLoopDelayP99Ms: round(loopDelay.percentile(99) / 1e6),
  };
}

/**
 * The median of each figure over the rounds, and the worst round's (largest) value beside it. A
 * round in which no frame arrived has no jitter or gap rate: it is left out of those figures
 * (null in its `rounds`) and counted by {@link silentRounds}.
 */
function medianAndWorst(rounds: readonly RoundFigures[]): Record<string, { median: number; worst: number; rounds: Array<number | null> }> {
  const keys = Object.keys(rounds[0]!) as Array<keyof RoundFigures>;
  return Object.fromEntries(
    keys.map((key) => {
      const values = rounds.map((figures) => Number(figures[key] ?? 0));
      const sorted = values.filter(Number.isFinite).sort((a, b) => a - b);
      return [key, { median: round(percentile(sorted, 50)), worst: round(sorted.at(-1) ?? Number.NaN), rounds: values.map((value) => (Number.isFinite(value) ? value : null)) }];
    }),
  );
}

/** Rounds in which no player's audio arrived at all (every player still starting when the window closed). */
const silentRounds = (rounds: readonly RoundFigures[]) => rounds.filter((figures) => !Number.isFinite(figures.jitterP99Ms)).length;

const world = await startBenchWorld({ sim: { taskMs: 300, songSeconds: SONG_SECONDS }, emulator: { voice: { decode: false, receiveOnThread: true } } });
try {
  await world.deployCommands();
  const bot = world.bot({ env: { STARTING_CREDITS: '100000000', UPSTREAM_MAX_IN_FLIGHT: '100000', EXPECTED_SECONDS: 'song=3600' } });
  bot.spawn();
  await world.emulator.waitForBotReady(60_000);
  const botPid = bot.pid!;

  const song = Buffer.from(await (await fetch(`${world.sim.url}/producer/bench.m4a`)).arrayBuffer());
  const floorRounds = Array.from({ length: Math.max(5, ROUNDS) }, () => floorCpuMsPerSecond(song)).sort((a, b) => a - b);
  const floor = { median: round(percentile(floorRounds, 50)), worst: round(floorRounds.at(-1)!), rounds: floorRounds.map((value) => round(value)) };

  const idleCpu = await idleCpuMsPerSecond(botPid);
  const biggest = Math.max(...GUILD_COUNTS, LOADED_GUILDS);
  const stages = await setStage(world, biggest, 'Voice');
  const loadPlaces = populateGuilds(world.emulator, 5, 10, 'Load');

  const phases: Array<{ name: string; guilds: number; load: boolean; figures: ReturnType<typeof medianAndWorst>; silentRounds: number }> = [];
  for (const count of GUILD_COUNTS) {
    const rounds: RoundFigures[] = [];
    for (let r = 0; r < ROUNDS; r += 1) rounds.push(await playRound(world, botPid, stages.slice(0, count), idleCpu));
    phases.push({ name: `${count} guild${count === 1 ? '' : 's'}`, guilds: count, load: false, figures: medianAndWorst(rounds), silentRounds: silentRounds(rounds) });
  }
  const loaded: RoundFigures[] = [];
  for (let r = 0; r < ROUNDS; r += 1) loaded.push(await playRound(world, botPid, stages.slice(0, LOADED_GUILDS), idleCpu, { places: loadPlaces, rate: LOAD_RATE }));
  phases.push({ name: `${LOADED_GUILDS} guilds, /song at ${LOAD_RATE}/s`, guilds: LOADED_GUILDS, load: true, figures: medianAndWorst(loaded), silentRounds: silentRounds(loaded) });

  const underLoad = phases.at(-1)!.figures;
  printTable(
    `voice: ${WINDOW_SECONDS} s of a ${SONG_SECONDS} s song per round, median (worst) of ${ROUNDS} rounds`,
    phases.map(({ name, figures, silentRounds: silent }) => ({
      phase: name,
      'rounds without audio': silent,
      'jitter p99 ms': `${figures['jitterP99Ms']!.median} (${figures['jitterP99Ms']!.worst})`,
      'gaps/min': `${figures['gapsPerMinute']!.median} (${figures['gapsPerMinute']!.worst})`,
      'CPU ms per audio s': figures['cpuMsPerAudioSecond'] ? `${figures['cpuMsPerAudioSecond'].median} (${figures['cpuMsPerAudioSecond'].worst})` : 'n/a',
      '÷ floor': figures['cpuMsPerAudioSecond'] ? ratio(figures['cpuMsPerAudioSecond'].median, floor.median) : 'n/a',
      'MB per player': `${figures['pssMbPerPlayer']!.median}`,
      'start p50/p99 ms': `${figures['startP50Ms']!.median} / ${figures['startP99Ms']!.median}`,
      'emulator loop delay p99 ms': `${figures['emulatorLoopDelayP99Ms']!.median} (${figures['emulatorLoopDelayP99Ms']!.worst})`,
    })),
  );
  console.log(`floor (ffmpeg alone, decode + Opus encode): ${floor.median} ms CPU per second of audio (worst ${floor.worst})`);
  await writeResult('voice', {
    botIdleCpuMsPerSecond: round(idleCpu),
    workload: { guildCounts: GUILD_COUNTS, loadedGuilds: LOADED_GUILDS, loadRate: LOAD_RATE, windowSeconds: WINDOW_SECONDS, songSeconds: SONG_SECONDS, rounds: ROUNDS, role: 'all' },
    target: `no gap and jitter p99 < ${TARGET.jitterP99Ms} ms with ${LOADED_GUILDS} guilds playing while /song arrives at ${LOAD_RATE}/s`,
    floor: { what: 'ffmpeg alone decoding the song and encoding it to Opus (libopus, 96 kb/s), CPU ms per second of audio', ...floor },
    phases: phases.map(({ name, guilds, load, figures, silentRounds: silent }) => ({
      name,
      guilds,
      load,
      silentRounds: silent,
      ...figures,
      ...(figures['cpuMsPerAudioSecond'] && { cpuToFloor: ratio(figures['cpuMsPerAudioSecond'].median, floor.median) }),
    })),
  }, [
    target(`under load: rounds without audio`, phases.at(-1)!.silentRounds, '0', phases.at(-1)!.silentRounds === 0),
    target(`under load: gaps per minute, worst round`, underLoad['gapsPerMinute']!.worst, `${TARGET.gaps}`, underLoad['gapsPerMinute']!.worst <= TARGET.gaps),
    target(`under load: jitter p99 ms, median round`, underLoad['jitterP99Ms']!.median, `< ${TARGET.jitterP99Ms}`, underLoad['jitterP99Ms']!.median < TARGET.jitterP99Ms),
  ]);
} finally {
  await world.close();
}
