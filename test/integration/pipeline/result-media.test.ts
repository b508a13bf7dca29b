/**
 * The audio a finished song carries into Discord is read from the address the result names,
 * within the attachment limit counted while it arrives, and not through a redirect to another
 * scheme. The result names addresses of the test's own servers (a signed webhook brings it).
 */
import { createHmac } from 'node:crypto';
import { once } from 'node:events';
import { readFile } from 'node:fs/promises';
import { createServer as createHttpServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { createServer as createHttpsServer } from 'node:https';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { Writable } from 'node:stream';
import { pino } from 'pino';
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import type { SubmitResult } from '../../../src/pipeline/requests.js';
import { found } from '../../support/found.js';
import { jobRow } from '../../support/ledger.js';
import { startHarness, type Harness } from '../../support/pipeline-harness.js';

const LIMIT = 256 * 1024;
const certs = path.resolve(import.meta.dirname, '../../../packages/discord-emulator/certs');
let h: Harness;
const servers: Server[] = [];
/** The bot's log lines, parsed. */
const logs: Array<{ msg?: string; jobId?: string }> = [];

beforeAll(async () => {
  const sink = new Writable({
    write(chunk: Buffer, _encoding, done) {
      for (const line of chunk.toString('utf8').split('\n')) if (line.trim() !== '') logs.push(JSON.parse(line) as { msg?: string; jobId?: string });
      done();
    },
  });
  h = await startHarness({ webhooks: true, startingCredits: 500, settings: { attachmentLimitBytes: LIMIT }, logger: pino({ level: 'warn' }, sink) });
});
afterAll(async () => {
  for (const server of servers) server.close();
  await h?.close();
});
afterEach(() => expect(h.emulator.findings).toEqual([]));

async function listen(server: Server, scheme: 'http' | 'https'): Promise<string> {
  servers.push(server);
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  return `${scheme}://127.0.0.1:${(server.address() as AddressInfo).port}`;
}

/** A song whose result, delivered by a signed webhook, names `audioUrl`; resolves once it is posted. */
async function songWithAudioAt(audioUrl: string, title: string) {
  h.setSimForThisTest({ taskMs: 60_000, faults: [{ kind: 'no-webhook' }] });
  const { result } = await h.request({ kind: 'song', prompt: title, title });
  const { jobId } = result as SubmitResult;
  const job = await vi.waitFor(async () => found((await jobRow(h.db.db, jobId))?.upstreamTaskId ? await jobRow(h.db.db, jobId) : undefined, 'the song submitted'), 10_000);
  const body = JSON.stringify({ code: 200, message: 'success', status: 'SUCCESS', task_id: job.upstreamTaskId, data: [{ clip_id: `clip-${title}`, audio_url: audioUrl, title }] });
  const answer = await fetch(`${h.app.httpUrl}/webhooks/music/${jobId}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'x-webhook-signature': createHmac('sha256', job.webhookSecret!).update(body).digest('hex') },
    body,
  });
  expect(answer.status).toBe(200);
  return vi.waitFor(async () => found((await jobRow(h.db.db, jobId))?.deliveryState === 'delivered' ? jobId : undefined, `job ${jobId} delivered`), 20_000);
}

/** Requests that attached a file to the job's result. */
const filesFor = (jobId: string) => h.emulator.requests.filter((request) => request.files.length > 0 && JSON.stringify(request.body ?? {}).includes(jobId));

describe('the audio attached to a result', () => {
  it('is attached when it fits', async () => {
    const mp3 = await readFile(path.resolve(import.meta.dirname, '../../fixtures/audio/cbr.mp3'));
    const url = await listen(createHttpServer((_request, response) => response.writeHead(200, { 'content-type': 'audio/mpeg' }).end(mp3)), 'http');
    const jobId = await songWithAudioAt(`${url}/fits.mp3`, 'fits');
    await vi.waitFor(() => expect(filesFor(jobId)).toHaveLength(1), 10_000);
  });

  it('stops being read past the limit when no length is declared: the connection is closed, the result posted without it', async () => {
    let finished: boolean | undefined;
    const url = await listen(
      createHttpServer((_request: IncomingMessage, response: ServerResponse) => {
        // 64 MB without Content-Length, chunk by chunk as the reader takes them.
        response.writeHead(200, { 'content-type': 'audio/mpeg' });
        const chunk = Buffer.alloc(64 * 1024);
        let left = 1024;
        const write = () => {
          while (left > 0 && !response.destroyed) {
            left -= 1;
            if (left === 0) response.end(chunk);
            else if (!response.write(chunk)) return;
          }
        };
        response.on('drain', write);
        response.on('close', () => (finished = response.writableFinished));
        write();
      }),
      'http',
    );
    const jobId = await songWithAudioAt(`${url}/endless.mp3`, 'endless');
    await vi.waitFor(() => expect(finished, 'the download ended').toBeDefined(), 15_000);
    expect(finished, 'all 64 MB sent').toBe(false);
    expect(filesFor(jobId)).toEqual([]);
  });

  it('does not follow a redirect from https to plain http', async () => {
    const plain: string[] = [];
    const http = await listen(
      createHttpServer((request, response) => {
        plain.push(request.url ?? '');
        response.writeHead(200, { 'content-type': 'audio/mpeg' }).end(Buffer.alloc(1000));
      }),
      'http',
    );
    let redirected = false;
    const https = await listen(
      createHttpsServer({ key: await readFile(path.join(certs, 'voice-localhost.key')), cert: await readFile(path.join(certs, 'voice-localhost.pem')) }, (_request, response) => {
        redirected = true;
        response.writeHead(302, { location: `${http}/downgraded.mp3` }).end();
      }),
      'https',
    );
    const jobId = await songWithAudioAt(`${https}/song.mp3`, 'downgraded');
    // Done with the audio: attached, or given up with a warning.
    await vi.waitFor(() => found(filesFor(jobId).length > 0 || logs.some((line) => line.jobId === jobId && line.msg === 'could not attach the audio file') ? true : undefined, 'the audio attached or given up'), 10_000);
    expect(redirected, 'the https address asked').toBe(true);
    expect(plain).toEqual([]);
    expect(filesFor(jobId)).toEqual([]);
  });
});
