import { spawnSync } from 'node:child_process';
/**
 * The simulator's own promises, seen over plain HTTP: validation, lifecycle, media, the
 * control API and the request record.
 */
import { afterEach, describe, expect, it, vi } from 'vitest';
import { startMusicApiSim, type MusicApiSim } from '@music-bot/music-api-sim/server.js';
import { NORMAL_BEHAVIOUR } from '@music-bot/music-api-sim/faults.js';
import { createTaskStore } from '@music-bot/music-api-sim/tasks.js';
import { pino } from 'pino';

const apiKey = 'sim-key';
const auth = { authorization: `Bearer ${apiKey}`, 'content-type': 'application/json' };
let sim: MusicApiSim | undefined;

afterEach(async () => {
  await sim?.close();
  sim = undefined;
});

async function start(options: Partial<Parameters<typeof startMusicApiSim>[0]> = {}): Promise<MusicApiSim> {
  sim = await startMusicApiSim({ apiKey, credits: 100, taskMs: 200, ...options });
  return sim;
}

async function call(s: MusicApiSim, method: string, path: string, body?: unknown, headers: Record<string, string> = auth) {
  const response = await fetch(`${s.url}${path}`, {
    method,
    headers,
    ...(body === undefined ? {} : { body: typeof body === 'string' ? body : JSON.stringify(body) }),
  });
  const text = await response.text();
  return { status: response.status, json: text === '' ? undefined : (JSON.parse(text) as Record<string, unknown>) };
}

describe('validation', () => {
  it.each([
    ['no task_type', { sound: 'x' }],
    ['task_type of another endpoint', { task_type: 'make_lyrics', sound: 'x' }],
    ['neither sound nor lyrics', { task_type: 'create_music' }],
    ['sound of the wrong type', { task_type: 'create_music', sound: 42 }],
    ['make_instrumental of the wrong type', { task_type: 'create_music', sound: 'x', make_instrumental: 'yes' }],
    ['mv in another case', { task_type: 'create_music', sound: 'x', mv: 'modelb-2.0' }],
    ['mv without its space', { task_type: 'create_music', sound: 'x', mv: 'ModelB-2.0Pro' }],
    ['an http webhook', { task_type: 'create_music', sound: 'x', webhook_url: 'http://hooks.example.com/a' }],
    ['a webhook URL over 1024 characters', { task_type: 'create_music', sound: 'x', webhook_url: `https://h.example/${'a'.repeat(1010)}` }],
  ])('refuses %s with 400 validation_error, charging nothing', async (_name, body) => {
    const s = await start();
    const { status, json } = await call(s, 'POST', '/api/v1/producer/create', body);
    expect(status).toBe(400);
    expect(json?.['type']).toBe('validation_error');
    expect(s.getCredits()).toBe(100);
  });

  it('refuses a body that is not JSON, and bodies missing the fields of other operations', async () => {
    const s = await start();
    expect((await call(s, 'POST', '/api/v1/producer/create', '{not json')).status).toBe(400);
    expect((await call(s, 'POST', '/api/v1/producer/download', { clip_id: 'c', format: 'flac' })).status).toBe(400);
    expect((await call(s, 'POST', '/api/v1/producer/video-clip', {})).status).toBe(400);
    expect((await call(s, 'POST', '/api/v1/producer/upload', { url: 'not a url' })).status).toBe(400);
    expect((await call(s, 'POST', '/api/v1/sonic/create-voice', {})).status).toBe(400);
    expect((await call(s, 'POST', '/api/v1/sonic/create', { task_type: 'persona_music' })).status).toBe(400);
    expect((await call(s, 'POST', '/api/v1/sonic/create', { task_type: 'cover', persona_id: 'p' })).status).toBe(400);
  });

  it('takes webhook fields where the spec registers them (producer creates, create-voice), not on the sonic create', async () => {
    const s = await start();
    const webhook = { webhook_url: 'https://hooks.example.com/w', webhook_secret: 's' };
    expect((await call(s, 'POST', '/api/v1/sonic/create-voice', { audio_url: 'https://files.example.com/v.mp3', ...webhook })).status).toBe(200);
    expect((await call(s, 'POST', '/api/v1/producer/lyrics-create', { prompt: 'rain', ...webhook })).status).toBe(200);
    const persona = { task_type: 'persona_music', persona_id: 'p', custom_mode: true, prompt: 'la la' };
    expect((await call(s, 'POST', '/api/v1/sonic/create', persona)).status).toBe(200);
    const refused = await call(s, 'POST', '/api/v1/sonic/create', { ...persona, ...webhook });
    expect(refused.status).toBe(400);
    expect(refused.json).toMatchObject({ type: 'validation_error' });
  });

  it('accepts every spec model exactly as written, and an exactly 1024-character HTTPS webhook', async () => {
    const s = await start();
    for (const mv of ['ModelA 3 Pro', 'ModelA 3 preview', 'ModelB-3-Demo', 'ModelB-0.8']) {
      expect((await call(s, 'POST', '/api/v1/producer/create', { task_type: 'create_music', sound: 'x', mv })).status).toBe(200);
    }
    const url = `https://h.example/${'a'.repeat(1024 - 'https://h.example/'.length)}`;
    expect(url).toHaveLength(1024);
    expect((await call(s, 'POST', '/api/v1/producer/create', { task_type: 'create_music', lyrics: 'x', webhook_url: url })).status).toBe(200);
  });

  it('allows http webhooks to loopback only with the flag', async () => {
    const body = { task_type: 'create_music', sound: 'x', webhook_url: 'http://127.0.0.1:9/hook' };
    const strict = await start();
    expect((await call(strict, 'POST', '/api/v1/producer/create', body)).status).toBe(400);
    await strict.close();
    const relaxed = await start({ allowHttpWebhooks: true });
    expect((await call(relaxed, 'POST', '/api/v1/producer/create', body)).status).toBe(200);
    const remote = { ...body, webhook_url: 'http://hooks.example.com/hook' };
    expect((await call(relaxed, 'POST', '/api/v1/producer/create', remote)).status).toBe(400);
  });

  it('answers 401 without or with a wrong bearer token', async () => {
    const s = await start();
    expect(await call(s, 'GET', '/api/v1/get-credits', undefined, {})).toMatchObject({ status: 401, json: { type: 'unauthorized' } });
    const wrong = await call(s, 'GET', '/api/v1/get-credits', undefined, { authorization: 'Bearer nope' });
    expect(wrong.status).toBe(401);
    expect(s.requests.map((r) => r.authorized)).toEqual([false, false]);
  });
});

describe('task lifecycle', () => {
  it('goes PENDING, RUNNING, SUCCESS with the producer envelope for every producer task type', async () => {
    // A quarter of taskMs is PENDING: 1.5 s for the read that follows each create, even on a busy machine.
    const s = await start({ taskMs: 6000 });
    const bodies: Array<[string, unknown]> = [
      ['/api/v1/producer/create', { task_type: 'create_music', sound: 'x' }],
      ['/api/v1/producer/lyrics-create', { prompt: 'x' }],
      ['/api/v1/producer/video-clip', { clip_id: 'c1' }],
      ['/api/v1/producer/upload', { url: 'https://files.example.com/a.mp3' }],
      ['/api/v1/producer/download', { clip_id: 'c1', format: 'wav' }],
    ];
    const ids: string[] = [];
    const seen: Array<Set<string>> = [];
    for (const [path, body] of bodies) {
      const created = await call(s, 'POST', path, body);
      expect(created).toMatchObject({ status: 200, json: { message: 'success', task_id: expect.any(String) } });
      ids.push(created.json!['task_id'] as string);
      seen.push(new Set([(await call(s, 'GET', `/api/v1/producer/task/${ids.at(-1)!}`)).json!['status'] as string]));
    }
    await vi.waitFor(
      async () => {
        for (const [index, id] of ids.entries()) {
          const { status, json } = await call(s, 'GET', `/api/v1/producer/task/${id}`);
          expect(status).toBe(200);
          expect(Object.keys(json!).sort()).toEqual(['code', 'data', 'message', 'status']);
          expect(json).toMatchObject({ code: 200, message: 'success', data: expect.any(Array) });
          seen[index]!.add(json!['status'] as string);
        }
        expect(seen.every((states) => states.has('SUCCESS'))).toBe(true);
      },
      { timeout: 20_000, interval: 100 },
    );
    for (const states of seen) expect([...states]).toEqual(['PENDING', 'RUNNING', 'SUCCESS'].filter((state) => states.has(state)));
    expect(seen.every((states) => states.has('PENDING') && states.has('RUNNING') && states.has('SUCCESS'))).toBe(true);
    expect(s.getCredits()).toBe(100 - 10 - 1 - 5 - 2 - 2);
  });

  it('refuses a create past concurrencyLimit tasks in flight of its type, and takes one again when a task ends', async () => {
    const s = await start({ taskMs: 60_000, concurrencyLimit: 2 });
    const song = () => call(s, 'POST', '/api/v1/producer/create', { task_type: 'create_music', sound: 'x' });
    const first = await song();
    expect((await song()).status).toBe(200);
    expect(await song()).toMatchObject({ status: 429, json: { type: 'rate_limited' } });
    // Another task type has its own count.
    expect((await call(s, 'POST', '/api/v1/producer/lyrics-create', { prompt: 'x' })).status).toBe(200);
    expect(s.completeTask(first.json!['task_id'] as string, 'failure')).toBe(true);
    expect((await song()).status).toBe(200);
    expect((await song()).status).toBe(429);
  });

  it('sonic create-voice answers code, message and task_id; its task gives persona_id and name', async () => {
    const s = await start();
    const created = await call(s, 'POST', '/api/v1/sonic/create-voice', { audio_url: 'https://files.example.com/v.mp3' });
    expect(created.json).toEqual({ code: 200, message: 'success', task_id: expect.any(String) });
    const id = created.json!['task_id'] as string;
    expect(s.completeTask(id)).toBe(true);
    expect(s.completeTask(id)).toBe(false);
    const polled = await call(s, 'GET', `/api/v1/sonic/task/${id}`);
    expect(polled.json).toMatchObject({ code: 200, message: 'success', data: { persona_id: expect.any(String), name: expect.any(String) } });
  });

  it('a proxy fault answers an HTML page, after making the task with -accepted', async () => {
    const s = await start();
    const proxied = async (sound: string) => {
      const response = await fetch(`${s.url}/api/v1/producer/create`, { method: 'POST', headers: auth, body: JSON.stringify({ task_type: 'create_music', sound }) });
      return { status: response.status, type: response.headers.get('content-type'), text: await response.text() };
    };
    const taken = await proxied('a [sim:proxy-502-accepted]');
    expect(taken).toMatchObject({ status: 502, type: expect.stringMatching(/^text\/html/), text: expect.stringContaining('<html') });
    expect(s.listTasks().filter((task) => task.body['sound'] === 'a [sim:proxy-502-accepted]')).toHaveLength(1);
    expect(await proxied('b [sim:proxy-502]')).toMatchObject({ status: 502, type: expect.stringMatching(/^text\/html/) });
    expect(s.listTasks().filter((task) => task.body['sound'] === 'b [sim:proxy-502]')).toHaveLength(0);
    expect(await proxied('c [sim:proxy-200-accepted]')).toMatchObject({ status: 200, type: expect.stringMatching(/^text\/html/) });
    expect(s.listTasks().filter((task) => task.body['sound'] === 'c [sim:proxy-200-accepted]')).toHaveLength(1);
  });

  it('an empty success ends SUCCESS without the result its task type gives', async () => {
    const s = await start();
    const cases: Array<[string, Record<string, unknown>, string, string]> = [
      ['/api/v1/producer/create', { task_type: 'create_music', sound: 'x' }, 'producer', 'audio_url'],
      ['/api/v1/producer/lyrics-create', { prompt: 'x' }, 'producer', 'text'],
      ['/api/v1/producer/video-clip', { clip_id: 'c1' }, 'producer', 'video_url'],
      ['/api/v1/producer/download', { clip_id: 'c1', format: 'mp3' }, 'producer', 'download_url'],
      ['/api/v1/sonic/create-voice', { audio_url: 'https://files.example.com/v.mp3' }, 'sonic', 'persona_id'],
      ['/api/v1/sonic/create', { task_type: 'persona_music', persona_id: 'p1', custom_mode: true, prompt: 'x' }, 'sonic', 'audio_url'],
    ];
    for (const [path, body, platform, field] of cases) {
      s.injectFault({ kind: 'empty-success' });
      const id = (await call(s, 'POST', path, body)).json!['task_id'] as string;
      s.completeTask(id);
      const polled = await call(s, 'GET', `/api/v1/${platform}/task/${id}`);
      const text = JSON.stringify(polled.json);
      expect(text, path).toMatch(/"(SUCCESS|succeeded)"/);
      expect(text, path).not.toContain(`"${field}"`);
      // The same task without the fault has it.
      const normal = (await call(s, 'POST', path, body)).json!['task_id'] as string;
      s.completeTask(normal);
      expect(JSON.stringify((await call(s, 'GET', `/api/v1/${platform}/task/${normal}`)).json), path).toContain(`"${field}"`);
    }
  });

  it('answers 404 for an unknown task', async () => {
    const s = await start();
    expect((await call(s, 'GET', '/api/v1/producer/task/nope')).status).toBe(404);
    expect((await call(s, 'GET', '/api/v1/sonic/task/nope')).status).toBe(404);
  });
});

describe('media', () => {
  it('serves the four spec shapes for any clip id, with byte ranges', async () => {
    const s = await start();
    const wav = await fetch(`${s.url}/producer/abc-123-wav.wav`);
    const bytes = Buffer.from(await wav.arrayBuffer());
    expect(bytes.subarray(0, 4).toString('ascii')).toBe('RIFF');
    expect(bytes.subarray(8, 12).toString('ascii')).toBe('WAVE');
    expect(bytes.readUInt32LE(40)).toBe(bytes.length - 44);
    const jpeg = Buffer.from(await (await fetch(`${s.url}/producer/abc-img.jpg`)).arrayBuffer());
    expect([...jpeg.subarray(0, 3)]).toEqual([0xff, 0xd8, 0xff]);
    const mp4 = Buffer.from(await (await fetch(`${s.url}/producer/abc-video.mp4`)).arrayBuffer());
    expect(mp4.subarray(4, 8).toString('ascii')).toBe('ftyp');
    const m4a = Buffer.from(await (await fetch(`${s.url}/producer/abc.m4a`)).arrayBuffer());
    expect(m4a.subarray(4, 8).toString('ascii')).toBe('ftyp');
    const partial = await fetch(`${s.url}/producer/abc.m4a`, { headers: { range: 'bytes=0-99' } });
    expect(partial.status).toBe(206);
    expect((await partial.arrayBuffer()).byteLength).toBe(100);
    expect((await fetch(`${s.url}/producer/abc.exe`)).status).toBe(404);
    expect((await fetch(`${s.url}/producer/abc.m4a`, { method: 'HEAD' })).headers.get('content-length')).toBe(String(m4a.length));
  });

  it('with songSeconds, serves melodies of that length and reports that duration', async () => {
    const s = await start({ songSeconds: 6, taskMs: 50 });
    const created = await call(s, 'POST', '/api/v1/producer/create', { task_type: 'create_music', sound: 'x' });
    const id = created.json!['task_id'] as string;
    expect(s.completeTask(id)).toBe(true);
    const { json } = await call(s, 'GET', `/api/v1/producer/task/${id}`);
    const [clip] = json!['data'] as Array<Record<string, unknown>>;
    expect(clip!['duration']).toBe(6);
    for (const suffix of ['.m4a', '.mp3', '-wav.wav']) {
      const file = Buffer.from(await (await fetch(`${clip!['audio_url']}`.replace('.m4a', suffix))).arrayBuffer());
      // Decoded to 8 kHz mono 16-bit: 16,000 bytes a second.
      const decoded = spawnSync('ffmpeg', ['-v', 'error', '-i', 'pipe:0', '-f', 's16le', '-ac', '1', '-ar', '8000', 'pipe:1'], { input: file, maxBuffer: 1 << 24 });
      expect(decoded.stdout.length / 16_000, suffix).toBeCloseTo(6, 1);
    }
  });
});

describe('held tasks', () => {
  afterEach(() => {
    vi.useRealTimers();
  });

  it('advance and end none while held, those created meanwhile included, and go on from where they were once released', () => {
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout', 'Date'] });
    const ended: string[] = [];
    const tasks = createTaskStore({ credits: 100, taskMs: 1_000, personaSongCost: 10, log: pino({ level: 'silent' }), onEnded: (task) => ended.push(task.view.taskId) });
    const early = tasks.create('song', { task_type: 'create_music', sound: 'x' }, { ...NORMAL_BEHAVIOUR });
    vi.advanceTimersByTime(600);
    expect(early.view.state).toBe('RUNNING');

    tasks.setHeld(true);
    const late = tasks.create('song', { task_type: 'create_music', sound: 'y' }, { ...NORMAL_BEHAVIOUR });
    vi.advanceTimersByTime(60_000);
    expect([early.view.state, late.view.state, ended]).toEqual(['RUNNING', 'PENDING', []]);
    expect(tasks.inFlight('create_music')).toBe(2);

    tasks.setHeld(false);
    // The early one had 400 ms to go, the late one its whole second.
    vi.advanceTimersByTime(399);
    expect(ended).toEqual([]);
    vi.advanceTimersByTime(1);
    expect(ended).toEqual([early.view.taskId]);
    vi.advanceTimersByTime(600);
    expect(ended).toEqual([early.view.taskId, late.view.taskId]);
    expect(late.view.state).toBe('SUCCESS');
  });

  it('are held and released over the control API, which refuses anything but a boolean', async () => {
    const s = await start();
    expect((await call(s, 'GET', '/_sim/hold', undefined, {})).json).toEqual({ held: false });
    expect((await call(s, 'POST', '/_sim/hold', { held: 'yes' }, {})).status).toBe(400);
    expect((await call(s, 'POST', '/_sim/hold', { held: true }, {})).json).toEqual({ held: true });
    expect(s.tasksHeld()).toBe(true);
    const created = await call(s, 'POST', '/api/v1/producer/create', { task_type: 'create_music', sound: 'x' });
    const id = created.json!['task_id'] as string;
    expect((await call(s, 'GET', '/_sim/state', undefined, {})).json).toMatchObject({ held: true, tasks: [{ taskId: id, state: 'PENDING' }] });
    s.holdTasks(false);
    await expect.poll(() => s.getTask(id)?.state).toBe('SUCCESS');
  });
});

describe('control API over HTTP', () => {
  it('sets and reads credits, task duration, faults; completes tasks; lists requests and webhooks', async () => {
    const s = await start({ taskMs: 60_000 });
    expect(await call(s, 'POST', '/_sim/credits', { credits: 12 }, {})).toMatchObject({ status: 200, json: { credits: 12 } });
    expect(s.getCredits()).toBe(12);
    expect((await call(s, 'GET', '/_sim/credits', undefined, {})).json).toEqual({ credits: 12 });

    expect((await call(s, 'POST', '/_sim/faults', { kind: 'explode' }, {})).status).toBe(400);
    expect((await call(s, 'POST', '/_sim/faults', { kind: 'status', status: 200 }, {})).status).toBe(400);
    expect((await call(s, 'POST', '/_sim/faults', { kind: 'status', status: 429, path: '/api/v1/producer/create' }, {})).status).toBe(200);
    const body = { task_type: 'create_music', sound: 'x' };
    expect((await call(s, 'POST', '/api/v1/producer/create', body)).json).toMatchObject({ type: 'rate_limited' });
    const created = await call(s, 'POST', '/api/v1/producer/create', body);
    expect(created.status).toBe(200);
    const id = created.json!['task_id'] as string;

    const completed = await call(s, 'POST', `/_sim/tasks/${id}/complete`, { outcome: 'failure' }, {});
    expect(completed.json).toMatchObject({ completed: true, task: { state: 'FAILED', refunded: true } });
    expect(s.getCredits()).toBe(12);
    const failedPoll = await call(s, 'GET', `/api/v1/producer/task/${id}`);
    expect(Object.keys(failedPoll.json!).sort()).toEqual(['code', 'data', 'message', 'status']);
    expect(failedPoll.json?.['status']).toBe('FAILED');

    expect((await call(s, 'POST', '/_sim/task-ms', { taskMs: 50 }, {})).json).toEqual({ taskMs: 50 });
    const quick = await call(s, 'POST', '/api/v1/producer/create', body);
    await expect.poll(() => s.getTask(quick.json!['task_id'] as string)?.state).toBe('SUCCESS');
    const polled = await call(s, 'GET', `/api/v1/producer/task/${quick.json!['task_id'] as string}`);
    expect(polled.json?.['status']).toBe('SUCCESS');

    const state = await call(s, 'GET', '/_sim/state', undefined, {});
    expect(state.json).toMatchObject({ credits: 2, taskMs: 50, faults: [] });
    const requests = await call(s, 'GET', '/_sim/requests', undefined, {});
    expect((requests.json as unknown as Array<{ path: string }>).map((r) => r.path)).toEqual([
      '/api/v1/producer/create',
      '/api/v1/producer/create',
      `/api/v1/producer/task/${id}`,
      '/api/v1/producer/create',
      `/api/v1/producer/task/${quick.json!['task_id'] as string}`,
    ]);
    expect((await call(s, 'GET', '/_sim/webhooks', undefined, {})).json).toEqual([]);
    expect((await call(s, 'DELETE', '/_sim/requests', undefined, {})).status).toBe(204);
    expect(s.requests).toHaveLength(0);
  });

  it('records method, path, headers without authorization, parsed body and time', async () => {
    const s = await start();
    const before = Date.now();
    await call(s, 'POST', '/api/v1/producer/create', { task_type: 'create_music', sound: 'x' }, { ...auth, 'x-trace': 't-1' });
    const [recorded] = s.requests;
    expect(recorded).toMatchObject({
      method: 'POST',
      path: '/api/v1/producer/create',
      authorized: true,
      body: { task_type: 'create_music', sound: 'x' },
      status: 200,
    });
    expect(recorded!.headers['x-trace']).toBe('t-1');
    expect(JSON.stringify(recorded)).not.toContain(apiKey);
    expect(recorded!.at).toBeGreaterThanOrEqual(before);
  });

  it('hangs a request until closed, without keeping close() waiting', async () => {
    const s = await start();
    s.injectFault({ kind: 'hang' });
    const pending = fetch(`${s.url}/api/v1/get-credits`, { headers: auth }).then(
      () => 'answered',
      () => 'cut off',
    );
    await expect.poll(() => s.requests.map((request) => request.path)).toEqual(['/api/v1/get-credits']);
    await s.close();
    sim = undefined;
    expect(await pending).toBe('cut off');
  });
});
