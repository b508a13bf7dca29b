/**
 * No two folders import each other: a cycle between src/a/ and src/b/ fails even when no file
 * imports back the file that imported it (which dependency-cruiser's no-circular already
 * fails). The files at src/'s root (the entry points, config, logger) are each their own node,
 * commands/ and each package one folder. dependency-cruiser's own folder rules count src/'s
 * root as one folder, through which every folder would reach every other. `npm run lint` runs
 * this over the bot and fails on any cycle.
 */
import path from 'node:path';
import { cruiseTree } from './depcruise.js';

const ROOT = path.resolve(import.meta.dirname, '../..');
/** What counts as one folder: a folder right under src/, commands/, a package. */
const FOLDER = '^(src/[^/]+/|commands/|packages/[^/]+/)';

/** The folder cycles of the tree at `cwd`, each as the folders it goes through, back to its first. */
export async function folderCycles(cwd: string, folders: readonly string[]): Promise<string[][]> {
  const result = await cruiseTree(cwd, folders, { collapse: FOLDER });
  const edges = new Map<string, Set<string>>();
  for (const module of result.modules) {
    const targets = module.dependencies
      .filter((dependency) => dependency.resolved !== module.source)
      .map((dependency) => dependency.resolved);
    edges.set(module.source, new Set(targets));
  }
  const isFolder = (node: string) => new RegExp(FOLDER).test(node) && node.endsWith('/');
  // A folder cycle: two folders that reach each other, the path between them through folders only.
  const cycles: string[][] = [];
  const folderNodes = [...edges.keys()].filter(isFolder).sort();
  for (const start of folderNodes) {
    const paths = [[start]];
    const seen = new Set([start]);
    while (paths.length > 0) {
      const trail = paths.shift()!;
      for (const next of edges.get(trail.at(-1)!) ?? []) {
        if (next === start) {
          // Each cycle once, from its first folder in order.
          if (trail.every((node) => node >= start)) cycles.push([...trail, start]);
        } else if (isFolder(next) && !seen.has(next)) {
          seen.add(next);
          paths.push([...trail, next]);
        }
      }
    }
  }
  return cycles;
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const cycles = await folderCycles(ROOT, ['src', 'commands', 'packages']);
  for (const cycle of cycles) console.error(`folder cycle: ${cycle.join(' -> ')}`);
  if (cycles.length > 0) process.exit(1);
  console.log('no folder cycles');
}
