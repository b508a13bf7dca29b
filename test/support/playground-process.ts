/**
 * `npm run playground` in a child process, on a free port and a fresh data folder of its own,
 * for the browser tests: start it, read the address it prints, stop it and remove its data.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { chmod, mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';

const root = path.resolve(import.meta.dirname, '../..');

export interface PlaygroundProcess {
  /** The page, e.g. `http://127.0.0.1:41234/`. */
  readonly url: string;
  /** Everything it printed so far, stdout and stderr. */
  output(): string;
  stop(): Promise<void>;
}

export async function startPlaygroundProcess(args: readonly string[] = []): Promise<PlaygroundProcess> {
  const dataDir = await mkdtemp(path.join(os.tmpdir(), 'musicbot-playground-'));
  // Run as root, Postgres runs as the postgres user: let it in, so the cluster stays in here.
  await chmod(dataDir, 0o755);
  const child: ChildProcess = spawn(
    path.join(root, 'node_modules/.bin/tsx'),
    ['packages/playground/src/cli.ts', '--port', '0', '--fresh', '--data-dir', dataDir, ...args],
    { cwd: root, env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '/tmp' }, stdio: ['ignore', 'pipe', 'pipe'] },
  );
  let output = '';
  const stop = async () => {
    if (child.exitCode === null && child.signalCode === null) {
      const exited = new Promise((resolve) => child.once('exit', resolve));
      child.removeAllListeners('exit');
      child.kill('SIGINT');
      await Promise.race([exited, new Promise((resolve) => setTimeout(resolve, 15_000))]);
      if (child.exitCode === null) child.kill('SIGKILL');
    }
    await rm(dataDir, { recursive: true, force: true });
  };
  try {
    const url = await new Promise<string>((resolve, reject) => {
      const onData = (chunk: Buffer) => {
        output += chunk.toString();
        const ready = /Playground ready: (http:\/\/[^\s]+\/)/.exec(output);
        if (ready) resolve(ready[1]!);
      };
      child.stdout!.on('data', onData);
      child.stderr!.on('data', onData);
      child.once('exit', (code) => reject(new Error(`the playground exited with ${code}: ${output}`)));
    });
    return { url, output: () => output, stop };
  } catch (error) {
    await stop();
    throw error;
  }
}
