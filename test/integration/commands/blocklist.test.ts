/**
 * `/moderation blocklist`: moderators list the words no request may use; a member's request
 * that uses one, however disguised, is refused privately before anything is reserved or sent
 * to the service, and the moderators' audit log names the rule, never the member's text.
 */
import { count, eq } from 'drizzle-orm';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { guildBlockedWords, guildMemberBlocks } from '../../../src/db/schema.js';
import { accountsOf, auditsOf, jobIdIn, privateAnswer, startBot, type BotHarness } from './harness.js';

const REFUSED = 'This server does not allow some of these words. Nothing was spent.';

let h: BotHarness;
let g: BotHarness;

beforeAll(async () => {
  h = await startBot({ startingCredits: 100 });
});
afterAll(async () => h?.close());
beforeEach(() => {
  g = h.inNewGuild();
});
afterEach(() => expect(h.emulator.findings).toEqual([]));

const blocklist = (userId: string, subcommand: 'add' | 'remove' | 'list', options: Record<string, string> = {}) =>
  privateAnswer(g.run(userId, { name: 'moderation', subcommandGroup: 'blocklist', subcommand, options }));

const accounts = () => accountsOf(g);

const audits = (action: string) => auditsOf(g, action);

describe('/moderation blocklist', () => {
  it('refuses every disguise of a blocked word privately, reserving nothing and sending nothing upstream', async () => {
    const added = await blocklist(g.members.manager, 'add', { words: 'foo, bar baz, grim*' });
    expect(added.content).toContain('Blocked: `foo`, `bar baz`, `grim*`. The blocklist has 3 now');
    expect(await audits('blocklist_add')).toMatchObject([{ actorId: g.members.manager, details: { entries: ['foo', 'bar baz', 'grim*'] } }]);

    const before = await accounts();
    const disguises = ['a FOO song', 'a fóó song', 'a fοο song (Greek omicrons)', 'an f.o.o song', 'an f o o song', 'a f00 song', 'a song of BAR  baz', 'grimy days'];
    for (const prompt of disguises) {
      const answer = await privateAnswer(g.run(g.members.alice, { name: 'song', options: { prompt } }));
      expect(answer.ephemeral, prompt).toBe(true);
      expect(answer.content, prompt).toBe(REFUSED);
    }
    expect(await accounts()).toEqual(before);

    const refused = await audits('request_refused_blocked_words');
    expect(refused).toHaveLength(disguises.length);
    expect(refused.at(-1)).toMatchObject({ actorId: g.members.alice, details: { kind: 'song', field: 'prompt', rule: 'foo' } });
    // The member's text stays out of the log: the rule and the field say enough.
    expect(JSON.stringify(refused)).not.toContain('song (Greek');
  });

  it('checks the lyrics and the title too, and /lyrics, and leaves words that only contain one alone', async () => {
    await blocklist(g.members.manager, 'add', { words: 'ass' });
    const before = await accounts();
    expect((await privateAnswer(g.run(g.members.alice, { name: 'song', options: { prompt: 'calm', lyrics: 'kick ass tonight' } }))).content).toBe(REFUSED);
    expect((await privateAnswer(g.run(g.members.alice, { name: 'song', options: { prompt: 'calm', title: 'A$$' } }))).content).toBe(REFUSED);
    expect((await privateAnswer(g.run(g.members.alice, { name: 'lyrics', options: { prompt: 'an ass' } }))).content).toBe(REFUSED);
    expect(await accounts()).toEqual(before);
    expect((await audits('request_refused_blocked_words')).map((row) => row.details['field'])).toEqual(['prompt', 'title', 'lyrics']);

    // A listed word inside another is not that word: "class" and "bass" are fine.
    const accepted = await privateAnswer(g.run(g.members.alice, { name: 'lyrics', options: { prompt: 'a classic bass line' } }));
    await g.delivered(jobIdIn(accepted));
  });

  it('takes effect at once in both directions: a removed word is accepted on the next request', async () => {
    await blocklist(g.members.manager, 'add', { words: 'thunder' });
    expect((await privateAnswer(g.run(g.members.alice, { name: 'lyrics', options: { prompt: 'thunder' } }))).content).toBe(REFUSED);

    const removed = await blocklist(g.members.manager, 'remove', { words: 'thunder, never listed' });
    expect(removed.content).toContain('Removed from the blocklist: `thunder`. 0 left.');
    expect(await audits('blocklist_remove')).toMatchObject([{ details: { entries: ['thunder'] } }]);
    await g.delivered(jobIdIn(await privateAnswer(g.run(g.members.alice, { name: 'lyrics', options: { prompt: 'thunder' } }))));
    expect((await blocklist(g.members.manager, 'list')).content).toContain('This server blocks no words.');
  });

  it('lists the entries, says when there is nothing to add or remove, and refuses entries that would block nothing', async () => {
    await blocklist(g.members.manager, 'add', { words: 'zeta\nalpha' });
    expect((await blocklist(g.members.manager, 'list')).content).toBe('Blocked words and phrases (2):\n`alpha`, `zeta`');
    expect((await blocklist(g.members.manager, 'add', { words: 'ALPHA, zeta' })).content).toContain('Blocked: `ALPHA`');
    expect((await blocklist(g.members.manager, 'add', { words: 'zeta' })).content).toBe('Those are all on the blocklist already.');
    expect((await blocklist(g.members.manager, 'remove', { words: 'omega' })).content).toContain('None of those is on the blocklist.');
    expect((await blocklist(g.members.manager, 'add', { words: ' , , ' })).content).toBe('Type the words or phrases to block, separated by commas.');
    expect((await blocklist(g.members.manager, 'add', { words: 'ok, ***' })).content).toBe('“***” has no letters or digits, so it would block nothing.');
    expect((await blocklist(g.members.manager, 'add', { words: 'x'.repeat(101) })).content).toBe('Each word or phrase can be at most 100 characters.');
    const [stored] = await g.db.db.select({ n: count() }).from(guildBlockedWords).where(eq(guildBlockedWords.guildId, g.guild.id));
    expect(stored?.n).toBe(3);
  });

  it('is refused to a member without Manage Server or the moderator role, though Discord let the command through', async () => {
    expect((await blocklist(g.members.alice, 'add', { words: 'anything' })).content).toContain('Only moderators can do that');
    expect((await blocklist(g.members.alice, 'list')).content).toContain('Only moderators can do that');
    const [stored] = await g.db.db.select({ n: count() }).from(guildBlockedWords).where(eq(guildBlockedWords.guildId, g.guild.id));
    expect(stored?.n).toBe(0);
  });
});

describe('/moderation block', () => {
  const moderation = (userId: string, subcommand: 'block' | 'unblock' | 'blocks', options: Record<string, string | number> = {}) =>
    privateAnswer(g.run(userId, { name: 'moderation', subcommand, options }));

  it('refuses a blocked member’s requests privately at no cost, until unblocked, and lists the block with who and why', async () => {
    const blocked = await moderation(g.members.manager, 'block', { member: g.members.alice, reason: 'spamming the channel' });
    expect(blocked.content).toContain(`<@${g.members.alice}> can’t use the bot here until a moderator unblocks them`);
    expect(await audits('member_blocked')).toMatchObject([{ actorId: g.members.manager, details: { userId: g.members.alice, until: null, reason: 'spamming the channel' } }]);

    const before = await accounts();
    for (const input of [{ name: 'song', options: { prompt: 'let me in' } }, { name: 'lyrics', options: { prompt: 'let me in' } }]) {
      const answer = await privateAnswer(g.run(g.members.alice, input));
      expect(answer.ephemeral).toBe(true);
      expect(answer.content).toBe('This server’s moderators have blocked you from using the bot. Nothing was spent.');
    }
    expect(await accounts()).toEqual(before);
    // Another member is not held by alice's block.
    await g.delivered(jobIdIn(await privateAnswer(g.run(g.members.bob, { name: 'lyrics', options: { prompt: 'not blocked' } }))));

    expect((await moderation(g.members.manager, 'blocks')).content).toBe(
      `Blocked members (1):\n- <@${g.members.alice}>: until unblocked, by <@${g.members.manager}>: spamming the channel`,
    );
    // The ways in that skip the guild's read: the voice player and autocomplete.
    const modelChoices = (userId: string) => g.autocomplete(userId, { name: 'song', focused: { name: 'model', value: '' } });
    expect(await modelChoices(g.members.bob)).not.toEqual([]);
    expect(await modelChoices(g.members.alice)).toEqual([]);
    for (const name of ['queue', 'skip']) {
      expect((await privateAnswer(g.run(g.members.alice, { name }))).content, name).toBe('This server’s moderators have blocked you from using the bot. Nothing was spent.');
    }
    expect((await moderation(g.members.manager, 'unblock', { member: g.members.alice })).content).toBe(`<@${g.members.alice}> can use the bot again.`);
    expect(await audits('member_unblocked')).toMatchObject([{ actorId: g.members.manager, details: { userId: g.members.alice } }]);
    await g.delivered(jobIdIn(await privateAnswer(g.run(g.members.alice, { name: 'lyrics', options: { prompt: 'back again' } }))));
    expect(await modelChoices(g.members.alice)).not.toEqual([]);
    expect((await moderation(g.members.manager, 'blocks')).content).toBe('Nobody is blocked here.');
    expect((await moderation(g.members.manager, 'unblock', { member: g.members.alice })).content).toBe(`<@${g.members.alice}> isn’t blocked.`);
  });

  it('ends a block of some days by itself, says until when, and refuses a moderator blocking themselves', async () => {
    const answer = await moderation(g.members.manager, 'block', { member: g.members.alice, days: 2 });
    const at = Number(/<t:(\d+):f>/.exec(answer.content ?? '')?.[1]);
    expect(at * 1000 - Date.now()).toBeGreaterThan(2 * 86_400_000 - 60_000);
    const refused = await privateAnswer(g.run(g.members.alice, { name: 'lyrics', options: { prompt: 'still here' } }));
    expect(refused.content).toBe(`This server’s moderators have blocked you from using the bot until <t:${at}:f>. Nothing was spent.`);

    // The block's end, reached: written as it would stand two days on.
    await g.db.db.update(guildMemberBlocks).set({ until: new Date(Date.now() - 1_000) }).where(eq(guildMemberBlocks.guildId, g.guild.id));
    await g.delivered(jobIdIn(await privateAnswer(g.run(g.members.alice, { name: 'lyrics', options: { prompt: 'the block is over' } }))));
    expect((await moderation(g.members.manager, 'blocks')).content).toBe('Nobody is blocked here.');

    expect((await moderation(g.members.manager, 'block', { member: g.members.manager })).content).toBe('You can’t block yourself.');
    expect((await moderation(g.members.alice, 'block', { member: g.members.bob })).content).toContain('Only moderators can do that');
    expect(await audits('member_blocked')).toHaveLength(1);
  });
});
