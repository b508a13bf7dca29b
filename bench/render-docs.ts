/**
 * `npm run bench:docs`: writes docs/performance.md from the results files in bench/results/,
 * so that no figure in it is typed by hand. `renderPerformance` is pure (files in, markdown out);
 * test/unit/docs.test.ts checks that the committed page equals what it renders.
 */
import { execFileSync } from 'node:child_process';
import { readdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { pathToFileURL } from 'node:url';

/** One results file as `writeResult` (test/bench/support.ts) writes it: a few common fields, the rest per benchmark. */
export interface ResultFile {
  readonly file: string;
  readonly data: Readonly<Record<string, unknown>>;
  /**
   * Whether the code on the benchmark's path (see {@link codePaths}) changed after the commit the
   * file measured, as `readResults` finds with git; a file that records no commit is stale.
   */
  readonly stale?: boolean;
}

type Json = Record<string, unknown>;
type Stats = { n?: number; p50: number; p95?: number; p99: number; max: number; mean?: number };

const ROOT = path.resolve(import.meta.dirname, '..');
export const RESULTS_DIR = path.join(ROOT, 'bench/results');
export const PERFORMANCE_DOC = path.join(ROOT, 'docs/performance.md');

/** Reads every `bench/results/*.json`, in name order, each with whether it is stale (git, in `root`). */
export function readResults(folder = RESULTS_DIR, root = ROOT): ResultFile[] {
  return readdirSync(folder)
    .filter((name) => name.endsWith('.json'))
    .sort()
    .map((name) => {
      const data = JSON.parse(readFileSync(path.join(folder, name), 'utf8')) as Json;
      const stale = isStale(root, benchmarkOf(name, data), str(data['commit']));
      return { file: name, data, ...(stale !== undefined && { stale }) };
    });
}

const benchmarkOf = (file: string, data: Json) => str(data['benchmark']) || file.replace(/\.json$/, '');

/**
 * The code a benchmark's figures depend on: its own file, what every benchmark shares, and the
 * folders of src/ it exercises (the whole bot for those that run it as `npm start` does).
 */
export function codePaths(benchmark: string): string[] {
  const name = ORDER.find((known) => benchmark === known || benchmark.startsWith(`${known}-`)) ?? benchmark;
  const shared = ['test/bench/support.ts', 'packages/test-world'];
  const own: Record<string, string[]> = {
    ack: ['test/bench/ack.ts', 'test/bench/floor-bot.ts', 'src'],
    ledger: ['test/bench/ledger.ts', 'src/credits', 'src/db'],
    blocklist: ['test/bench/blocklist.ts', 'src/safety'],
    chaos: ['test/chaos', 'src'],
    history: ['test/bench/history.ts', 'test/bench/history-seed.ts', 'src'],
    dashboard: ['test/bench/dashboard.ts', 'test/bench/history-seed.ts', 'src'],
  };
  return [...(own[name] ?? [`test/bench/${name}.ts`, 'src']), ...shared];
}

/**
 * Whether the last commit touching `codePaths(benchmark)` is not in the history of `commit`:
 * true for a missing commit or one git does not know; undefined when git cannot answer.
 */
export function isStale(root: string, benchmark: string, commit: string): boolean | undefined {
  if (!commit) return true;
  const git = (...args: string[]) => execFileSync('git', args, { cwd: root, encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] }).trim();
  let lastChange: string;
  try {
    lastChange = git('log', '-1', '--format=%H', '--', ...codePaths(benchmark));
  } catch {
    return undefined;
  }
  if (!lastChange) return false;
  try {
    git('merge-base', '--is-ancestor', lastChange, commit);
    return false;
  } catch {
    return true;
  }
}

// ---- formatting ----

const obj = (value: unknown): Json => (value && typeof value === 'object' && !Array.isArray(value) ? (value as Json) : {});
const num = (value: unknown): number => (typeof value === 'number' ? value : Number.NaN);
const str = (value: unknown): string => (typeof value === 'string' ? value : '');

/** A number as people read it: thousands separated, at most `digits` decimals, no trailing zeros. */
export function fmt(value: unknown, digits = 1): string {
  const n = num(value);
  if (!Number.isFinite(n)) return 'n/a';
  return n.toLocaleString('en-US', { maximumFractionDigits: digits, useGrouping: Math.abs(n) >= 1000 });
}

const ms = (value: unknown) => `${fmt(value)} ms`;
/** A figure written as its median, then its lowest and highest: `median<unit> (min–max)`. */
const medianSpread = (figure: unknown, format: (value: unknown) => string = (value) => fmt(value), unit = '') => {
  const f = obj(figure);
  return `${format(f['median'])}${unit} (${format(f['min'])}–${format(f['max'])})`;
};
const spread = (values: readonly number[], unit = ' ms') =>
  values.length === 0 ? '–' : `${fmt(Math.min(...values))}–${fmt(Math.max(...values))}${unit}`;
const met = (value: unknown) => (value === true ? 'yes' : value === false ? 'no' : 'n/a');
const cap = (text: string) => text.charAt(0).toUpperCase() + text.slice(1);
/** CPU time per command; a negative reading is an artefact of sampling another process's counters, shown as n/a. */
const cpu = (value: unknown) => (num(value) < 0 ? 'n/a' : fmt(value, 2));
const cell = (text: string) => text.replaceAll('|', '\\|').replaceAll('\n', ' ');

function table(header: readonly string[], rows: ReadonlyArray<readonly string[]>): string {
  const line = (cells: readonly string[]) => `| ${cells.map(cell).join(' | ')} |`;
  return [line(header), `|${header.map(() => '---').join('|')}|`, ...rows.map(line)].join('\n');
}

/** Where and when a file was measured: the date, the commit (older files lack it), the machine. */
function provenance(result: ResultFile): string {
  const { data } = result;
  const machine = obj(data['machine']);
  const commit = str(data['commit']);
  const commitText = commit ? `commit \`${commit.slice(0, 12)}\`${data['commitDirty'] === true ? ' with uncommitted changes' : ''}` : 'commit not recorded';
  const when = str(data['date']).slice(0, 16).replace('T', ' ');
  const staleText = isMarkedStale(result)
    ? ` **Stale:** ${commit ? 'the code on its path' : 'without a commit, nothing says that the code on its path'} (${codePaths(benchmarkOf(result.file, data)).map((p) => `\`${p}\``).join(', ')}) ${commit ? 'changed after it was measured' : 'is what it measured'}; measure again.`
    : '';
  return `\`bench/results/${result.file}\`: ${when} UTC, ${commitText}; ${fmt(machine['cores'], 0)} cores (${str(machine['cpu'])}), ${fmt(machine['memoryGiB'])} GiB, Node ${str(machine['node'])}, ${str(machine['platform'])}.${staleText}`;
}

/** A summary's "met" cell from the file's targets: yes, or which were missed. */
function targetsMet(result: ResultFile): string {
  const targets = (result.data['targets'] as Json[] | undefined) ?? [];
  const missed = targets.filter((t) => t['met'] !== true).map((t) => str(t['name']));
  return missed.length === 0 ? 'yes' : `no (missed: ${missed.join('; ')})`;
}

/** Stale when git says so, or when the file records no commit. */
const isMarkedStale = (result: ResultFile) => result.stale === true || !str(result.data['commit']);

/** The targets a results file states (`writeResult`'s `targets`), as a table; nothing for files without. */
function targetsTable(result: ResultFile): string {
  const targets = (result.data['targets'] as Json[] | undefined) ?? [];
  if (!Array.isArray(targets) || targets.length === 0) return '';
  const value = (v: unknown) => (typeof v === 'number' ? fmt(v, 2) : str(v));
  return table(['Target', 'Measured', 'Bound', 'Met'], targets.map((t) => [str(t['name']), value(t['value']), str(t['target']), met(t['met'])]));
}

// ---- one section per kind of results file ----

interface Rendered {
  /** A row of the summary table: benchmark, what, measured, floor, target, met. */
  readonly summary: readonly string[];
  /** The section's body under its heading. */
  readonly body: string;
}

/** The ack file with shapes and three loads: each figure the median of its rounds with their spread, ratios to the floor. */
function renderAckShapes(result: ResultFile): Rendered {
  const { data } = result;
  const workload = obj(data['workload']);
  const shapes = obj(data['shapes']);
  const ratios = obj(data['ratios']);
  const loads = obj(data['loads']);
  const shapeNames = obj(workload['shapes']);
  // A negative CPU reading is an artefact of sampling another process's counters (see `cpu`).
  const range = (figure: unknown, digits = 1) => medianSpread(figure, (value) => (num(value) < 0 ? 'n/a' : fmt(value, digits)));
  const ratioCell = (figure: unknown) => {
    const f = obj(figure);
    return `${fmt(f['ratio'], 2)}× (rounds ${fmt(f['min'], 2)}–${fmt(f['max'], 2)})`;
  };
  const contenders: Array<[string, string]> = [
    ['bot', `the bot (\`ROLE=${str(workload['role'])}\`, interactions over ${str(workload['interactions']) || 'gateway'})`],
    ['floor', 'floor: bare discord.js bot, one guarded `UPDATE`, then reply'],
    ['deferOnly', 'bare discord.js bot that only defers'],
  ];
  const rows: string[][] = [];
  const ratioRows: string[][] = [];
  for (const [shape, shapeName] of Object.entries(shapeNames)) {
    for (const [load, loadName] of Object.entries(loads)) {
      for (const [key, name] of contenders) {
        const f = obj(obj(obj(shapes[shape])[key])[load]);
        rows.push([str(shapeName), str(loadName), name, `${range(f['p50'])} ms`, `${range(f['p99'])} ms`, range(f['cpuMsPerCommand'], 2), range(f['postgresCpuMsPerCommand'], 2)]);
      }
      const r = obj(obj(ratios[shape])[load]);
      ratioRows.push([str(shapeName), str(loadName), ratioCell(r['p50ToFloor']), ratioCell(r['p99ToFloor']), ratioCell(r['cpuToFloor']), `${fmt(r['p99ToDeferOnly'], 2)}×`]);
    }
  }
  const rounds = fmt(workload['rounds'], 0);
  const what = `first answer to \`${str(workload['command'])}\`, ${Object.values(shapeNames).map(str).join(' and ')}, ${Object.values(loads).map(str).join(', ')}; \`ROLE=${str(workload['role'])}\`, interactions over ${str(workload['interactions']) || 'gateway'}; median of ${rounds} rounds, floor and bot alternating`;
  const first = Object.keys(shapeNames)[0] ?? '';
  const steady = obj(obj(ratios[first])['steady']);
  const bot = obj(obj(obj(shapes[first])['bot'])['steady']);
  const floor = obj(obj(obj(shapes[first])['floor'])['steady']);
  return {
    summary: [
      what,
      `${str(shapeNames[first])}, ${str(loads['steady'])}: p50 ${range(bot['p50'])} ms, p99 ${range(bot['p99'])} ms, CPU ${range(bot['cpuMsPerCommand'], 2)} ms/command`,
      `p50 ${range(floor['p50'])} ms, p99 ${range(floor['p99'])} ms, CPU ${range(floor['cpuMsPerCommand'], 2)} ms/command`,
      str(data['target']),
      `${targetsMet(result)} (there: p50 ${fmt(obj(steady['p50ToFloor'])['ratio'], 2)}×, p99 ${fmt(obj(steady['p99ToFloor'])['ratio'], 2)}×, CPU ${fmt(obj(steady['cpuToFloor'])['ratio'], 2)}×)`,
    ],
    body: [
      `${cap(what)}; ${fmt(workload['warmUp'], 0)} commands of warm-up. Floor: ${str(data['floor'])}. Target: ${str(data['target'])}. Met: ${met(data['met'])}. Each figure: the median of the rounds (lowest–highest).`,
      table(['Shape', 'Load', 'Contender', 'p50', 'p99', 'CPU ms/command', 'Postgres CPU ms/command'], rows),
      table(['Shape', 'Load', 'p50 ÷ floor', 'p99 ÷ floor', 'CPU ÷ floor', 'p99 ÷ defer-only'], ratioRows),
    ].join('\n\n'),
  };
}

function renderAck(result: ResultFile): Rendered {
  const { data } = result;
  if (data['shapes']) return renderAckShapes(result);
  const workload = obj(data['workload']);
  const results = obj(data['results']);
  const ratios = obj(data['ratios']);
  const rounds = fmt(workload['rounds'], 0);
  const phases = ['steady', 'burst'] as const;
  const load = (phase: string) => (phase === 'steady' ? `${fmt(workload['commands'], 0)} at ${fmt(workload['rate'], 0)}/s` : `${fmt(workload['commands'], 0)} at once`);
  const contenders: Array<[string, string]> = [
    ['bot', `the bot (\`ROLE=${str(workload['role'])}\`, interactions over ${str(workload['interactions']) || 'gateway'})`],
    ['floor', 'floor: bare discord.js bot, one guarded `UPDATE`, then reply'],
    ['deferOnly', 'bare discord.js bot that only defers'],
  ];
  const rows = phases.flatMap((phase) =>
    contenders.map(([key, name]) => {
      const figures = obj(obj(results[key])[phase]);
      const roundP99 = (figures['rounds'] as Stats[] | undefined)?.map((round) => round.p99) ?? [];
      return [load(phase), name, ms(figures['p50']), ms(figures['p99']), spread(roundP99), cpu(figures['cpuMsPerCommand']), cpu(figures['postgresCpuMsPerCommand'])];
    }),
  );
  const ratioRows = phases.map((phase) => {
    const r = obj(ratios[phase]);
    return [load(phase), `${fmt(r['p99ToFloor'], 2)}×`, `${fmt(r['p50ToFloor'], 2)}×`, `${fmt(r['p99ToDeferOnly'], 2)}×`, `${fmt(r['cpuToFloor'], 2)}×`];
  });
  const bot = obj(obj(results['bot'])['steady']);
  const floor = obj(obj(results['floor'])['steady']);
  const burst = obj(obj(results['bot'])['burst']);
  const floorBurst = obj(obj(results['floor'])['burst']);
  const what = `first answer to ${fmt(workload['commands'], 0)} \`${str(workload['command'])}\`, ${fmt(workload['members'], 0)} members in ${fmt(workload['guilds'], 0)} guilds, at ${fmt(workload['rate'], 0)}/s and at once; \`ROLE=${str(workload['role'])}\`, interactions over ${str(workload['interactions']) || 'gateway'}; median of ${rounds} round${rounds === '1' ? '' : 's'}, ${fmt(workload['warmUp'], 0)} commands of warm-up`;
  return {
    summary: [
      what,
      `p99 ${ms(bot['p99'])} (p50 ${fmt(bot['p50'])}), rounds ${spread(((bot['rounds'] as Stats[] | undefined) ?? []).map((round) => round.p99))}; at once p99 ${ms(burst['p99'])}`,
      `p99 ${ms(floor['p99'])} (p50 ${fmt(floor['p50'])}); at once p99 ${ms(floorBurst['p99'])}`,
      str(data['target']),
      `${met(data['met'])} (${fmt(obj(ratios['steady'])['p99ToFloor'], 2)}×; at once ${fmt(obj(ratios['burst'])['p99ToFloor'], 2)}×)`,
    ],
    body: [
      `${cap(what)}. Floor: ${str(data['floor'])}${workload['interactions'] === 'http' ? ' (the floors stay on the gateway; the bot gets each interaction POSTed, signed, to `/interactions` and answers in the response)' : ''}. Target: ${str(data['target'])}. Met: ${met(data['met'])}.`,
      table(['Load', 'Contender', 'p50', 'p99 (median)', 'p99 spread over rounds', 'CPU ms/command', 'Postgres CPU ms/command'], rows),
      table(['Load', 'p99 ÷ floor', 'p50 ÷ floor', 'p99 ÷ defer-only', 'CPU ÷ floor'], ratioRows),
    ].join('\n\n'),
  };
}

function renderAccept(result: ResultFile): Rendered {
  const { data } = result;
  const workload = obj(data['workload']);
  const stages = obj(data['stagesMs']);
  const names: Record<string, string> = {
    ack: 'dispatch to first answer',
    decide: 'checks and reservation',
    toUpstream: 'first answer to submitted upstream',
    upstream: 'the create call',
    progressEdit: 'progress edits',
  };
  const rows = Object.entries(stages).map(([key, value]) => {
    const s = obj(value);
    return [names[key] ?? key, fmt(s['n'], 0), ms(s['p50']), ms(s['p99']), ms(s['max'])];
  });
  const what = `${fmt(workload['commands'], 0)} commands at ${fmt(workload['rate'], 0)}/s, from the command to the job submitted upstream, \`ROLE=${str(workload['roles'])}\`, cold`;
  const sustained = obj(data['sustained']);
  const sw = obj(sustained['workload']);
  const first = obj(sustained['firstAnswerMs']);
  const floorFirst = obj(sustained['floorFirstAnswerMs']);
  const sustainedWhat = `${fmt(sw['commands'], 0)} \`/song\` at a steady ${fmt(sw['rate'], 0)}/s across ${fmt(sw['guilds'], 0)} guilds, from the first command to the last job received by the service`;
  const windows = ((sustained['byWindow'] as Json[] | undefined) ?? []).map((w) => num(w['p99']));
  const rounds = (sustained['rounds'] as Json[] | undefined) ?? [];
  const rangeOf = (value: unknown, unit = '') => (value === undefined ? undefined : medianSpread(value, undefined, unit));
  const lagSpread = rangeOf(sustained['lastJobLagMsSpread'], ' ms');
  // With rounds, the median and the spread of the rounds; the median round's count and time beside it.
  const received = rounds.length > 0 ? `${rangeOf(sustained['receivedPerSecondSpread'], '/s')}, median of ${rounds.length} rounds` : `${fmt(sustained['receivedPerSecond'])}/s`;
  const worstWindow = sustained['worstWindowP99'] === undefined ? fmt(Math.max(...windows)) : `${fmt(obj(sustained['worstWindowP99'])['median'])}, median of the rounds`;
  const sustainedBody = data['sustained']
    ? [
        `Sustained: ${sustainedWhat}. Floor: ${str(sustained['floor'])}.`,
        ...(sustained['sentPerSecond'] === undefined
          ? []
          : [
              `The figure cannot pass the pace the commands were sent at (${fmt(sustained['sentPerSecond'])}/s by the driver), and it counts the time the last job took to reach the service after the last command (${lagSpread ? `${lagSpread}: the median of the rounds, lowest–highest` : `${fmt(sustained['lastJobLagMs'], 0)} ms`}).`,
            ]),
        ...(rounds.length > 0
          ? [
              table(
                ['Round', 'Received by the service', 'Last job after the last command', 'First answer p50', 'p99', `Worst ${fmt(sw['windowSeconds'], 0)} s window's p99`, 'Floor p50', 'Floor p99', 'Bot CPU ms/job'],
                rounds.map((r, i) => {
                  const f = obj(r['firstAnswerMs']);
                  const ff = obj(r['floorFirstAnswerMs']);
                  return [String(i + 1), `${fmt(r['receivedPerSecond'])}/s`, ms(r['lastJobLagMs']), ms(f['p50']), ms(f['p99']), ms(r['worstWindowP99']), ms(ff['p50']), ms(ff['p99']), fmt(obj(r['cpuMsPerJob'])['contender'], 2)];
                }),
              ),
              `All rounds together (the CPU table: the median of the rounds):`,
            ]
          : []),
        table(
          ['', 'Received by the service', 'First answer p50', 'p99', `p99 by ${fmt(sw['windowSeconds'], 0)} s window`, 'Unanswered'],
          [
            ['the bot', `${received} (${fmt(sustained['received'], 0)} in ${fmt(sustained['secondsToLastJob'], 1)} s)`, ms(first['p50']), ms(first['p99']), spread(windows), fmt(sustained['unanswered'], 0)],
            ['floor', '–', ms(floorFirst['p50']), ms(floorFirst['p99']), '–', fmt(sustained['floorUnanswered'], 0)],
          ],
        ),
        ...(sustained['cpuMsPerJob'] === undefined
          ? []
          : [
              `CPU per job on the machine's ${fmt(obj(data['machine'])['cores'], 0)} cores, in ms (${str(sustained['cpuNote'])}):`,
              table(
                ['', 'Bot', 'Postgres', 'Redis', 'Emulator, simulator, driver', 'Total'],
                [
                  ['the bot', ...(['contender', 'postgres', 'redis', 'world', 'total'] as const).map((k) => fmt(obj(sustained['cpuMsPerJob'])[k], 2))],
                  ['floor', ...(['contender', 'postgres', 'redis', 'world', 'total'] as const).map((k) => fmt(obj(sustained['floorCpuMsPerCommand'])[k], 2))],
                ],
              ),
            ]),
      ]
    : [];
  const metCell = Array.isArray(data['targets']) ? targetsMet(result) : met(data['met']);
  return {
    summary: [
      `${what}${data['sustained'] ? `; then ${sustainedWhat}` : ''}`,
      `${fmt(data['jobsPerSecond'])} jobs/s (the last submitted ${fmt(data['secondsToLastSubmission'], 2)} s after the first dispatch)${data['sustained'] ? `; sustained: received ${received}, first-answer p99 ${ms(first['p99'])} (worst window ${worstWindow})` : ''}`,
      data['sustained'] ? `sustained first-answer p99 ${ms(floorFirst['p99'])}` : '–',
      str(data['target']),
      `${metCell} (${fmt(data['ratioToTarget'], 2)}× the target)`,
    ],
    body: [`${cap(what)}. Target: ${str(data['target'])}. Met: ${met(data['met'])}.`, table(['Stage', 'n', 'p50', 'p99', 'max'], rows), ...roundTripsBody(data), ...sustainedBody].join('\n\n'),
  };
}

/** The round trips of one `/song` per stage, when the results counted them. */
function roundTripsBody(data: Json): string[] {
  const stages = data['roundTrips'] as Json[] | undefined;
  if (!Array.isArray(stages)) return [];
  return [
    'Round trips of one `/song`, per stage, counted after the measured phases on a bot in the benchmark\'s process (test/support/round-trips.ts):',
    table(['Stage', 'Postgres', 'Redis', 'Discord', 'Service'], stages.map((stage) => [str(stage['stage']), fmt(stage['postgres'], 0), fmt(stage['redis'], 0), fmt(stage['discord'], 0), fmt(stage['service'], 0)])),
  ];
}

function renderLedger(result: ResultFile): Rendered {
  const { data } = result;
  const workload = obj(data['workload']);
  const results = obj(data['results']);
  const audits = obj(data['audits']);
  const ratios = obj(data['ratios']);
  const names: Record<string, string> = {
    floor: 'floor: one guarded statement per group of waiting reservations',
    floorUngrouped: 'one bare `UPDATE … RETURNING` each, no grouping',
    floorSynchronousCommitOff: 'the same, `synchronous_commit = off`',
    reserveForJob: '`reserveForJob` alone',
    request: "the request's reservation with its job row",
    requestWithDailyCap: 'the same with a daily cap',
  };
  const rows = Object.entries(results).map(([key, value]) => {
    const r = obj(value);
    const latency = obj(r['latency']);
    const overspend = obj(audits[key])['overspend'];
    return [names[key] ?? key, `${fmt(r['perSecond'], 0)}/s`, ms(latency['p50']), ms(latency['p99']), ms(latency['max']), fmt(r['lockWaiters']), overspend === undefined ? '–' : fmt(overspend, 0)];
  });
  const what = `${fmt(workload['clients'], 0)} clients reserving ${fmt(workload['cost'], 0)} credits at a time on ${fmt(workload['guilds'], 0)} guild`;
  const request = obj(results['request']);
  const floor = obj(results['floor']);
  return {
    summary: [
      what,
      `${fmt(request['perSecond'], 0)}/s on the request's path; overspend ${fmt(obj(audits['request'])['overspend'], 0)}`,
      `${fmt(floor['perSecond'], 0)}/s${results['floorUngrouped'] ? ' (one statement per group of waiting reservations)' : ''}`,
      str(data['target']),
      `${Array.isArray(data['targets']) ? targetsMet(result) : met(data['met'])} (${fmt(ratios['requestToFloor'], 2)}× the floor)`,
    ],
    body: [`${cap(what)}. Floor: ${str(data['floor'])}. Target: ${str(data['target'])}. Met: ${met(data['met'])}.`, table(['Path', 'Reservations', 'p50', 'p99', 'max', 'Waiting on locks (mean)', 'Overspend'], rows)].join('\n\n'),
  };
}

function renderWebhook(result: ResultFile): Rendered {
  const { data } = result;
  const workload = obj(data['workload']);
  const results = obj(data['results']);
  const bot = obj(results['bot']);
  const floor = obj(results['floor']);
  const windows = ((results['byWindow'] as Stats[] | undefined) ?? []).map((window) => window.p99);
  const rss = obj(results['workerRssMb']);
  const runs = obj(data['acrossRuns']);
  const what = `${fmt(workload['completions'], 0)} completions at ${fmt(workload['rate'], 0)}/s, webhook to the Discord call that posts the result (${((workload['roles'] as string[] | undefined) ?? []).join(', ')} as separate processes)${runs['bot'] ? `, ${fmt(workload['runs'], 0)} runs` : ''}`;
  if (runs['bot']) {
    // Median and worst of the runs, never the best.
    const pair = (figures: unknown, key: string) => `${ms(obj(obj(figures)[key])['median'])} / ${ms(obj(obj(figures)[key])['worst'])}`;
    const byRun = ((runs['byRun'] as Json[] | undefined) ?? []).map((run, i) => [String(i + 1), `${fmt(run['delivered'], 0)}/${fmt(run['completions'], 0)}`, ms(obj(run['bot'])['p50']), ms(obj(run['bot'])['p99']), ms(obj(run['floor'])['p99'])]);
    return {
      summary: [what, `p99 median ${pair(runs['bot'], 'p99')} worst (p50 ${pair(runs['bot'], 'p50')}); ${fmt(runs['undelivered'], 0)} undelivered`, `p99 ${pair(runs['floor'], 'p99')} worst`, str(data['target']), Array.isArray(data['targets']) ? targetsMet(result) : met(data['met'])],
      body: [
        `${cap(what)}. Floor: ${str(data['floor'])}. Target: ${str(data['target'])}. Met: ${met(data['met'])}.`,
        table(['', 'p50 median / worst', 'p99 median / worst', 'max median / worst'], [
          ['the bot', pair(runs['bot'], 'p50'), pair(runs['bot'], 'p99'), pair(runs['bot'], 'max')],
          ['floor', pair(runs['floor'], 'p50'), pair(runs['floor'], 'p99'), pair(runs['floor'], 'max')],
        ]),
        table(['Run', 'Delivered', 'the bot p50', 'the bot p99', 'floor p99'], byRun),
        `The last run: ${fmt(results['discordRateLimited'], 0)} 429s from Discord, webhooks refused ${fmt(results['refusedWebhooks'], 0)}; the worker's memory ${fmt(rss['idle'])} MB idle, ${fmt(rss['withJobsInFlight'])} MB with the jobs in flight. p99 by 10 s window: ${windows.map((value) => fmt(value)).join(', ')} ms.`,
      ].join('\n\n'),
    };
  }
  return {
    summary: [what, `p99 ${ms(bot['p99'])} (p50 ${fmt(bot['p50'])}); 10 s windows' p99 ${spread(windows)}; ${fmt(results['discordRateLimited'], 0)} 429s from Discord`, `p99 ${ms(floor['p99'])}`, str(data['target']), met(data['met'])],
    body: [
      `${cap(what)}. Floor: ${str(data['floor'])}. Target: ${str(data['target'])}. Met: ${met(data['met'])}.`,
      table(
        ['', 'n', 'p50', 'p95', 'p99', 'max'],
        [
          ['the bot', fmt(bot['n'], 0), ms(bot['p50']), ms(bot['p95']), ms(bot['p99']), ms(bot['max'])],
          ['floor', fmt(floor['n'], 0), ms(floor['p50']), ms(floor['p95']), ms(floor['p99']), ms(floor['max'])],
        ],
      ),
      `Delivered ${fmt(results['delivered'], 0)}, webhooks refused ${fmt(results['refusedWebhooks'], 0)}; the worker's memory ${fmt(rss['idle'])} MB idle, ${fmt(rss['withJobsInFlight'])} MB with the jobs in flight. p99 by 10 s window: ${windows.map((value) => fmt(value)).join(', ')} ms.`,
    ].join('\n\n'),
  };
}

function renderPoll(result: ResultFile): Rendered {
  const { data } = result;
  const workload = obj(data['workload']);
  const results = obj(data['results']);
  // Older files: `targets` held the bounds and `met` a flag per target.
  const bounds = obj(data['bounds'] ?? data['targets']);
  const scaling = obj(data['scaling']);
  const metFlags = obj(data['met']);
  const delay = obj(results['delaySharePercent']);
  const alone = obj(results['scheduleAlonePercent'] ?? results['scheduleAloneSharePercent']);
  const range = (workload['taskSeconds'] as number[] | undefined) ?? [];
  const what = `${fmt(workload['tasks'], 0)} tasks of ${range.join('–')} s, webhooks off (time ×${fmt(scaling['factor'], 0)})`;
  const byLength = ((results['byTaskLength'] as Json[] | undefined) ?? []).map((row) => [
    str(row['task length s']),
    fmt(row['tasks'], 0),
    fmt(row['polls/task'], 2),
    `${fmt(row['delay % p50'])} %`,
    `${fmt(row['delay % p99'])} %`,
    `${fmt(row['delay % max'])} %`,
    `${fmt(row['schedule alone % max'])} %`,
  ]);
  return {
    summary: [
      what,
      `${fmt(results['pollsPer10sOfTask'], 2)} polls per 10 s of task; delay p50 ${fmt(delay['p50'])} % / p99 ${fmt(delay['p99'])} % / max ${fmt(delay['max'])} % of task time (the schedule alone: ${fmt(alone['p50'])} / ${fmt(alone['p99'])} / ${fmt(alone['max'])} %); peak ${fmt(results['peakPollsPerRealSecond'], 0)}/s`,
      str(data['floor']),
      `delay ${str(bounds['delayShareP99'] ?? bounds['delayShareMax'])}${bounds['delayShareP99'] ? ' (p99)' : ' (max)'}; polls per 10 s ${str(bounds['pollsPer10sPerTask'])}; peak ${str(bounds['peakPerSecond'])}`,
      Array.isArray(data['targets']) ? targetsMet(result) : Object.entries(metFlags).map(([key, value]) => `${key} ${met(value)}`).join(', '),
    ],
    body: [
      `${cap(what)}. ${cap(str(scaling['how']))}`,
      table(['Task length (s)', 'Tasks', 'Polls per task', 'Delay p50', 'Delay p99', 'Delay max', 'Schedule alone, max'], byLength),
      `Polls per task ${fmt(results['pollsPerTask'], 2)} (the schedule alone ${fmt(results['scheduleAlonePollsPerTask'], 2)}); peak ${fmt(results['peakPollsPerRealSecond'], 0)} polls in a real second, ${fmt(results['peakPollsInAnySlidingSecond'], 0)} in any sliding second, against a cap of ${fmt(results['pollCap'], 0)}; undetected tasks ${fmt(results['undetected'], 0)}.`,
    ].join('\n\n'),
  };
}

function renderScale(result: ResultFile): Rendered {
  const { data } = result;
  const workload = obj(data['workload']);
  const results = obj(data['results']);
  const rss = obj(results['workerRssMb']);
  const redis = obj(results['redis']);
  const postgres = obj(results['postgres']);
  const throughput = obj(results['throughput']);
  const extrapolated = obj(data['extrapolated']);
  const bounds = obj(data['bounds']);
  const what = `jobs in flight across ${fmt(workload['guilds'], 0)} guilds: ${fmt(workload['jobsOpen'], 0)} of ${fmt(workload['jobsAsked'], 0)} accepted, ${fmt(workload['inFlightUpstream'], 0)} sent upstream`;
  const tables = ((postgres['byTable'] as Json[] | undefined) ?? []).map((row) => [`\`${str(row['name'])}\``, `${fmt(row['tableBytesPerJob'], 0)} B`, `${fmt(row['indexBytesPerJob'], 0)} B`]);
  return {
    summary: [
      what,
      `worker RSS ${fmt(rss['open'])} MB open (peak ${fmt(rss['peak'])}); Redis ${fmt(redis['bytesPerJob'], 0)} B/job; Postgres ${fmt(postgres['bytesPerJob'], 0)} B/job; drain ${fmt(throughput['drainFinalPerSecond'])} jobs/s`,
      '–',
      `jobs accepted: ${str(bounds['jobsAccepted'])}; worker RSS ${str(bounds['workerRssMb'])} MB, Redis ${str(bounds['redisBytesPerJob'])} B/job`,
      targetsMet(result),
    ],
    body: [
      `${cap(what)}. ${cap(str(workload['how']))}.`,
      table(
        ['Figure', 'Measured'],
        [
          ['worker RSS (idle, open, peak)', `${fmt(rss['idle'])}, ${fmt(rss['open'])}, ${fmt(rss['peak'])} MB`],
          ['Redis per job', `${fmt(redis['bytesPerJob'], 0)} B`],
          ['Postgres per job', `${fmt(postgres['bytesPerJob'], 0)} B`],
          ['accepted', `${fmt(throughput['acceptedPerSecond'])}/s`],
          ['sent upstream', `${fmt(throughput['sentUpstreamPerSecond'])}/s`],
          ['drain (final, delivered)', `${fmt(throughput['drainFinalPerSecond'])}, ${fmt(throughput['drainDeliveredPerSecond'])} jobs/s; ${fmt(throughput['discordRateLimitHits'], 0)} 429s from Discord`],
        ],
      ),
      table(['Table', 'Rows per job', 'Indexes per job'], tables),
      `Extrapolated to ${fmt(extrapolated['jobs'], 0)} jobs (not measured): worker ${fmt(extrapolated['workerRssMb'], 0)} MB (peak ${fmt(extrapolated['workerPeakRssMb'], 0)}), Redis ${fmt(extrapolated['redisMb'])} MB, Postgres ${fmt(extrapolated['postgresMb'], 0)} MB.`,
    ].join('\n\n'),
  };
}

function renderScrape(result: ResultFile): Rendered {
  const { data } = result;
  const row = (name: string, key: string) => {
    const s = obj(data[key]);
    return [name, fmt(s['n'], 0), ms(s['p50']), ms(s['p99']), ms(s['max'])];
  };
  const fresh = obj(data['freshMs']);
  const cached = obj(data['cachedMs']);
  const what = `\`/metrics\` scraped with ${fmt(data['jobs'], 0)} jobs in Postgres (gauges read at most every ${fmt(num(data['maxAgeMs']) / 1000, 0)} s)`;
  return {
    summary: [what, `fresh p50 ${ms(fresh['p50'])}, cached p50 ${ms(cached['p50'])}`, '–', '–', '–'],
    body: [
      `${cap(what)}.`,
      table(['', 'n', 'p50', 'p99', 'max'], [row('a scrape that reads Postgres and Redis', 'freshMs'), row('a scrape within the cache age', 'cachedMs'), row('counting every job', 'allJobsCountMs'), row('counting the open jobs', 'openJobsCountMs')]),
    ].join('\n\n'),
  };
}

function renderChaos(result: ResultFile): Rendered {
  const { data } = result;
  const scenarios = (data['scenarios'] as Json[] | undefined) ?? [];
  const rows = scenarios.map((scenario) => {
    const info = obj(scenario['info']);
    const nonZero = Object.entries(obj(scenario['zero'])).filter(([, value]) => value !== 0);
    return [
      `\`${str(scenario['name'])}\``,
      info['jobs'] === undefined ? '–' : fmt(info['jobs'], 0),
      str(scenario['title']),
      `${fmt(scenario['seconds'])} s`,
      Object.entries(info)
        .filter(([key]) => !['jobs', 'seed', 'moments', 'kinds', 'statuses'].includes(key))
        .map(([key, value]) => `${key} ${typeof value === 'number' ? fmt(value) : String(value)}`)
        .join(', '),
      nonZero.length === 0 ? 'all 0' : nonZero.map(([key, value]) => `${key} ${fmt(value)}`).join(', '),
      ((scenario['details'] as string[] | undefined) ?? []).join('; '),
    ];
  });
  return {
    summary: [
      `${scenarios.length} fault scenarios on the bot as ${str(obj(data['workload'])['processes'])}`,
      str(data['line']),
      '–',
      str(data['target']),
      `${met(data['passed'])}${data['passed'] === true ? '' : ` (${scenarios.filter((s) => s['passed'] !== true).map((s) => str(s['name'])).join(', ')})`}`,
    ],
    body: [
      `The chaos suite (\`npm run chaos\`; [operations.md](operations.md#reliability) says what each fault puts to the test): ${fmt(num(data['seconds']) / 60)} minutes. Target: ${str(data['target'])}.`,
      table(['Scenario', 'Jobs', 'What it did', 'Took', 'What it measured', 'Figures that must be 0', 'Details'], rows),
      `\`${str(data['line'])}\``,
    ].join('\n\n'),
  };
}

/** A results file no renderer knows: its top-level numbers, so that a new benchmark still shows. */
function renderVoice(result: ResultFile): Rendered {
  const { data } = result;
  const workload = obj(data['workload']);
  const floor = obj(data['floor']);
  const phases = (data['phases'] as Json[] | undefined) ?? [];
  const pair = (figure: unknown, unit = '') => {
    const f = obj(figure);
    return `${fmt(f['median'])}${unit} (worst ${fmt(f['worst'])})`;
  };
  const rows = phases.map((phase) => [
    str(phase['name']),
    fmt(phase['silentRounds'] ?? 0, 0),
    pair(phase['jitterP99Ms'], ' ms'),
    pair(phase['gapsPerMinute']),
    pair(phase['cpuMsPerAudioSecond']),
    phase['cpuToFloor'] === undefined ? 'n/a (commands too)' : `${fmt(phase['cpuToFloor'], 2)}×`,
    `${fmt(obj(phase['pssMbPerPlayer'])['median'])} MB`,
    `${ms(obj(phase['startP50Ms'])['median'])} / ${ms(obj(phase['startP99Ms'])['median'])}`,
    `${fmt(obj(phase['unanswered'])['worst'], 0)} / ${fmt(obj(phase['notStarted'])['worst'], 0)}`,
    pair(phase['emulatorLoopDelayP99Ms'], ' ms'),
  ]);
  const loaded = phases.find((phase) => phase['load'] === true) ?? {};
  const what = `songs played in voice channels by one gateway process: ${((workload['guildCounts'] as number[] | undefined) ?? []).join(', ')} guilds at once, and ${fmt(workload['loadedGuilds'], 0)} while \`/song\` arrives at ${fmt(workload['loadRate'], 0)}/s; ${fmt(workload['windowSeconds'], 0)} s measured per round, median of ${fmt(workload['rounds'], 0)} rounds`;
  return {
    summary: [
      what,
      `under load: jitter p99 ${pair(loaded['jitterP99Ms'], ' ms')}, gaps/min ${pair(loaded['gapsPerMinute'])}; alone: CPU ${fmt(obj(phases[0]?.['cpuMsPerAudioSecond'])['median'])} ms per audio second`,
      `${fmt(floor['median'])} ms CPU per audio second (ffmpeg alone)`,
      str(data['target']),
      met(data['met']),
    ],
    body: [
      `${cap(what)}. Floor: ${str(floor['what'])}: ${fmt(floor['median'])} ms (worst ${fmt(floor['worst'])}). Target: ${str(data['target'])}. Met: ${met(data['met'])}.`,
      table(['Phase', 'Rounds without audio', 'Jitter p99 (frame interval − 20 ms)', 'Gaps per minute', 'CPU ms per audio second per guild', 'CPU ÷ floor', 'Memory per player (PSS)', 'Start to first frame p50 / p99', '`/play`, `/stop` unanswered / guilds not started (worst round)', 'The listener’s own event-loop delay p99'], rows),
    ].join('\n\n'),
  };
}

function renderHistory(result: ResultFile): Rendered {
  const { data } = result;
  const workload = obj(data['workload']);
  const results = obj(data['results']);
  const ratios = obj(data['ratios']);
  const maintenance = obj(data['maintenance']);
  const csv = obj(data['csvExport']);
  const seeding = obj(data['seeding']);
  const fill = data['usageSummaryFill'] === undefined ? undefined : obj(data['usageSummaryFill']);
  const dayOne = obj(results['empty']);
  const year = obj(results['year']);
  const rows = Object.keys(year).map((name) => {
    const [d, y, r] = [obj(dayOne[name]), obj(year[name]), obj(ratios[name])];
    return [name, ms(d['p50']), ms(d['p99']), ms(y['p50']), ms(y['p99']), `${fmt(r['p50'], 2)}×`, `${fmt(r['p99'], 2)}×`];
  });
  const passes = Object.keys(obj(maintenance['year'])).map((pass) => [pass, ms(obj(maintenance['empty'])[pass]), ms(obj(maintenance['year'])[pass])]);
  const scale = num(workload['scale']);
  const what = `A year of history (${fmt(workload['guilds'], 0)} guilds, ${fmt(workload['jobs'], 0)} jobs, ${fmt(workload['ledger'], 0)} movements${scale === 1 ? '' : `: ${fmt(scale, 3)} of the full year`}) against the first day`;
  const worst = Math.max(...Object.entries(ratios).filter(([name]) => name !== 'history CSV export').map(([, r]) => num(obj(r)['p99'])));
  const yearExport = obj(csv['year']);
  return {
    summary: [what, `worst member-facing p99 ${fmt(worst, 2)}× day 1`, 'the same commands on day 1', str(data['target']), met(data['met'])],
    body: [
      `${cap(what)}, seeded in ${fmt(seeding['seconds'])} s; ${fmt(workload['rounds'], 0)} rounds of each command, ${workload['alternated'] === true ? 'day 1 and the year side by side, measured alternately, ' : ''}one at a time. Target: ${str(data['target'])}. Met: ${met(data['met'])}.`,
      table(['Command', 'Day 1 p50', 'Day 1 p99', 'Year p50', 'Year p99', 'p50 ×', 'p99 ×'], rows),
      table(['Maintenance pass (database work)', 'Day 1', 'Year'], passes),
      `The CSV export of a guild with ${fmt(csv['movements'], 0)} movements: ${fmt(num(yearExport['bytes']) / 1024, 0)} KiB, the bot's resident memory grew by up to ${fmt(yearExport['peakRssGrowthMb'])} MB while it exported. Plans: [decisions/year-of-history.md](decisions/year-of-history.md).`,
      ...(fill === undefined
        ? []
        : [`Upgrading this database to the usage summaries (migration 0011): its online fill took ${ms(fill['totalMs'])} in all, while the slowest of ${fmt(fill['movements'], 0)} movements made meanwhile took ${ms(fill['slowestMovementMs'])}.`]),
    ].join('\n\n'),
  };
}

function renderIdentify(result: ResultFile): Rendered {
  const { data } = result;
  const workload = obj(data['workload']);
  const cases = (data['cases'] as Json[] | undefined) ?? [];
  const name = (one: Json) => `${fmt(one['shards'], 0)} shards, max_concurrency ${fmt(one['maxConcurrency'], 0)}`;
  const figure = (one: Json) => obj(one['identifyToReady']);
  const rows = cases.map((one) => [
    name(one),
    `${fmt(figure(one)['median'])} s`,
    `${fmt(figure(one)['worst'])} s`,
    `${fmt(one['floorSeconds'], 0)} s`,
    `${fmt(obj(one['spawnToReady'])['median'])} s`,
    fmt(one['identifiesRefused'], 0),
  ]);
  const what = `a cold deployment's shards from the first IDENTIFY to the last ready, ${fmt(workload['processes'], 0)} gateway processes sharing the identify queue; median of ${fmt(workload['rounds'], 0)} rounds`;
  return {
    summary: [
      what,
      cases.map((one) => `${name(one)}: ${fmt(figure(one)['median'])} s`).join('; '),
      cases.map((one) => `${fmt(one['floorSeconds'], 0)} s`).join(', ') + ` (Discord's pacing: (⌈shards ÷ max_concurrency⌉ − 1) × ${fmt(workload['windowSeconds'], 0)} s)`,
      str(data['target']),
      met(data['met']),
    ],
    body: [
      `${cap(what)}. The floor is Discord's pacing alone, every IDENTIFY at the first moment allowed and READY at once. Target: ${str(data['target'])}. Met: ${met(data['met'])}. Why start-up works this way: [decisions/gateway-start.md](decisions/gateway-start.md).`,
      table(['Shards', 'Identify to ready, median', 'Worst', 'Floor', 'Spawn to ready, median', 'Identifies refused'], rows),
    ].join('\n\n'),
  };
}

function renderBlocklist(result: ResultFile): Rendered {
  const { data } = result;
  const workload = obj(data['workload']);
  const small = (value: unknown) => `${fmt(value, 3)} ms`;
  const figure = (check: string, key: string) => medianSpread(obj(obj(data[check])[key]), small);
  const what = `the blocklist check of a ${fmt(workload['promptChars'], 0)}-character prompt against ${fmt(workload['entries'], 0)} entries; ${fmt(workload['checksPerRound'], 0)} checks a round, median of ${fmt(workload['rounds'], 0)} rounds`;
  const row = (label: string, check: string) => [label, figure(check, 'p50'), figure(check, 'p99'), figure(check, 'cpuP50'), figure(check, 'cpuP99')];
  return {
    summary: [what, `p99 ${figure('matcherMs', 'p99')}, CPU p99 ${figure('matcherMs', 'cpuP99')}`, `p99 ${figure('floorMs', 'p99')} (lowercase + \`includes\` per entry)`, str(data['target']), met(data['met'])],
    body: [
      `${cap(what)}. The floor lowercases the prompt and looks for each lowercased entry in it. CPU time is the process's own, which other processes on a busy machine do not add to (load average ${fmt(data['loadAverage'], 2)} at the end). Compiling the list took ${small(data['compileMs'])}. Target: ${str(data['target'])}. Met: ${met(data['met'])}. How it matches: [decisions/blocklist-matching.md](decisions/blocklist-matching.md).`,
      table(['Check', 'p50', 'p99', 'CPU p50', 'CPU p99'], [row('matcher', 'matcherMs'), row('floor', 'floorMs')]),
    ].join('\n\n'),
  };
}

function renderOther(result: ResultFile): Rendered {
  const header = ['benchmark', 'date', 'commit', 'commitDirty'];
  const scalars = Object.entries(result.data).filter(([key, value]) => !header.includes(key) && ['number', 'boolean', 'string'].includes(typeof value));
  return {
    summary: [str(result.data['target']) || '–', scalars.map(([key, value]) => `${key} ${typeof value === 'number' ? fmt(value) : String(value)}`).join('; '), '–', str(result.data['target']) || '–', met(result.data['met'])],
    body: table(['Field', 'Value'], scalars.map(([key, value]) => [key, typeof value === 'number' ? fmt(value) : String(value)])),
  };
}

function renderDashboard(result: ResultFile): Rendered {
  const { data } = result;
  const workload = obj(data['workload']);
  const busy = obj(workload['busyGuild']);
  const scale = num(workload['scale']);
  const results = obj(data['results']);
  const row = (name: string, figures: Json) => [name, fmt(figures['n'], 0), ms(figures['p50']), ms(figures['p95']), ms(figures['p99']), ms(figures['max'])];
  const halves = (key: string, name: string) => ['first', 'second'].map((half) => row(`${name}, ${half} half`, obj(obj(results[key])[half])));
  const what = `the overview page (its data read and its HTML rendered) for a busy guild (${fmt(busy['movements'], 0)} movements, ${fmt(busy['songs'], 0)} songs) after a year of history (${fmt(workload['guilds'], 0)} guilds, ${fmt(workload['ledger'], 0)} movements${scale === 1 ? '' : `: ${fmt(scale, 3)} of the full year`})`;
  return {
    summary: [what, `p50 ${ms(data['p50'])}, p99 ${ms(data['p99'])}`, `p99 ${ms(data['floorP99'])} (90 days grouped from the ledger)`, str(data['target']), met(data['met'])],
    body: [
      `${cap(what)}, ${fmt(workload['rounds'], 0)} rounds in two alternated halves; the worse half by p99 is reported. Seeded in ${fmt(obj(data['seeding'])['seconds'])} s; the daily flows' online fill took ${fmt(data['backfillSeconds'])} s. Target: ${str(data['target'])}. Met: ${met(data['met'])}.`,
      table(['What', 'n', 'p50', 'p95', 'p99', 'max'], [...halves('page', 'overview page'), ...halves('floor', 'floor')]),
    ].join('\n\n'),
  };
}

function renderOne(result: ResultFile): Rendered {
  const name = str(result.data['benchmark']) || result.file.replace(/\.json$/, '');
  if (name === 'ack' || name.startsWith('ack-')) return renderAck(result);
  if (name === 'history' || name.startsWith('history-')) return renderHistory(result);
  if (name === 'dashboard' || name.startsWith('dashboard-')) return renderDashboard(result);
  const renderers: Record<string, (result: ResultFile) => Rendered> = {
    accept: renderAccept,
    ledger: renderLedger,
    webhook: renderWebhook,
    poll: renderPoll,
    scale: renderScale,
    scrape: renderScrape,
    chaos: renderChaos,
    voice: renderVoice,
    identify: renderIdentify,
    blocklist: renderBlocklist,
  };
  return (renderers[name] ?? renderOther)(result);
}

const INTRO = `# Performance

<!-- Written by \`npm run bench:docs\` from bench/results/*.json: edit the script (bench/render-docs.ts), not this page. -->

\`npm run bench\` runs the benchmarks one after another, each against the real parts (the bot
as \`npm start\` runs it, the Discord emulator, the music-API simulator, an embedded Postgres and
a \`redis-server\`), each with its floor measured in the same run; \`npm run bench -- <name>\`
runs one (flags after the name, e.g. \`npm run bench -- accept --roles split\`), and
\`npm run bench:webhook\` is \`npm run bench -- webhook\`. \`npm run chaos\` runs the chaos suite.
Each writes \`bench/results/<name>.json\` with its figures, the machine, the date and the commit it
measured, and its targets with whether each was met; a benchmark exits non-zero when one is
missed, unless given \`--report-only\`, and \`npm run bench\`'s summary names every miss. Then
\`npm run bench:docs\` renders this page from those files, marking **stale** any file measured
before the last commit that changed the code on its benchmark's path. \`npm test\` holds no timed
assertion. Why the figures are what they are:
[decisions/first-answer-path.md](decisions/first-answer-path.md); how floors and targets are
chosen: [decisions/benchmark-floors-and-targets.md](decisions/benchmark-floors-and-targets.md).`;

/** The order of the page: the suite's order, a benchmark's other workloads after it, unknown names last. */
const ORDER = ['ack', 'accept', 'ledger', 'webhook', 'poll', 'scale', 'scrape', 'voice', 'history', 'dashboard', 'identify', 'blocklist', 'chaos'];
const rank = (name: string) => {
  const index = ORDER.findIndex((known) => name === known || name.startsWith(`${known}-`));
  return index < 0 ? ORDER.length : index;
};

/** The whole of docs/performance.md, from the results files. */
export function renderPerformance(files: readonly ResultFile[]): string {
  const nameOf = (result: ResultFile) => str(result.data['benchmark']) || result.file.replace(/\.json$/, '');
  const results = [...files].sort((a, b) => rank(nameOf(a)) - rank(nameOf(b)) || (nameOf(a) < nameOf(b) ? -1 : nameOf(a) > nameOf(b) ? 1 : 0));
  const rendered = results.map((result) => ({ result, name: str(result.data['benchmark']) || result.file.replace(/\.json$/, ''), ...renderOne(result) }));
  const summary = table(
    ['Benchmark', 'What', 'Measured', 'Floor (same run)', 'Target', 'Met'],
    rendered.map(({ name, result, summary: row }) => [
      `[\`${name}\`](#${anchor(name)})`,
      ...row.slice(0, 1),
      `${isMarkedStale(result) ? '**stale** (measured before the last change to its code): ' : ''}${row[1]}`,
      ...row.slice(2, 4),
      `${row[4]}; ${str(result.data['date']).slice(0, 10)}`,
    ]),
  );
  const sections = rendered.map(({ name, result, body }) => [`## ${name}`, provenance(result), body, targetsTable(result)].filter(Boolean).join('\n\n'));
  return `${[INTRO, '## Summary', summary, ...sections].join('\n\n')}\n`;
}

/** GitHub's anchor for a heading made of a benchmark's name. */
const anchor = (name: string) => name.toLowerCase().replace(/[^a-z0-9 _-]/g, '').replaceAll(' ', '-');

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  writeFileSync(PERFORMANCE_DOC, renderPerformance(readResults()));
  console.log(`written: ${path.relative(ROOT, PERFORMANCE_DOC)}`);
}
