/**
 * No two folders import each other: a cycle between src/a/ and src/b/ fails even when no file
 * imports back the file that imported it (which dependency-cruiser's no-circular already
 * fails). The files at src/'s root (the entry points, config, logger) are each their own node,
 * commands/ and each package one folder. dependency-cruiser's own folder rules count src/'s
 * root as one folder, through which every folder would reach every other.
 */
import { execFile } from 'node:child_process';
import { mkdtemp, mkdir, rm, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { afterEach, describe, expect, it } from 'vitest';

const ROOT = path.resolve(import.meta.dirname, '../../..');
const run = promisify(execFile);
/** What counts as one folder: a folder right under src/, commands/, a package. */
const FOLDER = '^(src/[^/]+/|commands/|packages/[^/]+/)';
let tree: string | undefined;

/** The folder cycles of the tree at `cwd`, each as the folders it goes through, back to its first. */
async function folderCycles(cwd: string, folders: readonly string[]): Promise<string[][]> {
  const args = [
    path.join(ROOT, 'node_modules/dependency-cruiser/bin/dependency-cruise.mjs'),
    ...folders,
    '--config',
    path.join(ROOT, '.dependency-cruiser.cjs'),
    '--collapse',
    FOLDER,
    '--output-type',
    'json',
  ];
  const { stdout } = await run(process.execPath, args, { cwd, maxBuffer: 64 * 1024 * 1024 });
  const result = JSON.parse(stdout) as { modules: { source: string; dependencies: { resolved: string; dependencyTypes: string[] }[] }[] };
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

/** Writes `files` (path → source) into a fresh tree beside the real node_modules. */
async function treeOf(files: Record<string, string>): Promise<string> {
  tree = await mkdtemp(path.join(tmpdir(), 'folders-'));
  await symlink(path.join(ROOT, 'node_modules'), path.join(tree, 'node_modules'));
  await writeFile(path.join(tree, 'tsconfig.json'), JSON.stringify({ compilerOptions: { module: 'NodeNext', moduleResolution: 'NodeNext' } }));
  for (const [file, source] of Object.entries(files)) {
    await mkdir(path.dirname(path.join(tree, file)), { recursive: true });
    await writeFile(path.join(tree, file), source);
  }
  return tree;
}

afterEach(async () => {
  if (tree) await rm(tree, { recursive: true, force: true });
  tree = undefined;
});

describe('folder cycles', { timeout: 60_000 }, () => {
  it('are found between two folders whose files never import each other back', async () => {
    const cwd = await treeOf({
      'src/credits/ledger.ts': "import { pool } from '../db/pool.js';\nexport const ledger = pool;\n",
      'src/db/pool.ts': 'export const pool = 1;\n',
      'src/db/report.ts': "import { ledger } from '../credits/ledger.js';\nexport const report = ledger;\n",
      'src/config.ts': "import { pool } from './db/pool.js';\nexport const config = pool;\n",
      'src/guilds/settings.ts': "import { config } from '../config.js';\nexport const settings = config;\n",
    });
    expect(await folderCycles(cwd, ['src'])).toEqual([['src/credits/', 'src/db/', 'src/credits/']]);
  });

  it('are found through a third folder, and not through the files at src/\'s root', async () => {
    const cwd = await treeOf({
      'src/a/one.ts': "import { two } from '../b/two.js';\nexport const one = two;\n",
      'src/b/two.ts': "import { three } from '../c/three.js';\nexport const two = three;\n",
      'src/c/three.ts': "import { four } from '../a/four.js';\nexport const three = four;\n",
      'src/a/four.ts': 'export const four = 4;\n',
      'src/app.ts': "import { one } from './a/one.js';\nexport const app = one;\n",
      'src/d/uses-app.ts': "import { app } from '../app.js';\nexport const d = app;\n",
      'src/logger.ts': 'export const logger = 1;\n',
      'src/e/logs.ts': "import { logger } from '../logger.js';\nimport { d } from '../d/uses-app.js';\nexport const e = [logger, d];\n",
    });
    expect(await folderCycles(cwd, ['src'])).toEqual([['src/a/', 'src/b/', 'src/c/', 'src/a/']]);
  });

  it('are none in the bot', async () => {
    expect(await folderCycles(ROOT, ['src', 'commands', 'packages'])).toEqual([]);
  });
});
