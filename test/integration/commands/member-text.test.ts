/**
 * What members type, as Discord receives it from the bot: markdown and mentions in a prompt,
 * a title, lyrics, a voice's name, a search or a reason are shown as typed (escaped) in every
 * message and embed, and as plain text in menus and choices; and how songs are named there
 * (the member's title, remixes marked, the song of a video or a download).
 */
import type { APIEmbed, APISelectMenuOption } from 'discord-api-types/v10';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { EmulatorMessage, InteractionHandle } from '@music-bot/discord-emulator';
import { silentMp3, sineWav } from './fixtures.js';
import { jobIdIn, privateAnswer, publicAnswer, startBot, type BotHarness } from './harness.js';

let h: BotHarness;

beforeAll(async () => {
  h = await startBot({ startingCredits: 500 });
}, 60_000);
afterAll(async () => h?.close());
afterEach(() => expect(h.emulator.findings).toEqual([]));

/** A masked link, a spoiler, bold, a mention of a real member and `@everyone`: each with how it must arrive. */
function traps(memberId: string): Array<[typed: string, escaped: string]> {
  return [
    ['[nitro](https://evil.example/)', '\\[nitro](https://evil.example/)'],
    ['||x||', '\\|\\|x\\|\\|'],
    ['**x**', '\\*\\*x\\*\\*'],
    [`<@${memberId}>`, `\\<@${memberId}>`],
    ['@everyone', '\\@everyone'],
  ];
}

const typed = (list: Array<[string, string]>) => list.map(([raw]) => raw).join(' ');
const escaped = (list: Array<[string, string]>) => list.map(([, safe]) => safe).join(' ');

/** Every trap in `text` arrives escaped, and none as typed. */
function expectEscaped(text: string | undefined, list: Array<[string, string]>, where: string): void {
  expect(text, where).toBeDefined();
  for (const [raw, safe] of list) {
    expect(text, `${where}: ${raw}`).toContain(safe);
    expect(text!.replaceAll(safe, ''), `${where}: ${raw} unescaped`).not.toContain(raw);
  }
}

/** Nobody is pinged by what a member typed: Discord (the emulator) found no mention of `memberId` nor of everyone. */
function expectNoPing(message: EmulatorMessage, memberId: string): void {
  expect(message.mention_everyone).toBe(false);
  expect(message.mentions.map((user) => user.id)).not.toContain(memberId);
  expect(message.allowed_mentions?.parse).toEqual([]);
}

function embedOf(message: EmulatorMessage): APIEmbed {
  const embed = message.embeds?.[0];
  if (!embed) throw new Error(`no embed in ${JSON.stringify(message)}`);
  return embed;
}

function menuOptions(message: EmulatorMessage, customId: string): APISelectMenuOption[] {
  for (const row of message.components ?? []) {
    for (const component of 'components' in row ? row.components : []) {
      if ('custom_id' in component && component.custom_id === customId && 'options' in component) return component.options;
    }
  }
  throw new Error(`no menu ${customId}`);
}

async function accepted(handle: InteractionHandle): Promise<string> {
  return jobIdIn(await privateAnswer(handle));
}

describe('a member’s text reaches Discord escaped', () => {
  it('in a song’s result, /library, its menus and /jobs list; the menus show it as typed', async () => {
    const g = h.inNewGuild();
    const list = traps(g.members.bob);
    const song = await accepted(
      g.run(g.members.alice, { name: 'song', options: { prompt: `rainy ${typed(list)}`, title: `T ${typed(list)}`, lyrics: `la ${typed(list)}` } }),
    );
    const result = await g.delivered(song);
    expect(embedOf(result).title).toBe(`T ${escaped(list)}`);
    expectEscaped(embedOf(result).description, list, 'result description');
    // The member's bold does not end the bot's italics around the prompt.
    expect(embedOf(result).description).toContain(`*rainy ${escaped(list)}*\n\n**Lyrics**\nla ${escaped(list)}`);
    expectNoPing(result, g.members.bob);

    const page = await publicAnswer(g.run(g.members.bob, { name: 'library', options: { query: '||x|| **x**' } }));
    const description = embedOf(page).description;
    expect(description).toContain('matching “\\|\\|x\\|\\| \\*\\*x\\*\\*”');
    // The line's title is a link to the song: brackets in it are left out, the rest escaped.
    expectEscaped(description, list.slice(1), 'library line');
    expect(description).not.toContain('[nitro](');
    expect(page.allowed_mentions).toEqual({ parse: [] });
    // Menus are plain text in Discord: the title as typed.
    expect(menuOptions(page, 'library-show:page')[0]?.label).toBe(`1. T ${typed(list)}`);
    expect(menuOptions(page, 'library-remix:page')[0]?.label).toBe(`1. T ${typed(list)}`);

    const jobs = await privateAnswer(g.run(g.members.alice, { name: 'jobs', subcommand: 'list' }));
    expectEscaped(jobs.content, list, '/jobs list');
    expectNoPing(jobs, g.members.bob);
  });

  it('in lyrics, whose title and text the service makes from the prompt', async () => {
    const g = h.inNewGuild();
    const list = traps(g.members.bob);
    const lyrics = await accepted(g.run(g.members.alice, { name: 'lyrics', options: { prompt: typed(list) } }));
    const result = await g.delivered(lyrics);
    // The simulator's title is the prompt's first four words; its lyrics sing its first 60 characters.
    expectEscaped(embedOf(result).title, list.slice(0, 3), 'lyrics title');
    expectEscaped(embedOf(result).description, list.slice(0, 3), 'lyrics');
    expect(embedOf(result).description).toContain('\\[Verse]');
  });

  it('in an upload’s result, under the member’s title rather than the service’s', async () => {
    const g = h.inNewGuild();
    const list = traps(g.members.bob);
    const upload = await accepted(
      g.run(g.members.alice, {
        name: 'upload',
        options: { title: `T ${typed(list)}` },
        attachments: { audio: { filename: 'demo.wav', contentType: 'audio/wav', data: sineWav({ seconds: 3 }) } },
      }),
    );
    const result = await g.delivered(upload);
    expect(embedOf(result).title).toBe(`T ${escaped(list)}`);
    const choices = await g.autocomplete(g.members.alice, { name: 'video', focused: { name: 'song', value: '' } });
    expect(choices.map((choice) => choice.name)).toEqual([expect.stringMatching(/^T \[nitro\]\(https:\/\/evil\.example\/\) \|\|x\|\| /)]);
  });

  it('in a voice’s name: its result, the list, a name already taken and its deletion', async () => {
    const g = h.inNewGuild();
    // 50 characters at most: a shorter link, and a mention of no one.
    const list: Array<[string, string]> = [
      ['[a](https://e.v/)', '\\[a](https://e.v/)'],
      ['||x||', '\\|\\|x\\|\\|'],
      ['**x**', '\\*\\*x\\*\\*'],
      ['<@1>', '\\<@1>'],
      ['@here', '\\@here'],
    ];
    const name = typed(list);
    const create = () =>
      g.run(g.members.alice, {
        name: 'voice',
        subcommand: 'create',
        options: { name },
        attachments: { audio: { filename: 'me.mp3', contentType: 'audio/mpeg', data: silentMp3(12) } },
      });
    const result = await g.delivered(await accepted(create()));
    expect(embedOf(result).title).toBe(`Voice persona “${escaped(list)}” is ready`);
    // In code, markdown shows as typed already: the hint is what to type.
    expect(embedOf(result).description).toBe(`Use it with \`/song prompt:a lullaby voice:${name}\`, or any prompt of yours.`);

    const voices = await privateAnswer(g.run(g.members.bob, { name: 'voice', subcommand: 'list' }));
    expectEscaped(voices.content, list, '/voice list');
    expectEscaped((await privateAnswer(create())).content, list, 'name taken');
    const deleted = await privateAnswer(g.run(g.members.alice, { name: 'voice', subcommand: 'delete', options: { voice: name } }));
    expect(deleted.content).toBe(`Deleted the voice **${escaped(list)}**.`);
  });

  it('in a reason of /credits-admin history', async () => {
    const g = h.inNewGuild();
    const list = traps(g.members.bob);
    await privateAnswer(g.run(g.members.owner, { name: 'credits-admin', subcommand: 'grant', options: { amount: 5, reason: typed(list) } }));
    const history = await privateAnswer(g.run(g.members.owner, { name: 'credits-admin', subcommand: 'history' }));
    expectEscaped(history.content, list, 'history');
    expectNoPing(history, g.members.bob);
  });
});

describe('song names', () => {
  it('marks a remix, which would read as its source, in its result, /library and its menus', async () => {
    const g = h.inNewGuild();
    const source = await accepted(g.run(g.members.alice, { name: 'song', options: { prompt: 'rainy night lofi beat with soft piano' } }));
    const original = await g.delivered(source);
    expect(embedOf(original).title).toBe('Rainy night lofi beat');

    // The form comes filled with the source's prompt, lyrics and title: sent as it is.
    const click = h.emulator.clickButton({ messageId: original.id, customId: `remix:${source}`, userId: g.members.bob });
    await click.waitForResponse();
    const values = Object.fromEntries(
      (click.modal()?.components ?? []).flatMap((row) => ('components' in row ? row.components : [])).map((input) => [
        (input as { custom_id: string }).custom_id,
        (input as { value?: string }).value ?? '',
      ]),
    );
    expect(values['title']).toBe('Rainy night lofi beat');
    const remix = await accepted(h.emulator.submitModal({ interaction: click, fields: values }));
    expect(embedOf(await g.delivered(remix)).title).toBe('Rainy night lofi beat (remix)');

    const page = await publicAnswer(g.run(g.members.alice, { name: 'library' }));
    expect(embedOf(page).description).toMatch(/^\*\*1\.\*\* \[Rainy night lofi beat \(remix\)\]\(http.*\n\*\*2\.\*\* \[Rainy night lofi beat\]\(http/m);
    expect(menuOptions(page, 'library-show:page').map((option) => option.label)).toEqual(['1. Rainy night lofi beat (remix)', '2. Rainy night lofi beat']);

    const german = await publicAnswer(g.run(g.members.alice, { name: 'library', locale: 'de' }));
    expect(menuOptions(german, 'library-show:page')[0]?.label).toBe('1. Rainy night lofi beat (Remix)');
  });

  it('/jobs list names the song of a video and of a download, and the download’s format', async () => {
    const g = h.inNewGuild();
    // A persona song: the service gives it neither a WAV nor a video, so both are made for it.
    await g.delivered(
      await accepted(
        g.run(g.members.alice, {
          name: 'voice',
          subcommand: 'create',
          options: { name: 'Harbor Voice' },
          attachments: { audio: { filename: 'me.mp3', contentType: 'audio/mpeg', data: silentMp3(12) } },
        }),
      ),
    );
    const song = await accepted(g.run(g.members.alice, { name: 'song', options: { prompt: 'harbor at dusk', title: 'Harbor Lights', voice: 'Harbor Voice' } }));
    await g.delivered(song);
    const download = await accepted(g.run(g.members.alice, { name: 'download', options: { song, format: 'wav' } }));
    const video = await accepted(g.run(g.members.alice, { name: 'video', options: { song } }));
    await g.delivered(download);
    await g.delivered(video);

    const lines = ((await privateAnswer(g.run(g.members.alice, { name: 'jobs', subcommand: 'list' }))).content ?? '').split('\n');
    const line = (jobId: string) => lines.find((text) => text.startsWith(`\`${jobId.slice(0, 8)}\``));
    expect(line(download)).toContain(' download WAV · done · for “Harbor Lights” · ');
    expect(line(video)).toContain(' video · done · for “Harbor Lights” · ');
    expect(line(song)).toMatch(/ song\b.* · done · Harbor Lights · /);
  });
});
