/**
 * `/moderation`: what keeps the bot safe on a server, for its moderators. `blocklist add`,
 * `remove` and `list` manage the words and phrases no request may use, and with `list:explicit`
 * those allowed only in age-restricted channels (src/guilds/blocklist.ts
 * stores them; src/safety/blocklist.ts matches them when a request is accepted); `block`,
 * `unblock` and `blocks` keep members from using the bot (src/guilds/blocks.ts); `reports` lists
 * the open reports of results, whose buttons and forms live in commands/reports.ts.
 */
import { ApplicationCommandOptionType, InteractionContextType, PermissionFlagsBits, type RESTPostAPIApplicationCommandsJSONBody } from 'discord-api-types/v10';
import { loadCaller, requireModerator } from '../src/discord/caller.js';
import { defineCommand } from '../src/discord/command.js';
import { answerInPlace } from '../src/discord/respond.js';
import { parseBlockedWords } from '../src/guilds/blocklist.js';
import { BLOCK_REASON_MAX, MAX_BLOCK_DAYS, type MemberBlock } from '../src/guilds/blocks.js';
import type { Translator } from '../src/i18n/index.js';
import { english, localText } from '../src/i18n/index.js';
import { Refusal } from '../src/discord/errors.js';
import { LIMITS } from '../src/pipeline/requests.js';
import { inCode } from '../src/text.js';
import { openReportsPage, reportButtons, reportMessageCommands, reportModals, reportPageButtons } from './reports.js';

/** A list longer than a message holds is cut here. */
const LIST_SHOWN_CHARS = 1_800;

/** `items` joined by `separator`, cut after the last whole item that fits, with `…` for the rest. */
function fitted(items: readonly string[], separator: string): string {
  const text = items.join(separator);
  return text.length <= LIST_SHOWN_CHARS ? text : `${text.slice(0, text.lastIndexOf(separator, LIST_SHOWN_CHARS))}${separator}…`;
}

/** Which of the server's lists a subcommand works on: `blocked` when left out, as before the explicit list existed. */
const list = (subcommand: 'add' | 'remove' | 'list') => ({
  type: ApplicationCommandOptionType.String as const,
  name: 'list' as const,
  description: english(`command.moderation.blocklist.${subcommand}.list.description`),
  choices: [
    { name: 'blocked', value: 'blocked' as const },
    { name: 'explicit', value: 'explicit' as const },
  ],
});

const words = (subcommand: 'add' | 'remove') =>
  ({
    type: ApplicationCommandOptionType.String,
    name: 'words',
    description: english(`command.moderation.blocklist.${subcommand}.words.description`),
    required: true,
    max_length: LIMITS.lyricsMax,
  }) as const;

export const definition = {
  name: 'moderation',
  description: english('command.moderation.description'),
  contexts: [InteractionContextType.Guild],
  dm_permission: false,
  default_member_permissions: String(PermissionFlagsBits.ManageGuild),
  options: [
    {
      type: ApplicationCommandOptionType.SubcommandGroup,
      name: 'blocklist',
      description: english('command.moderation.blocklist.description'),
      options: [
        { type: ApplicationCommandOptionType.Subcommand, name: 'add', description: english('command.moderation.blocklist.add.description'), options: [words('add'), list('add')] },
        {
          type: ApplicationCommandOptionType.Subcommand,
          name: 'remove',
          description: english('command.moderation.blocklist.remove.description'),
          options: [words('remove'), list('remove')],
        },
        { type: ApplicationCommandOptionType.Subcommand, name: 'list', description: english('command.moderation.blocklist.list.description'), options: [list('list')] },
      ],
    },
    {
      type: ApplicationCommandOptionType.Subcommand,
      name: 'block',
      description: english('command.moderation.block.description'),
      options: [
        { type: ApplicationCommandOptionType.User, name: 'member', description: english('command.moderation.block.member.description'), required: true },
        { type: ApplicationCommandOptionType.Integer, name: 'days', description: english('command.moderation.block.days.description'), min_value: 1, max_value: MAX_BLOCK_DAYS },
        { type: ApplicationCommandOptionType.String, name: 'reason', description: english('command.moderation.block.reason.description'), max_length: BLOCK_REASON_MAX },
      ],
    },
    {
      type: ApplicationCommandOptionType.Subcommand,
      name: 'unblock',
      description: english('command.moderation.unblock.description'),
      options: [{ type: ApplicationCommandOptionType.User, name: 'member', description: english('command.moderation.unblock.member.description'), required: true }],
    },
    { type: ApplicationCommandOptionType.Subcommand, name: 'blocks', description: english('command.moderation.blocks.description') },
    { type: ApplicationCommandOptionType.Subcommand, name: 'reports', description: english('command.moderation.reports.description') },
  ],
} as const satisfies RESTPostAPIApplicationCommandsJSONBody;

/** One block as the list shows it: who, until when, by whom, and why. */
function blockLine(block: MemberBlock, t: Translator): string {
  const line =
    block.until === null
      ? t('moderation.blockLineForever', { user: block.userId, by: block.blockedBy })
      : t('moderation.blockLine', { user: block.userId, at: Math.floor(block.until.getTime() / 1000), by: block.blockedBy });
  return block.reason === null ? `- ${line}` : `- ${line}: ${block.reason}`;
}

/** Entries as a moderator reads them back: each in code marks, so that `*` and spaces show as typed. */
const shown = (entry: string) => `\`${inCode(entry)}\``;

export default defineCommand({
  definition,
  acknowledge: () => 'ephemeral',
  async execute(interaction, args, context) {
    const caller = await loadCaller(interaction, context);
    // Discord's default permission can be overridden per guild: check again here.
    requireModerator(caller);
    const guildId = caller.guild.id;
    const actorId = caller.member.userId;
    const reply = (content: string) => answerInPlace(interaction, { content });
    if (args.group === undefined) {
      switch (args.subcommand) {
        case 'block': {
          const { member, days, reason } = args.options;
          if (member.id === actorId) throw new Refusal('invalid_input', localText('moderation.blockSelf'));
          const block = await context.guilds.blockMember({ guildId, userId: member.id, actorId, ...(days !== undefined && { days }), ...(reason !== undefined && { reason }) });
          return reply(
            block.until === null
              ? context.t('moderation.blockedForever', { user: member.id })
              : context.t('moderation.blocked', { user: member.id, at: Math.floor(block.until.getTime() / 1000) }),
          );
        }
        case 'unblock': {
          const lifted = await context.guilds.unblockMember({ guildId, userId: args.options.member.id, actorId });
          return reply(context.t(lifted ? 'moderation.unblocked' : 'moderation.notBlocked', { user: args.options.member.id }));
        }
        case 'reports':
          return answerInPlace(interaction, await openReportsPage(context, guildId));
        case 'blocks': {
          const blocks = await context.guilds.listBlocks(guildId);
          if (blocks.length === 0) return reply(context.t('moderation.blocksEmpty'));
          return reply(`${context.t('moderation.blocksHeading', { count: blocks.length })}\n${fitted(blocks.map((block) => blockLine(block, context.t)), '\n')}`);
        }
      }
    }
    const onList = args.options.list ?? 'blocked';
    const explicit = onList === 'explicit';
    switch (args.subcommand) {
      case 'add': {
        const { added, total } = await context.guilds.addBlockedWords({ guildId, actorId, entries: parseBlockedWords(args.options.words), list: onList });
        if (added.length === 0) return reply(context.t(explicit ? 'explicitList.addedNone' : 'blocklist.addedNone'));
        return reply(context.t(explicit ? 'explicitList.added' : 'blocklist.added', { entries: added.map(shown).join(', '), total }));
      }
      case 'remove': {
        const { removed, total } = await context.guilds.removeBlockedWords({ guildId, actorId, entries: parseBlockedWords(args.options.words), list: onList });
        if (removed.length === 0) return reply(context.t(explicit ? 'explicitList.removedNone' : 'blocklist.removedNone'));
        return reply(context.t(explicit ? 'explicitList.removed' : 'blocklist.removed', { entries: removed.map(shown).join(', '), total }));
      }
      case 'list': {
        const entries = await context.guilds.listBlockedWords(guildId, onList);
        if (entries.length === 0) return reply(context.t(explicit ? 'explicitList.listEmpty' : 'blocklist.listEmpty'));
        return reply(context.t(explicit ? 'explicitList.list' : 'blocklist.list', { total: entries.length, entries: fitted(entries.map(shown), ', ') }));
      }
    }
  },
  // Reports of results and their review (commands/reports.ts).
  buttons: { ...reportButtons, ...reportPageButtons },
  modals: reportModals,
  messageCommands: reportMessageCommands,
});
