/**
 * End to end, webhooks on: the bot runs as `npm start` runs it, in a child process, and the
 * test is a member of a Discord guild. Each scenario checks what the channel shows and what
 * the ledger holds afterwards.
 */
import { createHmac } from 'node:crypto';
import { afterAll, afterEach, beforeAll, describe, expect, it, onTestFinished, vi } from 'vitest';
import type { EmulatorMessage, InteractionHandle } from '@music-bot/discord-emulator';
import { sineWav } from '@music-bot/music-api-sim';
import { found } from '../support/found.js';
import { ledgerOfJob } from '../support/ledger.js';
import { SIM_KEY } from '../support/stack.js';
import { printBotLogsOnFailure, startE2E, type E2E } from './bot-process.js';

/**
 * The scenarios of this file, with interactions brought over the gateway or POSTed to
 * /interactions. What happens after the first answer the same way whichever way the command
 * came (the service's 429s, its webhooks) runs over the gateway alone.
 */
export function songScenarios(interactions: 'gateway' | 'http'): void {
  let bot: E2E;
  /** A scenario the way in does not touch. */
  const overGatewayAlone = (name: string, scenario: () => Promise<void>, timeoutMs?: number): void => {
    if (interactions === 'gateway') it(name, scenario, timeoutMs);
  };
  printBotLogsOnFailure(() => bot);

  beforeAll(async () => {
    bot = await startE2E({ interactions, webhooks: true, startingCredits: 200 });
  }, 60_000);
  afterAll(async () => bot?.close());
  // Every REST call the bot made fits Discord's published API description.
  afterEach(() => expect(bot.emulator.findings).toEqual([]));

  function customIds(message: EmulatorMessage): string[] {
    return (message.components ?? []).flatMap((row) =>
      'components' in row ? row.components.flatMap((c) => ('custom_id' in c && c.custom_id ? [c.custom_id] : [])) : [],
    );
  }

  function links(message: EmulatorMessage): string[] {
    return [...JSON.stringify(message.embeds ?? []).matchAll(/\]\((https?:\/\/[^)]+)\)/g)].map((m) => m[1]!);
  }

  async function ephemeralText(handle: InteractionHandle): Promise<string> {
    const response = await handle.waitForResponse();
    if (response.ephemeral) {
      const data = response.data as { content?: string } | undefined;
      if (data?.content) return data.content;
    }
    const followUp = await handle.waitForFollowUp((m) => Boolean(m.content), 10_000);
    return followUp.content ?? '';
  }

  /** What a refusal must leave as it was. */
  async function accounts() {
    return { jobs: await bot.jobCount(), ledger: await bot.ledgerCount(), balance: await bot.balance() };
  }

  describe('/song finishing by webhook', () => {
    let songHandle: InteractionHandle;
    let songJob: string;
    let songMessage: EmulatorMessage;

    beforeAll(async () => {
      songHandle = bot.run(bot.members.alice, { name: 'song', options: { prompt: 'an upbeat anthem for testers', title: 'Green Build' } });
      songJob = await bot.jobIdOf(songHandle);
      songMessage = await bot.result(songHandle, songJob);
    });

    it('posts the song in the channel with links that open and working buttons', async () => {
      expect(songHandle.response?.ephemeral).toBe(false);
      const embed = songMessage.embeds?.[0];
      expect(embed?.title).toBe('Green Build');
      expect(JSON.stringify(embed?.fields)).toContain(`<@${bot.members.alice}>`);
      expect(JSON.stringify(embed?.fields)).toContain('10 credits');
      const urls = links(songMessage);
      expect(urls.length).toBeGreaterThanOrEqual(2);
      for (const url of [...urls, embed?.image?.url].filter(Boolean) as string[]) {
        const response = await fetch(url);
        expect(response.status, url).toBe(200);
        expect((await response.arrayBuffer()).byteLength).toBeGreaterThan(0);
      }
      // It links its WAV and its video already: only an MP3 and a remix are for sale.
      expect(customIds(songMessage)).toEqual([`play:${songJob}`, `like:${songJob}`, `download:${songJob}:mp3`, `remix:${songJob}`, `reroll:${songJob}`, `report:${songJob}`, `delete-result:${songJob}`]);

      // Finished by the bot's webhook route, not a poll.
      expect(bot.sim.webhookAttempts.some((a) => a.url.endsWith(`/webhooks/music/${songJob}`) && a.status === 200)).toBe(true);
      expect(await ledgerOfJob(bot.db.db, songJob)).toEqual([{ kind: 'reserve', amount: -10, key: `job:${songJob}:debit` }]);
      expect(await bot.delivered(songJob)).toEqual({ state: 'succeeded', deliveryState: 'delivered' });
    });

    it('refuses the spending buttons to a member who did not ask for the song', async () => {
      const before = await accounts();
      const click = bot.emulator.clickButton({ messageId: songMessage.id, customId: `download:${songJob}:mp3`, userId: bot.members.bob });
      expect(await ephemeralText(click)).toBe('Only the member who made this song, or a moderator, can use its buttons. Try `/download`.');
      expect((await bot.settled(click)).msg).toBe('interaction refused');
      expect(await accounts()).toEqual(before);
    });

    it('makes an MP3 download from the result button', async () => {
      const before = await bot.balance();
      const download = bot.emulator.clickButton({ messageId: songMessage.id, customId: `download:${songJob}:mp3`, userId: bot.members.alice });
      const downloadJob = await bot.jobIdOf(download);
      const downloadMessage = await bot.result(download, downloadJob);
      expect(downloadMessage.embeds?.[0]?.title).toMatch(/MP3 download ready/);
      const downloadLink = links(downloadMessage)[0]!;
      expect((await fetch(downloadLink)).status).toBe(200);
      expect(await bot.balance()).toBe(before - 2);

      // Made once: the next press, by anyone, is its link, free, and nothing goes to the service.
      const made = await accounts();
      const creates = bot.sim.requests.length;
      const again = bot.emulator.clickButton({ messageId: songMessage.id, customId: `download:${songJob}:mp3`, userId: bot.members.bob });
      expect(await ephemeralText(again)).toBe(`This song’s MP3 file was made already, so nothing was charged: ${downloadLink}`);
      expect(await accounts()).toEqual(made);
      expect(bot.sim.requests.slice(creates).filter((request) => request.method === 'POST')).toEqual([]);
    });

    it('rerolls the song from the same inputs for whoever presses it, charged once and linked to it', async () => {
      // What the service was asked to make for this song, without where to send its webhook.
      const asked = () =>
        bot.sim.requests
          .filter((r) => r.path === '/api/v1/producer/create' && JSON.stringify(r.body).includes('an upbeat anthem for testers'))
          .map((r) => Object.fromEntries(Object.entries(r.body as Record<string, unknown>).filter(([key]) => !key.startsWith('webhook_'))));
      expect(asked()).toHaveLength(1);
      const before = await bot.balance();
      const click = bot.emulator.clickButton({ messageId: songMessage.id, customId: `reroll:${songJob}`, userId: bot.members.bob });
      const rerollJob = await bot.jobIdOf(click);
      const rerolled = await bot.result(click, rerollJob);
      expect(rerolled.embeds?.[0]?.title).toBe('Green Build');
      expect(rerolled.embeds?.[0]?.fields).toContainEqual({ name: 'Reroll of', value: `Green Build (\`${songJob.slice(0, 8)}\`)` });
      expect(JSON.stringify(rerolled.embeds?.[0]?.fields)).toContain(`<@${bot.members.bob}>`);
      const [first, again] = asked();
      expect(again).toEqual(first);
      expect(await ledgerOfJob(bot.db.db, rerollJob)).toEqual([{ kind: 'reserve', amount: -10, key: `job:${rerollJob}:debit` }]);
      expect(await bot.balance()).toBe(before - 10);
    });

    it('counts a like once per member, takes it back on a second press, and shows the count on the song', async () => {
      const label = () =>
        (bot.emulator.message(songMessage.id)?.components ?? []).flatMap((row) =>
          'components' in row ? row.components.flatMap((c) => ('custom_id' in c && c.custom_id === `like:${songJob}` && 'label' in c ? [String(c.label)] : [])) : [],
        )[0];
      expect(label()).toBe('Like · 0');
      const press = (userId: string) => ephemeralText(bot.emulator.clickButton({ messageId: songMessage.id, customId: `like:${songJob}`, userId }));
      expect(await press(bot.members.alice)).toBe('You like **Green Build** (1 like now). Press Like again to take it back.');
      expect(await press(bot.members.bob)).toBe('You like **Green Build** (2 likes now). Press Like again to take it back.');
      await expect.poll(label, { timeout: 10_000 }).toBe('Like · 2');
      expect(await press(bot.members.alice)).toBe('You no longer like **Green Build** (1 like now).');
      await expect.poll(label, { timeout: 10_000 }).toBe('Like · 1');
    });

    overGatewayAlone('counts a like and makes a reroll once when two gateway processes hear every press', async () => {
      const twin = bot.world.bot({ name: 'twin gateway', env: { ...bot.botEnv, ROLE: 'gateway' } });
      await twin.start();
      try {
        const handle = bot.run(bot.members.alice, { name: 'song', options: { prompt: 'two gateways humming', title: 'Twins' } });
        const songJob = await bot.jobIdOf(handle);
        const message = await bot.result(handle, songJob);
        const like = bot.emulator.clickButton({ messageId: message.id, customId: `like:${songJob}`, userId: bot.members.bob });
        expect(await ephemeralText(like)).toBe('You like **Twins** (1 like now). Press Like again to take it back.');
        const before = await bot.balance();
        const click = bot.emulator.clickButton({ messageId: message.id, customId: `reroll:${songJob}`, userId: bot.members.bob });
        const rerollJob = await bot.jobIdOf(click);
        await bot.result(click, rerollJob);
        const { rows } = await bot.db.pool.query<{ id: string; like_count: number }>('select id, like_count from jobs where reroll_of = $1 or id = $1 order by created_at', [songJob]);
        expect(rows).toEqual([
          { id: songJob, like_count: 1 },
          { id: rerollJob, like_count: 0 },
        ]);
        expect(await ledgerOfJob(bot.db.db, rerollJob)).toEqual([{ kind: 'reserve', amount: -10, key: `job:${rerollJob}:debit` }]);
        expect(await bot.balance()).toBe(before - 10);
        // Both processes took each press, and one of them left it to the other.
        const leftToOther = (id: string) => `${bot.output()}\n${twin.output()}`.split('\n').some((line) => line.includes(id) && line.includes('left to it'));
        await vi.waitFor(() => expect([leftToOther(like.id), leftToOther(click.id)]).toEqual([true, true]), 10_000);
      } finally {
        await twin.stop();
      }
    }, 90_000);
  });

  describe('/lyrics, then "Make a song"', () => {
    it('opens a form with the lyrics filled in and makes a song from it', async () => {
      const handle = bot.run(bot.members.alice, { name: 'lyrics', options: { prompt: 'a lighthouse keeper who writes code' } });
      const lyricsJob = await bot.jobIdOf(handle);
      const message = await bot.result(handle, lyricsJob);
      expect(customIds(message)).toEqual([`make-song:${lyricsJob}`, `report:${lyricsJob}`, `delete-result:${lyricsJob}`]);
      // The service's lyrics are escaped as the member's text is: `\[Verse]` reads "[Verse]" in Discord.
      const shown = message.embeds?.[0]?.description ?? '';
      expect(shown).toMatch(/^\\\[Verse\]\nSinging about a lighthouse keeper who writes code\n/);
      const lyrics = shown.replace(/\\(?=[^\w\s])/g, '');

      const click = bot.emulator.clickButton({ messageId: message.id, customId: `make-song:${lyricsJob}`, userId: bot.members.alice });
      await click.waitForResponse();
      const modal = click.modal();
      expect(modal?.custom_id).toBe(`make-song-modal:${lyricsJob}`);
      expect(JSON.stringify(modal?.components)).toContain(JSON.stringify(lyrics).slice(1, 40));

      const submit = bot.emulator.submitModal({
        interaction: click,
        fields: { lyrics: `${lyrics}\n(edited)`, style: 'sea shanty', title: 'Keeper' },
      });
      const songJob = await bot.jobIdOf(submit);
      await bot.result(submit, songJob);
      const create = bot.sim.requests.filter((r) => r.path === '/api/v1/producer/create').at(-1);
      expect(create?.body).toMatchObject({ sound: 'sea shanty', title: 'Keeper', lyrics: expect.stringContaining('(edited)') });
    });
  });

  describe('/voice create, then /song voice:', () => {
    it('makes a persona from a recording and sings a song with it', async () => {
      const before = await bot.balance();
      const create = bot.run(bot.members.alice, {
        name: 'voice',
        subcommand: 'create',
        options: { name: 'Robo' },
        attachments: { audio: { filename: 'me.wav', data: sineWav({ seconds: 12 }), contentType: 'audio/wav' } },
      });
      const voiceJob = await bot.jobIdOf(create);
      const voiceMessage = await bot.result(create, voiceJob);
      expect(voiceMessage.embeds?.[0]?.title).toContain('Robo');
      const voiceCall = bot.sim.requests.find((r) => r.path === '/api/v1/sonic/create-voice');
      expect((voiceCall?.body as { audio_url?: string }).audio_url).toMatch(/^http/);

      const choices = await bot.emulator.autocomplete({
        guildId: bot.guild.id,
        channelId: bot.channelId,
        userId: bot.members.alice,
        name: 'song',
        options: { prompt: 'x' },
        focused: { name: 'voice', value: 'Ro' },
      });
      expect(choices.map((c) => c.name)).toContain('Robo');

      const song = bot.run(bot.members.alice, { name: 'song', options: { prompt: 'robot blues', voice: String(choices.find((c) => c.name === 'Robo')?.value) } });
      const songJob = await bot.jobIdOf(song);
      const songMessage = await bot.result(song, songJob);
      const persona = bot.sim.requests.find((r) => r.path === '/api/v1/sonic/create');
      expect(persona?.body).toMatchObject({ task_type: 'persona_music', persona_id: expect.any(String) });
      expect(await bot.balance()).toBe(before - 4 - 10);

      // A persona song links no video: its button makes one, of its clip.
      const video = bot.emulator.clickButton({ messageId: songMessage.id, customId: `video:${songJob}`, userId: bot.members.alice });
      const videoJob = await bot.jobIdOf(video);
      const videoMessage = await bot.result(video, videoJob);
      expect(links(videoMessage).some((url) => url.endsWith('-video.mp4'))).toBe(true);
      const videoCall = bot.sim.requests.filter((r) => r.path === '/api/v1/producer/video-clip').at(-1);
      const { rows } = await bot.db.pool.query<{ result: { clips: Array<{ clipId: string }> } }>('select result from jobs where id = $1', [songJob]);
      expect((videoCall?.body as { clip_id?: string }).clip_id).toBe(rows[0]?.result.clips[0]?.clipId);
      expect(await bot.balance()).toBe(before - 4 - 10 - 5);

      // The service gave two takes: both are delivered as files that play in Discord, each named
      // by its take, and take 2's own button makes a video of its own clip.
      const withFiles = await vi.waitFor(
        () => found(bot.emulator.message(songMessage.id)?.attachments.length === 2 ? bot.emulator.message(songMessage.id) : undefined, 'both takes attached'),
        20_000,
      );
      expect(withFiles.attachments.map((file) => file.filename)).toEqual([expect.stringMatching(/take_1\.m4a$/), expect.stringMatching(/take_2\.m4a$/)]);
      // The files are the players: the message links the audio no more.
      expect(JSON.stringify(withFiles.embeds)).not.toContain('.m4a');
      expect(JSON.stringify(withFiles.components)).not.toContain('.m4a');
      const secondVideo = bot.emulator.clickButton({ messageId: songMessage.id, customId: `video:${songJob}:2`, userId: bot.members.alice });
      await bot.result(secondVideo, await bot.jobIdOf(secondVideo));
      const secondCall = bot.sim.requests.filter((r) => r.path === '/api/v1/producer/video-clip').at(-1);
      expect((secondCall?.body as { clip_id?: string }).clip_id).toBe(rows[0]?.result.clips[1]?.clipId);
      expect(await bot.balance()).toBe(before - 4 - 10 - 5 - 5);
    });
  });

  describe('failures', () => {
    it('shows a task that fails upstream as refunded, and the ledger agrees', async () => {
      const before = await bot.balance();
      const handle = bot.run(bot.members.alice, { name: 'song', options: { prompt: 'doomed [sim:fail]' } });
      const jobId = await bot.jobIdOf(handle);
      const message = await bot.result(handle, jobId);
      expect(JSON.stringify(message.embeds)).toContain('10 credits were returned');
      expect(await bot.balance()).toBe(before);
      expect(await bot.delivered(jobId)).toEqual({ state: 'failed', deliveryState: 'delivered' });
    });

    overGatewayAlone('retries a 429 and delivers the song, charged once', async () => {
      const before = await bot.balance();
      const handle = bot.run(bot.members.alice, { name: 'song', options: { prompt: 'busy service [sim:429x2]' } });
      const jobId = await bot.jobIdOf(handle);
      await bot.result(handle, jobId);
      const creates = bot.sim.requests.filter((r) => r.path === '/api/v1/producer/create' && JSON.stringify(r.body).includes('busy service'));
      expect(creates.map((r) => r.status)).toEqual([429, 429, 200]);
      expect(await bot.balance()).toBe(before - 10);
    });

    overGatewayAlone('refuses a forged webhook and changes nothing', async () => {
      const handle = bot.run(bot.members.alice, { name: 'lyrics', options: { prompt: 'slow and forged [sim:task-ms=60000]' } });
      const jobId = await bot.jobIdOf(handle);
      // At the service, and waiting for its webhook: what a forger would aim at.
      await vi.waitFor(async () => found((await bot.jobState(jobId))?.state === 'submitted', `job ${jobId} submitted`), 15_000);
      const balance = await bot.balance();
      const body = JSON.stringify({ code: 200, message: 'success', status: 'SUCCESS', data: [{ text: 'forged lyrics' }] });
      const answer = await fetch(`${bot.httpUrl}/webhooks/music/${jobId}`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'x-webhook-signature': createHmac('sha256', 'guessed').update(body).digest('hex') },
        body,
      });
      expect(answer.status).toBe(401);
      const refused = await bot.waitForLog((line) => line.msg === 'webhook refused' && line.jobId === jobId, `the webhook for ${jobId} refused`);
      expect(refused.outcome).toBe('bad_signature_mismatch');
      expect((await bot.jobState(jobId))?.state).toBe('submitted');
      expect(await bot.balance()).toBe(balance);
      expect(JSON.stringify(handle.original()?.embeds ?? [])).not.toContain('forged lyrics');
    });

    it('delivers a job that outlives the 15-minute token as a channel message', async () => {
      const handle = bot.run(bot.members.bob, { name: 'lyrics', options: { prompt: 'a very long task [sim:task-ms=60000]' } });
      const jobId = await bot.jobIdOf(handle);
      const task = await vi.waitFor(() => found(bot.sim.listTasks().find((t) => JSON.stringify(t.body).includes('a very long task')), 'the long task at the service'), 15_000);
      bot.emulator.clock.advance(16 * 60_000);
      bot.sim.completeTask(task.taskId);
      const message = await bot.emulator.waitForMessage(
        bot.channelId,
        (m) => (m.content ?? '').includes(`<@${bot.members.bob}>`) && JSON.stringify(m.embeds ?? []).includes(jobId),
        20_000,
      );
      expect(message.embeds?.[0]?.description).toMatch(/^\\\[Verse\]\nSinging about a very long task\n/);
      expect(await bot.delivered(jobId)).toEqual({ state: 'succeeded', deliveryState: 'delivered' });
    });
  });

  describe('bad input', () => {
    const cases: Array<[string, Parameters<E2E['run']>[1], string]> = [
      ['an empty prompt', { name: 'song', options: { prompt: '   ' } }, 'The prompt is empty.'],
      ['a prompt over the limit', { name: 'song', options: { prompt: 'x'.repeat(1001) } }, 'The prompt is too long: at most 1,000 characters.'],
      ['a title over the limit', { name: 'song', options: { prompt: 'ok', title: 't'.repeat(81) } }, 'The title is too long: at most 80 characters.'],
      ['a model outside the list', { name: 'song', options: { prompt: 'ok', model: 'ModelB-9000' } }, 'That model is not one this bot offers. Pick one from the list.'],
      [
        'an unknown voice',
        { name: 'song', options: { prompt: 'ok', voice: 'nobody' } },
        'No voice of this server is called “nobody”. Pick one from the suggestions that appear as you type, or see them all with `/voice list`.',
      ],
      [
        'a text file as a voice',
        { name: 'voice', subcommand: 'create', options: { name: 'Txt' }, attachments: { audio: { filename: 'notes.txt', data: 'hello', contentType: 'text/plain' } } },
        'Attach an MP3 or WAV file.',
      ],
      [
        'a recording too short for a voice',
        { name: 'voice', subcommand: 'create', options: { name: 'Short' }, attachments: { audio: { filename: 'short.wav', data: sineWav({ seconds: 3 }), contentType: 'audio/wav' } } },
        'That recording is 3 seconds long; a voice needs more than 10 seconds of clear solo singing.',
      ],
      ['an unknown song for a video', { name: 'video', options: { song: '00000000-0000-4000-8000-000000000000' } }, 'That is not a finished song of this server. Pick one from the list.'],
    ];

    it.each(cases)('answers %s privately and spends nothing', async (_what, input, expected) => {
      const before = await accounts();
      const handle = bot.run(bot.members.alice, input);
      expect(await ephemeralText(handle)).toBe(expected);
      // The bot is done with the interaction: nothing more can come of it.
      expect((await bot.settled(handle)).msg).toBe('interaction refused');
      expect(await accounts()).toEqual(before);
      // A public placeholder, if the command showed one, is gone once the refusal is given.
      await expect.poll(() => bot.emulator.channelMessages(bot.channelId).filter((m) => m.interaction_metadata?.id === handle.id)).toEqual([]);
    });
  });

  describe('out of credits', () => {
    it('refuses privately with the balance and the cost, and records nothing', async () => {
      const balance = await bot.balance();
      // The other tests need their credits back.
      onTestFinished(() => bot.setBalance(balance));
      const take = bot.run(bot.members.owner, { name: 'credits-admin', subcommand: 'take', options: { amount: balance - 5, reason: 'e2e drain' } });
      expect((await bot.settled(take)).msg).toBe('interaction handled');
      expect(await bot.balance()).toBe(5);
      const before = await accounts();
      const handle = bot.run(bot.members.alice, { name: 'song', options: { prompt: 'cannot afford this' } });
      expect(await ephemeralText(handle)).toBe('This server has 5 credits and this costs 10. Only the bot’s owners can add credits.');
      expect((await bot.settled(handle)).msg).toBe('interaction refused');
      expect(await accounts()).toEqual(before);
    });
  });

  describe('secrets', () => {
    it('never logs the key, the bot token, an interaction token or a webhook secret', async () => {
      const handle = bot.run(bot.members.alice, { name: 'lyrics', options: { prompt: 'a secret kept' } });
      const jobId = await bot.jobIdOf(handle);
      await bot.result(handle, jobId);
      const output = bot.output();
      expect(output).not.toContain(SIM_KEY);
      expect(output).not.toContain(bot.emulator.botToken);
      const { rows } = await bot.db.pool.query<{ id: string; webhook_secret: string; interaction_token: string | null }>(
        'select id, webhook_secret, interaction_token from jobs',
      );
      expect(rows.find((row) => row.id === jobId)?.interaction_token).toBe(handle.token);
      for (const row of rows) {
        expect(output).not.toContain(row.webhook_secret);
        if (row.interaction_token) expect(output).not.toContain(row.interaction_token);
      }
    });
  });

  if (interactions !== 'http') return;

  describe('the interactions endpoint', () => {
    const post = (body: string, headers: Record<string, string>) =>
      fetch(`${bot.httpUrl}/interactions`, { method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body });
    /** A /song interaction as Discord would send it, for the bot's guild and a real member. */
    const songPayload = (prompt: string) =>
      JSON.stringify({
        id: '1400000000000000001',
        application_id: bot.emulator.applicationId,
        type: 2,
        token: 'forged-interaction-token',
        version: 1,
        guild_id: bot.guild.id,
        channel_id: bot.channelId,
        member: { user: { id: bot.members.alice, username: 'alice', discriminator: '0', avatar: null, global_name: null }, roles: [], permissions: '0', joined_at: '2024-01-01T00:00:00Z', deaf: false, mute: false, flags: 0 },
        data: { id: '1400000000000000002', name: 'song', type: 1, options: [{ name: 'prompt', type: 3, value: prompt }] },
        locale: 'en-US',
        authorizing_integration_owners: { '0': bot.guild.id },
      });

    it('brought every interaction of this file by HTTP, the gateway kept for voice', () => {
      const stats = bot.emulator.httpDeliveryStats;
      expect(stats.delivered).toBeGreaterThanOrEqual(15);
      expect(stats).toEqual({ delivered: stats.delivered, answered: stats.delivered, failed: 0 });
      // The gateway connection still opens, once, for voice and guild joins; it brings no interaction.
      expect(bot.emulator.gatewayStats.identifies).toBe(1);
    });

    it('answers a signed PING with PONG', async () => {
      const ping = JSON.stringify({ id: '1400000000000000003', application_id: bot.emulator.applicationId, type: 1, token: 'ping', version: 1 });
      const response = await post(ping, bot.emulator.signInteraction(ping));
      expect(response.status).toBe(200);
      expect(await response.json()).toEqual({ type: 1 });
    });

    it('refuses forged, stale and unsigned requests with 401, and spends nothing', async () => {
      const before = await accounts();
      const body = songPayload('a forged request');
      const signed = bot.emulator.signInteraction(body);
      const refused = [
        await post(body, {}),
        // Signed, then changed on the way.
        await post(body.replace('a forged request', 'a changed request'), signed),
        // Signed by someone else's key: a valid signature of another body.
        await post(body, { ...signed, 'x-signature-ed25519': bot.emulator.signInteraction('{}')['x-signature-ed25519']! }),
        // Genuine, but captured and sent again ten minutes later.
        await post(body, bot.emulator.signInteraction(body, Math.floor(Date.now() / 1000) - 600)),
        await post(body, { ...signed, 'x-signature-ed25519': 'not hex' }),
      ];
      expect(refused.map((response) => response.status)).toEqual([401, 401, 401, 401, 401]);
      expect(await accounts()).toEqual(before);
    });

    it('refuses a well-signed body that is not JSON with 400', async () => {
      const body = '{"type": 1,';
      const response = await post(body, bot.emulator.signInteraction(body));
      expect(response.status).toBe(400);
    });
  });
}
