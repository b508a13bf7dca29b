/**
 * Every reason a request is turned down before anything is reserved. Each refusal must reach
 * the member alone, leave nothing public behind, and change nothing: no job, no ledger row,
 * no credit, no call to the music service.
 */
import { ChannelType, InteractionResponseType } from 'discord-api-types/v10';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { setFrozen, setUserDailyCap } from '../../../src/credits/index.js';
import type { InteractionHandle } from '@music-bot/discord-emulator';
import { changeSettings, type SettingsChange } from '../../../src/guilds/settings.js';
import { silentMp3, sineWav } from './fixtures.js';
import { createdFor, jobIdIn, privateAnswer, startBot, type BotHarness } from './harness.js';

let h: BotHarness;

beforeAll(async () => {
  h = await startBot({ startingCredits: 200 });
  // The guild's account exists from its first use on.
  await privateAnswer(h.run(h.members.alice, { name: 'credits' }));
});
afterAll(async () => h?.close());
afterEach(() => expect(h.emulator.findings).toEqual([]));

async function snapshot() {
  return {
    balance: await h.balance(),
    jobs: await h.jobCount(),
    ledger: await h.ledgerCount(),
    serviceCalls: h.sim.requests.filter((request) => request.method === 'POST').length,
  };
}

/**
 * Starts the interaction, and checks it was refused privately with `expected` and changed
 * nothing: the first and only answer is an ephemeral message (callback type 4, flag 64), no
 * public message was ever created for it (not even a "thinking…" one that was deleted), and
 * no job, ledger row, credit or call to the music service came of it.
 */
async function refused(start: () => InteractionHandle, expected: string | RegExp): Promise<void> {
  const before = await snapshot();
  const { handle, created, stop } = createdFor(h.emulator, start);
  try {
    const answer = await privateAnswer(handle);
    expect(handle.response).toMatchObject({ type: InteractionResponseType.ChannelMessageWithSource, ephemeral: true });
    expect(answer.id).toBe(handle.original()?.id);
    expect(answer.content).toMatch(expected);
    expect(created().filter((message) => !message.ephemeral)).toEqual([]);
    expect(await snapshot()).toEqual(before);
  } finally {
    stop();
  }
}

async function change(change: SettingsChange) {
  await changeSettings(h.db.db, { guildId: h.guild.id, actorId: h.members.manager, change });
}

const song = (options: Record<string, string | boolean>, userId = h.members.alice, channelId?: string) => () =>
  h.run(userId, { name: 'song', options: { prompt: 'a song', ...options }, ...(channelId ? { channelId } : {}) });

describe('bad input', () => {
  it('refuses an empty prompt', async () => {
    await refused(song({ prompt: '   ' }), 'The prompt is empty.');
  });

  it('refuses texts over the service’s limits', async () => {
    await refused(song({ prompt: 'x'.repeat(1001) }), 'The prompt is too long: at most 1,000 characters.');
    await refused(song({ lyrics: 'la '.repeat(1001) }), 'The lyrics are too long: at most 3,000 characters.');
    await refused(song({ title: 't'.repeat(81) }), 'The title is too long: at most 80 characters.');
    await refused(
      () => h.run(h.members.alice, { name: 'lyrics', options: { prompt: 'p'.repeat(1001) } }),
      'The prompt is too long',
    );
  });

  it('refuses a model outside the configured list', async () => {
    await refused(song({ model: 'ModelZ 9 Ultra' }), 'That model is not one this bot offers');
  });

  it('refuses an unknown voice, and a voice with instrumental', async () => {
    await refused(song({ voice: 'Nobody' }), 'No voice of this server is called “Nobody”');
    await refused(song({ voice: 'Nobody', instrumental: true }), 'A voice persona sings');
  });

  it('refuses an unknown song for a video or a download', async () => {
    await refused(() => h.run(h.members.alice, { name: 'video', options: { song: 'no-such-song' } }), 'No finished song of this server is called “no-such-song”');
    await refused(
      () => h.run(h.members.alice, { name: 'download', options: { song: '00000000-0000-4000-8000-000000000000', format: 'mp3' } }),
      'not a finished song of this server',
    );
  });

  it('refuses an attachment that is not MP3 or WAV, or does not read as one', async () => {
    const upload = (filename: string, contentType: string, data: Buffer) => () =>
      h.run(h.members.alice, { name: 'upload', attachments: { audio: { filename, contentType, data } } });
    await refused(upload('notes.txt', 'text/plain', Buffer.from('hello')), 'Attach an MP3 or WAV file.');
    await refused(upload('fake.mp3', 'audio/mpeg', Buffer.from('this is text pretending to be audio')), 'not a readable MP3 or WAV');
  });

  it('refuses a voice recording that is too short or too large', async () => {
    const voice = (filename: string, data: Buffer) => () =>
      h.run(h.members.alice, {
        name: 'voice',
        subcommand: 'create',
        options: { name: 'Short' },
        attachments: { audio: { filename, contentType: filename.endsWith('.wav') ? 'audio/wav' : 'audio/mpeg', data } },
      });
    await refused(voice('short.wav', sineWav({ seconds: 5 })), 'That recording is 5 seconds long; a voice needs more than 10 seconds');
    await refused(voice('exactly-ten.mp3', silentMp3(9.9)), /a voice needs more than 10 seconds/);
    await refused(voice('huge.wav', Buffer.alloc(21 * 1024 * 1024)), 'That file is 21 MB; the limit is 20 MB.');
  });
});

async function resetRules() {
  await change({ setting: 'allowedChannels', clear: true });
  await change({ setting: 'requiredRole', roleId: null });
  await change({ setting: 'cooldown', seconds: 0 });
  await setFrozen(h.db.db, { guildId: h.guild.id, frozen: false, actorId: h.members.manager });
  await setUserDailyCap(h.db.db, { guildId: h.guild.id, amount: null, actorId: h.members.manager });
  await setUserDailyCap(h.db.db, { guildId: h.guild.id, amount: null, roleId: h.djRole.id, actorId: h.members.manager });
  await h.setBalance(200);
}

describe('the guild’s rules', () => {
  beforeEach(resetRules);

  it('refuses a channel the moderators did not allow, but not a thread of an allowed one', async () => {
    await change({ setting: 'allowedChannels', add: h.channelId });
    await refused(song({}, h.members.alice, h.otherChannelId), /can’t be used in this channel. Try <#\d+>/);

    const thread = h.emulator.createChannel(h.guild.id, { name: 'ideas', type: ChannelType.PublicThread, parentId: h.channelId });
    const ack = await privateAnswer(h.run(h.members.alice, { name: 'lyrics', options: { prompt: 'in a thread' }, channelId: thread.id }));
    await h.delivered(jobIdIn(ack));
  });

  it('refuses a member without the required role; moderators need none', async () => {
    await change({ setting: 'requiredRole', roleId: h.djRole.id });
    await refused(song({}), `You need the <@&${h.djRole.id}> role`);
    const ack = await privateAnswer(h.run(h.members.manager, { name: 'lyrics', options: { prompt: 'moderators may' } }));
    await h.delivered(jobIdIn(ack));
  });

  it('refuses a member still in their cooldown', async () => {
    await change({ setting: 'cooldown', seconds: 600 });
    const ack = await privateAnswer(h.run(h.members.bob, { name: 'lyrics', options: { prompt: 'first' } }));
    await h.delivered(jobIdIn(ack));
    await refused(() => h.run(h.members.bob, { name: 'lyrics', options: { prompt: 'second' } }), /Please wait (599|600) more seconds/);
  });

  it('refuses a member over their daily cap, with a role’s own cap taking precedence', async () => {
    await setUserDailyCap(h.db.db, { guildId: h.guild.id, amount: 5, actorId: h.members.manager });
    await refused(song({}), /^That costs 10 credits, and you can spend [0-5] more today \(daily limit 5\)/);

    await setUserDailyCap(h.db.db, { guildId: h.guild.id, amount: 50, roleId: h.djRole.id, actorId: h.members.manager });
    const dj = h.emulator.addMember(h.guild.id, { username: 'dj', roles: [h.djRole.id] });
    const ack = await privateAnswer(h.run(dj.id, { name: 'song', options: { prompt: 'the DJ may' } }));
    await h.delivered(jobIdIn(ack));
  });

  it('refuses when the guild cannot pay', async () => {
    await h.setBalance(3);
    await refused(song({}), 'This server has 3 credits and this costs 10. Only the bot’s owners can add credits.');
  });

  it('refuses while the guild is frozen', async () => {
    await setFrozen(h.db.db, { guildId: h.guild.id, frozen: true, actorId: h.members.manager });
    await refused(song({}), 'Generation is paused on this server by its moderators.');
    await refused(() => h.run(h.members.alice, { name: 'lyrics', options: { prompt: 'still no' } }), 'paused');
  });
});

describe('buttons and forms that spend', () => {
  beforeEach(resetRules);

  it('refuse in private too: a button of someone else’s lyrics, and a form the guild cannot pay for', async () => {
    const lyricsId = jobIdIn(await privateAnswer(h.run(h.members.alice, { name: 'lyrics', options: { prompt: 'paper boats' } })));
    const result = await h.delivered(lyricsId);
    await refused(
      () => h.emulator.clickButton({ messageId: result.id, customId: `make-song:${lyricsId}`, userId: h.members.bob }),
      'Only the member who asked for these lyrics',
    );

    const click = h.emulator.clickButton({ messageId: result.id, customId: `make-song:${lyricsId}`, userId: h.members.alice });
    expect((await click.waitForResponse()).type).toBe(InteractionResponseType.Modal);
    await h.setBalance(3);
    await refused(
      () => h.emulator.submitModal({ interaction: click, fields: { lyrics: 'row row', style: 'sea shanty', title: 'Boats' } }),
      'This server has 3 credits and this costs 10.',
    );
  });
});

describe('upstream errors', () => {
  beforeEach(resetRules);

  it('become friendly text in the result, with no upstream body, and the credits come back', async () => {
    const balance = await h.balance();
    h.setSimForThisTest({ faults: [{ kind: 'status', status: 400, type: 'validation_error', path: '/api/v1/producer/create' }] });
    const ack = await privateAnswer(h.run(h.members.alice, { name: 'song', options: { prompt: 'doomed' } }));
    const jobId = jobIdIn(ack);
    const result = await h.delivered(jobId);
    const shown = JSON.stringify(result);
    expect(shown).toContain('The music service refused the request as invalid');
    expect(shown).not.toMatch(/validation_error|stack|Bearer|sim-secret/);
    await expect.poll(() => h.balance()).toBe(balance);
  });
});
