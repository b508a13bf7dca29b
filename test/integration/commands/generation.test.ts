/**
 * Every spending command and button, end to end: the member's command or click goes through
 * the real discord.js client and router, the pipeline submits to the music-API simulator,
 * and the result comes back to the channel.
 */
import { and, eq } from 'drizzle-orm';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { voicePersonas } from '../../../src/db/schema.js';
import { GUESSED_FIELDS } from '../../../src/music-api/index.js';
import { silentMp3, sineWav } from './fixtures.js';
import { buttonsOf, jobIdIn, privateAnswer, startBot, type BotHarness } from './harness.js';

let h: BotHarness;

beforeAll(async () => {
  h = await startBot({ startingCredits: 500, settings: { upstreamMaxInFlight: 1 } });
});
afterAll(async () => h?.close());
afterEach(() => {
  // Every REST call the bot made fits Discord's published API description.
  expect(h.emulator.findings).toEqual([]);
});

function simBodies(path: string): Array<Record<string, unknown>> {
  return h.sim.requests.filter((request) => request.path === path).map((request) => request.body as Record<string, unknown>);
}

/** Runs a spending command and returns the job id from its private acknowledgement. */
async function accepted(handle: ReturnType<BotHarness['run']>): Promise<string> {
  const ack = await privateAnswer(handle);
  expect(ack.ephemeral).toBe(true);
  return jobIdIn(ack);
}

describe('/song', () => {
  it('acknowledges with the cost and what is left, then posts the song publicly with its buttons', async () => {
    const before = await h.balance();
    const handle = h.run(h.members.alice, {
      name: 'song',
      options: { prompt: 'a shanty about indexes', title: 'Rows and Rows', model: 'ModelB-2.0', instrumental: false },
    });
    const ack = await privateAnswer(handle);
    expect(ack.ephemeral).toBe(true);
    expect(ack.content).toContain('costs **10 credits**');
    expect(ack.content).toContain(`**${before - 10}** left`);
    const jobId = jobIdIn(ack);

    const result = await h.delivered(jobId);
    expect(result.ephemeral).toBe(false);
    expect(result.interactionId).toBe(handle.id);
    expect(result.embeds?.[0]?.title).toBe('Rows and Rows');
    // The song links its WAV and its video: only what it lacks is for sale.
    expect(buttonsOf(result)).toEqual([`play:${jobId}`, `like:${jobId}`, `download:${jobId}:mp3`, `remix:${jobId}`, `reroll:${jobId}`, `report:${jobId}`, `delete-result:${jobId}`]);
    // Submitted, it can no longer be cancelled: the acknowledgement keeps no Cancel button.
    await expect.poll(() => buttonsOf(h.emulator.message(ack.id)!)).toEqual([]);
    expect(simBodies('/api/v1/producer/create').at(-1)).toMatchObject({
      sound: 'a shanty about indexes',
      title: 'Rows and Rows',
      mv: 'ModelB-2.0',
    });
    expect(await h.balance()).toBe(before - 10);
  });

  it('autocompletes models from the configured list and voices from the guild', async () => {
    const models = await h.autocomplete(h.members.alice, {
      name: 'song',
      options: { prompt: 'x' },
      focused: { name: 'model', value: '2.0 p' },
    });
    expect(models).toEqual([{ name: 'ModelB-2.0 Pro', value: 'ModelB-2.0 Pro' }]);
    const all = await h.autocomplete(h.members.alice, {
      name: 'song',
      focused: { name: 'model', value: '' },
    });
    expect(all.map((choice) => choice.value)).toEqual([...h.config.musicModels]);
  });
});

describe('/lyrics and its "Make a song" button', () => {
  it('posts lyrics whose button opens a filled-in form that makes a song of the edited lyrics', async () => {
    const jobId = await accepted(h.run(h.members.alice, { name: 'lyrics', options: { prompt: 'rain on a tin roof' } }));
    const result = await h.delivered(jobId);
    expect(buttonsOf(result)).toEqual([`make-song:${jobId}`, `report:${jobId}`, `delete-result:${jobId}`]);
    // The service's lyrics, escaped as the member's own text is: `\[Verse]` reads "[Verse]" in Discord.
    const shown = result.embeds?.[0]?.description ?? '';
    expect(shown).toMatch(/^\\\[Verse\]\nSinging about rain on a tin roof\n/);
    const lyrics = shown.replace(/\\(?=[^\w\s])/g, '');

    // Someone else may not spend on alice's lyrics.
    const bobClick = h.emulator.clickButton({ messageId: result.id, customId: `make-song:${jobId}`, userId: h.members.bob });
    expect((await privateAnswer(bobClick)).content).toContain('Only the member who asked for these lyrics');
    expect(bobClick.modal()).toBeUndefined();

    const click = h.emulator.clickButton({ messageId: result.id, customId: `make-song:${jobId}`, userId: h.members.alice });
    const response = await click.waitForResponse();
    expect(response.type).toBe(9);
    const modal = click.modal();
    expect(modal?.custom_id).toBe(`make-song-modal:${jobId}`);
    expect(JSON.stringify(modal)).toContain(JSON.stringify(lyrics).slice(1, 40));

    const balance = await h.balance();
    const submitted = h.emulator.submitModal({
      interaction: click,
      fields: { lyrics: `${lyrics}\n[Outro]\nOne more line`, style: 'dreamy synth-pop', title: 'Tin Roof' },
    });
    const songId = await accepted(submitted);
    await h.delivered(songId);
    expect(simBodies('/api/v1/producer/create').at(-1)).toMatchObject({
      sound: 'dreamy synth-pop',
      title: 'Tin Roof',
    });
    expect(JSON.stringify(simBodies('/api/v1/producer/create').at(-1))).toContain('One more line');
    expect(await h.balance()).toBe(balance - 10);
  });
});

describe('a title the service derived from a prompt', () => {
  it('loses its trailing punctuation: shown on the lyrics, carried into the "Make a song" form, and found by /jobs show as typed', async () => {
    // The service titles lyrics by the prompt's first words: here "Rain on the roof,".
    const jobId = await accepted(h.run(h.members.alice, { name: 'lyrics', options: { prompt: 'rain on the roof, all night long' } }));
    const result = await h.delivered(jobId);
    expect(result.embeds?.[0]?.title).toBe('Rain on the roof');

    const click = h.emulator.clickButton({ messageId: result.id, customId: `make-song:${jobId}`, userId: h.members.alice });
    await click.waitForResponse();
    const rows = (click.modal()?.components ?? []) as unknown as Array<{ components?: Array<{ custom_id?: string; value?: string }> }>;
    const fields = rows.flatMap((row) => row.components ?? []);
    expect(fields.find((field) => field.custom_id === 'title')?.value).toBe('Rain on the roof');

    const shown = h.run(h.members.alice, { name: 'jobs', subcommand: 'show', options: { id: 'rain on the roof' } });
    const message = await shown.waitForEdit((edited) => (edited.embeds?.[0]?.footer?.text ?? '').includes(jobId));
    expect(message.embeds?.[0]?.title).toBe('Rain on the roof');
  });
});

describe('/video and /download, by command and by button', () => {
  let songId: string;
  let songMessageId: string;

  beforeAll(async () => {
    // A persona song: its clip links neither a WAV nor a video, so both are for sale.
    const voice = h.run(h.members.alice, {
      name: 'voice',
      subcommand: 'create',
      options: { name: 'Video Voice' },
      attachments: { audio: { filename: 'me.mp3', contentType: 'audio/mpeg', data: silentMp3(12) } },
    });
    await h.delivered(await accepted(voice));
    const [persona] = await h.db.db
      .select()
      .from(voicePersonas)
      .where(and(eq(voicePersonas.guildId, h.guild.id), eq(voicePersonas.name, 'Video Voice')));
    songId = await accepted(h.run(h.members.alice, { name: 'song', options: { prompt: 'video source', voice: persona!.id } }));
    songMessageId = (await h.delivered(songId)).id;
  });

  it('autocompletes finished songs of the guild', async () => {
    const choices = await h.autocomplete(h.members.bob, {
      name: 'video',
      focused: { name: 'song', value: '' },
    });
    expect(choices.map((choice) => choice.value)).toContain(songId);
    expect(choices.every((choice) => String(choice.name).length <= 100)).toBe(true);
  });

  it('makes a video from the command, for any member', async () => {
    const balance = await h.balance();
    const jobId = await accepted(h.run(h.members.bob, { name: 'video', options: { song: songId } }));
    const result = await h.delivered(jobId);
    expect(result.ephemeral).toBe(false);
    expect(simBodies('/api/v1/producer/video-clip').at(-1)?.clip_id).toBeTypeOf('string');
    expect(await h.balance()).toBe(balance - 5);
  });

  it('makes a video and downloads from the buttons, for the requester and moderators only', async () => {
    const bob = h.emulator.clickButton({ messageId: songMessageId, customId: `download:${songId}:mp3`, userId: h.members.bob });
    expect((await privateAnswer(bob)).content).toContain('Only the member who made this song, or a moderator');

    const balance = await h.balance();
    const mp3 = await accepted(
      h.emulator.clickButton({ messageId: songMessageId, customId: `download:${songId}:mp3`, userId: h.members.manager }),
    );
    await h.delivered(mp3);
    expect(simBodies('/api/v1/producer/download').at(-1)).toMatchObject({ format: 'mp3' });
    expect(await h.balance()).toBe(balance - 2);
  });

  it('gives a file already made, or being made, as its link for free, to any member, and sends nothing upstream', async () => {
    const balance = await h.balance();
    const downloads = simBodies('/api/v1/producer/download').length;
    const videos = simBodies('/api/v1/producer/video-clip').length;
    // The video the command made, the MP3 the button made: again from the buttons, by anyone.
    const video = await privateAnswer(h.emulator.clickButton({ messageId: songMessageId, customId: `video:${songId}`, userId: h.members.bob }));
    expect(video.content).toMatch(/^This song’s music video was made already, so nothing was charged: https?:\/\//);
    const mp3 = await privateAnswer(h.emulator.clickButton({ messageId: songMessageId, customId: `download:${songId}:mp3`, userId: h.members.alice }));
    expect(mp3.content).toMatch(/^This song’s MP3 file was made already, so nothing was charged: https?:\/\//);
    const typed = await privateAnswer(h.run(h.members.bob, { name: 'video', options: { song: songId } }));
    expect(typed.content).toBe(video.content);

    // A WAV still being made: the second request waits for the first rather than paying again.
    h.setSimForThisTest({ taskMs: 60_000 });
    const wav = await accepted(h.run(h.members.alice, { name: 'download', options: { song: songId, format: 'wav' } }));
    const again = await privateAnswer(h.emulator.clickButton({ messageId: songMessageId, customId: `download:${songId}:wav`, userId: h.members.manager }));
    expect(again.content).toBe('This song’s WAV file is being made already; it will be posted where it was asked for. Nothing was charged.');
    expect(await h.balance()).toBe(balance - 2);
    expect(simBodies('/api/v1/producer/download')).toHaveLength(downloads + 1);
    expect(simBodies('/api/v1/producer/video-clip')).toHaveLength(videos);
    for (const task of h.sim.listTasks()) h.sim.completeTask(task.taskId);
    await h.delivered(wav);
  });

  it('keeps working after the bot restarts: a button rendered before is still answered', async () => {
    const identifies = h.emulator.gatewayStats.identifies;
    await h.restart();
    // A new client, a new session: nothing of the old process is left to remember the button.
    expect(h.emulator.gatewayStats.identifies).toBe(identifies + 1);
    const clicked = await privateAnswer(h.emulator.clickButton({ messageId: songMessageId, customId: `video:${songId}`, userId: h.members.alice }));
    expect(clicked.content).toMatch(/^This song’s music video was made already/);
  });
});

describe('/upload', () => {
  it('registers an attached WAV as a clip, by its Discord URL', async () => {
    const balance = await h.balance();
    const handle = h.run(h.members.alice, {
      name: 'upload',
      options: { title: 'My demo' },
      attachments: { audio: { filename: 'demo.wav', contentType: 'audio/wav', data: sineWav({ seconds: 3 }) } },
    });
    const jobId = await accepted(handle);
    await h.delivered(jobId);
    const url = (handle.payload.data as { resolved?: { attachments?: Record<string, { url: string }> } }).resolved?.attachments;
    expect(simBodies('/api/v1/producer/upload').at(-1)?.[GUESSED_FIELDS.upload.audioUrl]).toBe(Object.values(url ?? {})[0]?.url);
    expect(await h.balance()).toBe(balance - 2);
  });
});

describe('/voice', () => {
  /** A voice persona made by `ownerId` from a long enough MP3. */
  async function createVoice(name: string, ownerId: string) {
    const create = h.run(ownerId, {
      name: 'voice',
      subcommand: 'create',
      options: { name },
      attachments: { audio: { filename: 'me.mp3', contentType: 'audio/mpeg', data: silentMp3(12) } },
    });
    await h.delivered(await accepted(create));
    const [persona] = await h.db.db
      .select()
      .from(voicePersonas)
      .where(and(eq(voicePersonas.guildId, h.guild.id), eq(voicePersonas.name, name)));
    expect(persona?.ownerId).toBe(ownerId);
    return persona!;
  }

  it('makes a persona from a long enough MP3, lists it, and sings with it', async () => {
    const persona = await createVoice('Alto Alice', h.members.alice);

    const list = await privateAnswer(h.run(h.members.bob, { name: 'voice', subcommand: 'list' }));
    expect(list.content).toContain('Alto Alice');

    const choices = await h.autocomplete(h.members.bob, {
      name: 'song',
      options: { prompt: 'x' },
      focused: { name: 'voice', value: 'alto' },
    });
    expect(choices).toEqual([{ name: 'Alto Alice', value: persona.id }]);
    // U+0000 in what is typed (Postgres refuses it in a query's text) is left out, not a failure.
    const withNul = await h.autocomplete(h.members.bob, {
      name: 'song',
      options: { prompt: 'x' },
      focused: { name: 'voice', value: 'al\u0000to' },
    });
    expect(withNul).toEqual([{ name: 'Alto Alice', value: persona.id }]);

    const balance = await h.balance();
    const song = await accepted(
      h.run(h.members.bob, { name: 'song', options: { prompt: 'a lullaby', voice: persona.id, lyrics: 'Sleep now, little one' } }),
    );
    await h.delivered(song);
    expect(simBodies('/api/v1/sonic/create').at(-1)).toMatchObject({ persona_id: persona.personaId });
    expect(await h.balance()).toBe(balance - h.config.personaSongCost);
  });

  it('is deleted by its owner, not by another member', async () => {
    const persona = await createVoice('Bass Alice', h.members.alice);
    const bob = await privateAnswer(h.run(h.members.bob, { name: 'voice', subcommand: 'delete', options: { voice: persona.id } }));
    expect(bob.content).toContain('Only the member who made this voice, or a moderator');
    const alice = await privateAnswer(h.run(h.members.alice, { name: 'voice', subcommand: 'delete', options: { voice: persona.id } }));
    expect(alice.content).toContain('Deleted the voice **Bass Alice**');
    const list = await privateAnswer(h.run(h.members.bob, { name: 'voice', subcommand: 'list' }));
    expect(list.content).not.toContain('Bass Alice');
    const [deleted] = await h.db.db.select().from(voicePersonas).where(eq(voicePersonas.id, persona.id));
    expect(deleted?.deletedAt).toBeInstanceOf(Date);
  });
});

describe('/jobs', () => {
  it('lists the caller’s jobs and shows a finished one again, with working buttons', async () => {
    const alicesJob = await accepted(h.run(h.members.alice, { name: 'lyrics', options: { prompt: 'alice keeps this to herself' } }));
    const songId = await accepted(h.run(h.members.bob, { name: 'song', options: { prompt: 'to be shown again' } }));
    await h.delivered(alicesJob);
    await h.delivered(songId);

    const list = await privateAnswer(h.run(h.members.bob, { name: 'jobs', subcommand: 'list' }));
    expect(list.content).toContain(songId.slice(0, 8));
    expect(list.content).not.toContain(alicesJob.slice(0, 8));

    const choices = await h.autocomplete(h.members.bob, {
      name: 'jobs',
      subcommand: 'show',
      focused: { name: 'id', value: 'shown' },
    });
    expect(choices.map((choice) => choice.value)).toEqual([songId]);

    const show = h.run(h.members.bob, { name: 'jobs', subcommand: 'show', options: { id: songId.slice(0, 8) } });
    const reposted = await show.waitForEdit((message) => buttonsOf(message).includes(`download:${songId}:mp3`), 15_000);
    expect(reposted.ephemeral).toBe(false);
    const mp3 = await accepted(h.emulator.clickButton({ messageId: reposted.id, customId: `download:${songId}:mp3`, userId: h.members.bob }));
    await h.delivered(mp3);

    // A "show again" button does the same as /jobs show.
    const response = await fetch(`${h.emulator.apiUrl}/v10/channels/${h.channelId}/messages`, {
      method: 'POST',
      headers: { authorization: `Bot ${h.emulator.botToken}`, 'content-type': 'application/json' },
      body: JSON.stringify({
        content: 'Your song is ready.',
        components: [{ type: 1, components: [{ type: 2, style: 2, label: 'Show again', custom_id: `show:${songId}` }] }],
      }),
    });
    const { id: messageId } = (await response.json()) as { id: string };
    const again = h.emulator.clickButton({ messageId, customId: `show:${songId}`, userId: h.members.bob });
    const shownAgain = await again.waitForEdit((message) => buttonsOf(message).includes(`download:${songId}:mp3`), 15_000);
    expect(shownAgain.ephemeral).toBe(false);
  });

  it('cancels a job still waiting for the service, gives its credits back and removes its public reply', async () => {
    h.setSimForThisTest({ taskMs: 60_000 });
    const first = await accepted(h.run(h.members.bob, { name: 'song', options: { prompt: 'keeps the service busy' } }));
    const waitingHandle = h.run(h.members.bob, { name: 'song', options: { prompt: 'waits its turn' } });
    const waitingAck = await privateAnswer(waitingHandle);
    const waiting = jobIdIn(waitingAck);
    const balance = await h.balance();
    const placeholder = waitingHandle.original();
    expect(placeholder?.ephemeral).toBe(false);

    const other = await privateAnswer(h.run(h.members.alice, { name: 'jobs', subcommand: 'cancel', options: { id: waiting } }));
    expect(other.content).toContain('No request of yours');

    const cancel = await privateAnswer(h.run(h.members.bob, { name: 'jobs', subcommand: 'cancel', options: { id: waiting } }));
    expect(cancel.content).toContain('Cancelled your song request: 10 credits back');
    expect(await h.balance()).toBe(balance + 10);
    await expect.poll(() => h.emulator.message(placeholder!.id)).toBeUndefined();

    // The first one was already sent: its acknowledgement offers no Cancel, and an older
    // message's Cancel button says it is too late and changes nothing.
    const [ackMessage] = h.emulator
      .channelMessages(h.channelId, { includeEphemeral: true })
      .filter((message) => message.ephemeral && message.content?.includes(first));
    await expect.poll(() => buttonsOf(h.emulator.message(ackMessage!.id)!)).toEqual([]);
    const response = await fetch(`${h.emulator.apiUrl}/v10/channels/${h.channelId}/messages`, {
      method: 'POST',
      headers: { authorization: `Bot ${h.emulator.botToken}`, 'content-type': 'application/json' },
      body: JSON.stringify({
        content: 'An older acknowledgement',
        components: [{ type: 1, components: [{ type: 2, style: 2, label: 'Cancel (credits back)', custom_id: `cancel:${first}` }] }],
      }),
    });
    const { id: olderId } = (await response.json()) as { id: string };
    const click = h.emulator.clickButton({ messageId: olderId, customId: `cancel:${first}`, userId: h.members.bob });
    expect((await click.waitForFollowUp()).content).toContain('Too late to cancel');
    expect(await h.balance()).toBe(balance + 10);

    const task = h.sim.listTasks().find((candidate) => candidate.body.sound === 'keeps the service busy');
    expect(h.sim.completeTask(task!.taskId)).toBe(true);
    await h.delivered(first);
  });
});
