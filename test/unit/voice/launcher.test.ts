/**
 * The decoder launcher: decoders started by a small process of its own, not forked from the
 * process that plays (a fork of a big process held its voice thread), their audio and their
 * exit as a decoder started here gives them.
 */
import { once } from 'node:events';
import { readdir, readFile } from 'node:fs/promises';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createDecoderLauncher, type Decoder } from '../../../src/voice/engine/launcher.js';

const fixture = path.resolve(import.meta.dirname, '../../fixtures/audio/cbr.mp3');
const server = createServer(async (request, response) => {
  if (request.url !== '/song.mp3') return void response.writeHead(404).end();
  response.writeHead(200, { 'content-type': 'audio/mpeg' }).end(await readFile(fixture));
});
let base = '';
beforeAll(async () => {
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(() => void server.close());

/** The processes whose parent is `pid`, by their command name. */
async function childrenOf(pid: number): Promise<string[]> {
  const names: string[] = [];
  for (const entry of await readdir('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    const stat = await readFile(`/proc/${entry}/stat`, 'utf8').catch(() => '');
    if (Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]) === pid) names.push(stat.slice(stat.indexOf('(') + 1, stat.lastIndexOf(')')));
  }
  return names;
}

/** The bytes a decoder writes until its audio ends. */
async function bytesOf(decoder: Decoder): Promise<number> {
  let bytes = 0;
  decoder.stdout.on('data', (chunk: Buffer) => (bytes += chunk.length));
  await once(decoder.stdout, 'end');
  return bytes;
}

describe('the decoder launcher', () => {
  it('decodes a song in a process this one did not fork, to the end, with its exit', async () => {
    const launcher = createDecoderLauncher();
    try {
      const decoder = launcher.start('ffmpeg', `${base}/song.mp3`, false, { startMs: 0, volume: 100 });
      let firstAudio = () => {};
      const heard = new Promise<void>((resolve) => (firstAudio = resolve));
      decoder.stdout.once('data', () => firstAudio());
      const bytes = bytesOf(decoder);
      await heard;
      // While it decodes: this process's children include the launcher (node), never ffmpeg.
      const children = await childrenOf(process.pid);
      expect(children).toContain('node');
      expect(children).not.toContain('ffmpeg');
      expect(await decoder.exited).toEqual({ code: 0, error: '' });
      // Raw 48 kHz stereo s16le: the fixture is a few seconds long.
      expect(await bytes).toBeGreaterThan(192_000);
    } finally {
      launcher.close();
    }
  });

  it('tells a decoder’s failure with its error line, and kills one on request', async () => {
    const launcher = createDecoderLauncher();
    try {
      const missing = launcher.start('ffmpeg', `${base}/gone.mp3`, false, { startMs: 0, volume: 100 });
      const failed = await missing.exited;
      expect(failed.code).not.toBe(0);
      expect(failed.error).toMatch(/404/);
      await expect(bytesOf(missing)).resolves.toBe(0);

      const killed = launcher.start('ffmpeg', `${base}/song.mp3`, true, { startMs: 0, volume: 100 });
      killed.stdout.resume();
      killed.kill();
      expect((await killed.exited).code).not.toBe(0);
    } finally {
      launcher.close();
    }
  });
});
