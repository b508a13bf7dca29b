/**
 * A server's own Discord AutoMod keyword rules, with `/settings safety use-automod`: read from
 * the emulated Discord with the bot's Manage Server, a prompt a rule matches refused privately
 * before anything is reserved, the moderators' log naming the rule; refreshed on the rule
 * events in every process (the guild's version) and after a while without one; and when the bot
 * lacks the permission, requests go on and `/settings show` says why the rules are not in use.
 */
import { and, desc, eq } from 'drizzle-orm';
import { ChannelType, PermissionFlagsBits } from 'discord-api-types/v10';
import { pino } from 'pino';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it, onTestFinished, vi } from 'vitest';
import { auditLog, guilds } from '../../../src/db/schema.js';
import { createAutomodApi } from '../../../src/discord-rest/automod-api.js';
import { AUTOMOD_RULES_TTL_MS, bumpAutomodVersion, createAutomodRules } from '../../../src/guilds/automod.js';
import { tcpProxy } from '@music-bot/test-world';
import { loadGuild } from '../../../src/guilds/settings.js';
import { accountsOf, jobIdIn, privateAnswer, startBot, type BotHarness } from './harness.js';

const REFUSED = 'This server’s AutoMod rules do not allow some of these words. Nothing was spent.';

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

/** A moderator's keyword rule, as made in the server's settings. */
const keywordRule = (name: string, metadata: Record<string, unknown>, extra: Record<string, unknown> = {}) =>
  g.emulator.createAutoModerationRule(g.guild.id, { name, event_type: 1, trigger_type: 1, trigger_metadata: metadata, actions: [{ type: 1 }], enabled: true, ...extra }, { by: g.members.manager });

/** The bot's role gains Manage Server, as a server's admin would grant it. */
function grantManageServer(): void {
  const botId = g.emulator.botUser.id;
  g.emulator.setRolePermissions(g.guild.id, g.guild.botRoleId, g.emulator.memberPermissions(g.channelId, botId) | PermissionFlagsBits.ManageGuild);
}

const settings = (options: Record<string, boolean> = {}) =>
  privateAnswer(g.run(g.members.manager, { name: 'settings', subcommand: Object.keys(options).length === 0 ? 'show' : 'safety', options }));

const song = (prompt: string, extra: Record<string, string> = {}, userId = g.members.alice, channelId?: string) =>
  privateAnswer(g.run(userId, { name: 'song', options: { prompt, ...extra }, ...(channelId && { channelId }) }));

const accounts = () => accountsOf(g);

const refusals = () =>
  g.db.db
    .select()
    .from(auditLog)
    .where(and(eq(auditLog.guildId, g.guild.id), eq(auditLog.action, 'request_refused_automod')))
    .orderBy(desc(auditLog.id));

const automodVersion = async () => (await g.db.db.select({ v: guilds.automodVersion }).from(guilds).where(eq(guilds.id, g.guild.id)))[0]?.v;

/** Reads of the guild's rules the bot made at the emulated Discord. */
const ruleReads = () => g.emulator.requests.filter((request) => request.method === 'GET' && request.path === `/guilds/${g.guild.id}/auto-moderation/rules`);

describe('AutoMod keyword rules', () => {
  it('refuse a prompt, lyrics or title a rule matches, privately and at no cost, and log the rule for moderators', async () => {
    grantManageServer();
    const rule = keywordRule('No cats', { keyword_filter: ['cat*'], allow_list: ['catalogue'] });
    await settings({ 'use-automod': true });

    const before = await accounts();
    for (const [options, field] of [
      [{ prompt: 'a song about catnip' }, 'prompt'],
      [{ prompt: 'calm', lyrics: 'the CATS are out' }, 'lyrics'],
      [{ prompt: 'calm', title: 'Cat' }, 'title'],
    ] as const) {
      const answer = await song(options.prompt, options);
      expect(answer.ephemeral, field).toBe(true);
      expect(answer.content, field).toBe(REFUSED);
    }
    expect(await accounts()).toEqual(before);
    const logged = await refusals();
    expect(logged.map((row) => row.details['field'])).toEqual(['title', 'lyrics', 'prompt']);
    expect(logged[0]).toMatchObject({ actorId: g.members.alice, details: { kind: 'song', ruleId: rule.id, ruleName: 'No cats', channelId: g.channelId } });
    expect(JSON.stringify(logged)).not.toContain('catnip');

    // Words the rule does not reach, and what its allow list names, go through.
    await g.delivered(jobIdIn(await song('a scattered catalogue of dogs')));
  });

  it('is not used while the server has it off, and reads nothing from Discord then', async () => {
    grantManageServer();
    keywordRule('No cats', { keyword_filter: ['cat'] });
    await g.delivered(jobIdIn(await song('a cat')));
    expect(ruleReads()).toEqual([]);
  });

  it('honours the rule’s exempt roles and channels', async () => {
    grantManageServer();
    keywordRule('No cats', { keyword_filter: ['cat'] }, { exempt_roles: [g.djRole.id], exempt_channels: [g.otherChannelId] });
    await settings({ 'use-automod': true });
    expect((await song('a cat')).content).toBe(REFUSED);
    // Bob holds the DJ role; anyone may in the general channel.
    await g.delivered(jobIdIn(await song('a cat', {}, g.members.bob)));
    await g.delivered(jobIdIn(await song('a cat', {}, g.members.alice, g.otherChannelId)));
  });

  it('exempts a channel of an exempt category, and a thread of an exempt channel', async () => {
    grantManageServer();
    const category = g.emulator.createChannel(g.guild.id, { name: 'Pets', type: ChannelType.GuildCategory });
    const pets = g.emulator.createChannel(g.guild.id, { name: 'cats', parentId: category.id });
    const thread = g.emulator.createThread(g.otherChannelId, { name: 'cat pictures', ownerId: g.members.alice });
    keywordRule('No cats', { keyword_filter: ['cat'] }, { exempt_channels: [category.id, g.otherChannelId] });
    await settings({ 'use-automod': true });
    expect((await song('a cat')).content).toBe(REFUSED);
    await g.delivered(jobIdIn(await song('a cat', {}, g.members.alice, pets.id)));
    await g.delivered(jobIdIn(await song('a cat', {}, g.members.alice, thread.id)));
  });

  it('follows the rule events: a rule created, changed or deleted changes the next request', async () => {
    grantManageServer();
    await settings({ 'use-automod': true });
    await g.delivered(jobIdIn(await song('thunder')));

    const version = await automodVersion();
    const rule = keywordRule('Weather', { keyword_filter: ['thunder'] });
    await vi.waitFor(async () => expect(await automodVersion()).toBe(version! + 1));
    expect((await song('thunder')).content).toBe(REFUSED);

    g.emulator.modifyAutoModerationRule(g.guild.id, rule.id, { trigger_metadata: { keyword_filter: ['rain'] } }, { by: g.members.manager });
    await vi.waitFor(async () => expect(await automodVersion()).toBe(version! + 2));
    await g.delivered(jobIdIn(await song('thunder')));
    expect((await song('rain')).content).toBe(REFUSED);

    g.emulator.modifyAutoModerationRule(g.guild.id, rule.id, { enabled: false }, { by: g.members.manager });
    await vi.waitFor(async () => expect(await automodVersion()).toBe(version! + 3));
    await g.delivered(jobIdIn(await song('rain')));
  });

  it('says in /settings show how many keyword rules apply', async () => {
    grantManageServer();
    keywordRule('One', { keyword_filter: ['a1'] });
    keywordRule('Two', { regex_patterns: ['b[0-9]'] });
    keywordRule('Off', { keyword_filter: ['c1'] }, { enabled: false });
    const saved = await settings({ 'use-automod': true });
    expect(saved.content).toContain('AutoMod rules: used for prompts (2 keyword rules apply)');
    expect((await settings()).content).toContain('AutoMod rules: used for prompts (2 keyword rules apply)');
  });

  it('blocks nothing while the bot lacks Manage Server, says why in /settings show, and does not ask Discord on every request', async () => {
    keywordRule('No cats', { keyword_filter: ['cat'] });
    const saved = await settings({ 'use-automod': true });
    expect(saved.content).toContain('AutoMod rules: on, but not in use: the bot lacks the Manage Server permission');
    await g.delivered(jobIdIn(await song('a cat')));
    await g.delivered(jobIdIn(await song('another cat')));
    // Discord's 403 is remembered: one read for the show and both requests.
    expect(ruleReads().map((request) => request.status)).toEqual([403]);

    // Granted the permission, the next rule change makes every process read the rules again.
    grantManageServer();
    const version = await automodVersion();
    keywordRule('Dogs too', { keyword_filter: ['dog'] });
    await vi.waitFor(async () => expect(await automodVersion()).toBe(version! + 1));
    expect((await song('a cat')).content).toBe(REFUSED);
    expect((await settings()).content).toContain('AutoMod rules: used for prompts (2 keyword rules apply)');
  });
});

describe('the rules cache of another process', () => {
  it('reads the rules again when the guild’s version moved, after the time-to-live without an event, and keeps them through a failed read', async () => {
    grantManageServer();
    await settings({ 'use-automod': true });
    // A process apart from the bot's (an http role, say): its own cache, the same database, and
    // its way to Discord through a proxy the test can cut.
    const proxy = await tcpProxy(h.emulator.origin);
    onTestFinished(() => proxy.close());
    let now = 1_000_000;
    const elsewhere = createAutomodRules({
      api: createAutomodApi({ apiUrl: `${proxy.url.replace(/\/$/, '')}/api`, token: h.emulator.botToken }),
      logger: pino({ level: 'silent' }),
      now: () => now,
    });
    const judge = async (text: string) => {
      const guild = await loadGuild(g.db.db, g.guild.id, { startingCredits: 100 });
      const state = await elsewhere.rulesFor(g.guild.id, guild.automodVersion);
      if (state.status !== 'in_use') return state.status;
      return state.rules.match([['prompt', text]], { roleIds: [], channelId: g.channelId })?.ruleName;
    };

    expect(await judge('hail')).toBeUndefined();
    const version = await automodVersion();
    const rule = keywordRule('Hail', { keyword_filter: ['hail'] });
    // The bot's gateway heard the event; this process only sees the version move.
    await vi.waitFor(async () => expect(await automodVersion()).toBe(version! + 1));
    expect(await judge('hail')).toBe('Hail');

    // Unchanged version: no read.
    const reads = ruleReads().length;
    expect(await judge('hail')).toBe('Hail');
    expect(ruleReads()).toHaveLength(reads);

    // A change whose event never reached this deployment: the version stays where it was.
    g.emulator.modifyAutoModerationRule(g.guild.id, rule.id, { trigger_metadata: { keyword_filter: ['sleet'] } }, { by: g.members.manager });
    await vi.waitFor(async () => expect(await automodVersion()).toBe(version! + 2));
    await g.db.db.update(guilds).set({ automodVersion: version! + 1 }).where(eq(guilds.id, g.guild.id));
    expect(await judge('sleet')).toBeUndefined();
    // Past the time-to-live the rules still judge while they are read again, then the new ones do.
    now += AUTOMOD_RULES_TTL_MS + 1;
    expect(await judge('sleet')).toBeUndefined();
    await vi.waitFor(async () => expect(await judge('sleet')).toBe('Hail'));
    expect(ruleReads()).toHaveLength(reads + 1);

    // Discord out of reach when the version moves: the rules in use stay in use.
    proxy.cut();
    await bumpAutomodVersion(g.db.db, g.guild.id);
    expect(await judge('sleet')).toBe('Hail');
  });
});
