/**
 * Auto Moderation rules as Discord documents them: the five routes under
 * /guilds/{guild.id}/auto-moderation/rules behind Manage Server, the documented limits, the
 * moderator's way to set rules up, and AUTO_MODERATION_RULE_* events only for sessions that
 * asked for the AUTO_MODERATION_CONFIGURATION intent.
 */
import { once } from 'node:events';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { DiscordAPIError, REST } from '@discordjs/rest';
import { Client, Events, GatewayIntentBits } from 'discord.js';
import { PermissionFlagsBits, Routes, type APIAutoModerationRule } from 'discord-api-types/v10';
import { startDiscordEmulator } from '@music-bot/discord-emulator';
import type { DiscordEmulator, EmulatorGuild, EmulatorMember } from '@music-bot/discord-emulator';

let emu: DiscordEmulator;
let rest: REST;
let guild: EmulatorGuild;
let moderator: EmulatorMember;
let member: EmulatorMember;

const keywordRule = (name: string, extra: Record<string, unknown> = {}) => ({
  name,
  event_type: 1,
  trigger_type: 1,
  trigger_metadata: { keyword_filter: ['cat*'], regex_patterns: [], allow_list: [] },
  actions: [{ type: 1 }],
  enabled: true,
  ...extra,
});

async function refusal(request: Promise<unknown>): Promise<DiscordAPIError> {
  const error = await request.then(
    () => undefined,
    (err: unknown) => err,
  );
  expect(error).toBeInstanceOf(DiscordAPIError);
  return error as DiscordAPIError;
}

beforeAll(async () => {
  emu = await startDiscordEmulator({ shards: { identifyWindowMs: 0 } });
  guild = emu.createGuild({ name: 'AutoMod guild', botPermissions: PermissionFlagsBits.ViewChannel | PermissionFlagsBits.ManageGuild });
  moderator = emu.addMember(guild.id, { username: 'moderator', permissions: PermissionFlagsBits.ManageGuild });
  member = emu.addMember(guild.id, { username: 'member' });
  rest = new REST({ api: emu.apiUrl, retries: 0 }).setToken(emu.botToken);
});

afterAll(async () => {
  await emu?.close();
});

describe('Auto Moderation rules over REST', () => {
  it('lists, gets, creates, modifies and deletes rules in the documented shape', async () => {
    const created = (await rest.post(Routes.guildAutoModerationRules(guild.id), {
      body: keywordRule('No cats', { exempt_roles: [guild.everyoneRoleId], enabled: undefined }),
    })) as APIAutoModerationRule;
    expect(created).toMatchObject({
      guild_id: guild.id,
      name: 'No cats',
      creator_id: emu.botUser.id,
      event_type: 1,
      trigger_type: 1,
      trigger_metadata: { keyword_filter: ['cat*'], regex_patterns: [], allow_list: [] },
      actions: [{ type: 1, metadata: {} }],
      // Disabled unless asked: "False by default".
      enabled: false,
      exempt_roles: [guild.everyoneRoleId],
      exempt_channels: [],
    });
    expect(await rest.get(Routes.guildAutoModerationRule(guild.id, created.id))).toEqual(created);
    expect(await rest.get(Routes.guildAutoModerationRules(guild.id))).toContainEqual(created);

    const modified = (await rest.patch(Routes.guildAutoModerationRule(guild.id, created.id), {
      body: { enabled: true, trigger_metadata: { keyword_filter: ['*dog'], allow_list: ['hotdog'] } },
    })) as APIAutoModerationRule;
    expect(modified).toMatchObject({ id: created.id, name: 'No cats', enabled: true, trigger_metadata: { keyword_filter: ['*dog'], allow_list: ['hotdog'] } });

    await rest.delete(Routes.guildAutoModerationRule(guild.id, created.id));
    expect((await refusal(rest.get(Routes.guildAutoModerationRule(guild.id, created.id)))).status).toBe(404);
    expect(emu.findings).toEqual([]);
  });

  it('answers 403 Missing Permissions to a bot without Manage Server, on every route', async () => {
    const other = emu.createGuild({ name: 'No manage' });
    const rule = emu.createAutoModerationRule(other.id, keywordRule('owner made'));
    for (const request of [
      rest.get(Routes.guildAutoModerationRules(other.id)),
      rest.get(Routes.guildAutoModerationRule(other.id, rule.id)),
      rest.post(Routes.guildAutoModerationRules(other.id), { body: keywordRule('mine') }),
      rest.patch(Routes.guildAutoModerationRule(other.id, rule.id), { body: { enabled: false } }),
      rest.delete(Routes.guildAutoModerationRule(other.id, rule.id)),
    ]) {
      expect(await refusal(request)).toMatchObject({ status: 403, code: 50013, message: 'Missing Permissions' });
    }
    // Granted Manage Server on its role, the bot reads them.
    emu.setRolePermissions(other.id, other.botRoleId, PermissionFlagsBits.ManageGuild);
    expect(await rest.get(Routes.guildAutoModerationRules(other.id))).toEqual([rule]);
  });

  it('holds to the documented limits: six keyword rules, keyword and pattern counts and lengths, exemptions', async () => {
    const limited = emu.createGuild({ name: 'Limits', botPermissions: PermissionFlagsBits.ManageGuild });
    for (let n = 1; n <= 6; n += 1) emu.createAutoModerationRule(limited.id, keywordRule(`rule ${n}`));
    const seventh = await refusal(rest.post(Routes.guildAutoModerationRules(limited.id), { body: keywordRule('rule 7') }));
    expect(seventh).toMatchObject({ status: 400, code: 50035 });
    expect(JSON.stringify(seventh.rawError)).toContain('AUTO_MODERATION_MAX_RULES_OF_TYPE_EXCEEDED');
    // Other trigger types count apart: one mention-spam rule.
    emu.createAutoModerationRule(limited.id, { name: 'mentions', event_type: 1, trigger_type: 5, trigger_metadata: { mention_total_limit: 5 }, actions: [{ type: 1 }] });

    const roomy = emu.createGuild({ name: 'Lengths', botPermissions: PermissionFlagsBits.ManageGuild });
    const bad = async (metadata: Record<string, unknown>, extra: Record<string, unknown> = {}) =>
      (await refusal(rest.post(Routes.guildAutoModerationRules(roomy.id), { body: { ...keywordRule('bad', extra), trigger_metadata: metadata } }))).status;
    expect(await bad({ keyword_filter: ['x'.repeat(61)] })).toBe(400);
    expect(await bad({ keyword_filter: Array.from({ length: 1001 }, (_, i) => `w${i}`) })).toBe(400);
    expect(await bad({ regex_patterns: ['y'.repeat(261)] })).toBe(400);
    expect(await bad({ regex_patterns: Array.from({ length: 11 }, (_, i) => `r${i}`) })).toBe(400);
    expect(await bad({ allow_list: Array.from({ length: 101 }, (_, i) => `a${i}`) })).toBe(400);
    expect(await bad({ keyword_filter: ['ok'] }, { exempt_channels: ['123456789012345678'] })).toBe(400);
    expect(await bad({ keyword_filter: ['ok'] }, { actions: [] })).toBe(400);
    // At the limits exactly, accepted.
    const atLimits = (await rest.post(Routes.guildAutoModerationRules(roomy.id), {
      body: { ...keywordRule('at limits'), trigger_metadata: { keyword_filter: ['x'.repeat(60)], regex_patterns: Array.from({ length: 10 }, (_, i) => `r${i}`), allow_list: ['z'.repeat(60)] } },
    })) as APIAutoModerationRule;
    expect(atLimits.trigger_metadata.regex_patterns).toHaveLength(10);
    // The trigger type of a rule stays what it was.
    expect((await refusal(rest.patch(Routes.guildAutoModerationRule(roomy.id, atLimits.id), { body: { trigger_type: 4 } }))).status).toBe(400);
  });

  it('lets a test set rules up as a moderator would, and only someone with Manage Server', () => {
    const rule = emu.createAutoModerationRule(guild.id, keywordRule('by the moderator'), { by: moderator.id });
    expect(rule.creator_id).toBe(moderator.id);
    expect(emu.modifyAutoModerationRule(guild.id, rule.id, { enabled: false }, { by: moderator.id }).enabled).toBe(false);
    expect(() => emu.createAutoModerationRule(guild.id, keywordRule('by a member'), { by: member.id })).toThrow(/lacks Manage Server/);
    expect(() => emu.deleteAutoModerationRule(guild.id, rule.id, { by: member.id })).toThrow(/lacks Manage Server/);
    emu.deleteAutoModerationRule(guild.id, rule.id, { by: moderator.id });
    expect(emu.autoModerationRules(guild.id).map((r) => r.id)).not.toContain(rule.id);
  });
});

describe('AUTO_MODERATION_RULE_* events', () => {
  it('go to sessions with the AUTO_MODERATION_CONFIGURATION intent, and to no other', async () => {
    const listening = new Client({ intents: [GatewayIntentBits.Guilds, GatewayIntentBits.AutoModerationConfiguration], rest: { api: emu.apiUrl } });
    const deaf = new Client({ intents: [GatewayIntentBits.Guilds], rest: { api: emu.apiUrl } });
    const heard: string[] = [];
    const unheard: string[] = [];
    for (const [client, into] of [[listening, heard], [deaf, unheard]] as const) {
      client.on(Events.Raw, (packet: { t?: string; d?: { name?: string } }) => {
        if (packet.t?.startsWith('AUTO_MODERATION_RULE_')) into.push(`${packet.t} ${packet.d?.name}`);
      });
      const ready = once(client, Events.ClientReady);
      await client.login(emu.botToken);
      await ready;
    }
    try {
      const created = once(listening, Events.AutoModerationRuleCreate);
      const rule = emu.createAutoModerationRule(guild.id, keywordRule('heard'), { by: moderator.id });
      const [made] = (await created) as [{ id: string; triggerMetadata: { keywordFilter: string[] } }];
      expect(made.id).toBe(rule.id);
      expect(made.triggerMetadata.keywordFilter).toEqual(['cat*']);
      emu.modifyAutoModerationRule(guild.id, rule.id, { name: 'heard again' });
      emu.deleteAutoModerationRule(guild.id, rule.id);
      await vi.waitFor(() => expect(heard).toEqual(['AUTO_MODERATION_RULE_CREATE heard', 'AUTO_MODERATION_RULE_UPDATE heard again', 'AUTO_MODERATION_RULE_DELETE heard again']));
      // The deaf session got everything else sent meanwhile: a channel created after the rule events reaches it.
      const channelSeen = once(deaf, Events.ChannelCreate);
      emu.createChannel(guild.id, { name: 'after the rules' });
      await channelSeen;
      expect(unheard).toEqual([]);
    } finally {
      await listening.destroy();
      await deaf.destroy();
    }
  });
});
