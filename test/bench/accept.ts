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
 * Target: ≥ 150 jobs/s end to end on 2 cores.
 */
import { parseArgs } from 'node:util';
import { populateGuilds, waitFor } from '@music-bot/test-world';
import { atRate, printTable, ratio, round, startBenchWorld, summarize, writeResult } from './support.js';

const { values: flags } = parseArgs({
  options: {
    commands: { type: 'string', default: '500' },
    rate: { type: 'string', default: '250' },
    roles: { type: 'string', default: 'all' },
  },
  strict: false,
});
const COMMANDS = Number(flags.commands);
const RATE = Number(flags.rate);
const SPLIT = flags.roles === 'split';
const GUILDS = 5;
const MEMBERS_PER_GUILD = 10;
const TARGET = 150;


const world = await startBenchWorld();
try {
  const places = populateGuilds(world.emulator, GUILDS, MEMBERS_PER_GUILD);
  await world.deployCommands();
  const env = { STARTING_CREDITS: '100000000', UPSTREAM_MAX_IN_FLIGHT: '100000', EXPECTED_SECONDS: 'song=3600' };
  for (const role of SPLIT ? ['gateway', 'worker'] : ['all']) world.bot({ env: { ...env, ROLE: role } }).spawn();
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
  await writeResult('accept', {
    workload: { commands: COMMANDS, rate: RATE, guilds: GUILDS, members: GUILDS * MEMBERS_PER_GUILD, roles: SPLIT ? 'gateway+worker' : 'all' },
    target: `≥ ${TARGET} jobs/s end to end on 2 cores`,
    jobsPerSecond,
    ratioToTarget: ratio(jobsPerSecond, TARGET),
    met: jobsPerSecond >= TARGET,
    secondsToLastSubmission: round(seconds, 2),
    stagesMs: stages,
  });
} finally {
  await world.close();
}
