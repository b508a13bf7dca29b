/**
 * The moderation service's client (src/safety/moderation-service.ts) against the simulator's
 * stand-in, over real sockets: a clean and a flagged verdict, and every way of not answering
 * (a timeout, an error status, a body that is not the documented shape, a wrong key, nobody
 * listening) read as unavailable.
 */
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { MODERATION_PATH, startMusicApiSim, type MusicApiSim } from '@music-bot/music-api-sim';
import { createModerationService } from '../../src/safety/moderation-service.js';
import { findFreePort } from '../../src/embedded/free-port.js';

const apiKey = 'moderation-contract-key';
let sim: MusicApiSim;
let url: string;

beforeAll(async () => {
  sim = await startMusicApiSim({ apiKey: 'music-key', moderationApiKey: apiKey, credits: 0 });
  url = `${sim.url}${MODERATION_PATH}`;
});
afterAll(async () => sim?.close());
beforeEach(() => {
  sim.setModeration({}, { reset: true });
  sim.clearRecords();
});

describe('the moderation service client', () => {
  it('sends all the texts in one request with the key, and reads a clean answer', async () => {
    const service = createModerationService({ url, apiKey, timeoutMs: 2_000 });
    expect(await service.classify(['a calm song', 'soft lyrics'])).toEqual({ outcome: 'clean' });
    expect(sim.requests).toHaveLength(1);
    expect(sim.requests[0]).toMatchObject({ method: 'POST', path: MODERATION_PATH, authorized: true, body: { input: ['a calm song', 'soft lyrics'] } });
  });

  it('says which texts were flagged and in which categories', async () => {
    sim.setModeration({ flag: { violence: ['smash'], harassment: ['loser'], sexual: ['nothing here'] } });
    const service = createModerationService({ url, apiKey, timeoutMs: 2_000 });
    expect(await service.classify(['calm', 'smash it, loser', 'smash'])).toEqual({ outcome: 'flagged', flagged: [1, 2], categories: ['harassment', 'violence'] });
  });

  it('asks nothing for no text', async () => {
    const service = createModerationService({ url, apiKey, timeoutMs: 2_000 });
    expect(await service.classify([])).toEqual({ outcome: 'clean' });
    expect(sim.requests).toHaveLength(0);
  });

  it('reads a slow answer past its deadline as a timeout, without waiting for it', async () => {
    sim.setModeration({ mode: 'slow', slowMs: 5_000 });
    const service = createModerationService({ url, apiKey, timeoutMs: 200 });
    const started = Date.now();
    expect(await service.classify(['x'])).toEqual({ outcome: 'unavailable', why: 'timeout' });
    expect(Date.now() - started).toBeLessThan(2_000);
  });

  it('reads an error status, a body that is not JSON, and a wrong key as unavailable', async () => {
    sim.setModeration({ mode: 'down' });
    expect(await createModerationService({ url, apiKey, timeoutMs: 2_000 }).classify(['x'])).toEqual({ outcome: 'unavailable', why: 'status 503' });
    sim.setModeration({ mode: 'malformed' });
    expect(await createModerationService({ url, apiKey, timeoutMs: 2_000 }).classify(['x'])).toEqual({ outcome: 'unavailable', why: 'malformed' });
    sim.setModeration({ mode: 'up' });
    expect(await createModerationService({ url, apiKey: 'not-the-key', timeoutMs: 2_000 }).classify(['x'])).toEqual({ outcome: 'unavailable', why: 'status 401' });
  });

  it('reads JSON of another shape, or too few results, as malformed, and nobody listening as unreachable', async () => {
    const answers = [{ results: [{ flagged: 'yes', categories: {} }] }, { results: [] }, { verdict: 'fine' }];
    const other = createServer((_request, response) => {
      response.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(answers.shift()));
    });
    await new Promise<void>((resolve) => other.listen(0, '127.0.0.1', resolve));
    const otherUrl = `http://127.0.0.1:${(other.address() as AddressInfo).port}/v1/moderations`;
    try {
      for (let i = 0; i < 3; i += 1) {
        expect(await createModerationService({ url: otherUrl, timeoutMs: 2_000 }).classify(['x'])).toEqual({ outcome: 'unavailable', why: 'malformed' });
      }
    } finally {
      other.close();
    }
    const nobody = `http://127.0.0.1:${await findFreePort()}/v1/moderations`;
    expect(await createModerationService({ url: nobody, apiKey, timeoutMs: 2_000 }).classify(['x'])).toEqual({ outcome: 'unavailable', why: 'unreachable' });
  });
});
