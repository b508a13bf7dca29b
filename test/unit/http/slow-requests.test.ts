/**
 * A request that trickles in is cut off: without a limit, one byte every few hundred
 * milliseconds holds a connection (and its buffered body) open for as long as the sender likes.
 * The trickled requests never reach a route, so the server's dependencies are left out.
 */
import net from 'node:net';
import type { AddressInfo } from 'node:net';
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildHttpServer, type HttpServerDeps } from '../../../src/http/server.js';

const LIMIT_MS = 400;
let app: FastifyInstance;
let port: number;

beforeAll(async () => {
  app = buildHttpServer({ requestTimeoutMs: LIMIT_MS } as unknown as HttpServerDeps);
  await app.listen({ port: 0, host: '127.0.0.1' });
  port = (app.server.address() as AddressInfo).port;
});
afterAll(async () => app?.close());

/**
 * Sends `head`, then `rest` one byte every 100 ms; resolves with what came back, whether the
 * server closed the connection (rather than this sender giving up), and how many bytes were left.
 */
function trickle(head: string, rest: string): Promise<{ answer: string; closedByServer: boolean; unsent: number }> {
  return new Promise((resolve) => {
    const socket = net.connect(port, '127.0.0.1');
    let answer = '';
    let offset = 0;
    const drip = setInterval(() => {
      if (offset < rest.length && !socket.destroyed) socket.write(rest[offset++]!);
    }, 100);
    const end = (closedByServer: boolean) => {
      clearInterval(drip);
      clearTimeout(giveUp);
      socket.destroy();
      resolve({ answer, closedByServer, unsent: rest.length - offset });
    };
    // Well past the limit: a server without one is still reading here.
    const giveUp = setTimeout(() => end(false), LIMIT_MS + 4_000);
    socket.on('data', (chunk: Buffer) => (answer += chunk.toString()));
    socket.on('close', () => end(true));
    socket.on('error', () => end(true));
    socket.write(head);
  });
}

describe('the HTTP server and slow senders', () => {
  it('answers 408 and closes a webhook whose body trickles in', async () => {
    const head = 'POST /webhooks/music/00000000-0000-4000-8000-000000000000 HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 1000\r\n\r\n';
    const { answer, closedByServer, unsent } = await trickle(head, 'x'.repeat(1000));
    expect(answer).toMatch(/^HTTP\/1\.1 408/);
    expect(closedByServer).toBe(true);
    expect(unsent).toBeGreaterThan(0);
  });

  it('closes a connection whose headers trickle in', async () => {
    const { answer, closedByServer, unsent } = await trickle('', `GET /healthz HTTP/1.1\r\nHost: x\r\n${'X-Padding: a\r\n'.repeat(100)}\r\n`);
    expect(answer).not.toMatch(/^HTTP\/1\.1 200/);
    expect(closedByServer).toBe(true);
    expect(unsent).toBeGreaterThan(0);
  });
});
