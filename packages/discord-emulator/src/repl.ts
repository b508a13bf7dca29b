/**
 * The standalone emulator's terminal commands, acting as the seeded user in the seeded guild:
 * slash commands, button clicks, the channel's messages, the findings, and the guild's Auto
 * Moderation keyword rules as a moderator sets them up (`automod list|add|delete`).
 */
import { createInterface } from 'node:readline';
import { AutoModerationActionType, AutoModerationRuleEventType, AutoModerationRuleTriggerType, type APIAutoModerationRule } from 'discord-api-types/v10';
import type { DiscordEmulator } from './emulator.js';
import { DiscordHttpError } from './errors.js';
import type { EmulatorMessage, InteractionHandle } from './types.js';

function write(line = ''): void {
  process.stdout.write(`${line}\n`);
}

function describeMessage(message: EmulatorMessage): string {
  const parts = [message.content ? JSON.stringify(message.content) : ''];
  for (const embed of message.embeds) parts.push(`[embed ${JSON.stringify(embed.title ?? embed.description ?? '')}]`);
  for (const attachment of message.attachments) parts.push(`[file ${attachment.filename} ${attachment.size} B]`);
  const buttons = JSON.stringify(message.components ?? []).match(/"custom_id":"[^"]*"/g) ?? [];
  if (buttons.length > 0) parts.push(`[components ${buttons.map((id) => id.slice(13, -1)).join(', ')}]`);
  return `${message.id}${message.ephemeral ? ' (ephemeral)' : ''}: ${parts.filter(Boolean).join(' ')}`;
}

/** Splits `/song create prompt:"rainy city" n:3` into name, subcommands and options. */
export function parseCommandLine(line: string): { name: string; path: string[]; options: Record<string, string> } | null {
  const tokens = [...line.trim().matchAll(/(\S+?):"([^"]*)"|(\S+?):(\S+)|"([^"]*)"|(\S+)/g)];
  const first = tokens.shift();
  const name = first?.[6];
  if (!name?.startsWith('/')) return null;
  const path: string[] = [];
  const options: Record<string, string> = {};
  for (const token of tokens) {
    const key = token[1] ?? token[3];
    const value = token[2] ?? token[4];
    if (key !== undefined && value !== undefined) options[key] = value;
    else path.push(token[5] ?? token[6] ?? '');
  }
  return { name: name.slice(1), path, options };
}

const AUTOMOD_USAGE = 'automod list | automod add <name> keywords:"a,b*" [allow:"x,y"] [regex:"p1,p2"] [disabled] | automod delete <ruleId>';

const TRIGGER_NAMES: Readonly<Record<number, string>> = {
  [AutoModerationRuleTriggerType.Keyword]: 'keyword',
  [AutoModerationRuleTriggerType.Spam]: 'spam',
  [AutoModerationRuleTriggerType.KeywordPreset]: 'preset',
  [AutoModerationRuleTriggerType.MentionSpam]: 'mention spam',
  [AutoModerationRuleTriggerType.MemberProfile]: 'member profile',
};

/** A rule in one line, as `automod list` prints it: id, name, trigger, state, and a keyword rule's lists. */
export function describeRule(rule: APIAutoModerationRule): string {
  const meta = rule.trigger_metadata;
  const lists = [
    meta.keyword_filter?.length ? `keywords: ${meta.keyword_filter.join(', ')}` : '',
    meta.allow_list?.length ? `allow: ${meta.allow_list.join(', ')}` : '',
    meta.regex_patterns?.length ? `regex: ${meta.regex_patterns.join(', ')}` : '',
  ].filter(Boolean);
  const trigger = TRIGGER_NAMES[rule.trigger_type] ?? `trigger ${rule.trigger_type}`;
  return `${rule.id} ${JSON.stringify(rule.name)} (${trigger}, ${rule.enabled ? 'enabled' : 'disabled'})${lists.length > 0 ? ` ${lists.join('; ')}` : ''}`;
}

/**
 * A keyword rule that blocks a message, made by the guild's owner as in the server's settings
 * (Discord's checks apply; a refusal throws its DiscordHttpError).
 */
export function createKeywordRule(
  emu: DiscordEmulator,
  guildId: string,
  input: { name: string; keywords: readonly string[]; regex?: readonly string[]; allow?: readonly string[]; enabled?: boolean },
): APIAutoModerationRule {
  return emu.createAutoModerationRule(guildId, {
    name: input.name,
    event_type: AutoModerationRuleEventType.MessageSend,
    trigger_type: AutoModerationRuleTriggerType.Keyword,
    trigger_metadata: { keyword_filter: [...input.keywords], regex_patterns: [...(input.regex ?? [])], allow_list: [...(input.allow ?? [])] },
    actions: [{ type: AutoModerationActionType.BlockMessage }],
    enabled: input.enabled ?? true,
  });
}

/** `a, b*,c` as a list; an empty value is an empty list. */
export function listOption(value: string | undefined): string[] {
  return (value ?? '').split(',').map((item) => item.trim()).filter(Boolean);
}

/**
 * One `automod …` line (what follows `automod`) for the guild, as its owner in the server's
 * settings: lists its rules, creates a keyword rule that blocks a message, or deletes a rule.
 * Returns the lines to print; Discord's refusals are printed, not thrown.
 */
export function automodCommand(emu: DiscordEmulator, guildId: string, line: string): string[] {
  const parsed = parseCommandLine(`/automod ${line}`);
  const [verb = 'list', ...rest] = parsed?.path ?? [];
  const options = parsed?.options ?? {};
  try {
    if (verb === 'list' && rest.length === 0) {
      const rules = emu.autoModerationRules(guildId);
      return rules.length === 0 ? ['no AutoMod rules in this guild'] : rules.map(describeRule);
    }
    if (verb === 'add') {
      const name = rest.filter((word) => word !== 'disabled').join(' ');
      const keywords = listOption(options.keywords);
      const regex = listOption(options.regex);
      if (name === '' || (keywords.length === 0 && regex.length === 0)) return [`a keyword rule needs a name and keywords or regex: ${AUTOMOD_USAGE}`];
      const rule = createKeywordRule(emu, guildId, { name, keywords, regex, allow: listOption(options.allow), enabled: !rest.includes('disabled') });
      return [`created ${describeRule(rule)}`];
    }
    if (verb === 'delete' && rest.length === 1) {
      emu.deleteAutoModerationRule(guildId, rest[0]!);
      return [`deleted ${rest[0]}`];
    }
    return [AUTOMOD_USAGE];
  } catch (error) {
    if (error instanceof DiscordHttpError) {
      return [`Discord refused it (${error.status}, ${error.code}): ${error.message}${error.errors ? ` ${JSON.stringify(error.errors)}` : ''}`];
    }
    return [(error as Error).message];
  }
}

function follow(handle: InteractionHandle): void {
  handle
    .waitForResponse(10_000)
    .then((response) => write(`  bot answered with callback type ${response.type}${response.ephemeral ? ' (ephemeral)' : ''}`))
    .catch(() => write('  the bot did not answer within 10 s (Discord gives 3 s)'));
}

/** Reads commands from the terminal and acts as the seeded user. */
export function startRepl(emu: DiscordEmulator, seed: { guildId: string; channelId: string; userId: string }): void {
  const repl = createInterface({ input: process.stdin, output: process.stdout, prompt: 'discord> ' });
  emu.onMessage((message, change) => write(`  message ${change}: ${describeMessage(message)}`));
  repl.prompt();
  repl.on('line', (line) => {
    const trimmed = line.trim();
    try {
      if (trimmed === 'quit' || trimmed === 'exit') {
        repl.close();
        return;
      }
      if (trimmed === 'messages') {
        for (const message of emu.channelMessages(seed.channelId, { includeEphemeral: true })) write(`  ${describeMessage(message)}`);
      } else if (trimmed === 'findings') {
        for (const finding of emu.findings) write(`  ${finding.kind} ${finding.method} ${finding.path}: ${finding.message} ${finding.details.join('; ')}`);
        if (emu.findings.length === 0) write('  no findings');
      } else if (trimmed === 'automod' || trimmed.startsWith('automod ')) {
        for (const out of automodCommand(emu, seed.guildId, trimmed.slice('automod'.length))) write(`  ${out}`);
      } else if (trimmed.startsWith('click ')) {
        const [, messageId = '', customId = ''] = trimmed.split(/\s+/);
        follow(emu.clickButton({ messageId, customId, userId: seed.userId }));
      } else if (trimmed.startsWith('/')) {
        const parsed = parseCommandLine(trimmed);
        if (parsed) {
          const [first, second] = parsed.path;
          const group = second ? first : undefined;
          const subcommand = second ?? first;
          follow(emu.runCommand({ guildId: seed.guildId, channelId: seed.channelId, userId: seed.userId, name: parsed.name, subcommandGroup: group, subcommand, options: parsed.options }));
        }
      } else if (trimmed !== '') {
        write(`  commands: /name [sub] key:value, click <messageId> <customId>, messages, findings, ${AUTOMOD_USAGE}, quit`);
      }
    } catch (error) {
      write(`  ${(error as Error).message}`);
    }
    repl.prompt();
  });
  repl.on('close', () => process.kill(process.pid, 'SIGINT'));
}
