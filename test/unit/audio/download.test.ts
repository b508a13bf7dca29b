import { once } from 'node:events';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { DownloadError, downloadCapped, type DownloadLimits } from '../../../src/audio/download.js';

const servers: Server[] = [];
afterEach(() => {
  for (const server of servers.splice(0)) server.close();
});

async function serve(handler: (request: IncomingMessage, response: ServerResponse) => void): Promise<{ url: string; paths: string[] }> {
  const paths: string[] = [];
  const server = createServer((request, response) => {
    paths.push(request.url ?? '');
    handler(request, response);
  });
  servers.push(server);
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, paths };
}

const limits = (overrides: Partial<DownloadLimits> = {}): DownloadLimits => ({ maxBytes: 64 * 1024, timeoutMs: 10_000, redirects: 'refuse', ...overrides });

async function failure(promise: Promise<unknown>): Promise<DownloadError> {
  const error = await promise.then(
    () => undefined,
    (reason: unknown) => reason,
  );
  expect(error).toBeInstanceOf(DownloadError);
  return error as DownloadError;
}

describe('a capped download', () => {
  it('reads a body within the cap', async () => {
    const body = Buffer.alloc(1000, 7);
    const server = await serve((_request, response) => response.writeHead(200, { 'content-type': 'audio/mpeg' }).end(body));
    const downloaded = await downloadCapped(`${server.url}/a.mp3`, limits());
    expect(downloaded.data.equals(body)).toBe(true);
    expect(downloaded.contentType).toBe('audio/mpeg');
  });

  it('cuts off an endless body sent without Content-Length once it passes the cap, and closes the connection', async () => {
    let sent = 0;
    let closed!: () => void;
    const connectionClosed = new Promise<void>((resolve) => (closed = resolve));
    const server = await serve((_request, response) => {
      response.writeHead(200, { 'content-type': 'audio/mpeg' });
      const chunk = Buffer.alloc(16 * 1024);
      const write = () => {
        while (!response.destroyed && response.write(chunk)) sent += chunk.length;
      };
      response.on('drain', write);
      response.on('close', closed);
      write();
    });
    const error = await failure(downloadCapped(`${server.url}/endless.mp3`, limits()));
    expect(error.reason).toBe('too_large');
    await connectionClosed;
    // What the kernel's buffers held when the bot stopped, not the endless rest.
    expect(sent).toBeLessThan(16 * 1024 * 1024);
  });

  it('refuses a declared length over the cap before reading', async () => {
    const server = await serve((_request, response) => response.writeHead(200, { 'content-length': String(64 * 1024 + 1) }).end(Buffer.alloc(64 * 1024 + 1)));
    expect((await failure(downloadCapped(`${server.url}/big.mp3`, limits()))).reason).toBe('too_large');
  });

  it('does not follow a redirect when told to refuse them', async () => {
    const target = await serve((_request, response) => response.writeHead(200).end('song'));
    const server = await serve((_request, response) => response.writeHead(302, { location: `${target.url}/moved.mp3` }).end());
    expect((await failure(downloadCapped(`${server.url}/a.mp3`, limits()))).reason).toBe('redirect');
    expect(target.paths).toEqual([]);
  });

  it('follows a redirect on the same scheme, and refuses one to another scheme', async () => {
    const target = await serve((_request, response) => response.writeHead(200).end('song'));
    const server = await serve((request, response) => {
      const location = request.url === '/same' ? `${target.url}/moved.mp3` : 'file:///etc/passwd';
      response.writeHead(302, { location }).end();
    });
    expect((await downloadCapped(`${server.url}/same`, limits({ redirects: 'same-scheme' }))).data.toString()).toBe('song');
    expect((await failure(downloadCapped(`${server.url}/other`, limits({ redirects: 'same-scheme' })))).reason).toBe('redirect');
  });

  it('says an answer other than 2xx is a status, and a closed port unreachable', async () => {
    const server = await serve((_request, response) => response.writeHead(404).end());
    expect((await failure(downloadCapped(`${server.url}/gone.mp3`, limits()))).reason).toBe('status');
    expect((await failure(downloadCapped('http://127.0.0.1:9/none.mp3', limits()))).reason).toBe('unreachable');
  });
});
