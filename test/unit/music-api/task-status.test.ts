import { describe, expect, it } from 'vitest';
import {
  normaliseWebhookPayload,
  producerEnvelopeSchema,
  sonicEnvelopeSchema,
  toTaskState,
  toTaskStatus,
} from '../../../src/music-api/task-status.js';

const clip = {
  clip_id: 'c1',
  title: 'Rain',
  sound: 'lofi rain',
  lyrics: 'la la',
  audio_url: 'https://cdn.example/producer/c1.m4a',
  wav_url: 'https://cdn.example/producer/c1-wav.wav',
  image_url: 'https://cdn.example/producer/c1-img.jpg',
  video_url: 'https://cdn.example/producer/c1-video.mp4',
  duration: 93.5,
  some_new_field: { nested: true },
};

function producer(body: unknown) {
  return toTaskStatus(producerEnvelopeSchema.parse(body));
}

function sonic(body: unknown) {
  return toTaskStatus(sonicEnvelopeSchema.parse(body));
}

describe('producer polling envelope', () => {
  it.each([
    ['PENDING', 'pending'],
    ['RUNNING', 'running'],
    ['SUCCESS', 'succeeded'],
    ['FAILED', 'failed'],
  ] as const)('maps status %s to %s', (status, state) => {
    expect(producer({ code: 200, message: 'success', data: [], status }).state).toBe(state);
  });

  it('reads a finished clip, keeping unknown fields', () => {
    const status = producer({ code: 200, message: 'success', data: [clip], status: 'SUCCESS', extra: 1 });
    expect(status.clips).toHaveLength(1);
    expect(status.clips[0]).toMatchObject({
      clipId: 'c1',
      title: 'Rain',
      audioUrl: clip.audio_url,
      wavUrl: clip.wav_url,
      imageUrl: clip.image_url,
      videoUrl: clip.video_url,
      durationSeconds: 93.5,
    });
    expect(status.clips[0]?.raw['some_new_field']).toEqual({ nested: true });
    expect(status.raw['extra']).toBe(1);
  });

  it('requires status, tolerates null data and wrongly typed optional fields', () => {
    expect(producerEnvelopeSchema.safeParse({ code: 200, data: [] }).success).toBe(false);
    const status = producer({ code: 'two hundred', message: 5, data: null, status: 'PENDING' });
    expect(status).toMatchObject({ state: 'pending', clips: [] });
  });

  it('reads lyrics from a make_lyrics task and the failure reason of a failed one', () => {
    const lyrics = producer({ code: 200, message: 'success', data: [{ title: 'Ode', text: 'Verse one' }], status: 'SUCCESS' });
    expect(lyrics).toMatchObject({ state: 'succeeded', lyrics: 'Verse one', lyricsTitle: 'Ode', clips: [] });
    const failed = producer({ code: 200, message: 'success', data: [], status: 'FAILED', error: 'provider down' });
    expect(failed).toMatchObject({ state: 'failed', failureReason: 'provider down' });
  });

  it('reads the text of a make_lyrics result whose item also carries an id and an image', () => {
    const item = { id: 'l-7', title: 'Ode to rain', text: '[Verse]\nDrops on the pane', image_url: 'https://cdn.example/producer/l-7-img.jpg' };
    const status = producer({ code: 200, message: 'success', data: [item], status: 'SUCCESS' });
    expect(status).toMatchObject({ state: 'succeeded', lyrics: '[Verse]\nDrops on the pane', lyricsTitle: 'Ode to rain' });
  });

  it('treats an unknown state word as still running', () => {
    expect(toTaskState('STREAMING')).toBe('running');
    expect(toTaskState('SOMETHING_NEW')).toBe('running');
    expect(toTaskState('succeeded')).toBe('succeeded');
  });
});

describe('sonic polling', () => {
  const sonicClip = (state: string, extra: object = {}) => ({ clip_id: `s-${state}`, state, title: 'T', ...extra });

  it('takes the state from data[].state, two clips, duration as a string', () => {
    const done = sonic({
      code: 200,
      message: 'success',
      data: [
        sonicClip('succeeded', { audio_url: 'https://x/a.mp3', duration: '104.88' }),
        { ...sonicClip('succeeded', { audio_url: 'https://x/b.mp3', duration: '99' }), clip_id: 's-2' },
      ],
    });
    expect(done.state).toBe('succeeded');
    expect(done.clips.map((c) => c.durationSeconds)).toEqual([104.88, 99]);
    expect(sonic({ data: [sonicClip('pending'), sonicClip('pending')] }).state).toBe('pending');
    expect(sonic({ data: [sonicClip('running'), sonicClip('pending')] }).state).toBe('running');
    expect(sonic({ data: [sonicClip('failed'), sonicClip('failed')] }).state).toBe('failed');
    expect(sonic({ data: [sonicClip('failed'), sonicClip('succeeded')] }).state).toBe('succeeded');
  });

  it('reads a finished create-voice task whose data is the persona', () => {
    const status = sonic({ code: 200, message: 'success', data: { persona_id: 'p-9', name: 'Alto' } });
    expect(status).toMatchObject({ state: 'succeeded', personaId: 'p-9', personaName: 'Alto', clips: [] });
    expect(sonic({ code: 200, data: { state: 'running' } }).state).toBe('running');
  });

  it('reads the persona of a create-voice result that also carries an id and media URLs, polled or by webhook', () => {
    const persona = {
      id: 'b5f1c0de-7d1e-4f7a-9a51-3f0e2c1d9b77',
      persona_id: 'p-42',
      name: 'Alto',
      state: 'succeeded',
      audio_url: 'https://cdn.example/sonic/b5f1c0de.mp3',
      image_url: 'https://cdn.example/sonic/b5f1c0de.jpg',
    };
    for (const data of [persona, [persona]]) {
      const polled = sonic({ code: 200, message: 'success', data });
      expect(polled).toMatchObject({ state: 'succeeded', personaId: 'p-42', personaName: 'Alto' });
      const hooked = normaliseWebhookPayload(JSON.stringify({ code: 200, message: 'success', data }));
      expect(hooked.status).toMatchObject({ state: 'succeeded', personaId: 'p-42', personaName: 'Alto' });
    }
  });

  it("keeps a persona song's clips as clips when they name their persona", () => {
    const status = sonic({
      code: 200,
      data: [
        sonicClip('succeeded', { clip_id: 's-1', persona_id: 'p-42', audio_url: 'https://x/a.mp3' }),
        sonicClip('succeeded', { clip_id: 's-2', persona_id: 'p-42', audio_url: 'https://x/b.mp3' }),
      ],
    });
    expect(status.state).toBe('succeeded');
    expect(status.clips.map((c) => [c.clipId, c.audioUrl])).toEqual([
      ['s-1', 'https://x/a.mp3'],
      ['s-2', 'https://x/b.mp3'],
    ]);
  });

  it('refuses an envelope with neither status nor data', () => {
    expect(sonicEnvelopeSchema.safeParse({ code: 200, message: 'success' }).success).toBe(false);
  });
});

describe('normaliseWebhookPayload', () => {
  it('reads the polling envelope plus task_id, platform and event, and the event id header', () => {
    const payload = { code: 200, message: 'success', data: [clip], status: 'SUCCESS', task_id: 't-1', platform: 'producer', event: 'song.completed' };
    const event = normaliseWebhookPayload(JSON.stringify(payload), { 'x-webhook-id': 'evt-1' });
    expect(event).toMatchObject({ taskId: 't-1', platform: 'producer', event: 'song.completed', eventId: 'evt-1' });
    expect(event.status.state).toBe('succeeded');
    expect(event.status.clips[0]?.audioUrl).toBe(clip.audio_url);
  });

  it('normalises a sonic body the same way as the poll, and falls back to the event name in the body', () => {
    const sonicBody = { code: 200, data: [{ clip_id: 'a', state: 'failed' }, { clip_id: 'b', state: 'failed' }], task_id: 't-2' };
    expect(normaliseWebhookPayload(Buffer.from(JSON.stringify(sonicBody))).status.state).toBe('failed');
    const named = normaliseWebhookPayload({ code: 200, data: [], event: 'song.failed' }, { 'Idempotency-Key': 'k-1' });
    expect(named).toMatchObject({ event: 'song.failed', eventId: 'k-1', status: { state: 'failed' } });
  });

  it('reads the state from the body alone: X-Webhook-Event, outside the signature, is kept for logs', () => {
    const bare = normaliseWebhookPayload({ code: 200, data: [] }, { 'X-Webhook-Event': 'song.failed' });
    expect(bare).toMatchObject({ event: undefined, headerEvent: 'song.failed', status: { state: 'pending' } });
    const persona = normaliseWebhookPayload({ code: 200, data: { persona_id: 'p-1' } }, { 'X-Webhook-Event': 'song.failed' });
    expect(persona.status).toMatchObject({ state: 'succeeded', personaId: 'p-1' });
  });

  it('throws on a body that is not JSON', () => {
    expect(() => normaliseWebhookPayload('not json')).toThrow(SyntaxError);
  });
});
