/**
 * The bot as a process, the way operators run it: `node --import tsx src/main.ts` (what
 * `npm start` runs) or the compiled `build/src/main.js` (what the image runs), with a role.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import path from 'node:path';
import { sleep } from './wait.js';

/** The repository's root: the bot's sources and build are run from there. */
export const ROOT = path.resolve(import.meta.dirname, '../../..');

export type LogLine = Record<string, unknown>;

/** An exit nobody asked for. */
export interface Crash {
  readonly name: string;
  readonly code: number | null;
  readonly signal: NodeJS.Signals | null;
  /** The last 4,000 characters it wrote. */
  readonly tail: string;
}

export interface BotProcessOptions {
  /** How its lines and crashes are labelled. @defaultValue 'bot' */
  readonly name?: string;
  /** Its whole environment (PATH and HOME are added). */
  readonly env: NodeJS.ProcessEnv;
  /** The sources through tsx, or the compiled build (`npm run build` first). @defaultValue 'source' */
  readonly entry?: 'source' | 'build';
  /** Flags for node before the entry (a CPU profile, a preloaded script). */
  readonly nodeArgs?: readonly string[];
  /** Keep what it writes (readable with `output()` and `logLines()`), pass it to this process's, or drop it. @defaultValue 'keep' */
  readonly output?: 'keep' | 'inherit' | 'ignore';
  /** Called with each line it writes, stdout and stderr. */
  readonly onLine?: (line: string) => void;
  /** Called when it exits without being asked to. */
  readonly onCrash?: (crash: Crash) => void;
  /** How long `stop` waits after SIGTERM before SIGKILL. @defaultValue 35000 */
  readonly stopTimeoutMs?: number;
}

export interface ProcessExit {
  readonly code: number | null;
  readonly signal: NodeJS.Signals | null;
}

export class BotProcess {
  readonly name: string;
  #options: BotProcessOptions;
  #child: ChildProcess | undefined;
  #expectingExit = false;
  #output = '';
  #logLines: LogLine[] = [];

  constructor(options: BotProcessOptions) {
    this.name = options.name ?? 'bot';
    this.#options = options;
  }

  /** The process's id while it runs. */
  get pid(): number | undefined {
    return this.running ? this.#child!.pid : undefined;
  }

  get running(): boolean {
    return this.#child !== undefined && this.#child.exitCode === null && this.#child.signalCode === null;
  }

  /** How it last ended; undefined while it runs or before it started. */
  get exit(): ProcessExit | undefined {
    const child = this.#child;
    return child && !this.running ? { code: child.exitCode, signal: child.signalCode } : undefined;
  }

  /** Everything it wrote, stdout and stderr, across restarts (with `output: 'keep'`). */
  output(): string {
    return this.#output;
  }

  /** Its JSON log lines, parsed, across restarts (with `output: 'keep'`). */
  logLines(): readonly LogLine[] {
    return this.#logLines;
  }

  /** Starts it without waiting: for a caller that waits on its own signal (or its log level hides the start line). */
  spawn(): ChildProcess {
    const { entry = 'source', nodeArgs = [], output = 'keep' } = this.#options;
    const main = entry === 'build' ? [path.join(ROOT, 'build/src/main.js')] : ['--import', 'tsx', path.join(ROOT, 'src/main.ts')];
    // node itself, not the tsx binary: a signal reaches the bot, not a wrapper around it.
    const child = spawn(process.execPath, [...nodeArgs, ...main], {
      cwd: ROOT,
      env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '/tmp', ...this.#options.env },
      stdio: ['ignore', output === 'ignore' ? 'ignore' : output === 'inherit' ? 'inherit' : 'pipe', output === 'keep' ? 'pipe' : 'inherit'],
    });
    this.#child = child;
    this.#expectingExit = false;
    let tail = '';
    let partial = '';
    const take = (chunk: Buffer) => {
      const text = chunk.toString();
      this.#output += text;
      tail = (tail + text).slice(-4000);
      const lines = (partial + text).split('\n');
      partial = lines.pop() ?? '';
      for (const line of lines) {
        if (line.trim() === '') continue;
        this.#options.onLine?.(line);
        const parsed = parseLogLine(line);
        if (parsed) this.#logLines.push(parsed);
      }
    };
    child.stdout?.on('data', take);
    child.stderr?.on('data', take);
    child.once('exit', (code, signal) => {
      if (!this.#expectingExit) this.#options.onCrash?.({ name: this.name, code, signal, tail });
    });
    return child;
  }

  /** Starts it and resolves once it logged "bot started" (LOG_LEVEL info or lower); rejects if it exits first. */
  start(): Promise<void> {
    const child = this.spawn();
    return new Promise<void>((resolve, reject) => {
      const seen = this.#logLines.length;
      const onData = () => {
        if (this.#logLines.slice(seen).some((line) => line.msg === 'bot started')) {
          child.stdout?.off('data', onData);
          resolve();
        }
      };
      child.stdout?.on('data', onData);
      child.once('exit', (code, signal) => reject(new Error(`${this.name} exited (${code ?? signal}) before it started: ${this.#output.slice(-3000)}`)));
    });
  }

  /** SIGTERM, as `docker stop` sends it; SIGKILL if it is still running after `stopTimeoutMs`. Resolves with how it ended. */
  stop(): Promise<ProcessExit | undefined> {
    return this.#end('SIGTERM');
  }

  /** SIGKILL, as a crash or an OOM kill would. */
  async kill(): Promise<void> {
    await this.#end('SIGKILL');
  }

  async #end(signal: NodeJS.Signals): Promise<ProcessExit | undefined> {
    const child = this.#child;
    if (!child) return undefined;
    if (this.running) {
      this.#expectingExit = true;
      const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
      child.kill(signal);
      await Promise.race([exited, sleep(this.#options.stopTimeoutMs ?? 35_000)]);
      if (this.running) {
        child.kill('SIGKILL');
        await exited;
      }
    }
    return this.exit;
  }
}

/** Runs one of the bot's scripts (`deploy-commands`, `db-migrate`) to its end; rejects with its output if it fails. */
export function runBotScript(script: string, env: NodeJS.ProcessEnv, entry: 'source' | 'build' = 'source'): Promise<string> {
  const file = entry === 'build' ? path.join(ROOT, `build/src/scripts/${script}.js`) : path.join(ROOT, `src/scripts/${script}.ts`);
  const args = entry === 'build' ? [file] : ['--import', 'tsx', file];
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, args, {
      cwd: ROOT,
      env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '/tmp', ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let output = '';
    child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
    child.once('exit', (code) => (code === 0 ? resolve(output) : reject(new Error(`${script} exited ${code}: ${output}`))));
  });
}

function parseLogLine(line: string): LogLine | undefined {
  if (!line.startsWith('{')) return undefined;
  try {
    return JSON.parse(line) as LogLine;
  } catch {
    return undefined;
  }
}
