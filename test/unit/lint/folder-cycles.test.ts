/** The folder-cycle check `npm run lint` runs (test/support/folder-cycles.ts), on made-up trees and on the bot. */
import { mkdtemp, mkdir, rm, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { folderCycles } from '../../support/folder-cycles.js';

const ROOT = path.resolve(import.meta.dirname, '../../..');
let tree: string | undefined;

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
