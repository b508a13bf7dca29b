/**
 * The player's decoder reads a song through the media relay: within a byte cap counted while
 * the song arrives, through redirects on the same scheme only, with range requests passed on.
 * The songs come from the test's own servers; ffmpeg is the real one.
 */
import { execFile } from 'node:child_process';
import { once } from 'node:events';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { createServer as createHttpServer, type RequestListener, type Server, type ServerResponse } from 'node:http';
import { createServer as createHttpsServer } from 'node:https';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { promisify } from 'node:util';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { spawnDecoder } from '../../../src/voice/ffmpeg.js';
import { createMediaRelay, type MediaRelay } from '../../../src/voice/relay.js';

const fixture = path.resolve(import.meta.dirname, '../../fixtures/audio/cbr.mp3');
const certs = path.resolve(import.meta.dirname, '../../../packages/discord-emulator/certs');
const CAP = 2 * 1024 * 1024;
/** What the sockets between the server and the relay may hold beyond the cap (kernel buffers on loopback). */
const IN_FLIGHT = 12 * 1024 * 1024;

let relay: MediaRelay;
let scratch: string;
const servers: Server[] = [];

beforeAll(async () => {
  relay = createMediaRelay({ maxBytes: CAP });
  await relay.listening;
  scratch = await mkdtemp(path.join(tmpdir(), 'relay-test-'));
});
afterAll(async () => {
  await relay.close();
  await rm(scratch, { recursive: true, force: true });
});
afterEach(() => {
  for (const server of servers.splice(0)) server.close();
});

async function listen(server: Server, scheme: 'http' | 'https'): Promise<string> {
  servers.push(server);
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  return `${scheme}://127.0.0.1:${(server.address() as AddressInfo).port}`;
}

const http = (handler: RequestListener) => listen(createHttpServer(handler), 'http');

interface Played {
  readonly exited: Promise<{ code: number | null; bytes: number; error: string }>;
  stop(): void;
}

/** Plays `url` as the player does: ffmpeg reads it through the relay, which lets it go once ffmpeg exits. */
function play(url: string): Played {
  const song = relay.open(url);
  const child = spawnDecoder('ffmpeg', song.url, false);
  let bytes = 0;
  let error = '';
  child.stdout.on('data', (chunk: Buffer) => (bytes += chunk.length));
  child.stderr.setEncoding('utf8').on('data', (chunk: string) => (error += chunk));
  const exited = once(child, 'close').then(([code]) => {
    song.close();
    return { code: code as number | null, bytes, error };
  });
  return { exited, stop: () => child.kill('SIGKILL') };
}

/** Writes `chunk` again and again, as fast as the reader takes it, until the response is gone; `onChunk` counts each. */
function sendForever(response: ServerResponse, chunk: Buffer, onChunk: (length: number) => void): void {
  const write = () => {
    while (!response.destroyed) {
      onChunk(chunk.length);
      if (!response.write(chunk)) return;
    }
  };
  response.on('drain', write);
  write();
}

describe('the media relay', () => {
  // Each test runs ffmpeg, which takes seconds to start and read on a busy machine: hence the
  // timeouts beyond the unit project's 5 s.
  // ffmpeg reads up to the cap before it is stopped.
  it('stops an endless song near the cap, and the play ends', async () => {
    const mp3 = await readFile(fixture);
    let sent = 0;
    let closed = false;
    let tooMuch: () => void = () => {};
    const overflowed = new Promise<'overflowed'>((resolve) => (tooMuch = () => resolve('overflowed')));
    // The same song over and over, without Content-Length, as fast as the reader takes it.
    const url = await http((_request, response) => {
      response.writeHead(200, { 'content-type': 'audio/mpeg' });
      response.on('close', () => (closed = true));
      sendForever(response, mp3, (length) => {
        sent += length;
        if (sent > CAP + IN_FLIGHT) tooMuch();
      });
    });
    const played = play(`${url}/endless.mp3`);
    const first = await Promise.race([played.exited, overflowed]);
    played.stop();
    expect(first, `${sent} bytes sent and the song still playing`).not.toBe('overflowed');
    const { bytes } = await played.exited;
    expect(bytes, 'some of it was played').toBeGreaterThan(0);
    await expect.poll(() => closed, { timeout: 5_000 }).toBe(true);
    expect(sent).toBeLessThanOrEqual(CAP + IN_FLIGHT);
  }, 30_000);

  it('cuts a song that declares more than the cap once the cap is passed, and does not fetch it again for ffmpeg’s reconnects', async () => {
    const mp3 = await readFile(fixture);
    let sent = 0;
    let requests = 0;
    let tooMuch: () => void = () => {};
    const overflowed = new Promise<'overflowed'>((resolve) => (tooMuch = () => resolve('overflowed')));
    // Declares a gigabyte and sends the same song over and over.
    const url = await http((_request, response) => {
      requests += 1;
      response.writeHead(200, { 'content-type': 'audio/mpeg', 'content-length': 1024 ** 3 });
      sendForever(response, mp3, (length) => {
        sent += length;
        if (sent > CAP + IN_FLIGHT) tooMuch();
      });
    });
    const played = play(`${url}/huge.mp3`);
    const first = await Promise.race([played.exited, overflowed]);
    played.stop();
    expect(first, `${sent} bytes sent and the song still playing`).not.toBe('overflowed');
    expect((await played.exited).bytes).toBeGreaterThan(0);
    expect(requests, 'requests that reached the song’s server').toBe(1);
    // ffmpeg asks again after the cut, waiting longer each time, and is refused: seconds, not more.
  }, 20_000);

  it('does not follow a redirect from https to plain http', async () => {
    const plain: string[] = [];
    const target = await http((request, response) => {
      plain.push(request.url ?? '');
      response.writeHead(200, { 'content-type': 'audio/mpeg' }).end(Buffer.alloc(1000));
    });
    let redirected = false;
    const https = await listen(
      createHttpsServer({ key: await readFile(path.join(certs, 'voice-localhost.key')), cert: await readFile(path.join(certs, 'voice-localhost.pem')) }, (_request, response) => {
        redirected = true;
        response.writeHead(302, { location: `${target}/downgraded.mp3` }).end();
      }),
      'https',
    );
    const played = await play(`${https}/song.mp3`).exited;
    expect(redirected, 'the https address asked').toBe(true);
    expect(played.code).not.toBe(0);
    expect(played.bytes).toBe(0);
    expect(plain).toEqual([]);
  }, 20_000);

  it('does not follow a redirect to a scheme other than http(s)', async () => {
    for (const location of [pathToFileURL(fixture).href, 'ftp://127.0.0.1:21/song.mp3', 'data:audio/mpeg;base64,AAAA']) {
      const url = await http((_request, response) => response.writeHead(302, { location }).end());
      const played = await play(`${url}/song.mp3`).exited;
      expect(played.code, location).not.toBe(0);
      expect(played.bytes, location).toBe(0);
    }
  }, 20_000);

  it('follows a redirect on the same scheme, and passes range requests on: an m4a with its index at the end plays in full', async () => {
    // ffmpeg's mp4 muxer writes the index (moov) after the audio unless told otherwise: a reader
    // over http has to jump to the end and back.
    const m4a = path.join(scratch, 'late-index.m4a');
    await promisify(execFile)('ffmpeg', ['-hide_banner', '-loglevel', 'error', '-i', fixture, '-c:a', 'aac', '-b:a', '96k', m4a]);
    const data = await readFile(m4a);
    const ranges: string[] = [];
    const target = await http((request, response) => {
      const range = /^bytes=(\d+)-(\d*)$/.exec(request.headers.range ?? '');
      if (!range) return response.writeHead(200, { 'content-type': 'audio/mp4', 'content-length': data.length, 'accept-ranges': 'bytes' }).end(data);
      ranges.push(request.headers.range!);
      const start = Number(range[1]);
      const end = range[2] ? Math.min(Number(range[2]), data.length - 1) : data.length - 1;
      response
        .writeHead(206, { 'content-type': 'audio/mp4', 'content-length': end - start + 1, 'content-range': `bytes ${start}-${end}/${data.length}`, 'accept-ranges': 'bytes' })
        .end(data.subarray(start, end + 1));
    });
    const redirect = await http((_request, response) => response.writeHead(302, { location: `${target}/song.m4a` }).end());
    const played = await play(`${redirect}/song.m4a`).exited;
    expect(played.code, played.error).toBe(0);
    // 12 s of 48 kHz stereo s16le, give or take a frame.
    expect(played.bytes).toBeGreaterThan(11.5 * 48_000 * 4);
    expect(ranges.some((range) => range !== 'bytes=0-'), `the ranges asked: ${ranges.join(', ')}`).toBe(true);
  }, 20_000);

  it('answers nothing for an address it was not given, or no longer plays', async () => {
    const song = relay.open('http://127.0.0.1:9/song.mp3');
    const base = new URL(song.url).origin;
    song.close();
    expect((await fetch(song.url)).status).toBe(404);
    expect((await fetch(`${base}/not-a-token/song.mp3`)).status).toBe(404);
  });
});
