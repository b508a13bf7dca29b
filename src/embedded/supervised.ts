/**
 * An embedded server (postgres, redis-server) that stops when the bot dies, however it dies:
 * a small `sh` watchdog reads a pipe from the bot and stops the server when the pipe closes.
 * The bot stops it the same way, by closing the pipe. Why: docs/decisions/embedded-services-watchdog.md
 */
import { spawn, type ChildProcess } from 'node:child_process';

/**
 * $1 is the server's shutdown signal, the rest its command. The server runs in the background;
 * a subshell reads the bot's pipe (kept as fd 3) until it closes, then signals the server; the
 * shell waits for the server and exits with its status. Both ignore SIGTERM, SIGINT and SIGHUP
 * once the server runs: a signal sent to every process of the bot (systemd stopping its unit)
 * reaches the server itself, and the watchdog still waits for the bot.
 */
const WATCHDOG = `
stop=$1; shift
exec 3<&0 </dev/null
"$@" 3<&- &
server=$!
( trap '' TERM INT HUP; while read -r _ <&3; do :; done; kill -s "$stop" "$server" ) >/dev/null 2>&1 &
reader=$!
exec 3<&-
trap '' TERM INT HUP
wait "$server"; status=$?
kill -s KILL "$reader" 2>/dev/null
exit "$status"
`;

export interface SupervisedOptions {
  /** What the server takes as its request to shut down cleanly (Postgres: SIGINT, a fast shutdown). */
  readonly stopSignal: 'SIGINT' | 'SIGTERM';
  readonly env?: NodeJS.ProcessEnv;
  /** Run as this user (the watchdog and the server alike). */
  readonly uid?: number;
  readonly gid?: number;
}

/**
 * Starts `command` under a watchdog. The child's stdout and stderr are the server's; its exit
 * code is the server's (128 + n for a signal). Stop it with {@link stopSupervised}.
 */
export function spawnSupervised(command: string, args: readonly string[], options: SupervisedOptions): ChildProcess {
  const { stopSignal, env, uid, gid } = options;
  // Its own process group: a Ctrl+C or a supervisor's SIGTERM to the bot's group must not stop
  // the server under the bot's feet while it shuts down; the bot stops it last.
  const child = spawn('/bin/sh', ['-c', WATCHDOG, 'watchdog', stopSignal.slice('SIG'.length), command, ...args], {
    env,
    uid,
    gid,
    stdio: ['pipe', 'pipe', 'pipe'],
    detached: true,
  });
  // Closing the pipe of a watchdog that has already exited is no failure.
  child.stdin?.on('error', () => {});
  return child;
}

/** Asks the server to shut down, by closing the watchdog's pipe, and resolves once it has exited. */
export function stopSupervised(child: ChildProcess): Promise<void> {
  return new Promise((resolve) => {
    if (child.exitCode !== null || child.signalCode !== null) return resolve();
    child.once('exit', () => resolve());
    child.stdin?.end();
  });
}
