/**
 * A node script in a child process: what it writes kept and cut into lines, a wait for a line,
 * and a stop with a signal. The bot's processes (./bot-process.ts), its scripts and the
 * playground's command line are run with it.
 */
import { spawn, type ChildProcess } from 'node:child_process';

export interface ProcessExit {
  readonly code: number | null;
  readonly signal: NodeJS.Signals | null;
}

export interface NodeProcessOptions {
  /** How its errors name it. @defaultValue 'process' */
  readonly name?: string;
  /** Its whole environment (PATH and HOME are added). */
  readonly env?: NodeJS.ProcessEnv;
  readonly cwd?: string;
  /** Keep what it writes (readable with `output()`), pass it to this process's, or drop it (stderr then still shows). @defaultValue 'keep' */
  readonly output?: 'keep' | 'inherit' | 'ignore';
  /** Called with each line it writes, stdout and stderr (with `output: 'keep'`). */
  readonly onLine?: (line: string) => void;
}

export class NodeProcess {
  readonly name: string;
  readonly child: ChildProcess;
  /** Resolves with how it ended, asked to or not. */
  readonly exited: Promise<ProcessExit>;
  #output = '';
  #waiters = new Set<(line: string) => void>();

  /** Starts `node <args>` (node flags, then the script and its arguments). */
  constructor(args: readonly string[], options: NodeProcessOptions = {}) {
    const { output = 'keep' } = options;
    this.name = options.name ?? 'process';
    this.child = spawn(process.execPath, args, {
      ...(options.cwd !== undefined && { cwd: options.cwd }),
      env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '/tmp', ...options.env },
      stdio: ['ignore', output === 'ignore' ? 'ignore' : output === 'inherit' ? 'inherit' : 'pipe', output === 'keep' ? 'pipe' : 'inherit'],
    });
    this.exited = new Promise((resolve) => this.child.once('exit', (code, signal) => resolve({ code, signal })));
    let partial = '';
    const take = (chunk: Buffer) => {
      const text = chunk.toString();
      this.#output += text;
      const lines = (partial + text).split('\n');
      partial = lines.pop() ?? '';
      for (const line of lines) {
        if (line.trim() === '') continue;
        options.onLine?.(line);
        for (const waiter of this.#waiters) waiter(line);
      }
    };
    this.child.stdout?.on('data', take);
    this.child.stderr?.on('data', take);
  }

  get pid(): number | undefined {
    return this.running ? this.child.pid : undefined;
  }

  get running(): boolean {
    return this.child.exitCode === null && this.child.signalCode === null;
  }

  /** How it ended; undefined while it runs. */
  get exit(): ProcessExit | undefined {
    return this.running ? undefined : { code: this.child.exitCode, signal: this.child.signalCode };
  }

  /** Everything it wrote, stdout and stderr (with `output: 'keep'`). */
  output(): string {
    return this.#output;
  }

  /**
   * Resolves with what `match` returns for the first line written from now on that it accepts
   * (anything but undefined or false); rejects if the process ends first.
   */
  waitForLine<T>(match: (line: string) => T | undefined | false, what: string): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      if (!this.running) {
        reject(this.#endedBefore(what));
        return;
      }
      const waiter = (line: string) => {
        const value = match(line);
        if (value === undefined || value === false) return;
        this.#waiters.delete(waiter);
        resolve(value);
      };
      this.#waiters.add(waiter);
      void this.exited.then(() => {
        if (!this.#waiters.delete(waiter)) return;
        reject(this.#endedBefore(what));
      });
    });
  }

  /** Sends `signal`; SIGKILL if it still runs after `timeoutMs`. Resolves with how it ended. */
  async stop(signal: NodeJS.Signals = 'SIGTERM', timeoutMs = 35_000): Promise<ProcessExit> {
    if (this.running) {
      this.child.kill(signal);
      let timer: NodeJS.Timeout | undefined;
      await Promise.race([this.exited, new Promise<void>((resolve) => (timer = setTimeout(resolve, timeoutMs)))]);
      clearTimeout(timer);
      if (this.running) this.child.kill('SIGKILL');
    }
    return this.exited;
  }

  #endedBefore(what: string): Error {
    const { exitCode, signalCode } = this.child;
    return new Error(`${this.name} exited (${exitCode ?? signalCode}) before ${what}: ${this.#output.slice(-3000)}`);
  }
}
