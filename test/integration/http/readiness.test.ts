/**
 * `/readyz` through the app's own life: from the moment `stop()` begins, while the workers
 * still finish what they hold, it answers 503 so that a load balancer drains the process.
 * A submission the music service never answers holds the stop open long enough to look.
 */
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { found } from '../../support/found.js';
import { startHarness, type Harness } from '../../support/pipeline-harness.js';

let h: Harness;

beforeAll(async () => {
  // The hung submission gives up after 3 s, and the stop then ends.
  h = await startHarness({ webhooks: false, startingCredits: 500, env: { MUSIC_API_TIMEOUT_MS: '3000' } });
});
afterAll(async () => h?.close());

describe('/readyz while the app stops', () => {
  it('answers 200 while running, then 503 "stopping" as soon as stop() begins, before the server closes', async () => {
    const url = `${h.app.httpUrl}/readyz`;
    expect((await fetch(url)).status).toBe(200);

    h.setSimForThisTest({ faults: [{ kind: 'hang', path: '/api/v1/producer/create' }] });
    await h.request({ kind: 'song', prompt: 'holds the worker' });
    // The worker is inside the hung request: closing the workers waits for it.
    await vi.waitFor(() => found(h.sim.requests.some((request) => request.path === '/api/v1/producer/create'), 'the submission sent'), 10_000);

    const stopping = h.app.stop();
    const response = await fetch(url);
    expect(response.status).toBe(503);
    expect(await response.json()).toEqual({ status: 'stopping' });
    await stopping;
    // Closed now: nothing answers.
    await expect(fetch(url)).rejects.toThrow();
  });
});
