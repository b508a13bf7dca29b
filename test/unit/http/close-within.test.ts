/**
 * Closing an HTTP server within the stop's limit: requests in hand finish before it, their
 * kept-alive connections do not linger, and one still open at it is cut off, so neither a
 * sender's keep-alive nor a handler that never ends can hold the process's stop.
 */
import { Agent, request } from 'node:http';
import Fastify, { type FastifyInstance } from 'fastify';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { closeWithin } from '../../../src/http/server.js';

let server: FastifyInstance | undefined;
const agent = new Agent({ keepAlive: true });
afterAll(() => agent.destroy());
afterEach(async () => {
  server?.server.closeAllConnections();
  await server?.close();
  server = undefined;
});

/** A server whose `/slow` answers after `slowMs` and whose `/never` never answers; `entered` resolves on each request's arrival. */
async function start(slowMs: number): Promise<{ url: string; entered: () => Promise<void> }> {
  let arrived: () => void = () => {};
  const entered = () => new Promise<void>((resolve) => (arrived = resolve));
  server = Fastify({ logger: false });
  server.get('/slow', async () => {
    arrived();
    await new Promise((resolve) => setTimeout(resolve, slowMs));
    return { done: true };
  });
  server.get('/never', () => {
    arrived();
    return new Promise(() => {});
  });
  return { url: await server.listen({ port: 0, host: '127.0.0.1' }), entered };
}

/** GET `url` on a kept-alive connection, as the music service's webhooks come: its status, or the error that ended it. */
function get(url: string): Promise<{ status?: number; error?: string }> {
  return new Promise((resolve) => {
    request(url, { agent }, (response) => {
      response.resume();
      response.on('end', () => resolve({ status: response.statusCode }));
    })
      .on('error', (error) => resolve({ error: error.message }))
      .end();
  });
}

describe('closeWithin', () => {
  it('lets a request in hand finish before the limit, and closes its kept-alive connection then', async () => {
    const { url, entered } = await start(200);
    const arrived = entered();
    const answer = get(`${url}/slow`);
    await arrived;
    await closeWithin(server!, performance.now() + 30_000);
    expect(await answer).toEqual({ status: 200 });
  });

  it('cuts off a request still open at the limit, and the close ends', async () => {
    const { url, entered } = await start(0);
    const arrived = entered();
    const answer = get(`${url}/never`);
    await arrived;
    await closeWithin(server!, performance.now() + 300);
    expect(await answer).toEqual({ error: expect.stringMatching(/socket hang up|ECONNRESET/) });
  });

  it('waits without a limit when given none', async () => {
    const { url, entered } = await start(300);
    const arrived = entered();
    const answer = get(`${url}/slow`);
    await arrived;
    await closeWithin(server!, Number.POSITIVE_INFINITY);
    expect(await answer).toEqual({ status: 200 });
  });
});
