/**
 * `npm run bench` runs every benchmark, one after another, each in its own process (so one's
 * memory and connections never weigh on the next); `npm run bench -- <name> [<name>…]` runs
 * some. Each prints its table and writes `bench/results/<name>.json`. The summary names every
 * target missed; the exit code is non-zero when a benchmark failed or missed a target, unless
 * `--report-only` (passed on to each benchmark) is given, which only reports.
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { pathWithBundledFfmpeg, ROOT } from '@music-bot/test-world';

export const BENCHMARKS = ['ack', 'accept', 'ledger', 'webhook', 'poll', 'scale', 'scrape', 'voice', 'history', 'identify', 'blocklist', 'dashboard'] as const;

// Names first; anything from the first flag on goes to the benchmarks (`npm run bench -- ack --rate 100`).
const firstFlag = process.argv.slice(2).findIndex((arg) => arg.startsWith('-'));
const asked = firstFlag < 0 ? process.argv.slice(2) : process.argv.slice(2, 2 + firstFlag);
const passOn = firstFlag < 0 ? [] : process.argv.slice(2 + firstFlag);
const unknown = asked.filter((name) => !(BENCHMARKS as readonly string[]).includes(name));
if (unknown.length > 0) {
  console.error(`unknown benchmark: ${unknown.join(', ')} (there are: ${BENCHMARKS.join(', ')})`);
  process.exit(2);
}
// Each benchmark's processes find ffmpeg as the tests do: npm's where the system has none.
process.env.PATH = pathWithBundledFfmpeg();
const names = asked.length > 0 ? asked : [...BENCHMARKS];
// Passed on by the environment (BENCH_REPORT_ONLY), so that a benchmark without the flag among its options takes it too.
const reportOnly = passOn.includes('--report-only');
const flagsOn = passOn.filter((arg) => arg !== '--report-only');
const scratch = mkdtempSync(path.join(os.tmpdir(), 'bench-'));
const started = performance.now();
const outcomes: Array<{ name: string; seconds: number; code: number | null; missed: string[] }> = [];
for (const name of names) {
  console.log(`\n=== ${name} ===`);
  const begun = performance.now();
  // Each benchmark appends `{ result, missed }` here for every results file it writes.
  const targetsFile = path.join(scratch, `${name}.jsonl`);
  const code = await new Promise<number | null>((resolve) => {
    const child = spawn(process.execPath, ['--import', 'tsx', path.join(ROOT, 'test/bench', `${name}.ts`), ...flagsOn], {
      cwd: ROOT,
      stdio: 'inherit',
      env: { ...process.env, BENCH_TARGETS_FILE: targetsFile, ...(reportOnly && { BENCH_REPORT_ONLY: '1' }) },
    });
    child.once('exit', (exitCode) => resolve(exitCode));
  });
  let lines: Array<{ result: string; missed: string[] }> = [];
  try {
    lines = readFileSync(targetsFile, 'utf8').trim().split('\n').filter(Boolean).map((line) => JSON.parse(line) as { result: string; missed: string[] });
  } catch {
    // No targets recorded: the benchmark states none, or it failed before its results.
  }
  const missed = lines.flatMap((line) => line.missed.map((what) => (line.result === name ? what : `${line.result}: ${what}`)));
  outcomes.push({ name, seconds: Math.round((performance.now() - begun) / 100) / 10, code, missed });
}
rmSync(scratch, { recursive: true, force: true });
console.log('\n=== summary ===');
for (const outcome of outcomes) {
  // A benchmark that missed a target exits 1 (0 with --report-only); FAILED is one that exited otherwise without a miss.
  const state = outcome.missed.length > 0 ? 'MISSED' : outcome.code === 0 ? 'ok    ' : 'FAILED';
  console.log(`${state} ${outcome.name.padEnd(8)} ${outcome.seconds} s`);
  for (const what of outcome.missed) console.log(`         target missed: ${what}`);
}
console.log(`total ${Math.round((performance.now() - started) / 1000)} s`);
const failed = outcomes.some((outcome) => outcome.code !== 0);
const missedAny = outcomes.some((outcome) => outcome.missed.length > 0);
if (missedAny && reportOnly) console.log('targets missed, reported only (--report-only)');
process.exit(failed || (missedAny && !reportOnly) ? 1 : 0);
