/**
 * Runs chaos scenarios in one world, one after another, and checks each against the records:
 * the ledger, the simulator's charges and refunds, and every message Discord received. Then
 * scans every log line and every request the bot sent to Discord for the secrets.
 */
import { printTable, round } from '../bench/support.js';
import type { Scenario, ScenarioResult, ScenarioSize } from './scenario.js';
import { SCENARIOS } from './scenarios/index.js';
import { startChaosWorld, type ChaosWorld } from './world.js';

export interface ChaosReport {
  readonly scenarios: ReadonlyArray<{ readonly name: string; readonly title: string; readonly seconds: number; readonly passed: boolean } & ScenarioResult>;
  readonly totals: Readonly<Record<TotalName, number>> & { readonly jobs: number };
  readonly passed: boolean;
  /** `chaos: N jobs, lost 0, duplicated 0, …`: the line the issue asks for. */
  readonly line: string;
}

const TOTALS = ['lost', 'duplicated', 'duplicatedUpstream', 'doubleCharged', 'ledgerDrift', 'crashes', 'acceptedForgeries', 'secrets'] as const;
type TotalName = (typeof TOTALS)[number];
const TOTAL_WORDS: Record<TotalName, string> = {
  lost: 'lost',
  duplicated: 'duplicated',
  duplicatedUpstream: 'duplicated upstream',
  doubleCharged: 'double-charged',
  ledgerDrift: 'ledger drift',
  crashes: 'crashes',
  acceptedForgeries: 'accepted forgeries',
  secrets: 'secrets',
};

export function scenariosNamed(names: readonly string[]): Scenario[] {
  if (names.length === 0) return [...SCENARIOS];
  const unknown = names.filter((name) => !SCENARIOS.some((scenario) => scenario.name === name));
  if (unknown.length > 0) throw new Error(`unknown scenario: ${unknown.join(', ')} (there are: ${SCENARIOS.map((s) => s.name).join(', ')})`);
  return SCENARIOS.filter((scenario) => names.includes(scenario.name));
}

export interface RunOptions {
  readonly log?: (line: string) => void;
  /** A world to run in, left running afterwards; by default one of its own, closed at the end. */
  readonly world?: ChaosWorld;
}

export async function runChaos(scenarios: readonly Scenario[], size: ScenarioSize, options: RunOptions = {}): Promise<ChaosReport> {
  const log = options.log ?? console.log;
  const world = options.world ?? (await startChaosWorld());
  const results: Array<ChaosReport['scenarios'][number]> = [];
  try {
    for (const scenario of scenarios) {
      log(`\n--- ${scenario.name}: ${scenario.title}`);
      const started = performance.now();
      let result: ScenarioResult;
      try {
        result = await scenario.run(world, size);
      } catch (error) {
        // A scenario that cannot finish is a finding, not an end to the run.
        result = { zero: { finished: 1 }, info: {}, details: [`the scenario did not finish: ${(error as Error).stack ?? String(error)}`] };
      }
      const passed = Object.values(result.zero).every((value) => value === 0);
      results.push({ name: scenario.name, title: scenario.title, seconds: round((performance.now() - started) / 1000, 1), passed, ...result });
      for (const detail of result.details.slice(0, 20)) log(`  ${detail}`);
      if (result.details.length > 20) log(`  … and ${result.details.length - 20} more`);
    }
    results.push(await secretsScan(world));
  } finally {
    if (!options.world) await world.close();
  }

  printTable(
    'chaos',
    results.map((result) => ({
      scenario: result.name,
      ...Object.fromEntries(TOTALS.map((name) => [TOTAL_WORDS[name], result.zero[name] ?? ''])),
      other: Object.entries(result.zero)
        .filter(([name]) => !(TOTALS as readonly string[]).includes(name))
        .map(([name, value]) => `${name} ${value}`)
        .join(', '),
      info: Object.entries(result.info)
        .map(([name, value]) => `${name} ${value}`)
        .join(', '),
      seconds: result.seconds,
      passed: result.passed ? 'yes' : 'NO',
    })),
  );
  const sum = (name: string) => results.reduce((total, result) => total + (result.zero[name] ?? 0), 0);
  const jobs = results.reduce((total, result) => total + (typeof result.info['jobs'] === 'number' ? result.info['jobs'] : 0), 0);
  const totals = { jobs, ...Object.fromEntries(TOTALS.map((name) => [name, sum(name)])) } as ChaosReport['totals'];
  const line = `chaos: ${jobs} jobs, ${TOTALS.map((name) => `${TOTAL_WORDS[name]} ${totals[name]}`).join(', ')}`;
  log(`\n${line}`);
  return { scenarios: results, totals, passed: results.every((result) => result.passed), line };
}

/**
 * 7. Secrets: the bot token, the API key, every job's webhook secret and every interaction token,
 * searched for in every log line of every process and in every request sent to Discord (bodies,
 * and paths but for the interaction token in an interaction's own webhook path, where Discord puts it).
 */
async function secretsScan(world: ChaosWorld): Promise<ChaosReport['scenarios'][number]> {
  const started = performance.now();
  const secrets = new Map<string, string>();
  for (const secret of world.secrets) secrets.set(secret, 'a configured secret');
  const tokenInPath = (path: string) => /^\/(?:webhooks\/\d+|interactions\/\d+)\/([^/]+)/.exec(path)?.[1];
  // Every interaction the bot answered: its token is in the path of the answer.
  for (const request of world.emulator.requests) {
    const token = tokenInPath(request.path);
    if (token) secrets.set(token, 'an interaction token');
  }
  const { rows } = await world.db.query<{ secret: string }>('select webhook_secret as secret from jobs where webhook_secret is not null');
  for (const row of rows) secrets.set(row.secret, 'a webhook secret');
  const details: string[] = [];
  let hits = 0;
  const check = (where: string, text: string, allowed?: string) => {
    for (const [secret, what] of secrets) {
      if (secret.length < 8 || secret === allowed || !text.includes(secret)) continue;
      hits += 1;
      if (details.length < 20) details.push(`${what} in ${where}: ${text.slice(0, 200).replaceAll(secret, '<secret>')}`);
    }
  };
  for (const line of world.logLines()) check('a log line', line);
  for (const request of world.emulator.requests) {
    check(`the body of ${request.method} ${request.route ?? '?'}`, JSON.stringify(request.body ?? null));
    check(`the path of ${request.method} ${request.route ?? '?'}`, request.path, tokenInPath(request.path));
  }
  return {
    name: 'secrets',
    title: 'the secrets, in every log line and every request to Discord',
    seconds: round((performance.now() - started) / 1000, 1),
    passed: hits === 0,
    zero: { secrets: hits },
    info: { scanned: `${world.logLines().length} log lines, ${world.emulator.requests.length} requests, ${secrets.size} secrets` },
    details,
  };
}
