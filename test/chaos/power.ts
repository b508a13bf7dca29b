/**
 * A power cut's tools for the chaos world: a server's processes found from its pid file and
 * /proc, stopped and killed (SIGKILL) together; and Redis's append-only file cut back to what a
 * disk under `appendfsync everysec` may have kept when the power went (up to a second less
 * than redis-server had written, since the kernel's unsynced pages die with the machine).
 */
import { existsSync } from 'node:fs';
import { readdir, readFile, stat, truncate } from 'node:fs/promises';
import path from 'node:path';
import { waitFor } from '@music-bot/test-world';

/** The first line of a pid file (postmaster.pid's first line; all of redis.pid), if it names a pid. */
export async function pidFromFile(file: string): Promise<number | undefined> {
  const text = await readFile(file, 'utf8').catch(() => '');
  const pid = Number(text.split('\n')[0]?.trim());
  return Number.isInteger(pid) && pid > 0 ? pid : undefined;
}

async function statOf(pid: number): Promise<{ state: string; parent: number } | undefined> {
  const text = await readFile(`/proc/${pid}/stat`, 'utf8').catch(() => undefined);
  if (text === undefined) return undefined;
  // "pid (comm) state ppid …": comm may hold spaces and parentheses, so read after the last ')'.
  const [state, parent] = text.slice(text.lastIndexOf(')') + 2).split(' ');
  return { state: state ?? '?', parent: Number(parent) };
}

/** The processes whose parent is `pid`: Postgres's backends and helpers, Redis's rewrite child. */
export async function childrenOf(pid: number): Promise<number[]> {
  const entries = await readdir('/proc');
  const children: number[] = [];
  await Promise.all(
    entries
      .filter((entry) => /^\d+$/.test(entry))
      .map(async (entry) => {
        if ((await statOf(Number(entry)))?.parent === pid) children.push(Number(entry));
      }),
  );
  return children;
}

/** Gone, or a zombie (it holds no memory, files or sockets any more; its parent has yet to reap it). */
async function gone(pid: number): Promise<boolean> {
  const status = await statOf(pid);
  return status === undefined || status.state === 'Z' || status.state === 'X';
}

/** Resolves once every pid is gone; throws after `timeoutMs`. */
export async function waitGone(pids: readonly number[], timeoutMs = 10_000): Promise<void> {
  await waitFor(
    `processes ${pids.join(', ')} to be gone after SIGKILL`,
    async () => (await Promise.all(pids.map((pid) => gone(pid)))).every(Boolean),
    { timeoutMs, everyMs: 20 },
  );
}

/** Sends `signal` to each pid, now, in this order; a pid already gone is skipped. */
export function signalAll(pids: readonly number[], signal: NodeJS.Signals): void {
  for (const pid of pids) {
    try {
      process.kill(pid, signal);
    } catch {
      // Already gone.
    }
  }
}

/** Where redis-server appends (its data dir's `appendonlydir`, Redis 7's multi-part AOF). */
const AOF_DIR = 'appendonlydir';

/** How far the file redis-server appends to had grown at one moment. */
export interface AppendOnlyMark {
  readonly file: string;
  readonly size: number;
  readonly at: number;
}

/** The append-only file redis-server is writing to now (the manifest's last `type i` file) and its size. */
export async function appendOnlyMark(redisDir: string): Promise<AppendOnlyMark | undefined> {
  const dir = path.join(redisDir, AOF_DIR);
  const manifestName = existsSync(dir) ? (await readdir(dir)).find((name) => name.endsWith('.manifest')) : undefined;
  if (!manifestName) return undefined;
  const manifest = await readFile(path.join(dir, manifestName), 'utf8').catch(() => '');
  const incremental = manifest
    .split('\n')
    .map((line) => /^file (\S+) seq \d+ type i\b/.exec(line)?.[1])
    .filter((name): name is string => name !== undefined)
    .at(-1);
  if (!incremental) return undefined;
  const size = await stat(path.join(dir, incremental)).then((file) => file.size, () => undefined);
  return size === undefined ? undefined : { file: incremental, size, at: Date.now() };
}

/**
 * Cuts the append-only file back to `mark`, as if the disk had kept only what had reached it by
 * then. Redis loads a file cut anywhere (`aof-load-truncated yes`, its default), dropping a
 * command or MULTI/EXEC block cut in the middle, so what it loads is what it held at one moment.
 * Returns the bytes dropped, or undefined when redis-server moved to another file since `mark`
 * (an AOF rewrite) and nothing was cut.
 */
export async function cutAppendOnlyFile(redisDir: string, mark: AppendOnlyMark): Promise<number | undefined> {
  const now = await appendOnlyMark(redisDir);
  if (!now || now.file !== mark.file) return undefined;
  if (now.size <= mark.size) return 0;
  await truncate(path.join(redisDir, AOF_DIR, mark.file), mark.size);
  return now.size - mark.size;
}
