/**
 * What a member types in an autocomplete option instead of picking a suggestion (Discord sends
 * the text as it is): a voice's name, a song's title, in any case, and the bot's own hints
 * typed as written. Several of that name ask which, with a menu that goes on with the pick;
 * none is a clear private refusal. Nothing is spent before the member has picked.
 */
import { and, eq } from 'drizzle-orm';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { commandDefinitions } from '../../../commands/index.js';
import { guilds, jobs, voicePersonas } from '../../../src/db/schema.js';
import type { EmulatorMessage, InteractionHandle } from '@music-bot/discord-emulator';
import { silentMp3 } from './fixtures.js';
import { buttonsOf, createdFor, jobIdIn, privateAnswer, startBot, type BotHarness } from './harness.js';

let h: BotHarness;

beforeAll(async () => {
  h = await startBot({ startingCredits: 500 });
});
afterAll(async () => h?.close());
afterEach(() => expect(h.emulator.findings).toEqual([]));

function simBodies(path: string): Array<Record<string, unknown>> {
  return h.sim.requests.filter((request) => request.path === path).map((request) => request.body as Record<string, unknown>);
}

async function accepted(handle: InteractionHandle): Promise<string> {
  const ack = await privateAnswer(handle);
  expect(ack.ephemeral).toBe(true);
  return jobIdIn(ack);
}

async function snapshot(g: BotHarness) {
  return {
    balance: await g.balance(),
    jobs: await g.jobCount(),
    ledger: await g.ledgerCount(),
    serviceCalls: h.sim.requests.filter((request) => request.method === 'POST').length,
  };
}

/** Runs the interaction and returns its private answer, checking that nothing public was left and nothing spent. */
async function askedPrivately(g: BotHarness, start: () => InteractionHandle): Promise<EmulatorMessage> {
  const before = await snapshot(g);
  const { handle, created, stop } = createdFor(h.emulator, start);
  try {
    const answer = await privateAnswer(handle);
    expect(answer.ephemeral).toBe(true);
    expect(created().filter((message) => !message.ephemeral)).toEqual([]);
    expect(await snapshot(g)).toEqual(before);
    return answer;
  } finally {
    stop();
  }
}

/** The options of the select menu on a message, as `value → label`. */
function menuOf(message: EmulatorMessage): { customId: string; options: Record<string, string> } {
  for (const row of message.components ?? []) {
    for (const component of 'components' in row ? row.components : []) {
      if (component.type === 3) {
        return { customId: component.custom_id, options: Object.fromEntries(component.options.map((option) => [option.value, option.label])) };
      }
    }
  }
  throw new Error(`no select menu on ${JSON.stringify(message)}`);
}

/**
 * A command in a code span of a bot's message (`/song prompt:a lullaby voice:Sine Singer`), as
 * the emulator runs it: the text after `name:` up to the next option of the command is its value,
 * as Discord reads what a member types.
 */
function asTyped(text: string): { name: string; options: Record<string, string> } {
  const code = /`\/([^`]+)`/.exec(text)?.[1];
  if (code === undefined) throw new Error(`no command in: ${text}`);
  const [name = '', ...rest] = code.split(' ');
  const definition = commandDefinitions.find((command) => command.name === name);
  const optionNames = new Set((definition?.options ?? []).map((option) => option.name));
  const options: Record<string, string> = {};
  let current: string | undefined;
  for (const word of rest) {
    const colon = word.indexOf(':');
    const option = colon > 0 ? word.slice(0, colon) : undefined;
    if (option !== undefined && optionNames.has(option)) {
      current = option;
      options[option] = word.slice(colon + 1);
    } else if (current !== undefined) {
      options[current] = `${options[current]} ${word}`;
    } else {
      throw new Error(`"${word}" of ${code} is no option of /${name}`);
    }
  }
  return { name, options };
}

async function createVoice(g: BotHarness, name: string, ownerId: string): Promise<{ persona: typeof voicePersonas.$inferSelect; result: EmulatorMessage }> {
  const create = g.run(ownerId, {
    name: 'voice',
    subcommand: 'create',
    options: { name },
    attachments: { audio: { filename: 'me.mp3', contentType: 'audio/mpeg', data: silentMp3(12) } },
  });
  const result = await g.delivered(await accepted(create));
  const [persona] = await h.db.db
    .select()
    .from(voicePersonas)
    .where(and(eq(voicePersonas.guildId, g.guild.id), eq(voicePersonas.name, name)));
  return { persona: persona!, result };
}

async function song(g: BotHarness, title: string, prompt = `a song called ${title}`): Promise<string> {
  const jobId = await accepted(g.run(g.members.alice, { name: 'song', options: { prompt, title } }));
  await g.delivered(jobId);
  return jobId;
}

async function requestOf(jobId: string): Promise<Record<string, unknown>> {
  const [row] = await h.db.db.select().from(jobs).where(eq(jobs.id, jobId));
  return row!.request;
}

describe('a voice typed by its name', () => {
  it('the hint of a new voice, typed as written, sings with that voice; so does its name in another case', async () => {
    const g = h.inNewGuild();
    const { persona, result } = await createVoice(g, 'Sine Singer', g.members.alice);
    const hint = result.embeds?.[0]?.description ?? '';
    expect(hint).toContain('voice:Sine Singer');

    const typed = asTyped(hint);
    const balance = await g.balance();
    const first = await accepted(g.run(g.members.bob, typed));
    await g.delivered(first);
    expect(await requestOf(first)).toMatchObject({ voiceId: persona.id, personaId: persona.personaId });
    expect(simBodies('/api/v1/sonic/create').at(-1)).toMatchObject({ persona_id: persona.personaId });

    const second = await accepted(g.run(g.members.bob, { name: 'song', options: { prompt: 'a lullaby', voice: '  sine SINGER ' } }));
    await g.delivered(second);
    expect(await requestOf(second)).toMatchObject({ voiceId: persona.id, personaId: persona.personaId });
    expect(await g.balance()).toBe(balance - 2 * h.config.personaSongCost);
  });

  it('the hint of a voice with a backtick in its name, typed as written, sings with that voice', async () => {
    const g = h.inNewGuild();
    const { persona, result } = await createVoice(g, 'Back `Tick`', g.members.alice);
    const hint = result.embeds?.[0]?.description ?? '';
    const jobId = await accepted(g.run(g.members.bob, asTyped(hint)));
    expect(await requestOf(jobId)).toMatchObject({ voiceId: persona.id });
  });

  it('asks which voice when two have that name in other cases, spending nothing; the exact name and the menu choose', async () => {
    const g = h.inNewGuild();
    const { persona: upper } = await createVoice(g, 'ALTO', g.members.alice);
    // As two `/voice create` at once may leave them: the names differ only in case.
    const [lower] = await h.db.db
      .insert(voicePersonas)
      .values({ guildId: g.guild.id, ownerId: g.members.bob, name: 'alto', personaId: upper.personaId })
      .returning();

    const asked = await askedPrivately(g, () =>
      g.run(g.members.alice, { name: 'song', options: { prompt: 'a hymn', lyrics: 'Holy, holy', voice: 'Alto' } }),
    );
    expect(asked.content).toContain('More than one voice of this server is called “Alto”. Pick the one you mean:');
    expect(asked.content).toContain(upper.id);
    expect(asked.content).toContain(lower!.id);
    const songMenu = menuOf(asked);
    expect(songMenu.customId).toMatch(/^song-voice-pick:\d+$/);
    expect(songMenu.options).toEqual({ [upper.id]: 'ALTO', [lower!.id]: 'alto' });

    // The pick makes the song asked for, with the prompt and lyrics as typed, and that voice; once.
    const balance = await g.balance();
    const pick = () => h.emulator.selectOption({ messageId: asked.id, customId: songMenu.customId, values: [lower!.id], userId: g.members.alice });
    const sung = await accepted(pick());
    expect(await requestOf(sung)).toMatchObject({ voiceId: lower!.id, prompt: 'a hymn', lyrics: 'Holy, holy' });
    expect(await g.balance()).toBe(balance - h.config.personaSongCost);
    // Done with the service, so that the next check sees no call of its.
    await g.delivered(sung);
    const again = await askedPrivately(g, pick);
    expect(again.content).toBe('This choice no longer works: it was made already, or too long ago. Run `/song` again.');

    // The name exactly as listed is that voice.
    const exact = await accepted(g.run(g.members.alice, { name: 'song', options: { prompt: 'a hymn', voice: 'alto' } }));
    expect(await requestOf(exact)).toMatchObject({ voiceId: lower!.id });
    await g.delivered(exact);

    // /voice delete asks with a menu; the pick deletes that voice and no other.
    const menuAnswer = await askedPrivately(g, () => g.run(g.members.manager, { name: 'voice', subcommand: 'delete', options: { voice: 'Alto' } }));
    const menu = menuOf(menuAnswer);
    expect(menu.customId).toBe('voice-delete-pick:voice');
    expect(Object.keys(menu.options).sort()).toEqual([upper.id, lower!.id].sort());
    const picked = await privateAnswer(
      h.emulator.selectOption({ messageId: menuAnswer.id, customId: menu.customId, values: [upper.id], userId: g.members.manager }),
    );
    expect(picked.content).toContain('Deleted the voice **ALTO**');
    const rows = await h.db.db.select().from(voicePersonas).where(eq(voicePersonas.guildId, g.guild.id));
    expect(rows.find((row) => row.id === upper.id)?.deletedAt).toBeInstanceOf(Date);
    expect(rows.find((row) => row.id === lower!.id)?.deletedAt).toBeNull();
  });

  it('refuses a name no voice has, saying what was not found and how to pick', async () => {
    const g = h.inNewGuild();
    await createVoice(g, 'Tenor Tom', g.members.alice);
    const unknown = await askedPrivately(g, () => g.run(g.members.bob, { name: 'song', options: { prompt: 'x', voice: 'Nobody Here' } }));
    expect(unknown.content).toBe(
      'No voice of this server is called “Nobody Here”. Pick one from the suggestions that appear as you type, or see them all with `/voice list`.',
    );
    // Part of a name: the voices that contain it are offered, not taken.
    const near = await askedPrivately(g, () => g.run(g.members.bob, { name: 'song', options: { prompt: 'x', voice: 'tenor' } }));
    expect(near.content).toContain('Did you mean one of these?');
    expect(near.content).toContain('**Tenor Tom**');
  });
});

describe('a model typed by its name', () => {
  it('/song and /settings default-model take a listed model in any case', async () => {
    const g = h.inNewGuild();
    const jobId = await accepted(g.run(g.members.alice, { name: 'song', options: { prompt: 'a reel', model: ' modelb-2.0 PRO' } }));
    expect(await requestOf(jobId)).toMatchObject({ model: 'ModelB-2.0 Pro' });
    const saved = await privateAnswer(g.run(g.members.manager, { name: 'settings', subcommand: 'default-model', options: { model: 'modelb-2.0' } }));
    expect(saved.content).toContain('ModelB-2.0');
    const [row] = await h.db.db.select().from(guilds).where(eq(guilds.id, g.guild.id));
    expect(row?.defaultModel).toBe('ModelB-2.0');
  });
});

describe('a song typed by its title', () => {
  it('/video and /download take a song’s title in any case', async () => {
    const g = h.inNewGuild();
    // A persona song: the service gives it no video, so one is made (and charged) for it.
    const { persona } = await createVoice(g, 'Mezzo', g.members.alice);
    const songId = await accepted(g.run(g.members.alice, { name: 'song', options: { prompt: 'rows of chairs', title: 'Rows and Rows', voice: persona.id } }));
    await g.delivered(songId);
    const [row] = await h.db.db.select().from(jobs).where(eq(jobs.id, songId));
    const clipId = row!.result!.clips![0]!.clipId;

    const balance = await g.balance();
    const video = await accepted(g.run(g.members.bob, { name: 'video', options: { song: 'rows AND rows ' } }));
    await g.delivered(video);
    expect(simBodies('/api/v1/producer/video-clip').at(-1)?.clip_id).toBe(clipId);
    expect(await requestOf(video)).toMatchObject({ sourceJobId: songId });

    const download = await accepted(g.run(g.members.bob, { name: 'download', options: { song: 'Rows and Rows', format: 'mp3' } }));
    await g.delivered(download);
    expect(await requestOf(download)).toMatchObject({ sourceJobId: songId, format: 'mp3' });
    expect(await g.balance()).toBe(balance - 5 - 2);

    // A song that comes with its video: the typed title finds it, and the answer is its link, free.
    const linked = await song(g, 'Has A Video');
    const [linkedRow] = await h.db.db.select().from(jobs).where(eq(jobs.id, linked));
    const answer = await askedPrivately(g, () => g.run(g.members.bob, { name: 'video', options: { song: 'has a video' } }));
    expect(answer.content).toContain(linkedRow!.result!.clips![0]!.videoUrl!);
  });

  it('asks which song when two have that title, spending nothing; the pick goes on with the command', async () => {
    const g = h.inNewGuild();
    const older = await song(g, 'Twin Song', 'the first twin');
    const newer = await song(g, 'Twin Song', 'the second twin');

    const asked = await askedPrivately(g, () => g.run(g.members.bob, { name: 'download', options: { song: 'twin song', format: 'mp3' } }));
    expect(asked.content).toContain('More than one here is called “twin song”. Pick the one you mean:');
    expect(asked.content).toContain(older);
    expect(asked.content).toContain(newer);
    const menu = menuOf(asked);
    expect(menu.customId).toBe('download-pick:mp3');
    expect(Object.keys(menu.options).sort()).toEqual([older, newer].sort());

    const balance = await g.balance();
    const picked = await accepted(
      h.emulator.selectOption({ messageId: asked.id, customId: menu.customId, values: [older], userId: g.members.bob }),
    );
    await g.delivered(picked);
    expect(await requestOf(picked)).toMatchObject({ sourceJobId: older, format: 'mp3' });
    expect(await g.balance()).toBe(balance - 2);
    // The menu stays on the private answer: a second pick from it, even of the other song, is refused and spends nothing.
    const again = await askedPrivately(g, () =>
      h.emulator.selectOption({ messageId: asked.id, customId: menu.customId, values: [newer], userId: g.members.bob }),
    );
    expect(again.content).toBe('You already chose from this list, and that request is under way. To ask for another, run the command again.');
    expect(await g.balance()).toBe(balance - 2);

    // /video asks the same way.
    const video = await askedPrivately(g, () => g.run(g.members.bob, { name: 'video', options: { song: 'Twin Song' } }));
    expect(menuOf(video).customId).toBe('video-pick:song');
    expect(buttonsOf(video)).toEqual(['video-pick:song']);
  });

  it('refuses a title no song has, saying what was not found and how to pick', async () => {
    const g = h.inNewGuild();
    await song(g, 'Only One');
    const answer = await askedPrivately(g, () => g.run(g.members.bob, { name: 'video', options: { song: 'Nothing Like It' } }));
    expect(answer.content).toBe(
      'No finished song of this server is called “Nothing Like It”. Pick one from the suggestions that appear as you type, or find it with `/library`.',
    );
  });

  it('/jobs show prefers the song titled exactly so, in any case, over songs whose titles contain it', async () => {
    const g = h.inNewGuild();
    // One asked for as "rain": its prompt is the typed text, its title only contains it.
    await song(g, 'Rain Dance', 'rain');
    await song(g, 'After the Rain');
    const exact = await song(g, 'Rain', 'a storm at night');
    await song(g, 'Rainy Days');
    const shown = g.run(g.members.alice, { name: 'jobs', subcommand: 'show', options: { id: 'RAIN' } });
    const message = await shown.waitForEdit((edited) => (edited.embeds?.[0]?.footer?.text ?? '').includes(exact));
    expect(message.embeds?.[0]?.title).toBe('Rain');
  });

  it('/jobs show takes a title too', async () => {
    const g = h.inNewGuild();
    const songId = await song(g, 'Shown By Name');
    const shown = g.run(g.members.alice, { name: 'jobs', subcommand: 'show', options: { id: 'shown by name' } });
    const message = await shown.waitForEdit((edited) => (edited.embeds?.[0]?.footer?.text ?? '').includes(songId));
    expect(message.embeds?.[0]?.title).toBe('Shown By Name');
  });
});
