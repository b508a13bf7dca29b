/**
 * `npm run bench` runs every benchmark, one after another, each in its own process (so one's
 * memory and connections never weigh on the next); `npm run bench -- <name> [<name>…]` runs
 * some. Each prints its table and writes `bench/results/<name>.json`.
 */
import { spawn } from 'node:child_process';
import path from 'node:path';
import { ROOT } from '@music-bot/test-world';

export const BENCHMARKS = ['ack', 'accept', 'ledger', 'webhook', 'poll', 'scale', 'scrape', 'voice', 'history'] as const;

// Names first; anything from the first flag on goes to the benchmarks (`npm run bench -- ack --rate 100`).
const firstFlag = process.argv.slice(2).findIndex((arg) => arg.startsWith('-'));
const asked = firstFlag < 0 ? process.argv.slice(2) : process.argv.slice(2, 2 + firstFlag);
const passOn = firstFlag < 0 ? [] : process.argv.slice(2 + firstFlag);
const unknown = asked.filter((name) => !(BENCHMARKS as readonly string[]).includes(name));
if (unknown.length > 0) {
  console.error(`unknown benchmark: ${unknown.join(', ')} (there are: ${BENCHMARKS.join(', ')})`);
  process.exit(2);
}
const names = asked.length > 0 ? asked : [...BENCHMARKS];
const started = performance.now();
const outcomes: Array<{ name: string; seconds: number; ok: boolean }> = [];
for (const name of names) {
  console.log(`\n=== ${name} ===`);
  const begun = performance.now();
  const code = await new Promise<number | null>((resolve) => {
    const child = spawn(process.execPath, ['--import', 'tsx', path.join(ROOT, 'test/bench', `${name}.ts`), ...passOn], { cwd: ROOT, stdio: 'inherit' });
    child.once('exit', (exitCode) => resolve(exitCode));
  });
  outcomes.push({ name, seconds: Math.round((performance.now() - begun) / 100) / 10, ok: code === 0 });
}
console.log('\n=== summary ===');
for (const outcome of outcomes) console.log(`${outcome.ok ? 'ok    ' : 'FAILED'} ${outcome.name.padEnd(8)} ${outcome.seconds} s`);
console.log(`total ${Math.round((performance.now() - started) / 1000)} s`);
process.exit(outcomes.every((outcome) => outcome.ok) ? 0 : 1);
