/**
 * The client against the in-process simulator: every operation, every error status, refunds.
 */
import { inspect } from 'node:util';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { MusicApiClient } from '../../src/music-api/client.js';
import { MusicApiError } from '../../src/music-api/errors.js';
import { RETIRED_TASK_TYPES, SPEC_MODELS } from '../../src/music-api-spec.js';
import { RETIRED_FAMILIES } from '@music-bot/music-api-sim/server.js';
import { closedPort, harnessForTest, waitForState, type Harness } from './helpers.js';
import { english } from '../../src/i18n/index.js';

/** Reaches paths the client deliberately has no operation for, through its own error mapping. */
class ProbeClient extends MusicApiClient {
  send(method: 'GET' | 'POST', path: string, body?: Record<string, unknown>) {
    return this.request({ operation: 'request', method, path, ...(body === undefined ? {} : { body }), schema: z.unknown() });
  }
}


const setup = harnessForTest;

async function failure(promise: Promise<unknown>): Promise<MusicApiError> {
  const error = await promise.then(
    () => undefined,
    (caught: unknown) => caught,
  );
  expect(error).toBeInstanceOf(MusicApiError);
  return error as MusicApiError;
}

function lastBody(h: Harness): Record<string, unknown> {
  return h.sim.requests.at(-1)?.body as Record<string, unknown>;
}

describe('producer operations', () => {
  it('creates a song, charges 10 credits, and polls it to a clip whose media links open', async () => {
    // The task finishes when the test says, not when a clock does: the first poll sees it under way however slow the machine.
    const h = await setup({ taskMs: 600_000 });
    const accepted = await h.client.createSong({
      sound: 'lofi rain on a tin roof',
      lyrics: 'drip drop',
      title: 'Tin Roof',
      model: 'ModelB-2.0 Pro',
      makeInstrumental: false,
      webhook: { url: 'https://hooks.example.com/music', secret: 'whsec-1' },
    });
    expect(accepted.taskId).toMatch(/\S/);
    expect(h.sim.getCredits()).toBe(90);

    const recorded = h.sim.requests.at(-1);
    expect(recorded).toMatchObject({ method: 'POST', path: '/api/v1/producer/create', authorized: true });
    expect(recorded?.headers['content-type']).toBe('application/json');
    expect(recorded?.headers).not.toHaveProperty('authorization');
    expect(recorded?.body).toEqual({
      task_type: 'create_music',
      sound: 'lofi rain on a tin roof',
      lyrics: 'drip drop',
      title: 'Tin Roof',
      mv: 'ModelB-2.0 Pro',
      make_instrumental: false,
      webhook_url: 'https://hooks.example.com/music',
      webhook_secret: 'whsec-1',
    });

    const first = await h.client.getProducerTask(accepted.taskId);
    expect(['pending', 'running']).toContain(first.state);
    h.sim.completeTask(accepted.taskId);
    const done = await waitForState(() => h.client.getProducerTask(accepted.taskId));
    expect(done.state).toBe('succeeded');
    expect(done.upstreamState).toBe('SUCCESS');
    expect(done.clips).toHaveLength(1);
    const clip = done.clips[0]!;
    expect(clip.title).toBe('Tin Roof');
    expect(clip.audioUrl).toBe(`${h.sim.url}/producer/${clip.clipId}.m4a`);
    expect(clip.wavUrl).toBe(`${h.sim.url}/producer/${clip.clipId}-wav.wav`);
    expect(clip.imageUrl).toBe(`${h.sim.url}/producer/${clip.clipId}-img.jpg`);
    expect(clip.videoUrl).toBe(`${h.sim.url}/producer/${clip.clipId}-video.mp4`);
    const types = await Promise.all(
      [clip.audioUrl, clip.wavUrl, clip.imageUrl, clip.videoUrl].map(async (url) => {
        const response = await fetch(url!);
        const bytes = Buffer.from(await response.arrayBuffer());
        expect(response.status).toBe(200);
        expect(bytes.length).toBeGreaterThan(1000);
        return response.headers.get('content-type');
      }),
    );
    expect(types).toEqual(['audio/mp4', 'audio/wav', 'image/jpeg', 'video/mp4']);
    // Polling is free.
    expect(h.sim.getCredits()).toBe(90);
  });

  it('sends no mv when no model is chosen', async () => {
    const h = await setup();
    await h.client.createSong({ sound: 'a waltz' });
    expect(lastBody(h)).toEqual({ task_type: 'create_music', sound: 'a waltz' });
  });

  it('refuses a model outside the configured list before sending anything', async () => {
    const h = await setup({}, { models: ['FUZZ-2.0'] });
    const error = await failure(h.client.createSong({ sound: 'x', model: 'ModelB-2.0' }));
    expect(error).toMatchObject({ kind: 'validation', status: undefined, retryable: false });
    expect(english.text(error.userText)).toContain('FUZZ-2.0');
    await failure(h.client.createSong({ sound: '   ' }));
    expect(h.sim.requests).toHaveLength(0);
  });

  it('defaults to the eleven spec models, written exactly', async () => {
    const h = await setup();
    expect(h.client.models).toEqual(SPEC_MODELS);
    expect(SPEC_MODELS).toHaveLength(11);
    const error = await failure(h.client.createSong({ sound: 'x', model: 'modelb-2.0' }));
    expect(error.kind).toBe('validation');
  });

  it('creates lyrics (1 credit), a video clip (5), an upload (2) and downloads (2 each)', async () => {
    const h = await setup();
    const lyricsTask = await h.client.createLyrics({ prompt: 'a sea shanty about cats' });
    expect(lastBody(h)).toEqual({ prompt: 'a sea shanty about cats' });
    expect(h.sim.getCredits()).toBe(99);
    const lyrics = await waitForState(() => h.client.getProducerTask(lyricsTask.taskId));
    expect(lyrics.state).toBe('succeeded');
    expect(lyrics.lyrics).toMatch(/cats/);
    expect(lyrics.lyricsTitle).toEqual(expect.any(String));

    const video = await h.client.createVideoClip({ clipId: 'clip-42' });
    expect(lastBody(h)).toEqual({ clip_id: 'clip-42' });
    expect(h.sim.getCredits()).toBe(94);
    const videoDone = await waitForState(() => h.client.getProducerTask(video.taskId));
    expect(videoDone.clips[0]).toMatchObject({ clipId: 'clip-42', videoUrl: `${h.sim.url}/producer/clip-42-video.mp4` });

    const upload = await h.client.uploadAudio({ audioUrl: 'https://files.example.com/take.mp3' });
    expect(lastBody(h)).toEqual({ url: 'https://files.example.com/take.mp3' });
    expect(h.sim.getCredits()).toBe(92);
    const uploaded = await waitForState(() => h.client.getProducerTask(upload.taskId));
    expect(uploaded.clips[0]?.clipId).toMatch(/\S/);

    const mp3 = await h.client.requestDownload({ clipId: 'clip-42', format: 'mp3' });
    expect(lastBody(h)).toEqual({ clip_id: 'clip-42', format: 'mp3' });
    const wav = await h.client.requestDownload({ clipId: 'clip-42', format: 'wav' });
    expect(h.sim.getCredits()).toBe(88);
    const mp3Done = await waitForState(() => h.client.getProducerTask(mp3.taskId));
    const wavDone = await waitForState(() => h.client.getProducerTask(wav.taskId));
    expect(mp3Done.clips[0]?.downloadUrl).toBe(`${h.sim.url}/producer/clip-42.mp3`);
    expect(wavDone.clips[0]?.downloadUrl).toBe(`${h.sim.url}/producer/clip-42-wav.wav`);
    const mp3Response = await fetch(mp3Done.clips[0]!.downloadUrl!);
    expect(mp3Response.headers.get('content-type')).toBe('audio/mpeg');
    expect((await mp3Response.arrayBuffer()).byteLength).toBeGreaterThan(1000);
  });
});

describe('sonic operations', () => {
  it('creates a voice (4 credits), polls it to a persona, then sings with it', async () => {
    const h = await setup({ personaSongCost: 7 }, { personaSongCost: 7 });
    const voice = await h.client.createVoice({ audioUrl: 'https://files.example.com/voice.wav' });
    expect(lastBody(h)).toEqual({ audio_url: 'https://files.example.com/voice.wav' });
    expect(h.sim.getCredits()).toBe(96);
    const persona = await waitForState(() => h.client.getSonicTask(voice.taskId));
    expect(persona.state).toBe('succeeded');
    expect(persona.personaId).toMatch(/\S/);
    expect(persona.personaName).toMatch(/\S/);

    const song = await h.client.createPersonaSong({
      personaId: persona.personaId!,
      lyrics: 'hello hello',
      title: 'Echo',
      tags: 'synthpop',
      model: 'sonic-v4-5',
    });
    expect(lastBody(h)).toEqual({
      task_type: 'persona_music',
      persona_id: persona.personaId,
      custom_mode: true,
      prompt: 'hello hello',
      title: 'Echo',
      tags: 'synthpop',
      mv: 'sonic-v4-5',
    });
    expect(h.client.costOf('personaSong')).toBe(7);
    expect(h.sim.getCredits()).toBe(89);
    const pending = await h.client.getSonicTask(song.taskId);
    expect(['pending', 'running']).toContain(pending.state);
    const done = await waitForState(() => h.client.getSonicTask(song.taskId));
    expect(done.state).toBe('succeeded');
    expect(done.clips).toHaveLength(2);
    expect(done.clips.every((clip) => clip.state === 'succeeded' && clip.durationSeconds === 2)).toBe(true);
    expect(typeof (done.clips[0]?.raw['duration'])).toBe('string');
    expect(h.sim.requests.some((r) => r.path === `/api/v1/sonic/task/${song.taskId}`)).toBe(true);
  });

  it('does not find a sonic task on the producer polling path', async () => {
    const h = await setup();
    const voice = await h.client.createVoice({ audioUrl: 'https://files.example.com/voice.wav' });
    const error = await failure(h.client.getProducerTask(voice.taskId));
    expect(error).toMatchObject({ kind: 'not_found', status: 404 });
  });
});

describe('get-credits', () => {
  it('returns credits and extra credits', async () => {
    const h = await setup({ credits: 37 });
    await expect(h.client.getCredits()).resolves.toMatchObject({ credits: 37, extraCredits: 0 });
    expect(h.sim.requests.at(-1)).toMatchObject({ method: 'GET', path: '/api/v1/get-credits', authorized: true });
  });
});

describe('errors', () => {
  it('400 validation_error: a webhook URL that is not HTTPS, or too long, or an mv the service refuses', async () => {
    const h = await setup({ allowHttpWebhooks: false }, { models: ['ModelB-2.0', 'ModelB-9'] });
    const plain = await failure(h.client.createSong({ sound: 'x', webhook: { url: 'http://127.0.0.1:9/hook' } }));
    expect(plain).toMatchObject({ kind: 'validation', status: 400, type: 'validation_error', retryable: false, maybeAccepted: false });
    const long = `https://hooks.example.com/${'a'.repeat(1024)}`;
    expect((await failure(h.client.createSong({ sound: 'x', webhook: { url: long } }))).status).toBe(400);
    expect((await failure(h.client.createSong({ sound: 'x', model: 'ModelB-9' }))).type).toBe('validation_error');
    expect(h.sim.getCredits()).toBe(100);
  });

  it('401 unauthorized with a wrong key, which appears nowhere in the error', async () => {
    const h = await setup();
    const wrongKey = 'sk-wrong-key-abcdef';
    const client = new MusicApiClient({ baseUrl: h.sim.url, apiKey: wrongKey });
    const error = await failure(client.getCredits());
    expect(error).toMatchObject({ kind: 'unauthorized', status: 401, type: 'unauthorized', retryable: false });
    expect(`${error.message} ${error.detail} ${english.text(error.userText)} ${inspect(error)} ${JSON.stringify(error)}`).not.toContain(wrongKey);
  });

  it('402 insufficient_credits when the balance is short, nothing charged', async () => {
    const h = await setup({ credits: 9 });
    const error = await failure(h.client.createSong({ sound: 'x' }));
    expect(error).toMatchObject({ kind: 'insufficient_credits', status: 402, type: 'insufficient_credits', retryable: false });
    expect(h.sim.getCredits()).toBe(9);
    await expect(h.client.createLyrics({ prompt: 'cheap' })).resolves.toMatchObject({ taskId: expect.any(String) });
    expect(h.sim.getCredits()).toBe(8);
  });

  it("maps the real service's 403 to insufficient_credits too", async () => {
    const h = await setup();
    h.sim.injectFault({ kind: 'status', status: 403, type: 'insufficient_credits' });
    const injected = await failure(h.client.createSong({ sound: 'x' }));
    expect(injected).toMatchObject({ kind: 'insufficient_credits', status: 403, retryable: false });
    const marked = await failure(h.client.createSong({ sound: 'x [sim:403]' }));
    expect(marked).toMatchObject({ kind: 'insufficient_credits', status: 403 });
  });

  it('410 endpoint_retired for every retired task type and both retired-family routes', async () => {
    const h = await setup();
    const probe = new ProbeClient({ baseUrl: h.sim.url, apiKey: h.apiKey });
    for (const taskType of RETIRED_TASK_TYPES) {
      const error = await failure(probe.send('POST', '/api/v1/producer/create', { task_type: taskType, sound: 'x' }));
      expect(error).toMatchObject({ kind: 'endpoint_retired', status: 410, type: 'endpoint_retired', retryable: false });
    }
    for (const family of RETIRED_FAMILIES) {
      const created = await failure(probe.send('POST', `/api/v1/${family}/create`, { type: 'vocal', lyrics: 'x' }));
      const polled = await failure(probe.send('GET', `/api/v1/${family}/task/old-task-1`));
      expect([created.kind, created.status, polled.kind, polled.status]).toEqual(['endpoint_retired', 410, 'endpoint_retired', 410]);
    }
    expect(h.sim.getCredits()).toBe(100);
  });

  it('429 rate_limited beyond the in-flight limit per task type', async () => {
    const h = await setup({ concurrencyLimit: 2, taskMs: 60_000 });
    const first = await h.client.createSong({ sound: 'one' });
    await h.client.createSong({ sound: 'two' });
    const error = await failure(h.client.createSong({ sound: 'three' }));
    expect(error).toMatchObject({ kind: 'rate_limited', status: 429, type: 'rate_limited', retryable: true, maybeAccepted: false });
    // Another task type has its own limit; a finished task frees a place.
    await expect(h.client.createLyrics({ prompt: 'words' })).resolves.toMatchObject({ taskId: expect.any(String) });
    h.sim.completeTask(first.taskId);
    await expect(h.client.createSong({ sound: 'three' })).resolves.toMatchObject({ taskId: expect.any(String) });
    expect(h.sim.getCredits()).toBe(100 - 30 - 1);
  });

  it('429, 500 and 502 from prompt markers: once, then the same request succeeds', async () => {
    const h = await setup();
    const cases = [
      ['[sim:429] drums', 'rate_limited', 429, 'rate_limited', true],
      ['[sim:500] drums', 'internal', 500, 'internal_error', false],
      ['[sim:502] drums', 'upstream', 502, 'upstream_error', true],
    ] as const;
    for (const [sound, kind, status, type, retryable] of cases) {
      const error = await failure(h.client.createSong({ sound }));
      // Only 429 and 502 say nothing was made; a 500 may come after the task was.
      expect(error).toMatchObject({ kind, status, type, retryable, maybeAccepted: !retryable });
      await expect(h.client.createSong({ sound })).resolves.toMatchObject({ taskId: expect.any(String) });
    }
    expect(h.sim.getCredits()).toBe(70);
  });

  it("answers after the task was made: 5xx but 502, a 200 with an error code, a reset, a proxy's page", async () => {
    const h = await setup();
    const cases = [
      ['[sim:500-accepted]', { kind: 'internal', status: 500 }],
      ['[sim:503-accepted]', { kind: 'upstream', status: 503 }],
      ['[sim:504-accepted]', { kind: 'internal', status: 504 }],
      ['[sim:code-500-accepted]', { kind: 'internal', status: 500 }],
      ['[sim:reset-accepted]', { kind: 'network', status: undefined }],
      // A 502 without the spec's `upstream_error` body, and a 200 whose body is no JSON.
      ['[sim:proxy-502-accepted]', { kind: 'upstream', status: 502, type: undefined }],
      ['[sim:proxy-200-accepted]', { kind: 'bad_response', status: 200 }],
    ] as const;
    for (const [sound, expected] of cases) {
      const error = await failure(h.client.createSong({ sound }));
      expect(error, sound).toMatchObject({ ...expected, maybeAccepted: true, retryable: false });
      expect(h.sim.listTasks().filter((task) => task.body.sound === sound), sound).toHaveLength(1);
    }
    expect(h.sim.getCredits()).toBe(100 - 7 * 10);
  });

  it('the same faults without `-accepted` make no task, and are still uncertain to the client', async () => {
    const h = await setup();
    for (const sound of ['[sim:504]', '[sim:code-503]', '[sim:reset]', '[sim:proxy-502]']) {
      const error = await failure(h.client.createSong({ sound }));
      expect(error, sound).toMatchObject({ maybeAccepted: true, retryable: false });
    }
    expect(h.sim.listTasks()).toHaveLength(0);
    expect(h.sim.getCredits()).toBe(100);
  });

  it('a counted marker answers 429 N times, then normally', async () => {
    const h = await setup();
    await failure(h.client.createSong({ sound: 'bass [sim:429x2]' }));
    await failure(h.client.createSong({ sound: 'bass [sim:429x2]' }));
    await expect(h.client.createSong({ sound: 'bass [sim:429x2]' })).resolves.toMatchObject({ taskId: expect.any(String) });
  });

  it('500 and 502 injected through the control object on polling', async () => {
    const h = await setup();
    const task = await h.client.createSong({ sound: 'x' });
    h.sim.injectFault({ kind: 'status', status: 502, path: '/api/v1/producer/task/', times: 2 });
    h.sim.injectFault({ kind: 'status', status: 500, path: '/api/v1/producer/task/' });
    expect((await failure(h.client.getProducerTask(task.taskId))).kind).toBe('upstream');
    expect((await failure(h.client.getProducerTask(task.taskId))).kind).toBe('upstream');
    expect((await failure(h.client.getProducerTask(task.taskId))).kind).toBe('internal');
    await expect(h.client.getProducerTask(task.taskId)).resolves.toMatchObject({ state: expect.any(String) });
  });

  it('network failure to a closed port: retryable, known not to have reached the service', async () => {
    const port = await closedPort();
    const client = new MusicApiClient({ baseUrl: `http://127.0.0.1:${port}`, apiKey: 'sk-closed-port-key' });
    const error = await failure(client.createSong({ sound: 'x' }));
    expect(error).toMatchObject({ kind: 'network', status: undefined, retryable: true, maybeAccepted: false });
    expect(error.detail).toBe('ECONNREFUSED');
    expect(`${error.message}${String(error.cause)}${inspect(error)}`).not.toContain('sk-closed-port-key');
  });

  it('timeout on a hung create: maybe accepted, so not retryable', async () => {
    const h = await setup({}, { timeoutMs: 200 });
    // The hung request never gets an answer: only the client's own timeout ends it.
    const error = await failure(h.client.createSong({ sound: 'slow [sim:hang]' }));
    expect(error).toMatchObject({ kind: 'timeout', status: undefined, retryable: false, maybeAccepted: true });
    expect(english.text(error.userText)).toMatch(/may still be processed/);
    expect(h.sim.listTasks()).toHaveLength(0);
  });

  it('a create that hangs after the service accepted it has created and charged a task', async () => {
    const h = await setup({}, { timeoutMs: 200 });
    const error = await failure(h.client.createSong({ sound: 'slow [sim:hang-accepted]' }));
    expect(error).toMatchObject({ kind: 'timeout', maybeAccepted: true });
    expect(h.sim.listTasks()).toHaveLength(1);
    expect(h.sim.getCredits()).toBe(90);
  });

  it('timeout on a poll is retryable (nothing can be created twice)', async () => {
    const h = await setup();
    const task = await h.client.createSong({ sound: 'x' });
    h.sim.injectFault({ kind: 'hang', path: '/api/v1/producer/task/' });
    const error = await failure(h.client.getProducerTask(task.taskId, { timeoutMs: 150 }));
    expect(error).toMatchObject({ kind: 'timeout', retryable: true, maybeAccepted: false });
  });

  it('never lets the API key reach an error or a log line', async () => {
    const h = await setup({}, { timeoutMs: 200 });
    const errors = [
      await failure(h.client.createSong({ sound: '[sim:500]' })),
      await failure(h.client.createSong({ sound: '[sim:hang]' })),
      await failure(h.client.getProducerTask('no-such-task')),
    ];
    await h.client.getCredits();
    expect(h.logLines.length).toBeGreaterThanOrEqual(4);
    const everything = [
      ...h.logLines,
      ...errors.flatMap((e) => [e.message, e.detail, english.text(e.userText), String(e.cause), e.stack, inspect(e, { depth: 5 }), JSON.stringify(e)]),
      inspect(h.client, { depth: 5 }),
      JSON.stringify(h.client),
    ].join('\n');
    expect(everything).not.toContain(h.apiKey);
    expect(h.logLines.join('\n')).toContain('"kind":"internal"');
  });
});

describe('refunds', () => {
  it('charges at submission and refunds when the task fails upstream', async () => {
    const h = await setup();
    const task = await h.client.createSong({ sound: 'doomed [sim:fail]' });
    expect(h.sim.getCredits()).toBe(90);
    const status = await waitForState(() => h.client.getProducerTask(task.taskId));
    expect(status.state).toBe('failed');
    expect(status.upstreamState).toBe('FAILED');
    expect(status.failureReason).toMatch(/simulated/);
    expect(h.sim.getCredits()).toBe(100);
    await expect(h.client.getCredits()).resolves.toMatchObject({ credits: 100 });
    expect(h.sim.getTask(task.taskId)).toMatchObject({ refunded: true, state: 'FAILED' });
  });

  it('refunds a sonic persona song that fails, with both clips failed', async () => {
    const h = await setup();
    const task = await h.client.createPersonaSong({ personaId: 'p-1', lyrics: 'la [sim:fail]' });
    expect(h.sim.getCredits()).toBe(90);
    const status = await waitForState(() => h.client.getSonicTask(task.taskId));
    expect(status.state).toBe('failed');
    expect(status.clips.map((clip) => clip.state)).toEqual(['failed', 'failed']);
    expect(h.sim.getCredits()).toBe(100);
  });
});
