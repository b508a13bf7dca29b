/**
 * What a member can make the bot download with an attachment: nothing before the member is
 * admitted, nothing from outside Discord's CDN (here the emulator's), and no redirect followed.
 * Downloads are counted where they would arrive: the emulator's CDN, and a server of the test's
 * own standing for any other host.
 */
import { once } from 'node:events';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { changeSettings } from '../../../src/guilds/settings.js';
import { silentMp3 } from './fixtures.js';
import { jobIdIn, privateAnswer, startBot, type BotHarness } from './harness.js';

let h: BotHarness;
/** Another host: it serves a good MP3 to anyone who asks, and counts who did. */
let elsewhere: { server: Server; url: string; requests: string[] };

beforeAll(async () => {
  h = await startBot({ startingCredits: 500 });
  const requests: string[] = [];
  const server = createServer((request, response) => {
    requests.push(request.url ?? '');
    response.writeHead(200, { 'content-type': 'audio/mpeg' }).end(silentMp3(12));
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  elsewhere = { server, url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, requests };
});
afterAll(async () => {
  elsewhere?.server.close();
  await h?.close();
});
afterEach(() => expect(h.emulator.findings).toEqual([]));

/** The emulator's CDN requests for files of this name. */
const cdnRequestsFor = (filename: string) => h.emulator.cdnRequests.filter((request) => request.path.endsWith(`/${filename}`));

describe('an attachment is downloaded only once its member is admitted', () => {
  it('a member in their cooldown gets the refusal, and the CDN never sees their file: /upload and /voice create', async () => {
    const world = h.inNewGuild();
    // The guild's settings exist from its first use on.
    await privateAnswer(world.run(world.members.manager, { name: 'credits' }));
    await changeSettings(world.db.db, { guildId: world.guild.id, actorId: world.members.manager, change: { setting: 'cooldown', seconds: 600 } });
    await world.delivered(jobIdIn(await privateAnswer(world.run(world.members.bob, { name: 'lyrics', options: { prompt: 'the first' } }))));
    const jobs = await world.jobCount();

    const upload = await privateAnswer(
      world.run(world.members.bob, { name: 'upload', attachments: { audio: { filename: 'in-cooldown.mp3', contentType: 'audio/mpeg', data: silentMp3(12) } } }),
    );
    expect(upload.content).toMatch(/Please wait (599|600) more seconds/);
    const voice = await privateAnswer(
      world.run(world.members.bob, {
        name: 'voice',
        subcommand: 'create',
        options: { name: 'Waiting' },
        attachments: { audio: { filename: 'voice-in-cooldown.mp3', contentType: 'audio/mpeg', data: silentMp3(12) } },
      }),
    );
    expect(voice.content).toMatch(/Please wait (59\d|600) more seconds/);

    expect(cdnRequestsFor('in-cooldown.mp3')).toEqual([]);
    expect(cdnRequestsFor('voice-in-cooldown.mp3')).toEqual([]);
    expect(await world.jobCount()).toBe(jobs);
  });

  it('an admitted member’s file is downloaded from the CDN once, and the upload goes ahead', async () => {
    const ack = await privateAnswer(
      h.run(h.members.alice, { name: 'upload', attachments: { audio: { filename: 'admitted.mp3', contentType: 'audio/mpeg', data: silentMp3(12) } } }),
    );
    await h.delivered(jobIdIn(ack));
    expect(cdnRequestsFor('admitted.mp3')).toHaveLength(1);
  });
});

describe('an attachment is downloaded only from Discord’s CDN', () => {
  it('refuses a file the interaction places on another host, in words, without fetching it', async () => {
    const jobs = await h.jobCount();
    const answer = await privateAnswer(
      h.run(h.members.alice, {
        name: 'upload',
        attachments: { audio: { filename: 'elsewhere.mp3', contentType: 'audio/mpeg', data: silentMp3(12), url: `${elsewhere.url}/elsewhere.mp3` } },
      }),
    );
    expect(answer.content).toBe('That file is not stored by Discord, so the bot will not fetch it. Attach the file to the command itself.');
    expect(elsewhere.requests).not.toContain('/elsewhere.mp3');
    expect(await h.jobCount()).toBe(jobs);
  });

  it('does not follow the CDN’s redirect to another address', async () => {
    const jobs = await h.jobCount();
    const answer = await privateAnswer(
      h.run(h.members.alice, {
        name: 'voice',
        subcommand: 'create',
        options: { name: 'Redirected' },
        attachments: { audio: { filename: 'redirected.mp3', contentType: 'audio/mpeg', data: silentMp3(12), redirectTo: `${elsewhere.url}/redirected.mp3` } },
      }),
    );
    expect(answer.content).toBe('The bot could not read that attachment. Please upload it again.');
    expect(cdnRequestsFor('redirected.mp3')).toHaveLength(1);
    expect(elsewhere.requests).not.toContain('/redirected.mp3');
    expect(await h.jobCount()).toBe(jobs);
  });
});
