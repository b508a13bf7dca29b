/**
 * End to end, moderators and owners: a grant by an owner, a member's daily cap, a freeze, the
 * server's lists (blocked and explicit words), AutoMod rules, the moderation service, a
 * member refused `/credits-admin` even when Discord let the command through, and the CSV
 * export. Each scenario checks what Discord showed and what the ledger holds.
 */
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it, onTestFinished } from 'vitest';
import { InteractionResponseType, PermissionFlagsBits } from 'discord-api-types/v10';
import { grant, setFrozen, setUserDailyCap } from '../../src/credits/index.js';
import type { EmulatorMessage, InteractionHandle } from '@music-bot/discord-emulator';
import { awayFromUtcMidnight } from '../support/utc-day.js';
import { printBotLogsOnFailure, startE2E, type E2E } from './bot-process.js';

/**
 * The scenarios of this file, with interactions brought over the gateway or POSTed to
 * /interactions. The answers, refusals and the export's button and file run both ways; the
 * daily cap and the freeze, the ledger's rules whichever way the command came (their refusals'
 * first answers over HTTP are songs-over-http's), over the gateway alone.
 */
export function moderationScenarios(interactions: 'gateway' | 'http'): void {
  let bot: E2E;
  printBotLogsOnFailure(() => bot);
  /** Scenarios of the ledger's rules, the same whichever way their commands came: over the gateway alone. */
  const describeOverGatewayAlone = (name: string, scenarios: () => void): void => {
    if (interactions === 'gateway') describe(name, scenarios);
  };

  beforeAll(async () => {
    bot = await startE2E({ interactions, webhooks: true, startingCredits: 0, moderationService: true });
  }, 60_000);
  afterAll(async () => bot?.close());
  // Every REST call the bot made fits Discord's published API description.
  afterEach(() => expect(bot.emulator.findings).toEqual([]));

  /** The text the member sees: the initial answer, its edits, or a follow-up. */
  async function auditCount(): Promise<number> {
    const { rows } = await bot.db.pool.query<{ n: number }>('select count(*)::int as n from audit_log where guild_id = $1', [bot.guild.id]);
    return rows[0]!.n;
  }

  async function answer(handle: InteractionHandle, matching: RegExp = /./): Promise<EmulatorMessage> {
    const response = await handle.waitForResponse();
    const data = response.data as { content?: string } | undefined;
    if (data?.content && matching.test(data.content)) return { ...(handle.original() ?? {}), content: data.content } as EmulatorMessage;
    const original = handle.original();
    if (original?.content && matching.test(original.content)) return original;
    return Promise.race([
      handle.waitForEdit((m) => matching.test(m.content ?? ''), 10_000),
      handle.waitForFollowUp((m) => matching.test(m.content ?? ''), 10_000),
    ]);
  }

  describe('an owner grants credits', () => {
    it('moves them through the ledger with who did it and why', async () => {
      const before = await bot.balance();
      const grant = bot.run(bot.members.owner, { name: 'credits-admin', subcommand: 'grant', options: { amount: 100, reason: 'launch party' } });
      const reply = await answer(grant, /Added/);
      expect(reply.content).toBe(`Added 100 credits. The balance is now ${before + 100}.`);
      expect(await bot.balance()).toBe(before + 100);
      const { rows } = await bot.db.pool.query('select kind, amount, actor_id, reason from credit_ledger where guild_id = $1 and reason = $2', [
        bot.guild.id,
        'launch party',
      ]);
      expect(rows).toEqual([{ kind: 'grant', amount: 100, actor_id: bot.members.owner, reason: 'launch party' }]);
    });

    it('is refused to a moderator who is not an owner', async () => {
      const before = await bot.balance();
      const grant = bot.run(bot.members.manager, { name: 'credits-admin', subcommand: 'grant', options: { amount: 1000, reason: 'self-service' } });
      const reply = await answer(grant);
      expect(grant.response?.ephemeral).toBe(true);
      expect(reply.content).toBe('Only the bot’s owners can do that.');
      expect(await bot.balance()).toBe(before);
    });
  });

  describe('a member without Manage Server', () => {
    it('is refused /credits-admin even though Discord let the command through', async () => {
      const rows = await bot.ledgerCount();
      const audit = await auditCount();
      for (const subcommand of ['usage', 'freeze']) {
        const handle = bot.run(bot.members.alice, { name: 'credits-admin', subcommand });
        const reply = await answer(handle);
        expect(handle.response?.ephemeral).toBe(true);
        expect(reply.content).toMatch(/^Only moderators can do that/);
      }
      expect(await auditCount()).toBe(audit);
      expect(await bot.ledgerCount()).toBe(rows);
      const frozen = await bot.db.pool.query('select frozen from guilds where id = $1', [bot.guild.id]);
      expect(frozen.rows[0].frozen).toBe(false);
    });
  });

  describeOverGatewayAlone("a member's daily cap", () => {
    // The first song's charge and the cap's reading of today's spending on one UTC day (the bot's clocks).
    beforeEach(() => awayFromUtcMidnight(45_000));

    it('stops a member at the cap, lets a role override it, and spends nothing on refusal', async () => {
      await bot.setBalance(100);
      onTestFinished(async () => {
        await setUserDailyCap(bot.db.db, { guildId: bot.guild.id, amount: null, actorId: bot.members.manager });
        await setUserDailyCap(bot.db.db, { guildId: bot.guild.id, amount: null, roleId: bot.djRole.id, actorId: bot.members.manager });
      });
      const cap = bot.run(bot.members.manager, { name: 'credits-admin', subcommand: 'user-limit', options: { amount: 10 } });
      await answer(cap);
      const roleCap = bot.run(bot.members.manager, { name: 'credits-admin', subcommand: 'user-limit', options: { amount: 50, role: bot.djRole.id } });
      await answer(roleCap);

      const first = bot.run(bot.members.alice, { name: 'song', options: { prompt: 'first song of the day' } });
      await bot.result(first, await bot.jobIdOf(first));
      const balance = await bot.balance();
      const rows = await bot.ledgerCount();

      const second = bot.run(bot.members.alice, { name: 'song', options: { prompt: 'one too many' } });
      const refusal = await answer(second, /limit|cap|today/i);
      expect(refusal.content).toMatch(/^That costs 10 credits, and you can spend 0 more today \(daily limit 10\)\. The limit resets at midnight UTC \(<t:\d+:t> your time\)\.$/);
      expect(await bot.balance()).toBe(balance);
      expect(await bot.ledgerCount()).toBe(rows);

      // Bob holds the role with the higher limit.
      const bobs = bot.run(bot.members.bob, { name: 'song', options: { prompt: 'bob is generous' } });
      await bot.result(bobs, await bot.jobIdOf(bobs));
      expect(await bot.balance()).toBe(balance - 10);
    });
  });

  describeOverGatewayAlone('a frozen guild', () => {
    it('spends nothing until it is unfrozen', async () => {
      await bot.setBalance(100);
      onTestFinished(() => setFrozen(bot.db.db, { guildId: bot.guild.id, frozen: false, actorId: bot.members.manager }).then(() => undefined));
      const { rows: audited } = await bot.db.pool.query<{ last: number }>('select coalesce(max(id), 0)::int as last from audit_log');
      const freeze = bot.run(bot.members.manager, { name: 'credits-admin', subcommand: 'freeze' });
      await answer(freeze);
      const balance = await bot.balance();
      const rows = await bot.ledgerCount();
      const refused = bot.run(bot.members.bob, { name: 'lyrics', options: { prompt: 'while frozen' } });
      const reply = await answer(refused, /frozen|paused/i);
      expect(reply.content).toBe('Generation is paused on this server by its moderators.');
      expect(await bot.balance()).toBe(balance);
      expect(await bot.ledgerCount()).toBe(rows);

      const unfreeze = bot.run(bot.members.manager, { name: 'credits-admin', subcommand: 'unfreeze' });
      await answer(unfreeze);
      const allowed = bot.run(bot.members.bob, { name: 'lyrics', options: { prompt: 'after the thaw' } });
      await bot.result(allowed, await bot.jobIdOf(allowed));
      expect(await bot.balance()).toBe(balance - 1);
      const { rows: audit } = await bot.db.pool.query('select action, actor_id from audit_log where guild_id = $1 and id > $2 order by id', [
        bot.guild.id,
        audited[0]!.last,
      ]);
      expect(audit.filter((row) => row.action === 'credits.frozen').map((row) => row.actor_id)).toEqual([bot.members.manager, bot.members.manager]);
    });
  });

  describeOverGatewayAlone('blocked words and blocked members', () => {
    /** What a refusal must leave as it was: the balance, the ledger and the service's tasks. */
    const accounts = async () => ({ balance: await bot.balance(), ledger: await bot.ledgerCount(), tasks: bot.sim.listTasks().length });

    it('refuses each disguise of a blocked word privately, reserving nothing and sending nothing upstream', async () => {
      await bot.setBalance(100);
      const add = bot.run(bot.members.manager, { name: 'moderation', subcommandGroup: 'blocklist', subcommand: 'add', options: { words: 'foo, bar baz' } });
      expect((await answer(add, /Blocked/)).content).toContain('Blocked: `foo`, `bar baz`.');
      onTestFinished(async () => {
        await answer(bot.run(bot.members.manager, { name: 'moderation', subcommandGroup: 'blocklist', subcommand: 'remove', options: { words: 'foo, bar baz' } }));
      });

      const before = await accounts();
      for (const prompt of ['a FOO song', 'a fóó song', 'a fοο song', 'an f.o.o song', 'an f o o song', 'a f00 song', 'a song of BAR  baz']) {
        const refused = bot.run(bot.members.alice, { name: 'song', options: { prompt } });
        const reply = await answer(refused, /allow/);
        expect(refused.response?.ephemeral, prompt).toBe(true);
        expect(reply.content, prompt).toBe('This server does not allow some of these words. Nothing was spent.');
      }
      expect(await accounts()).toEqual(before);

      // A word that merely contains a blocked one is a song like any other.
      const food = bot.run(bot.members.alice, { name: 'lyrics', options: { prompt: 'a song about food' } });
      await bot.result(food, await bot.jobIdOf(food));
      expect(await bot.balance()).toBe(before.balance - 1);
    });

    it('refuses a blocked member at no cost until a moderator unblocks them', async () => {
      await bot.setBalance(100);
      const block = bot.run(bot.members.manager, { name: 'moderation', subcommand: 'block', options: { member: bot.members.bob, reason: 'flooding' } });
      expect((await answer(block, /unblocks/)).content).toContain(`<@${bot.members.bob}> can’t use the bot here until a moderator unblocks them`);
      const before = await accounts();
      const refused = bot.run(bot.members.bob, { name: 'song', options: { prompt: 'let me in' } });
      expect((await answer(refused, /blocked/)).content).toBe('This server’s moderators have blocked you from using the bot. Nothing was spent.');
      expect(refused.response?.ephemeral).toBe(true);
      expect(await accounts()).toEqual(before);

      const unblock = bot.run(bot.members.manager, { name: 'moderation', subcommand: 'unblock', options: { member: bot.members.bob } });
      expect((await answer(unblock, /again/)).content).toBe(`<@${bot.members.bob}> can use the bot again.`);
      const allowed = bot.run(bot.members.bob, { name: 'lyrics', options: { prompt: 'back again' } });
      await bot.result(allowed, await bot.jobIdOf(allowed));
      expect(await bot.balance()).toBe(before.balance - 1);
    });
  });

  describeOverGatewayAlone('reports, the review channel and the requester’s Delete', () => {
    const reviews = () => bot.emulator.channelMessages(bot.otherChannelId).filter((message) => message.embeds?.[0]?.title?.startsWith('Reported:'));
    /** A song of `userId`'s with this title, and its posted result. */
    async function song(userId: string, title: string): Promise<{ jobId: string; result: EmulatorMessage }> {
      const made = bot.run(userId, { name: 'song', options: { prompt: 'a tune for the review', title } });
      const jobId = await bot.jobIdOf(made);
      return { jobId, result: await bot.result(made, jobId) };
    }
    async function report(userId: string, result: EmulatorMessage, jobId: string, reason: string): Promise<string> {
      const opened = bot.emulator.clickButton({ messageId: result.id, customId: `report:${jobId}`, userId });
      await opened.waitForResponse();
      return (await answer(bot.emulator.submitModal({ interaction: opened, fields: { reason } }))).content ?? '';
    }
    /** What `/library` shows (a public answer, sent at once or deferred and edited). */
    async function libraryText(): Promise<string> {
      const handle = bot.run(bot.members.bob, { name: 'library' });
      const response = await handle.waitForResponse();
      const shown = response.type === InteractionResponseType.ChannelMessageWithSource ? handle.original() : await handle.waitForEdit();
      return JSON.stringify(shown?.embeds);
    }
    const click = (messageId: string, customId: string, userId: string, matching: RegExp) => answer(bot.emulator.clickButton({ messageId, customId, userId }), matching);

    beforeAll(async () => {
      await bot.setBalance(100);
      const set = bot.run(bot.members.manager, { name: 'settings', subcommand: 'safety', options: { 'review-channel': bot.otherChannelId } });
      await answer(set);
    });

    it('two reports make one review message; Hide takes the song from /library and /play and refuses its remix', async () => {
      const { jobId, result } = await song(bot.members.alice, 'Harbour Hymn Hidden');
      await expect.poll(libraryText).toContain('Harbour Hymn Hidden');
      const [bob, owner] = await Promise.all([report(bot.members.bob, result, jobId, 'rude'), report(bot.members.owner, result, jobId, 'not here')]);
      expect([bob, owner]).toEqual([expect.stringContaining('your report is with'), expect.stringContaining('your report is with')]);
      await expect.poll(() => JSON.stringify(reviews().map((message) => message.embeds))).toContain('2 reports');
      expect(reviews()).toHaveLength(1);
      const review = reviews()[0]!;

      const remixForm = bot.emulator.clickButton({ messageId: result.id, customId: `remix:${jobId}`, userId: bot.members.bob });
      await remixForm.waitForResponse();
      expect((await click(review.id, `review:${jobId}:hide`, bot.members.manager, /Hidden/)).content).toBe('Hidden: the result is gone from the library, `/play` and remixes.');
      expect(bot.emulator.message(result.id)?.embeds?.[0]?.description).toBe('This result was removed by a moderator.');
      expect(await libraryText()).not.toContain('Harbour Hymn Hidden');
      expect((await answer(bot.run(bot.members.bob, { name: 'play', options: { song: jobId } }), /finished song/)).content).toBe('That is not a finished song of this server. Pick one from the list.');
      const before = await bot.balance();
      const remix = await answer(bot.emulator.submitModal({ interaction: remixForm, fields: { style: 'again' } }), /remixed/);
      expect(remix.content).toContain('can’t be remixed');
      expect(await bot.balance()).toBe(before);
    });

    it('Block from the review message refuses the member’s next /song and a button until unblocked; Delete removes their own result', async () => {
      const { jobId, result } = await song(bot.members.alice, 'Harbour Hymn Kept');
      await report(bot.members.bob, result, jobId, 'insulting');
      await expect.poll(() => reviews().find((message) => (message.embeds?.[0]?.footer?.text ?? '').includes(jobId))).toBeDefined();
      const review = reviews().find((message) => (message.embeds?.[0]?.footer?.text ?? '').includes(jobId))!;
      expect((await click(review.id, `review:${jobId}:block`, bot.members.manager, /can’t use the bot/)).content).toContain(`<@${bot.members.alice}> can’t use the bot here until`);

      const before = await bot.balance();
      expect((await answer(bot.run(bot.members.alice, { name: 'song', options: { prompt: 'one more' } }), /blocked/)).content).toContain('have blocked you from using the bot until');
      expect((await click(result.id, `download:${jobId}:mp3`, bot.members.alice, /blocked/)).content).toContain('have blocked you from using the bot until');
      expect(await bot.balance()).toBe(before);

      const unblock = bot.run(bot.members.manager, { name: 'moderation', subcommand: 'unblock', options: { member: bot.members.alice } });
      expect((await answer(unblock, /again/)).content).toBe(`<@${bot.members.alice}> can use the bot again.`);
      const allowed = bot.run(bot.members.alice, { name: 'lyrics', options: { prompt: 'back again' } });
      await bot.result(allowed, await bot.jobIdOf(allowed));

      await expect.poll(libraryText).toContain('Harbour Hymn Kept');
      const confirm = await click(result.id, `delete-result:${jobId}`, bot.members.alice, /Delete this result/);
      expect(confirm.content).toContain('are not returned');
      await bot.emulator.clickButton({ messageId: confirm.id, customId: `delete-confirm:${jobId}`, userId: bot.members.alice }).waitForResponse();
      await expect.poll(() => bot.emulator.message(result.id)).toBeUndefined();
      expect(await libraryText()).not.toContain('Harbour Hymn Kept');
    });
  });

  describeOverGatewayAlone('the server’s AutoMod keyword rules', () => {
    const accounts = async () => ({ balance: await bot.balance(), ledger: await bot.ledgerCount(), tasks: bot.sim.listTasks().length });
    const useAutomod = async (on: boolean) => {
      const set = bot.run(bot.members.manager, { name: 'settings', subcommand: 'safety', options: { 'use-automod': on } });
      return (await answer(set, /Saved/)).content;
    };
    const automodVersion = async () =>
      (await bot.db.pool.query<{ v: number }>('select automod_version as v from guilds where id = $1', [bot.guild.id])).rows[0]!.v;

    it('refuses a prompt a rule matches while the server uses AutoMod, accepts it when off, and follows a rule’s update', async () => {
      await bot.setBalance(100);
      // The bot needs Manage Server to read the rules; a moderator makes one in the server's settings.
      bot.emulator.setRolePermissions(bot.guild.id, bot.guild.botRoleId, bot.emulator.memberPermissions(bot.channelId, bot.emulator.botUser.id) | PermissionFlagsBits.ManageGuild);
      const version = await automodVersion();
      const rule = bot.emulator.createAutoModerationRule(
        bot.guild.id,
        { name: 'Weather', event_type: 1, trigger_type: 1, trigger_metadata: { keyword_filter: ['thunder*'] }, actions: [{ type: 1 }], enabled: true },
        { by: bot.members.manager },
      );
      onTestFinished(async () => {
        bot.emulator.deleteAutoModerationRule(bot.guild.id, rule.id);
        await useAutomod(false);
      });
      // The bot's gateway heard AUTO_MODERATION_RULE_CREATE.
      await expect.poll(automodVersion, { timeout: 10_000 }).toBe(version + 1);
      expect(await useAutomod(true)).toContain('AutoMod rules: used for prompts (1 keyword rule applies)');

      const before = await accounts();
      const refused = bot.run(bot.members.alice, { name: 'song', options: { prompt: 'Thunderstorms all night' } });
      expect((await answer(refused, /AutoMod/)).content).toBe('This server’s AutoMod rules do not allow some of these words. Nothing was spent.');
      expect(refused.response?.ephemeral).toBe(true);
      expect(await accounts()).toEqual(before);

      // Turned off, the same prompt is a song like any other.
      await useAutomod(false);
      const accepted = bot.run(bot.members.alice, { name: 'song', options: { prompt: 'Thunderstorms all night' } });
      await bot.result(accepted, await bot.jobIdOf(accepted));
      expect(await bot.balance()).toBeLessThan(before.balance);

      // On again: the rule's update reaches the bot without a restart.
      await useAutomod(true);
      const rain = bot.run(bot.members.alice, { name: 'lyrics', options: { prompt: 'rain on the roof' } });
      await bot.result(rain, await bot.jobIdOf(rain));
      bot.emulator.modifyAutoModerationRule(bot.guild.id, rule.id, { trigger_metadata: { keyword_filter: ['thunder*', 'rain'] } }, { by: bot.members.manager });
      await expect.poll(automodVersion, { timeout: 10_000 }).toBe(version + 2);
      const after = await accounts();
      const refusedNow = bot.run(bot.members.alice, { name: 'lyrics', options: { prompt: 'rain on the roof' } });
      expect((await answer(refusedNow, /AutoMod/)).content).toBe('This server’s AutoMod rules do not allow some of these words. Nothing was spent.');
      expect(await accounts()).toEqual(after);
    });
  });

  describeOverGatewayAlone('the explicit list and the moderation service', () => {
    const accounts = async () => ({ balance: await bot.balance(), ledger: await bot.ledgerCount(), tasks: bot.sim.listTasks().length });

    it('refuses an explicit word outside age-restricted channels at no cost, and makes the song in a thread of one', async () => {
      await bot.setBalance(100);
      const add = bot.run(bot.members.manager, { name: 'moderation', subcommandGroup: 'blocklist', subcommand: 'add', options: { words: 'velvet', list: 'explicit' } });
      expect((await answer(add, /explicit list/)).content).toContain('Added to the explicit list: `velvet`.');
      onTestFinished(async () => {
        await answer(bot.run(bot.members.manager, { name: 'moderation', subcommandGroup: 'blocklist', subcommand: 'remove', options: { words: 'velvet', list: 'explicit' } }));
      });
      const adult = bot.emulator.createChannel(bot.guild.id, { name: 'after-dark', nsfw: true });
      const thread = bot.emulator.createThread(adult.id, { name: 'late requests', ownerId: bot.members.alice });

      const before = await accounts();
      const refused = bot.run(bot.members.alice, { name: 'song', options: { prompt: 'a Velvet night' } });
      expect((await answer(refused, /age-restricted/)).content).toBe('This server allows some of these words only in age-restricted channels. Nothing was spent.');
      expect(refused.response?.ephemeral).toBe(true);
      expect(await accounts()).toEqual(before);

      // A thread follows its age-restricted parent, as in Discord.
      const accepted = bot.emulator.runCommand({ guildId: bot.guild.id, channelId: thread.id, userId: bot.members.alice, name: 'lyrics', options: { prompt: 'a Velvet night' } });
      await bot.result(accepted, await bot.jobIdOf(accepted));
      expect(await bot.balance()).toBe(before.balance - 1);
    });

    it('refuses a prompt the moderation service flags, reserving nothing and sending nothing upstream', async () => {
      await bot.setBalance(100);
      bot.sim.setModeration({ flag: { violence: ['smash them'] } });
      onTestFinished(() => bot.sim.setModeration({}, { reset: true }));
      const before = await accounts();
      const refused = bot.run(bot.members.alice, { name: 'song', options: { prompt: 'smash them all' } });
      expect((await answer(refused, /content check/)).content).toBe('This server’s content check did not allow this request. Nothing was spent.');
      expect(refused.response?.ephemeral).toBe(true);
      expect(await accounts()).toEqual(before);
      const { rows } = await bot.db.pool.query("select details from audit_log where guild_id = $1 and action = 'request_refused_moderation'", [bot.guild.id]);
      expect(rows.map((row) => row.details)).toEqual([expect.objectContaining({ kind: 'song', fields: ['prompt'], categories: ['violence'] })]);
    });
  });

  describe('the ledger history', () => {
    it('exports as a CSV file with every movement', async () => {
      await bot.balance();
      await grant(bot.db.db, { guildId: bot.guild.id, amount: 7, actorId: bot.members.owner, key: `export-${Date.now()}`, reason: 'to be exported' });
      const historyCommand = bot.run(bot.members.manager, { name: 'credits-admin', subcommand: 'history' });
      const page = await answer(historyCommand, /history/i);
      const exportButton = (page.components ?? [])
        .flatMap((row): unknown[] => ('components' in row ? row.components : []))
        .find((c): c is { custom_id: string } => typeof c === 'object' && c !== null && 'custom_id' in c && String(c.custom_id).startsWith('history-csv:'));
      expect(exportButton).toBeDefined();

      const click = bot.emulator.clickButton({
        messageId: page.id,
        customId: exportButton!.custom_id,
        userId: bot.members.manager,
      });
      const withFile = await answer(click, /./).then(async (m) => (m.attachments?.length ? m : click.waitForEdit((e) => (e.attachments?.length ?? 0) > 0, 10_000)));
      const file = withFile.attachments?.[0];
      expect(file?.filename).toMatch(/\.csv$/);
      const csv = await (await fetch(file!.url)).text();
      const lines = csv.trim().split(/\r?\n/);
      expect(lines[0]).toMatch(/kind/);
      expect(lines.length - 1).toBe(await bot.ledgerCount());
      expect(csv).toContain('to be exported');
    });
  });
}
