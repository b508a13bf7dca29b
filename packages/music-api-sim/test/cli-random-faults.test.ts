/**
 * The standalone simulator's random-fault flags (`--random-faults`, `--random-fault-mix`,
 * `--random-fault-seed`): the mode is on from the start, and a bad mix stops it with a reason.
 */
import { spawn } from 'node:child_process';
import { describe, expect, it } from 'vitest';

const packageRoot = new URL('..', import.meta.url);

/** Starts the CLI; resolves with its URL once listening, or with its exit code and output. */
function startCli(args: string[]): Promise<{ url?: string; code?: number | null; output: string; stop: () => void }> {
  const child = spawn(process.execPath, ['--import', 'tsx', 'src/cli.ts', '--port', '0', '--api-key', 'k', ...args], {
    cwd: packageRoot,
    detached: true,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const stop = () => {
    if (child.pid !== undefined && child.exitCode === null) {
      try {
        process.kill(-child.pid, 'SIGTERM');
      } catch {
        // Already gone.
      }
    }
  };
  let output = '';
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      stop();
      reject(new Error(`neither listening nor exited; output so far:\n${output}`));
    }, 30_000);
    child.stdout.on('data', (chunk: Buffer) => {
      output += chunk.toString();
      const match = /music-api-sim listening on (http:\/\/\S+)/.exec(output);
      if (match?.[1] !== undefined) {
        clearTimeout(timer);
        resolve({ url: match[1], output, stop });
      }
    });
    child.stderr.on('data', (chunk: Buffer) => void (output += chunk.toString()));
    child.once('exit', (code) => {
      clearTimeout(timer);
      resolve({ code, output, stop });
    });
  });
}

describe('npm run music-api-sim -- --random-faults', () => {
  it('starts in the random-fault mode with the given mix and seed', async () => {
    const sim = await startCli(['--random-faults', '1', '--random-fault-mix', '429=0, 500=0, hang=0', '--random-fault-seed', '5']);
    try {
      expect(sim.url, sim.output).toBeDefined();
      const answer = await fetch(`${sim.url}/api/v1/get-credits`, { headers: { authorization: 'Bearer k' } });
      expect(answer.status).toBe(502);
      const state = (await (await fetch(`${sim.url}/_sim/random-faults`)).json()) as { randomFaults: Record<string, unknown> };
      expect(state.randomFaults).toMatchObject({ rate: 1, seed: 5, calls: 1, drawn: { '502': 1 }, mix: { '429': 0, '502': 1, hang: 0 } });
    } finally {
      sim.stop();
    }
  }, 40_000);

  it('refuses a kind it does not know, naming it', async () => {
    const sim = await startCli(['--random-faults', '0.3', '--random-fault-mix', 'explode=1']);
    sim.stop();
    expect(sim.code).toBe(2);
    expect(sim.output).toMatch(/--random-faults: mix: explode is not one of 429/);
  }, 40_000);
});
