/**
 * `/library` and Remix through the emulator and the real discord.js client: 23 songs made by
 * the pipeline, paged ten at a time, searched, filtered by member, shown again from the menu,
 * and remixed at the price of `/song`, linked to their source.
 */
import { InteractionResponseType, type APIEmbed } from 'discord-api-types/v10';
import { eq } from 'drizzle-orm';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { creditLedger, jobs } from '../../../src/db/schema.js';
import type { EmulatorMessage, InteractionHandle } from '@music-bot/discord-emulator';
import { buttonsOf, jobIdIn, privateAnswer, publicAnswer, startBot, type BotHarness } from './harness.js';

let h: BotHarness;
/** The guild with the 23 songs; the remix tests have guilds of their own. */
let lib: BotHarness;
/** Job ids of "Track 01" … "Track 23" (index 0 is song 1), oldest first. */
const songIds: string[] = [];

const pad = (n: number) => String(n).padStart(2, '0');
const titleOf = (n: number) => (n === 5 ? 'Harbor Lights' : `Track ${pad(n)}`);

beforeAll(async () => {
  h = await startBot({ startingCredits: 500 });
  lib = h.inNewGuild();
  // One after another, so that their order is the order they were asked in.
  for (let n = 1; n <= 23; n += 1) {
    const ack = await privateAnswer(
      lib.run(n % 2 === 1 ? lib.members.alice : lib.members.bob, {
        name: 'song',
        options: {
          title: titleOf(n),
          prompt: n === 9 ? 'a waltz on the accordion' : `steady groove number ${n}`,
          ...(n === 14 && { lyrics: 'the lighthouse keeper sleeps tonight' }),
        },
      }),
    );
    songIds.push(jobIdIn(ack));
  }
  for (const id of songIds) await lib.delivered(id, 60_000);
}, 120_000);
afterAll(async () => h?.close());
afterEach(() => expect(h.emulator.findings).toEqual([]));

function library(g: BotHarness, userId: string, options: Record<string, string> = {}): InteractionHandle {
  return g.run(userId, { name: 'library', options });
}

function embedOf(message: EmulatorMessage): APIEmbed {
  const embed = message.embeds?.[0];
  if (!embed) throw new Error(`no embed in ${JSON.stringify(message)}`);
  return embed;
}

/** The titles a library page lists, top to bottom. */
function titlesOn(message: EmulatorMessage): string[] {
  return [...(embedOf(message).description ?? '').matchAll(/^\*\*\d+\.\*\* \[([^\]]+)\]\(https?:/gm)].map((match) => match[1]!);
}

function button(message: EmulatorMessage, label: string): { custom_id: string; disabled: boolean } {
  for (const row of message.components ?? []) {
    for (const component of 'components' in row ? row.components : []) {
      if ('label' in component && component.label === label && 'custom_id' in component) {
        return { custom_id: component.custom_id, disabled: component.disabled === true };
      }
    }
  }
  throw new Error(`no ${label} button`);
}

/** Clicks Older or Newer and returns the page it turned to. */
async function turn(g: BotHarness, page: EmulatorMessage, label: 'Older' | 'Newer', userId: string): Promise<EmulatorMessage> {
  const click = h.emulator.clickButton({ messageId: page.id, customId: button(page, label).custom_id, userId });
  return click.waitForEdit();
}

const tracks = (...numbers: number[]) => numbers.map(titleOf);
const range = (from: number, to: number) => Array.from({ length: from - to + 1 }, (_, i) => from - i);

describe('/library', () => {
  it('lists the songs newest first, ten a page, and pages Older and Newer', async () => {
    const first = await publicAnswer(library(lib, lib.members.manager));
    expect(first.ephemeral).toBe(false);
    expect(titlesOn(first)).toEqual(tracks(...range(23, 14)));
    expect(embedOf(first).footer?.text).toBe('Songs 1–10 of 23');
    expect(embedOf(first).description).toContain(`<@${lib.members.bob}>`);
    expect(first.allowed_mentions).toEqual({ parse: [] });
    expect(button(first, 'Newer').disabled).toBe(true);
    expect(button(first, 'Older').disabled).toBe(false);

    // Anyone in the channel may turn the page.
    const second = await turn(lib, first, 'Older', lib.members.alice);
    expect(titlesOn(second)).toEqual(tracks(...range(13, 4)));
    expect(embedOf(second).footer?.text).toBe('Songs 11–20 of 23');
    expect([button(second, 'Newer').disabled, button(second, 'Older').disabled]).toEqual([false, false]);

    const third = await turn(lib, second, 'Older', lib.members.alice);
    expect(titlesOn(third)).toEqual(tracks(3, 2, 1));
    expect(embedOf(third).footer?.text).toBe('Songs 21–23 of 23');
    expect([button(third, 'Newer').disabled, button(third, 'Older').disabled]).toEqual([false, true]);

    const back = await turn(lib, third, 'Newer', lib.members.bob);
    expect(titlesOn(back)).toEqual(tracks(...range(13, 4)));
    expect(embedOf(back).footer?.text).toBe('Songs 11–20 of 23');
  });

  it('finds a search in the title, the prompt or the lyrics, and says so kindly when nothing matches', async () => {
    const search = async (query: string) => publicAnswer(library(lib, lib.members.alice, { query }));
    expect(titlesOn(await search('harbor'))).toEqual(['Harbor Lights']);
    expect(titlesOn(await search('ACCORDION'))).toEqual(['Track 09']);
    expect(titlesOn(await search('lighthouse'))).toEqual(['Track 14']);
    expect(titlesOn(await search('light'))).toEqual(['Track 14', 'Harbor Lights']);
    const page = await search('groove number 2');
    expect(titlesOn(page)).toEqual(tracks(23, 22, 21, 20, 12, 2));
    expect(embedOf(page).description).toContain('matching “groove number 2”');

    const none = await search('bagpipes');
    expect(embedOf(none).description).toBe('No song matches “bagpipes”. Try fewer words, or other ones.');
    expect(none.components ?? []).toEqual([]);
  });

  it('keeps the search and the member filter while paging', async () => {
    const bobs = await publicAnswer(library(lib, lib.members.alice, { user: lib.members.bob }));
    expect(titlesOn(bobs)).toEqual(tracks(22, 20, 18, 16, 14, 12, 10, 8, 6, 4));
    expect(embedOf(bobs).footer?.text).toBe('Songs 1–10 of 11');
    expect(embedOf(bobs).description).toContain(`Songs by <@${lib.members.bob}>`);
    expect(titlesOn(await turn(lib, bobs, 'Older', lib.members.alice))).toEqual(tracks(2));

    const grooves = await publicAnswer(library(lib, lib.members.alice, { user: lib.members.alice, query: 'groove' }));
    expect(titlesOn(grooves)).toEqual(tracks(23, 21, 19, 17, 15, 13, 11, 7, 5, 3));
    // A search is not counted while there is more of it: the footer says where the rest is.
    expect(embedOf(grooves).footer?.text).toBe('Songs 1–10, more under “Older”');
    const lastGrooves = await turn(lib, grooves, 'Older', lib.members.alice);
    expect(titlesOn(lastGrooves)).toEqual(tracks(1));
    expect(embedOf(lastGrooves).footer?.text).toBe('Songs 11–11 of 11');

    expect(embedOf(await publicAnswer(library(lib, lib.members.alice, { user: lib.members.bob, query: 'harbor' }))).description).toContain(
      'No song matches',
    );
  });

  it('counts a large library up to 1,000, in the member’s language, and still pages it', async () => {
    const g = h.inNewGuild();
    await publicAnswer(library(g, g.members.alice));
    await h.db.pool.query(
      `insert into jobs (guild_id, channel_id, user_id, kind, state, request, result, cost, delivery_state, created_at)
       select $1, $2, $3, 'song', 'succeeded', jsonb_build_object('kind', 'song', 'title', 'Bulk ' || n, 'prompt', 'bulk'),
              jsonb_build_object('clips', jsonb_build_array(jsonb_build_object('title', 'Bulk ' || n, 'audioUrl', 'https://cdn.example/' || n || '.mp3'))),
              10, 'delivered', timestamptz '2026-01-01' + n * interval '1 minute'
       from generate_series(1, 1005) as n`,
      [g.guild.id, g.channelId, g.members.bob],
    );
    const first = await publicAnswer(library(g, g.members.alice));
    expect(titlesOn(first)).toEqual(['Bulk 1005', 'Bulk 1004', 'Bulk 1003', 'Bulk 1002', 'Bulk 1001', 'Bulk 1000', 'Bulk 999', 'Bulk 998', 'Bulk 997', 'Bulk 996']);
    expect(embedOf(first).footer?.text).toBe('Songs 1–10 of 1,000+');
    const second = await turn(g, first, 'Older', g.members.alice);
    expect(embedOf(second).footer?.text).toBe('Songs 11–20 of 1,000+');
    const german = await publicAnswer(g.run(g.members.alice, { name: 'library', locale: 'de' }));
    expect(embedOf(german).footer?.text).toBe('Songs 1–10 von 1.000+');
  });

  it('shows a song again from the menu, with its buttons, as /jobs show does', async () => {
    const page = await publicAnswer(library(lib, lib.members.bob));
    const song = songIds[19]!;
    const pick = h.emulator.selectOption({ messageId: page.id, customId: 'library-show:page', values: [song], userId: lib.members.bob });
    const shown = await pick.waitForEdit((message) => (message.embeds?.[0]?.footer?.text ?? '').includes(song));
    expect(shown.ephemeral).toBe(false);
    expect(embedOf(shown).title).toBe('Track 20');
    expect(buttonsOf(shown)).toEqual([`play:${song}`, `like:${song}`, `download:${song}:mp3`, `remix:${song}`, `reroll:${song}`, `report:${song}`, `delete-result:${song}`]);
  });

  it('is the member’s alone in a private server, and says when there is nothing yet', async () => {
    const g = h.inNewGuild();
    await privateAnswer(g.run(g.members.manager, { name: 'settings', subcommand: 'visibility', options: { mode: 'private' } }));
    const empty = await privateAnswer(library(g, g.members.alice));
    expect(empty.ephemeral).toBe(true);
    expect(embedOf(empty).description).toBe('No songs here yet. `/song` makes the first one.');

    const song = jobIdIn(await privateAnswer(g.run(g.members.alice, { name: 'song', options: { prompt: 'quiet', title: 'Hush' } })));
    await g.delivered(song);
    const page = await privateAnswer(library(g, g.members.bob));
    expect(page.ephemeral).toBe(true);
    expect(titlesOn(page)).toEqual(['Hush']);
    const shown = await privateAnswer(h.emulator.selectOption({ messageId: page.id, customId: 'library-show:page', values: [song], userId: g.members.bob }));
    expect(shown.ephemeral).toBe(true);
    expect(embedOf(shown).title).toBe('Hush');
    expect(buttonsOf(shown)).toContain(`remix:${song}`);
  });
});

describe('Remix', () => {
  /** A guild with one song of alice's, delivered. */
  async function guildWithSong(): Promise<{ g: BotHarness; source: string; message: EmulatorMessage }> {
    const g = h.inNewGuild();
    const ack = await privateAnswer(
      g.run(g.members.alice, { name: 'song', options: { prompt: 'sea shanty', title: 'Salt Wind', lyrics: 'heave ho the salt wind blows', model: 'ModelB-2.0' } }),
    );
    const source = jobIdIn(ack);
    return { g, source, message: await g.delivered(source) };
  }

  async function ledgerOf(g: BotHarness, jobId: string) {
    const rows = await g.db.db.select().from(creditLedger).where(eq(creditLedger.jobId, jobId));
    return rows.map((row) => ({ kind: row.kind, amount: row.amount })).sort((a, b) => a.kind.localeCompare(b.kind));
  }

  it('opens the song form filled with the song, and makes a remix at the price of /song, linked to its source', async () => {
    const { g, source, message } = await guildWithSong();
    // Another member remixes alice's song: it spends like their own /song.
    const click = h.emulator.clickButton({ messageId: message.id, customId: `remix:${source}`, userId: g.members.bob });
    expect((await click.waitForResponse()).type).toBe(InteractionResponseType.Modal);
    const modal = click.modal();
    expect(modal?.custom_id).toBe(`remix-modal:${source}`);
    const filled = JSON.stringify(modal);
    for (const value of ['sea shanty', 'Salt Wind', 'heave ho the salt wind blows']) expect(filled).toContain(`"value":"${value}"`);

    const before = await g.balance();
    const remix = jobIdIn(
      await privateAnswer(
        h.emulator.submitModal({
          interaction: click,
          fields: { lyrics: 'heave ho the salt wind blows\nand the gulls cry low', style: 'sea shanty, slow and low', title: 'Salt Wind (low tide)' },
        }),
      ),
    );
    const result = await g.delivered(remix);
    const fields = Object.fromEntries((embedOf(result).fields ?? []).map((field) => [field.name, field.value]));
    expect(fields['Remix of']).toBe(`Salt Wind (\`${source.slice(0, 8)}\`)`);
    expect(embedOf(result).title).toBe('Salt Wind (low tide) (remix)');
    expect(buttonsOf(result)).toContain(`remix:${remix}`);

    const [row] = await g.db.db.select().from(jobs).where(eq(jobs.id, remix));
    expect(row).toMatchObject({ remixOf: source, userId: g.members.bob, kind: 'song', cost: 10 });
    // The source's model is kept; the edited texts are what the service was asked for.
    expect(h.sim.requests.filter((r) => r.path === '/api/v1/producer/create').at(-1)?.body).toMatchObject({
      title: 'Salt Wind (low tide)',
      sound: 'sea shanty, slow and low',
      mv: 'ModelB-2.0',
    });
    // Exactly what the /song cost: the same balance change and the same ledger movements.
    expect(await g.balance()).toBe(before - 10);
    expect(await ledgerOf(g, remix)).toEqual(await ledgerOf(g, source));
  });

  it('opens the form from the library’s menu', async () => {
    const { g, source } = await guildWithSong();
    const page = await publicAnswer(library(g, g.members.bob));
    const pick = h.emulator.selectOption({ messageId: page.id, customId: 'library-remix:page', values: [source], userId: g.members.bob });
    expect((await pick.waitForResponse()).type).toBe(InteractionResponseType.Modal);
    expect(pick.modal()?.custom_id).toBe(`remix-modal:${source}`);
    expect(JSON.stringify(pick.modal())).toContain('"value":"Salt Wind"');
  });

  it('refuses a song of another server, and a song that no longer exists, charging nothing', async () => {
    const { g, source, message } = await guildWithSong();
    const elsewhere = h.inNewGuild();
    const before = await elsewhere.balance();
    const foreign = h.emulator.submitModal({
      guildId: elsewhere.guild.id,
      channelId: elsewhere.channelId,
      userId: elsewhere.members.alice,
      customId: `remix-modal:${source}`,
      fields: { lyrics: 'stolen words', style: 'pop', title: 'Not mine' },
    });
    const refusal = await privateAnswer(foreign);
    expect(refusal.ephemeral).toBe(true);
    expect(refusal.content).toBe('That song belongs to another server: it can only be remixed there.');
    expect(await elsewhere.jobCount()).toBe(0);
    expect(await elsewhere.balance()).toBe(before);

    await g.db.db.delete(jobs).where(eq(jobs.id, source));
    const balance = await g.balance();
    const click = h.emulator.clickButton({ messageId: message.id, customId: `remix:${source}`, userId: g.members.alice });
    const gone = await privateAnswer(click);
    expect(gone.content).toBe('That song is no longer in this server’s library, so it can’t be remixed. `/song` makes a new one.');
    expect(click.modal()).toBeUndefined();
    expect(await g.balance()).toBe(balance);
  });
});

describe('/library liked:true', () => {
  it('lists the songs the member likes, pages them, and drops one taken back', async () => {
    // Alice likes twelve songs, her own and Bob's; the list is hers alone.
    const liked = [1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 14];
    for (const n of liked) {
      const message = await lib.delivered(songIds[n - 1]!);
      await privateAnswer(h.emulator.clickButton({ messageId: message.id, customId: `like:${songIds[n - 1]}`, userId: lib.members.alice }));
    }
    const first = await publicAnswer(lib.run(lib.members.alice, { name: 'library', options: { liked: true } }));
    expect(embedOf(first).description).toContain(`Songs <@${lib.members.alice}> likes`);
    expect(titlesOn(first)).toEqual(tracks(14, 11, 10, 9, 8, 7, 6, 5, 4, 3));
    expect(embedOf(first).footer?.text).toBe('Songs 1–10 of 12');
    // Bob pages Alice's list: still hers.
    const older = await turn(lib, first, 'Older', lib.members.bob);
    expect(titlesOn(older)).toEqual(tracks(2, 1));

    const fourteen = await lib.delivered(songIds[13]!);
    await privateAnswer(h.emulator.clickButton({ messageId: fourteen.id, customId: `like:${songIds[13]}`, userId: lib.members.alice }));
    const after = await publicAnswer(lib.run(lib.members.alice, { name: 'library', options: { liked: true } }));
    expect(titlesOn(after)[0]).toBe(titleOf(11));

    const none = await publicAnswer(lib.run(lib.members.manager, { name: 'library', options: { liked: true } }));
    expect(embedOf(none).description).toBe(`<@${lib.members.manager}> likes no song of this server yet: press Like on one to keep it here.`);
    const both = await privateAnswer(lib.run(lib.members.alice, { name: 'library', options: { liked: true, user: lib.members.bob } }));
    expect(both.content).toBe('Choose either `user` or `liked`: the songs one member made, or the songs you like.');
  });
});
