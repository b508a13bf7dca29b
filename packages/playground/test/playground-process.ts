/**
 * `npm run playground` in a child process, on a free port and a fresh data folder of its own,
 * for the browser tests: start it, read the address it prints, stop it and remove its data.
 */
import { chmod, mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { VOICE_CA_PATH } from '@music-bot/discord-emulator';
import { NodeProcess, ROOT } from '@music-bot/test-world';

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
  const playground = new NodeProcess(['--import', 'tsx', 'packages/playground/src/cli.ts', '--port', '0', '--fresh', '--data-dir', dataDir, ...args], {
    name: 'the playground',
    cwd: ROOT,
    // As `npm run playground` sets it: the bot trusts the emulator's voice gateway.
    env: { NODE_EXTRA_CA_CERTS: VOICE_CA_PATH },
  });
  const stop = async () => {
    // SIGINT, as Ctrl-C at the terminal.
    await playground.stop('SIGINT', 15_000);
    await rm(dataDir, { recursive: true, force: true });
  };
  try {
    const url = await playground.waitForLine((line) => /Playground ready: (http:\/\/[^\s]+\/)/.exec(line)?.[1], 'it was ready');
    return { url, output: () => playground.output(), stop };
  } catch (error) {
    await stop();
    throw error;
  }
}
