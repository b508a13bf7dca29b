/**
 * `npm run lockfile:complete`, run after `npm install`: adds to package-lock.json the other
 * platforms' optional binaries a single-platform registry mirror left out, so that `npm ci`
 * does not refuse the lock as out of sync (it skips them where they cannot be had).
 */
import { readFileSync, writeFileSync } from 'node:fs';

interface LockEntry {
  version?: string;
  optional?: boolean;
  dev?: boolean;
  devOptional?: boolean;
  optionalDependencies?: Record<string, string>;
  [key: string]: unknown;
}

const path = process.argv[2] ?? 'package-lock.json';
const lock = JSON.parse(readFileSync(path, 'utf8')) as { packages: Record<string, LockEntry> };
let added = 0;

for (const [location, entry] of Object.entries(lock.packages)) {
  for (const [name, range] of Object.entries(entry.optionalDependencies ?? {})) {
    const nested = `${location ? `${location}/` : ''}node_modules/${name}`;
    const hoisted = `node_modules/${name}`;
    if (lock.packages[nested] || lock.packages[hoisted]) continue;
    if (!/^\d+\.\d+\.\d+/.test(range)) continue;
    lock.packages[hoisted] = {
      version: range,
      optional: true,
      ...(entry.dev && { dev: true }),
      ...(entry.devOptional && { devOptional: true }),
    };
    added += 1;
  }
}

lock.packages = Object.fromEntries(Object.entries(lock.packages).sort(([a], [b]) => (a === '' ? -1 : b === '' ? 1 : a.localeCompare(b))));
writeFileSync(path, `${JSON.stringify(lock, null, 2)}\n`);
console.log(`added ${added} optional platform packages to ${path}`);
