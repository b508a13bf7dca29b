import { once } from 'node:events';
import { readFile } from 'node:fs/promises';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { describe, expect, it } from 'vitest';
import { checkFfmpeg, decoderStartArgs, FFMPEG_MISSING, spawnDecoder } from '../../../src/voice/ffmpeg.js';

describe('the ffmpeg check at start-up', () => {
  it('finds the machine’s ffmpeg and whether it has libopus', async () => {
    const found = await checkFfmpeg('ffmpeg');
    expect(found).toMatchObject({ found: true, libopus: true });
    expect(found.version).toMatch(/^ffmpeg version /);
  });

  it('says plainly when the binary is missing, and how to get it', async () => {
    expect(await checkFfmpeg('/nonexistent/ffmpeg')).toEqual({ found: false, libopus: false });
    expect(FFMPEG_MISSING).toContain('apt-get install -y ffmpeg');
    expect(FFMPEG_MISSING).toContain('FFMPEG_PATH');
  });
});

describe('the decoder', () => {
  const fixture = path.resolve(import.meta.dirname, '../../fixtures/audio/cbr.mp3');

  /** The decoder's exit code, the bytes it wrote and its error text. */
  async function decode(url: string, start?: Parameters<typeof spawnDecoder>[3]): Promise<{ code: number | null; bytes: number; error: string }> {
    const child = spawnDecoder('ffmpeg', url, false, start);
    let bytes = 0;
    let error = '';
    child.stdout.on('data', (chunk: Buffer) => (bytes += chunk.length));
    child.stderr.setEncoding('utf8').on('data', (chunk: string) => (error += chunk));
    const [code] = (await once(child, 'close')) as [number | null];
    return { code, bytes, error };
  }

  it('starts at a seek’s offset and plays at a volume only when asked', () => {
    expect(decoderStartArgs({ startMs: 0, volume: 100 })).toEqual({ input: [], filter: [] });
    expect(decoderStartArgs({ startMs: 61_250, volume: 50 })).toEqual({ input: ['-ss', '61.250'], filter: ['-af', 'volume=0.50'] });
    expect(decoderStartArgs({ startMs: 0, volume: 200 }).filter).toEqual(['-af', 'volume=2.00']);
  });

  it('decodes from a seek’s offset: less of the song comes out', async () => {
    const data = await readFile(fixture);
    const server = createServer((_request, response) => response.writeHead(200, { 'content-type': 'audio/mpeg' }).end(data));
    server.listen(0, '127.0.0.1');
    await once(server, 'listening');
    try {
      const { port } = server.address() as AddressInfo;
      const whole = await decode(`http://127.0.0.1:${port}/song.mp3`);
      const late = await decode(`http://127.0.0.1:${port}/song.mp3`, { startMs: 1_000, volume: 50 });
      expect(late.code, late.error).toBe(0);
      // Raw 48 kHz stereo s16le: 192,000 bytes a second.
      expect((whole.bytes - late.bytes) / 192_000).toBeCloseTo(1, 1);
    } finally {
      server.close();
    }
  });

  it('reads a song over http', async () => {
    const data = await readFile(fixture);
    const server = createServer((_request, response) => response.writeHead(200, { 'content-type': 'audio/mpeg' }).end(data));
    server.listen(0, '127.0.0.1');
    await once(server, 'listening');
    try {
      const { port } = server.address() as AddressInfo;
      const decoded = await decode(`http://127.0.0.1:${port}/song.mp3`);
      expect(decoded.code, decoded.error).toBe(0);
      expect(decoded.bytes).toBeGreaterThan(0);
    } finally {
      server.close();
    }
  });

  it('refuses a local file, whether named by file: or by its path', async () => {
    for (const url of [pathToFileURL(fixture).href, fixture]) {
      const decoded = await decode(url);
      expect(decoded.code, url).not.toBe(0);
      expect(decoded.bytes, url).toBe(0);
      expect(decoded.error, url).toMatch(/not on whitelist/);
    }
  });
});
