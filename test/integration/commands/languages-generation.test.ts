/**
 * The generation commands in the member's language, through the emulator and the real
 * discord.js client: `/library` for a German member, the "Make a song" and Remix forms for a
 * Spanish one, `/jobs list`, autocomplete and a refusal for a Brazilian one. The English texts
 * are asserted by the other tests of this folder (the emulator's default locale is `en-US`).
 */
import { InteractionResponseType, type APIEmbed } from 'discord-api-types/v10';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { EmulatorMessage } from '@music-bot/discord-emulator';
import { jobIdIn, privateAnswer, publicAnswer, startBot, type BotHarness } from './harness.js';

let h: BotHarness;
/** One guild with one finished song ("Harbor Lights", by alice) and one finished lyrics job. */
let g: BotHarness;
let songId: string;
let lyricsId: string;

beforeAll(async () => {
  h = await startBot({ startingCredits: 300 });
  g = h.inNewGuild();
  songId = jobIdIn(await privateAnswer(g.run(g.members.alice, { name: 'song', options: { prompt: 'a slow harbour waltz', title: 'Harbor Lights' } })));
  lyricsId = jobIdIn(await privateAnswer(g.run(g.members.alice, { name: 'lyrics', options: { prompt: 'gulls at dawn' } })));
  await g.delivered(songId);
  await g.delivered(lyricsId);
}, 60_000);
afterAll(async () => h?.close());
afterEach(() => expect(h.emulator.findings).toEqual([]));

function embedOf(message: EmulatorMessage): APIEmbed {
  const embed = message.embeds?.[0];
  if (!embed) throw new Error(`no embed in ${JSON.stringify(message)}`);
  return embed;
}

/** Every component of a message (or a modal), rows flattened. */
function componentsOf(holder: { components?: unknown }): Array<Record<string, unknown>> {
  const out: Array<Record<string, unknown>> = [];
  const visit = (node: unknown) => {
    if (Array.isArray(node)) node.forEach(visit);
    else if (node && typeof node === 'object') {
      const record = node as Record<string, unknown>;
      if ('type' in record && record.type !== 1) out.push(record);
      if ('components' in record) visit(record.components);
      if ('component' in record) visit(record.component);
    }
  };
  visit(holder.components);
  return out;
}

/** The labels of a modal's text inputs, top to bottom (in a row or in Discord's newer label component). */
function fieldLabels(modal: { components?: unknown }): string[] {
  const labels: string[] = [];
  const visit = (node: unknown, label?: string) => {
    if (Array.isArray(node)) for (const child of node) visit(child, label);
    else if (node && typeof node === 'object') {
      const record = node as Record<string, unknown>;
      const own = typeof record.label === 'string' ? record.label : label;
      if (record.type === 4) labels.push(String(own));
      if ('components' in record) visit(record.components, own);
      if ('component' in record) visit(record.component, own);
    }
  };
  visit(modal.components);
  return labels;
}

describe('/library in German', () => {
  it('shows German headings, menus and paging buttons', async () => {
    const page = await publicAnswer(g.run(g.members.bob, { name: 'library', locale: 'de' }));
    const embed = embedOf(page);
    expect(embed.title).toBe('Die Bibliothek dieses Servers');
    expect(embed.footer?.text).toBe('Songs 1–1 von 1');
    expect(embed.description).toContain('Harbor Lights');
    const components = componentsOf(page);
    expect(components.filter((component) => component.type === 3).map((component) => component.placeholder)).toEqual([
      'Einen Song erneut zeigen, mit seinen Buttons…',
      'Einen Song in deinem Sprachkanal abspielen…',
      'Einen Song remixen…',
    ]);
    expect(components.filter((component) => component.type === 2).map((component) => component.label)).toEqual(['Neuere', 'Ältere']);
  });

  it('says so in German when a search finds nothing', async () => {
    const page = await publicAnswer(g.run(g.members.bob, { name: 'library', options: { query: 'Polka' }, locale: 'de' }));
    expect(embedOf(page).description).toBe('Kein Song passt zu „Polka“. Versuch es mit weniger oder anderen Wörtern.');
  });
});

describe('the song forms for a Spanish member', () => {
  it('opens the Remix form from /library with Spanish labels', async () => {
    const page = await publicAnswer(g.run(g.members.bob, { name: 'library', locale: 'es-ES' }));
    expect(embedOf(page).title).toBe('La biblioteca de este servidor');
    const pick = h.emulator.selectOption({
      messageId: page.id,
      customId: 'library-remix:page',
      userId: g.members.bob,
      values: [songId],
      locale: 'es-ES',
    });
    expect((await pick.waitForResponse()).type).toBe(InteractionResponseType.Modal);
    const modal = pick.modal()!;
    expect(modal.title).toBe('Remezcla: Harbor Lights');
    expect(fieldLabels(modal)).toEqual(['Letra', 'Estilo', 'Título']);
  });

  it('opens the "Make a song" form from lyrics with Spanish labels, and refuses another member in Spanish', async () => {
    const result = await g.delivered(lyricsId);
    const bob = h.emulator.clickButton({ messageId: result.id, customId: `make-song:${lyricsId}`, userId: g.members.bob, locale: 'es-419' });
    expect((await privateAnswer(bob)).content).toBe('Solo quien pidió esta letra, o un moderador, puede hacer una canción con ella.');

    const click = h.emulator.clickButton({ messageId: result.id, customId: `make-song:${lyricsId}`, userId: g.members.alice, locale: 'es-ES' });
    expect((await click.waitForResponse()).type).toBe(InteractionResponseType.Modal);
    const modal = click.modal()!;
    expect(modal.title).toBe('Crear canción');
    expect(fieldLabels(modal)).toEqual(['Letra', 'Estilo', 'Título']);
    expect(JSON.stringify(modal)).toContain('p. ej. synth-pop alegre con voz femenina');
  });
});

describe('/jobs and the song pickers for a Brazilian member', () => {
  it('lists the member’s requests in Portuguese', async () => {
    const answer = await privateAnswer(g.run(g.members.alice, { name: 'jobs', subcommand: 'list', locale: 'pt-BR' }));
    const [heading, ...lines] = (answer.content ?? '').split('\n');
    expect(heading).toBe('**Seus pedidos recentes**');
    expect(lines).toHaveLength(2);
    expect(lines.find((line) => line.startsWith(`\`${songId.slice(0, 8)}\``))).toContain(' música · pronto · Harbor Lights · ');
    expect(lines.find((line) => line.startsWith(`\`${lyricsId.slice(0, 8)}\``))).toContain(' letra · pronto · ');
  });

  it('says so in Portuguese when there is nothing to list', async () => {
    const answer = await privateAnswer(g.run(g.members.bob, { name: 'jobs', subcommand: 'list', locale: 'pt-BR' }));
    expect(answer.content).toBe('Você ainda não tem pedidos neste servidor.');
  });

  it('describes the songs /video offers in Portuguese', async () => {
    const choices = await g.autocomplete(g.members.bob, {
      name: 'video',
      focused: { name: 'song', value: '' },
      locale: 'pt-BR',
    });
    expect(choices).toEqual([{ name: `Harbor Lights · música · pronto · ${songId.slice(0, 8)}`, value: songId }]);
  });

  it('refuses a job id that is not a finished song in Portuguese', async () => {
    const answer = await privateAnswer(g.run(g.members.bob, { name: 'video', options: { song: lyricsId }, locale: 'pt-BR' }));
    expect(answer.content).toBe('Essa não é uma música pronta deste servidor. Escolha uma da lista.');
  });
});
