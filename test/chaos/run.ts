/**
 * `npm run chaos [-- <scenario>…] [--quick] [--jobs N]`: the chaos suite. Prints a
 * table and the totals line, writes `bench/results/chaos.json` (not for `--quick` or a subset),
 * and exits 1 when any figure that must be 0 is not.
 */
import { parseArgs } from 'node:util';
import { pathWithBundledFfmpeg } from '@music-bot/test-world';
import { writeResult } from '../bench/support.js';
import { SCENARIOS } from './scenarios/index.js';
import { runChaos, scenariosNamed } from './suite.js';

const USAGE = `Usage: npm run chaos [-- <scenario>…] [--quick] [--jobs N]
  --quick    a short run (6 jobs a scenario unless --jobs says otherwise); writes no results file
  --jobs N   commands per scenario (default 200)
Scenarios: ${SCENARIOS.map((scenario) => scenario.name).join(', ')}`;

let parsed;
try {
  parsed = parseArgs({
    options: { quick: { type: 'boolean', default: false }, jobs: { type: 'string' }, help: { type: 'boolean', short: 'h', default: false } },
    allowPositionals: true,
  });
} catch (error) {
  console.error(`${(error as Error).message}\n${USAGE}`);
  process.exit(2);
}
const { values: flags, positionals } = parsed;
// The simulator makes its songs, and the bot plays them, with ffmpeg: npm's where the system has none.
process.env.PATH = pathWithBundledFfmpeg();
if (flags.help) {
  console.log(USAGE);
  process.exit(0);
}
const quick = flags.quick === true;
const jobs = Number(flags.jobs ?? (quick ? 6 : 200));
let scenarios;
try {
  scenarios = scenariosNamed(positionals);
} catch (error) {
  console.error((error as Error).message);
  process.exit(2);
}
const started = performance.now();
const report = await runChaos(scenarios, { jobs, quick });
if (!quick && positionals.length === 0) {
  await writeResult('chaos', {
    workload: { jobs, scenarios: scenarios.map((scenario) => scenario.name), processes: 'gateway, 2 workers, http' },
    target: 'every figure 0',
    totals: report.totals,
    line: report.line,
    passed: report.passed,
    scenarios: report.scenarios,
    seconds: Math.round((performance.now() - started) / 100) / 10,
  });
}
process.exit(report.passed ? 0 : 1);
