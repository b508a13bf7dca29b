/**
 * The moderation stand-in, over plain HTTP: OpenAI's moderation shape, its key, the words a
 * test flags by category, and the ways it can fail (down, slow, malformed), set in process or
 * through the control API.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { MODERATION_CATEGORIES, startMusicApiSim, type MusicApiSim } from '@music-bot/music-api-sim';

const moderationApiKey = 'moderation-key';
let sim: MusicApiSim | undefined;

afterEach(async () => {
  await sim?.close();
  sim = undefined;
});

async function start(): Promise<MusicApiSim> {
  sim = await startMusicApiSim({ apiKey: 'music-key', moderationApiKey, credits: 100 });
  return sim;
}

async function moderate(s: MusicApiSim, body: unknown, key = moderationApiKey) {
  const response = await fetch(`${s.url}/v1/moderations`, {
    method: 'POST',
    headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
  return { status: response.status, text: await response.text() };
}

const control = (s: MusicApiSim, method: string, body?: unknown) =>
  fetch(`${s.url}/_sim/moderation`, { method, ...(body !== undefined && { body: JSON.stringify(body) }) });

describe('the moderation stand-in', () => {
  it('answers one result per text, in order, flagging the words a test gave a category', async () => {
    const s = await start();
    s.setModeration({ flag: { violence: ['smash'], 'hate/threatening': ['Grudge'] } });
    const { status, text } = await moderate(s, { input: ['a calm song', 'SMASH the grudge', 'a quiet smashing night'] });
    expect(status).toBe(200);
    const answer = JSON.parse(text) as { id: string; model: string; results: Array<{ flagged: boolean; categories: Record<string, boolean>; category_scores: Record<string, number> }> };
    expect(answer.id).toMatch(/^modr-/);
    expect(answer.model).toBe('omni-moderation-latest');
    expect(answer.results.map((result) => result.flagged)).toEqual([false, true, true]);
    expect(Object.keys(answer.results[0]!.categories).sort()).toEqual([...MODERATION_CATEGORIES].sort());
    expect(answer.results[1]!.categories).toMatchObject({ violence: true, 'hate/threatening': true, sexual: false });
    expect(answer.results[1]!.category_scores['violence']).toBeGreaterThan(0.5);
    expect(answer.results[0]!.category_scores['violence']).toBeLessThan(0.01);
    // A single string is one text, as the real service takes it.
    expect(JSON.parse((await moderate(s, { input: 'smash' })).text).results).toHaveLength(1);
    expect(s.getModeration().checked).toBe(2);
  });

  it('refuses a wrong key with 401 and a body without input with 400; its key is not the music key', async () => {
    const s = await start();
    expect((await moderate(s, { input: ['x'] }, 'music-key')).status).toBe(401);
    expect((await moderate(s, { input: ['x'] }, 'wrong')).status).toBe(401);
    expect((await moderate(s, { text: 'x' })).status).toBe(400);
    expect((await moderate(s, { input: [] })).status).toBe(400);
    expect((await moderate(s, { input: [1] })).status).toBe(400);
    const recorded = s.requests.filter((request) => request.path === '/v1/moderations');
    expect(recorded.map((request) => request.authorized)).toEqual([false, false, true, true, true]);
    expect(JSON.stringify(recorded)).not.toContain(moderationApiKey);
  });

  it('is down, malformed or slow when told through the control API, and back up on reset', async () => {
    const s = await start();
    expect((await control(s, 'POST', { mode: 'down' })).status).toBe(200);
    expect((await moderate(s, { input: ['x'] })).status).toBe(503);

    await control(s, 'POST', { mode: 'malformed' });
    const malformed = await moderate(s, { input: ['x'] });
    expect(malformed.status).toBe(200);
    expect(() => JSON.parse(malformed.text)).toThrow();

    await control(s, 'POST', { mode: 'slow', slowMs: 300 });
    const started = Date.now();
    expect((await moderate(s, { input: ['x'] })).status).toBe(200);
    expect(Date.now() - started).toBeGreaterThanOrEqual(290);

    const state = (await (await control(s, 'GET')).json()) as { moderation: { mode: string; checked: number } };
    expect(state.moderation).toMatchObject({ mode: 'slow', checked: 3 });
    expect((await control(s, 'DELETE')).status).toBe(204);
    expect(s.getModeration()).toEqual({ flag: {}, mode: 'up', slowMs: 10_000, checked: 0 });
    expect((await control(s, 'POST', { mode: 'sideways' })).status).toBe(400);
    expect((await control(s, 'POST', { flag: { hate: 'word' } })).status).toBe(400);
  });

  it('closes with a slow answer still waiting', async () => {
    const s = await start();
    s.setModeration({ mode: 'slow', slowMs: 60_000 });
    const waiting = moderate(s, { input: ['x'] }).catch((error: unknown) => error);
    await expect.poll(() => s.getModeration().checked).toBe(1);
    await s.close();
    sim = undefined;
    expect(await waiting).toBeInstanceOf(Error);
  });
});
