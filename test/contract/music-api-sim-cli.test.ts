/**
 * The documented standalone command, driven with plain fetch exactly as the spec describes
 * the service; and the operator's `music-api:check` against it.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';

const root = new URL('../../', import.meta.url);
let child: ChildProcess | undefined;
let baseUrl = '';
let output = '';

/** The child runs in its own process group so that it and anything it starts end together. */
function stopChild(): void {
  if (child?.pid !== undefined && child.exitCode === null) {
    try {
      process.kill(-child.pid, 'SIGTERM');
    } catch {
      // Already gone.
    }
  }
}

beforeAll(async () => {
  // Node with tsx, as the npm script runs it: npx would add npm's own notices (an update
  // available, say) to the output, which depend on the registry and the day.
  child = spawn(process.execPath, ['--import', 'tsx', 'packages/music-api-sim/src/cli.ts', '--port', '0', '--api-key', 'k', '--credits', '100', '--task-ms', '1500'], {
    cwd: root,
    detached: true,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  baseUrl = await new Promise<string>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`no URL printed; output so far:\n${output}`)), 30_000);
    const onData = (chunk: Buffer) => {
      output += chunk.toString();
      const match = /music-api-sim listening on (http:\/\/\S+)/.exec(output);
      if (match?.[1] !== undefined) {
        clearTimeout(timer);
        resolve(match[1]);
      }
    };
    child!.stdout!.on('data', onData);
    child!.stderr!.on('data', (chunk: Buffer) => void (output += chunk.toString()));
    child!.once('exit', (code) => reject(new Error(`simulator exited with ${code}:\n${output}`)));
  });
}, 40_000);

afterAll(() => {
  stopChild();
});

const headers = { Authorization: 'Bearer k', 'Content-Type': 'application/json' };

describe('npm run music-api-sim', () => {
  it('is the command these tests run', () => {
    const { scripts } = JSON.parse(readFileSync(new URL('package.json', root), 'utf8')) as { scripts: Record<string, string> };
    expect(scripts['music-api-sim']).toBe('tsx packages/music-api-sim/src/cli.ts');
    expect(scripts['music-api:check']).toBe('tsx src/scripts/music-api-check.ts');
  });

  it('prints its base URL on a free port', () => {
    expect(baseUrl).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
    expect(baseUrl).not.toMatch(/:0$/);
  });

  it('serves a create-then-poll session as the spec describes it', async () => {
    const createResponse = await fetch(`${baseUrl}/api/v1/producer/create`, {
      method: 'POST',
      headers,
      body: JSON.stringify({ task_type: 'create_music', sound: 'a calm piano piece', mv: 'ModelB-2.0' }),
    });
    expect(createResponse.status).toBe(200);
    const created = (await createResponse.json()) as { message: string; task_id: string };
    expect(created).toEqual({ message: 'success', task_id: expect.any(String) });

    const statuses = new Set<string>();
    const envelope = await vi.waitFor(
      async () => {
        const pollResponse = await fetch(`${baseUrl}/api/v1/producer/task/${created.task_id}`, { headers: { Authorization: 'Bearer k' } });
        expect(pollResponse.status).toBe(200);
        const polled = (await pollResponse.json()) as { code: number; message: string; status: string; data: Array<Record<string, string>> };
        statuses.add(polled.status);
        expect(polled.status).not.toMatch(/^(PENDING|RUNNING)$/);
        return polled;
      },
      { timeout: 10_000, interval: 25 },
    );

    expect(envelope).toMatchObject({ code: 200, message: 'success', status: 'SUCCESS' });
    expect(statuses.has('PENDING') || statuses.has('RUNNING')).toBe(true);
    const [clip] = envelope.data;
    expect(clip!['audio_url']).toBe(`${baseUrl}/producer/${clip!['clip_id']}.m4a`);
    const audio = await fetch(clip!['audio_url']!);
    expect(audio.status).toBe(200);
    expect(audio.headers.get('content-type')).toBe('audio/mp4');

    const credits = await fetch(`${baseUrl}/api/v1/get-credits`, { headers });
    expect(await credits.json()).toEqual({ credits: 90, extra_credits: 0 });
  });

  it('answers 401 to a wrong key', async () => {
    const response = await fetch(`${baseUrl}/api/v1/get-credits`, { headers: { Authorization: 'Bearer nope' } });
    expect(response.status).toBe(401);
    expect(await response.json()).toMatchObject({ type: 'unauthorized' });
  });
});

describe('npm run music-api:check', () => {
  async function check(key: string, env: Record<string, string> = {}) {
    const run = spawn(process.execPath, ['--import', 'tsx', 'src/scripts/music-api-check.ts'], {
      cwd: root,
      // A clean environment: only what the check needs, so no developer .env value leaks in.
      env: { PATH: process.env['PATH'], HOME: process.env['HOME'], MUSIC_API_URL: baseUrl, MUSIC_API_KEY: key, ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    run.stdout.on('data', (chunk: Buffer) => void (stdout += chunk.toString()));
    run.stderr.on('data', (chunk: Buffer) => void (stderr += chunk.toString()));
    const [code] = (await once(run, 'exit')) as [number];
    return { code, stdout, stderr };
  }

  it('prints the balance', async () => {
    const result = await check('k');
    expect(result.code).toBe(0);
    expect(result.stdout).toMatch(/\d+ credits, 0 extra credits/);
    // A simulator on a loopback address takes the spec's model names: nothing to say about them.
    expect(result.stderr).toBe('');
  }, 30_000);

  it("says in one line, for a service that is not local, that the spec's model names are placeholders, unless MUSIC_MODELS is set", async () => {
    const remote = { MUSIC_API_URL: 'https://music.invalid', MUSIC_API_TIMEOUT_MS: '3000' };
    const unset = await check('k', remote);
    expect(unset.code).toBe(1);
    const notices = unset.stderr.split('\n').filter((line) => line.includes('MUSIC_MODELS'));
    expect(notices).toEqual([expect.stringMatching(/^MUSIC_MODELS is not set, so the spec's model names are offered \(ModelA 3 Pro, .*ModelB-0\.8\); .*https:\/\/music\.invalid.*set MUSIC_MODELS to its real model names$/)]);
    const set = await check('k', { ...remote, MUSIC_MODELS: 'FUZZ-2.0,Lyria 3 Pro' });
    expect(set.code).toBe(1);
    expect(set.stderr).toContain('could not reach the music service');
    expect(set.stderr).not.toContain('MUSIC_MODELS');
  }, 30_000);

  it('prints the mapped error, without the key, and exits 1', async () => {
    const result = await check('sk-wrong-operator-key');
    expect(result.code).toBe(1);
    expect(result.stderr).toContain('unauthorized');
    expect(result.stderr).toContain('not authorised');
    expect(result.stdout + result.stderr).not.toContain('sk-wrong-operator-key');
  }, 30_000);
});
