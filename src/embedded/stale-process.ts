import { existsSync, readFileSync } from 'node:fs';

/**
 * A server of an earlier run that still runs holds its data directory (and, for Redis, writes
 * to the same append-only file): one still shutting down after its bot was killed, or one whose
 * watchdog was killed too. Stops the process named in `pidFile`, if it still runs, and waits up
 * to ten seconds for it to exit.
 */
export async function stopProcessFromPidFile(pidFile: string, signal: NodeJS.Signals): Promise<void> {
  if (!existsSync(pidFile)) return;
  // postmaster.pid holds the pid on its first line; redis.pid holds only the pid.
  const pid = Number(readFileSync(pidFile, 'utf8').split('\n')[0]?.trim());
  if (!Number.isInteger(pid) || pid <= 0) return;
  try {
    process.kill(pid, signal);
  } catch {
    return;
  }
  for (let i = 0; i < 100; i += 1) {
    try {
      process.kill(pid, 0);
    } catch {
      return;
    }
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}
