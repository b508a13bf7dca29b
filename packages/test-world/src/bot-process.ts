/**
 * The bot as a process, the way operators run it: `node --import tsx src/main.ts` (what
 * `npm start` runs) or the compiled `build/src/main.js` (what the image runs), with a role;
 * in the test suite, by default, that build bundled into one file.
 */
import type { ChildProcess } from 'node:child_process';
import { existsSync } from 'node:fs';
import path from 'node:path';
import { NodeProcess, type ProcessExit } from './node-process.js';

export type { ProcessExit } from './node-process.js';

/** The repository's root: the bot's sources and build are run from there. */
export const ROOT = path.resolve(import.meta.dirname, '../../..');

export type LogLine = Record<string, unknown>;

/** The compiled bot's folder: MUSIC_BOT_BUILD_DIR, else the repository's build/. */
export function buildFolder(): string {
  return process.env['MUSIC_BOT_BUILD_DIR'] ?? path.join(ROOT, 'build');
}

/**
 * What a bot process runs: the sources through tsx (`npm start`), the compiled build as the image
 * runs it, or the test suite's bundle of that build (its `bundle/`: the same JavaScript in one
 * file per entry point, which starts with less CPU).
 */
export type BotEntry = 'source' | 'build' | 'bundle';

/** The suite's build when there is one, bundled when it was; else the sources. */
function defaultEntry(): BotEntry {
  if (!process.env['MUSIC_BOT_BUILD_DIR']) return 'source';
  return existsSync(path.join(buildFolder(), 'bundle/src/main.js')) ? 'bundle' : 'build';
}

/** `node`'s arguments to run `src/<name>` (`main`, `scripts/deploy-commands`) from `entry`. */
function entryArgs(entry: BotEntry, name: string): string[] {
  if (entry === 'source') return ['--import', 'tsx', path.join(ROOT, `src/${name}.ts`)];
  return [path.join(buildFolder(), entry === 'bundle' ? 'bundle' : '', `src/${name}.js`)];
}

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
  /**
   * The sources through tsx, or a compiled build: the one in MUSIC_BOT_BUILD_DIR when set (the
   * test suite compiles and bundles one per run), else build/ (`npm run build` first).
   * @defaultValue 'bundle' when MUSIC_BOT_BUILD_DIR holds one, 'build' when it is set, else 'source'
   */
  readonly entry?: BotEntry;
  /** Where it runs; a `.env` there is read. @defaultValue the repository's root */
  readonly cwd?: string;
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

export class BotProcess {
  readonly name: string;
  #options: BotProcessOptions;
  #process: NodeProcess | undefined;
  #expectingExit = false;
  /** What the earlier runs wrote, before the current one. */
  #earlierOutput = '';
  /** The log lines parsed so far, and how much of the output they cover. */
  #logLines: LogLine[] = [];
  #parsedLength = 0;

  constructor(options: BotProcessOptions) {
    this.name = options.name ?? 'bot';
    this.#options = options;
  }

  /** The process's id while it runs. */
  get pid(): number | undefined {
    return this.#process?.pid;
  }

  get running(): boolean {
    return this.#process?.running ?? false;
  }

  /** How it last ended; undefined while it runs or before it started. */
  get exit(): ProcessExit | undefined {
    return this.#process?.exit;
  }

  /** Everything it wrote, stdout and stderr, across restarts (with `output: 'keep'`). */
  output(): string {
    return this.#earlierOutput + (this.#process?.output() ?? '');
  }

  /** Its JSON log lines, parsed, across restarts (with `output: 'keep'`). */
  logLines(): readonly LogLine[] {
    const output = this.output();
    const end = output.lastIndexOf('\n') + 1;
    if (end > this.#parsedLength) {
      for (const line of output.slice(this.#parsedLength, end).split('\n')) {
        const parsed = parseLogLine(line);
        if (parsed) this.#logLines.push(parsed);
      }
      this.#parsedLength = end;
    }
    return this.#logLines;
  }

  /** Starts it without waiting: for a caller that waits on its own signal (or its log level hides the start line). */
  spawn(): ChildProcess {
    const { entry = defaultEntry(), nodeArgs = [], output = 'keep' } = this.#options;
    const main = entryArgs(entry, 'main');
    const earlier = this.output();
    this.#earlierOutput = earlier === '' || earlier.endsWith('\n') ? earlier : `${earlier}\n`;
    // node itself, not the tsx binary: a signal reaches the bot, not a wrapper around it.
    const started = new NodeProcess([...nodeArgs, ...main], {
      name: this.name,
      cwd: this.#options.cwd ?? ROOT,
      env: this.#options.env,
      output,
      ...(this.#options.onLine && { onLine: this.#options.onLine }),
    });
    this.#process = started;
    this.#expectingExit = false;
    void started.exited.then(({ code, signal }) => {
      if (!this.#expectingExit) this.#options.onCrash?.({ name: this.name, code, signal, tail: started.output().slice(-4000) });
    });
    return started.child;
  }

  /**
   * Starts it and resolves once it logged "bot started" and, when it runs the gateway (ROLE all
   * or gateway), "gateway ready": the bot starts while its shards identify (LOG_LEVEL info or
   * lower). Rejects if it exits first.
   */
  async start(): Promise<void> {
    this.spawn();
    const logged = (msg: string, what: string) => this.#process!.waitForLine((line) => line.includes(`"${msg}"`) && parseLogLine(line)?.msg === msg, what);
    const role = this.#options.env['ROLE'] ?? 'all';
    await Promise.all([logged('bot started', 'it started'), ...(role === 'all' || role === 'gateway' ? [logged('gateway ready', 'its gateway ready')] : [])]);
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
    const current = this.#process;
    if (!current) return undefined;
    if (current.running) this.#expectingExit = true;
    return current.stop(signal, this.#options.stopTimeoutMs ?? 35_000);
  }
}

/** Runs one of the bot's scripts (`deploy-commands`, `db-migrate`) to its end; rejects with its output if it fails. */
export async function runBotScript(script: string, env: NodeJS.ProcessEnv, entry: BotEntry = defaultEntry()): Promise<string> {
  const run = new NodeProcess(entryArgs(entry, `scripts/${script}`), { name: script, cwd: ROOT, env });
  const { code } = await run.exited;
  if (code !== 0) throw new Error(`${script} exited ${code}: ${run.output()}`);
  return run.output();
}

function parseLogLine(line: string): LogLine | undefined {
  if (!line.startsWith('{')) return undefined;
  try {
    return JSON.parse(line) as LogLine;
  } catch {
    return undefined;
  }
}
