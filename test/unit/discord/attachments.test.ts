import { once } from 'node:events';
import { readFile } from 'node:fs/promises';
import { createServer, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { AUDIO_LIMITS, isOnCdn, readAudioAttachment, vetAudioAttachment } from '../../../src/discord/attachments.js';
import { Refusal } from '../../../src/discord/errors.js';

const DISCORD = ['https://cdn.discordapp.com', 'https://media.discordapp.net'];

describe('Discord’s CDN', () => {
  it('takes only addresses under a configured base: same scheme, host and port, inside its path', () => {
    expect(isOnCdn('https://cdn.discordapp.com/attachments/1/2/a.mp3?ex=1&hm=2', DISCORD)).toBe(true);
    expect(isOnCdn('https://media.discordapp.net/attachments/1/2/a.mp3', DISCORD)).toBe(true);
    expect(isOnCdn('http://cdn.discordapp.com/attachments/1/2/a.mp3', DISCORD)).toBe(false);
    expect(isOnCdn('https://cdn.discordapp.com.example.com/a.mp3', DISCORD)).toBe(false);
    expect(isOnCdn('https://cdn.discordapp.com:8443/a.mp3', DISCORD)).toBe(false);
    expect(isOnCdn('https://user@cdn.discordapp.com/a.mp3', DISCORD)).toBe(false);
    expect(isOnCdn('file:///etc/passwd', DISCORD)).toBe(false);
    expect(isOnCdn('not a url', DISCORD)).toBe(false);
    expect(isOnCdn('http://127.0.0.1:4000/discord-cdn/attachments/a.mp3', ['http://127.0.0.1:4000/discord-cdn'])).toBe(true);
    expect(isOnCdn('http://127.0.0.1:4000/discord-cdnx/a.mp3', ['http://127.0.0.1:4000/discord-cdn'])).toBe(false);
    expect(isOnCdn('http://127.0.0.1:4000/music-api/a.mp3', ['http://127.0.0.1:4000/discord-cdn'])).toBe(false);
  });

  it('refuses an attachment elsewhere before anything is read', () => {
    const attachment = { name: 'a.mp3', contentType: 'audio/mpeg', size: 1000, url: 'https://example.com/a.mp3' };
    expect(() => vetAudioAttachment(attachment, DISCORD)).toThrow(Refusal);
    expect(vetAudioAttachment({ ...attachment, url: 'https://cdn.discordapp.com/attachments/1/2/a.mp3' }, DISCORD).url).toBe('https://cdn.discordapp.com/attachments/1/2/a.mp3');
  });
});

describe('attachment downloads', () => {
  it(`run at most ${AUDIO_LIMITS.maxConcurrentDownloads} at once in a process; the others wait their turn`, async () => {
    const mp3 = await readFile(path.resolve(import.meta.dirname, '../../fixtures/audio/cbr.mp3'));
    const held: ServerResponse[] = [];
    let open = 0;
    let most = 0;
    const server = createServer((_request, response) => {
      open += 1;
      most = Math.max(most, open);
      response.on('close', () => (open -= 1));
      held.push(response);
    });
    server.listen(0, '127.0.0.1');
    await once(server, 'listening');
    try {
      const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
      const count = AUDIO_LIMITS.maxConcurrentDownloads + 2;
      const reads = Array.from({ length: count }, (_, index) => readAudioAttachment({ url: `${base}/${index}.mp3` }));
      await expect.poll(() => held.length).toBe(AUDIO_LIMITS.maxConcurrentDownloads);
      // Each answer lets a waiting download start, never more than the limit at once.
      while (held.length < count || held.some((response) => !response.writableEnded)) {
        const next = held.find((response) => !response.writableEnded);
        if (next) next.writeHead(200, { 'content-type': 'audio/mpeg' }).end(mp3);
        await new Promise((resolve) => setImmediate(resolve));
      }
      const checked = await Promise.all(reads);
      expect(checked.map((audio) => audio.format)).toEqual(new Array(count).fill('mp3'));
      expect(most).toBe(AUDIO_LIMITS.maxConcurrentDownloads);
    } finally {
      server.close();
    }
  });
});
