/**
 * The programs outside npm that the tests and the playground run, found where they will be run
 * from, and the one line that says how to install the missing ones on this machine. ffmpeg is
 * never missing where npm installed @ffmpeg-installer's binary for this platform: it goes last
 * on the PATH, so a system ffmpeg still wins.
 */
import { accessSync, constants, existsSync, readdirSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import os from 'node:os';
import path from 'node:path';

export type ToolsPurpose = 'test' | 'playground';

interface Tool {
  /** What the line calls it. */
  readonly name: string;
  readonly for: readonly ToolsPurpose[];
  /** Debian's and Ubuntu's package. */
  readonly apt: string;
  /** Homebrew's formula, or its cask. */
  readonly brew: string | { readonly cask: string };
  /** Where it is, or undefined when it is missing. */
  find(env: NodeJS.ProcessEnv): string | undefined;
}

const require = createRequire(import.meta.url);

/** The folder of the ffmpeg that npm installed from @ffmpeg-installer, if this platform has one. */
export function bundledFfmpegDir(): string | undefined {
  try {
    return path.dirname((require('@ffmpeg-installer/ffmpeg') as { path: string }).path);
  } catch {
    return undefined;
  }
}

/** `PATH` with the bundled ffmpeg's folder appended, for the processes the tests and the playground start. */
export function pathWithBundledFfmpeg(pathValue = process.env.PATH ?? ''): string {
  const dir = bundledFfmpegDir();
  if (dir === undefined || pathValue.split(path.delimiter).includes(dir)) return pathValue;
  return pathValue === '' ? dir : `${pathValue}${path.delimiter}${dir}`;
}

function isExecutable(file: string): boolean {
  try {
    accessSync(file, constants.X_OK);
    return true;
  } catch {
    return false;
  }
}

/** The first `name` on the PATH that can be run. */
export function onPath(name: string, env: NodeJS.ProcessEnv = process.env): string | undefined {
  for (const dir of (env.PATH ?? '').split(path.delimiter)) {
    if (dir === '') continue;
    const file = path.join(dir, name);
    if (isExecutable(file)) return file;
  }
  return undefined;
}

const BROWSER_NAMES = ['chromium', 'chromium-browser', 'google-chrome', 'google-chrome-stable'];
const BROWSER_APPS = ['/Applications/Chromium.app/Contents/MacOS/Chromium', '/Applications/Google Chrome.app/Contents/MacOS/Google Chrome', '/snap/bin/chromium'];

/** CHROMIUM_PATH when set (even if wrong, so the caller can say so), else a Chromium or Chrome on the PATH or in the usual places. */
export function findChromium(env: NodeJS.ProcessEnv = process.env): string | undefined {
  if (env.CHROMIUM_PATH) return env.CHROMIUM_PATH;
  for (const name of BROWSER_NAMES) {
    const found = onPath(name, env);
    if (found) return found;
  }
  return BROWSER_APPS.find(isExecutable);
}

/** Folders that may hold a Postgres installation's programs: the PATH's, then Debian's and Homebrew's per version, newest first. */
export function postgresBinDirs(env: NodeJS.ProcessEnv = process.env): string[] {
  const dirs = (env.PATH ?? '').split(path.delimiter).filter(Boolean);
  for (const parent of ['/usr/lib/postgresql', '/opt/homebrew/opt', '/usr/local/opt']) {
    if (!existsSync(parent)) continue;
    const names = readdirSync(parent).filter((name) => /^(\d+|postgresql(@\d+)?)$/.test(name));
    dirs.push(...names.sort((a, b) => b.localeCompare(a, 'en', { numeric: true })).map((name) => path.join(parent, name, 'bin')));
  }
  return [...new Set(dirs)];
}

/**
 * A Postgres installation with pg_dump and pg_restore beside a server they can read (initdb,
 * postgres): the backup test dumps a server of the tools' own version.
 */
export function findPostgresTools(env: NodeJS.ProcessEnv = process.env): string | undefined {
  return postgresBinDirs(env).find((dir) => ['pg_dump', 'pg_restore', 'initdb', 'postgres'].every((tool) => isExecutable(path.join(dir, tool))));
}

const TOOLS: readonly Tool[] = [
  { name: 'redis-server', for: ['test', 'playground'], apt: 'redis-server', brew: 'redis', find: (env) => onPath('redis-server', env) },
  { name: 'ffmpeg', for: ['test', 'playground'], apt: 'ffmpeg', brew: 'ffmpeg', find: (env) => onPath('ffmpeg', { PATH: pathWithBundledFfmpeg(env.PATH) }) },
  { name: 'chromium', for: ['test'], apt: 'chromium', brew: { cask: 'chromium' }, find: findChromium },
  { name: 'Postgres (pg_dump beside its server)', for: ['test'], apt: 'postgresql', brew: 'postgresql@17', find: findPostgresTools },
  { name: 'caddy', for: ['test'], apt: 'caddy', brew: 'caddy', find: (env) => onPath('caddy', env) },
];

export interface ToolsCheck {
  readonly missing: readonly string[];
  /** The one line to print when something is missing. */
  readonly line?: string;
}

/** Ubuntu packages Chromium as chromium-browser (a snap), Debian as chromium. */
function isUbuntu(): boolean {
  try {
    return /^ID=ubuntu$/m.test(readFileSync('/etc/os-release', 'utf8'));
  } catch {
    return false;
  }
}

/** The command that installs `tools` here: apt-get on Debian and Ubuntu (with sudo unless root), brew on macOS. */
function installCommand(tools: readonly Tool[]): string {
  if (process.platform === 'darwin') {
    const formulas = tools.flatMap((tool) => (typeof tool.brew === 'string' ? [tool.brew] : []));
    const casks = tools.flatMap((tool) => (typeof tool.brew === 'string' ? [] : [tool.brew.cask]));
    return [formulas.length > 0 && `brew install ${formulas.join(' ')}`, casks.length > 0 && `brew install --cask ${casks.join(' ')}`].filter(Boolean).join(' && ');
  }
  if (isExecutable('/usr/bin/apt-get')) {
    const sudo = os.userInfo().uid === 0 ? '' : 'sudo ';
    const packages = tools.map((tool) => (tool.apt === 'chromium' && isUbuntu() ? 'chromium-browser' : tool.apt));
    return `${sudo}apt-get update && ${sudo}apt-get install -y ${packages.join(' ')}`;
  }
  return `install ${tools.map((tool) => tool.apt).join(', ')} with your system's package manager`;
}

/** What `purpose` needs that this machine lacks, and the line that says how to install it. */
export function checkTools(purpose: ToolsPurpose, env: NodeJS.ProcessEnv = process.env): ToolsCheck {
  const needed = TOOLS.filter((tool) => tool.for.includes(purpose));
  const missing = needed.filter((tool) => tool.find(env) === undefined);
  if (missing.length === 0) return { missing: [] };
  const command = purpose === 'test' ? 'npm test' : 'npm run playground';
  const names = missing.map((tool) => tool.name);
  const list = names.length === 1 ? names[0] : `${names.slice(0, -1).join(', ')} and ${names.at(-1)}`;
  const browser = missing.some((tool) => tool.name === 'chromium') ? ' (or set CHROMIUM_PATH to a Chromium or Chrome)' : '';
  return {
    missing: names,
    line: `${command} needs ${list}, which this machine lacks; install with: ${installCommand(missing)}${browser}`,
  };
}
