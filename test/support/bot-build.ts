/**
 * The bot compiled once for a test run, as the image compiles it (`tsc -p tsconfig.build.json`),
 * so that the suite's bot processes start from JavaScript rather than through tsx each time, and
 * that build bundled into one file per entry point beside it (`bundle/`, see ./bot-bundle.ts).
 * The build is kept under node_modules/.cache, named by a hash of what it is made from: a run
 * over unchanged sources reuses it, and runs side by side never write into one another's.
 */
import { execFile } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync } from 'node:fs';
import { mkdir, readdir, readFile, rename, rm, stat, symlink } from 'node:fs/promises';
import path from 'node:path';
import { promisify } from 'node:util';
import { bundleBuild } from './bot-bundle.js';

const ROOT = path.resolve(import.meta.dirname, '../..');
const CACHE = path.join(ROOT, 'node_modules/.cache/music-bot-build');
/** Builds kept for other checkouts' or earlier runs' sources. */
const KEEP = 3;

async function filesUnder(folder: string): Promise<string[]> {
  const entries = await readdir(path.join(ROOT, folder), { withFileTypes: true, recursive: true });
  return entries
    .filter((entry) => entry.isFile() && entry.name.endsWith('.ts'))
    .map((entry) => path.relative(ROOT, path.join(entry.parentPath, entry.name)))
    .sort();
}

/**
 * A hash of every file the build is made from: the sources, how they are built, the installed
 * packages (the bundle holds their code; npm records what it installed in node_modules), and the
 * checkout (the bundle and the migrations' link name paths in it).
 */
async function sourcesHash(): Promise<string> {
  const hash = createHash('sha256').update(ROOT).update('\0');
  const recipe = ['test/support/bot-build.ts', 'test/support/bot-bundle.ts'];
  const installed = ['node_modules/.package-lock.json'].filter((file) => existsSync(path.join(ROOT, file)));
  const files = ['tsconfig.json', 'tsconfig.build.json', ...recipe, ...installed, ...(await filesUnder('src')), ...(await filesUnder('commands'))];
  for (const file of files) hash.update(file).update('\0').update(await readFile(path.join(ROOT, file))).update('\0');
  return hash.digest('hex').slice(0, 16);
}

/**
 * The folder of a build of the current sources, compiled now unless one exists. Types are not
 * checked (`--noCheck`: the same JavaScript as the image's `tsc`, in about a third of the CPU, at
 * the run's start where nothing else runs yet); `npm run typecheck` is where types are judged.
 */
export async function compiledBot(): Promise<string> {
  const folder = path.join(CACHE, await sourcesHash());
  if (existsSync(path.join(folder, 'bundle/src/main.js'))) return folder;
  await mkdir(CACHE, { recursive: true });
  const partial = `${folder}.partial-${process.pid}`;
  await rm(partial, { recursive: true, force: true });
  try {
    await promisify(execFile)(process.execPath, [path.join(ROOT, 'node_modules/typescript/bin/tsc'), '-p', 'tsconfig.build.json', '--noCheck', '--outDir', partial], { cwd: ROOT });
  } catch (error) {
    if (!existsSync(path.join(partial, 'src/main.js'))) throw error;
  }
  // The build looks for the migrations beside itself, as the image has them.
  await symlink(path.join(ROOT, 'migrations'), path.join(partial, 'migrations'));
  await bundleBuild(partial, folder);
  // Whole or not at all: another run may have finished the same build meanwhile.
  await rename(partial, folder).catch(() => rm(partial, { recursive: true, force: true }));
  await pruneOldBuilds(folder);
  return folder;
}

async function pruneOldBuilds(current: string): Promise<void> {
  const names = (await readdir(CACHE)).filter((name) => !name.includes('.partial-'));
  const aged = await Promise.all(names.map(async (name) => ({ name, at: (await stat(path.join(CACHE, name))).mtimeMs })));
  const old = aged.sort((a, b) => b.at - a.at).slice(KEEP).map((entry) => path.join(CACHE, entry.name));
  await Promise.all(old.filter((folder) => folder !== current).map((folder) => rm(folder, { recursive: true, force: true })));
}
