import {
  ApplicationCommandOptionType,
  ChannelType,
  InteractionContextType,
  PermissionFlagsBits,
  type RESTPostAPIApplicationCommandsJSONBody,
} from 'discord-api-types/v10';
import { ActionRowBuilder, AttachmentBuilder, ButtonBuilder, ButtonStyle, escapeMarkdown } from 'discord.js';
import {
  exportCsv,
  getGuildCredits,
  grant,
  history,
  setFrozen,
  setLowBalanceAlert,
  setMonthlyAllowance,
  setUserDailyCap,
  take,
  usage,
  utcMonth,
  type LedgerEntry,
} from '../src/credits/index.js';
import { openCaller, requireModerator, requireOwner, type Caller } from '../src/discord/caller.js';
import type { CommandContext } from '../src/discord/context.js';
import { encodeCustomId, type CustomId } from '../src/discord/custom-ids.js';
import { Refusal } from '../src/discord/errors.js';
import { answerInPlace, type Answer } from '../src/discord/respond.js';
import { defineCommand, type GuildButton } from './command.js';

const MAX_AMOUNT = 1_000_000;
const HISTORY_PAGE_SIZE = 10;
/** Rows in one CSV export: far more than a guild makes, and under Discord's upload limit. */
const CSV_MAX_ROWS = 50_000;

const userOption = {
  type: ApplicationCommandOptionType.User,
  name: 'user',
  description: 'Only this member.',
} as const;

const amountOption = (description: string, min: number) =>
  ({
    type: ApplicationCommandOptionType.Integer,
    name: 'amount',
    description,
    required: true,
    min_value: min,
    max_value: MAX_AMOUNT,
  }) as const;

const reasonOption = {
  type: ApplicationCommandOptionType.String,
  name: 'reason',
  description: 'Why: kept in the ledger.',
  required: true,
  max_length: 200,
} as const;

export const definition = {
  name: 'credits-admin',
  description: 'Manage this server’s credits (moderators; grant, take and allowance: bot owners).',
  contexts: [InteractionContextType.Guild],
  dm_permission: false,
  default_member_permissions: String(PermissionFlagsBits.ManageGuild),
  options: [
    {
      type: ApplicationCommandOptionType.Subcommand,
      name: 'usage',
      description: 'Credits spent this month, by member.',
      options: [userOption],
    },
    {
      type: ApplicationCommandOptionType.Subcommand,
      name: 'history',
      description: 'Every movement of credits, newest first, with a CSV export.',
      options: [userOption],
    },
    {
      type: ApplicationCommandOptionType.Subcommand,
      name: 'user-limit',
      description: 'Credits one member may spend per day (UTC); 0 removes the limit.',
      options: [
        amountOption('Credits per member per day; 0 removes the limit.', 0),
        { type: ApplicationCommandOptionType.Role, name: 'role', description: 'Set this role’s own limit instead.' },
      ],
    },
    { type: ApplicationCommandOptionType.Subcommand, name: 'freeze', description: 'Pause all spending on this server.' },
    { type: ApplicationCommandOptionType.Subcommand, name: 'unfreeze', description: 'Allow spending again.' },
    {
      type: ApplicationCommandOptionType.Subcommand,
      name: 'alert',
      description: 'Post one message when the balance falls below a threshold; 0 turns it off.',
      options: [
        {
          type: ApplicationCommandOptionType.Channel,
          name: 'channel',
          description: 'Where to post the alert.',
          required: true,
          channel_types: [ChannelType.GuildText, ChannelType.GuildAnnouncement],
        },
        {
          type: ApplicationCommandOptionType.Integer,
          name: 'below',
          description: 'Alert when the balance falls below this; 0 turns the alert off.',
          required: true,
          min_value: 0,
          max_value: MAX_AMOUNT,
        },
      ],
    },
    {
      type: ApplicationCommandOptionType.Subcommand,
      name: 'grant',
      description: 'Add credits to this server (bot owners).',
      options: [amountOption('Credits to add.', 1), reasonOption],
    },
    {
      type: ApplicationCommandOptionType.Subcommand,
      name: 'take',
      description: 'Remove credits from this server (bot owners).',
      options: [amountOption('Credits to remove.', 1), reasonOption],
    },
    {
      type: ApplicationCommandOptionType.Subcommand,
      name: 'allowance',
      description: 'Monthly allowance: the balance is topped up to it each month (bot owners); 0 turns it off.',
      options: [amountOption('Credits per month; 0 turns the allowance off.', 0)],
    },
    {
      type: ApplicationCommandOptionType.Subcommand,
      name: 'account',
      description: 'The music service account’s own balance (bot owners).',
    },
  ],
} as const satisfies RESTPostAPIApplicationCommandsJSONBody;

function monthStart(now: Date): Date {
  return new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), 1));
}

function unix(date: Date): number {
  return Math.floor(date.getTime() / 1000);
}

/** `all`, or the member the history is about: what the paging buttons carry. */
type Scope = 'all' | string;

function signed(amount: number): string {
  return amount > 0 ? `+${amount}` : String(amount);
}

function describeEntry(entry: LedgerEntry): string {
  const who = [entry.userId && `for <@${entry.userId}>`, entry.actorId && `by <@${entry.actorId}>`].filter(Boolean).join(' ');
  const why = entry.reason ? ` · ${escapeMarkdown(entry.reason.slice(0, 80))}` : '';
  const job = entry.jobId ? ` · job \`${entry.jobId.slice(0, 8)}\`` : '';
  return `\`#${entry.id}\` <t:${unix(entry.createdAt)}:f> **${entry.kind}** ${signed(entry.amount)} → ${entry.balanceAfter}${who ? ` · ${who}` : ''}${job}${why}`;
}

async function historyAnswer(context: CommandContext, guildId: string, scope: Scope, beforeId?: number): Promise<Answer> {
  const page = await history(context.db, {
    guildId,
    userId: scope === 'all' ? undefined : scope,
    limit: HISTORY_PAGE_SIZE,
    beforeId,
  });
  const heading = scope === 'all' ? '**Credit history**' : `**Credit history of <@${scope}>**`;
  const body = page.entries.length === 0 ? 'No movements yet.' : page.entries.map(describeEntry).join('\n');
  const buttons = [
    new ButtonBuilder()
      .setCustomId(encodeCustomId({ action: 'history-csv', subject: scope }))
      .setLabel('Export CSV')
      .setStyle(ButtonStyle.Secondary),
  ];
  if (page.nextBeforeId !== null) {
    buttons.unshift(
      new ButtonBuilder()
        .setCustomId(encodeCustomId({ action: 'history-page', subject: scope, arg: String(page.nextBeforeId) }))
        .setLabel('Older')
        .setStyle(ButtonStyle.Primary),
    );
  }
  return {
    content: `${heading}${beforeId === undefined ? '' : ' (older)'}\n${body}`.slice(0, 2000),
    components: [new ActionRowBuilder<ButtonBuilder>().addComponents(buttons)],
  };
}

async function csvAnswer(context: CommandContext, guildId: string, scope: Scope): Promise<Answer> {
  const rows: LedgerEntry[] = [];
  let beforeId: number | undefined;
  do {
    const page = await history(context.db, { guildId, userId: scope === 'all' ? undefined : scope, limit: 500, beforeId });
    rows.push(...page.entries);
    beforeId = page.nextBeforeId ?? undefined;
  } while (beforeId !== undefined && rows.length < CSV_MAX_ROWS);
  const day = new Date().toISOString().slice(0, 10);
  const file = new AttachmentBuilder(Buffer.from(exportCsv(rows.slice(0, CSV_MAX_ROWS)), 'utf8'), {
    name: `credits-${guildId}${scope === 'all' ? '' : `-${scope}`}-${day}.csv`,
  });
  const cut = rows.length > CSV_MAX_ROWS || beforeId !== undefined ? ` (the newest ${CSV_MAX_ROWS})` : '';
  return { content: `The ledger as CSV: ${Math.min(rows.length, CSV_MAX_ROWS)} rows${cut}.`, files: [file] };
}

function scopeOf(id: CustomId): Scope {
  if (id.subject === 'all' || /^\d{17,20}$/.test(id.subject)) return id.subject;
  throw new Refusal('not_found', 'This button no longer works.');
}

/** The history buttons are moderators' too: Discord's command permissions do not cover them. */
async function moderatorOf(interaction: GuildButton, context: CommandContext): Promise<Caller> {
  const caller = await openCaller(interaction, context);
  requireModerator(caller, { ownersToo: true });
  return caller;
}

export default defineCommand({
  definition,
  acknowledge: () => 'ephemeral',
  async execute(interaction, args, context) {
    const caller = await openCaller(interaction, context);
    const guildId = caller.guild.id;
    const actorId = caller.member.userId;
    const reply = (content: string) => answerInPlace(interaction, { content });

    // Discord's default permission can be overridden per guild: check again here.
    if (['grant', 'take', 'allowance', 'account'].includes(args.subcommand)) requireOwner(caller);
    else requireModerator(caller, { ownersToo: true });

    switch (args.subcommand) {
      case 'usage': {
        const userId = args.options.user?.id;
        const report = await usage(context.db, { guildId, userId, since: monthStart(new Date()) });
        const month = utcMonth(new Date());
        if (userId !== undefined) {
          return reply(
            `<@${userId}> in ${month}: ${report.spent} credits on ${report.jobs} jobs (${report.charged} charged, ${report.returned} returned).`,
          );
        }
        const lines = report.byMember
          .slice(0, 20)
          .map((member) => `• <@${member.userId}>: ${member.spent} credits on ${member.jobs} jobs`);
        return reply(
          [`**Usage in ${month}**: ${report.spent} credits on ${report.jobs} jobs (${report.returned} returned)`, ...lines].join('\n'),
        );
      }
      case 'history':
        return answerInPlace(interaction, await historyAnswer(context, guildId, args.options.user?.id ?? 'all'));
      case 'user-limit': {
        const { amount, role } = args.options;
        await setUserDailyCap(context.db, {
          guildId,
          actorId,
          amount: amount === 0 ? null : amount,
          roleId: role?.id,
          key: interaction.id,
        });
        const who = role ? `Members with <@&${role.id}>` : 'Each member';
        return reply(amount === 0 ? `${who}: no daily limit any more.` : `${who} may now spend ${amount} credits per day (UTC).`);
      }
      case 'freeze':
      case 'unfreeze': {
        const frozen = args.subcommand === 'freeze';
        const outcome = await setFrozen(context.db, { guildId, frozen, actorId });
        const state = frozen ? 'paused: no new requests are accepted' : 'allowed again';
        return reply(outcome.changed ? `Spending on this server is ${state}.` : `Spending was already ${state}.`);
      }
      case 'alert': {
        const { channel, below } = args.options;
        await setLowBalanceAlert(context.db, {
          guildId,
          actorId,
          channelId: below === 0 ? null : channel.id,
          below: below === 0 ? null : below,
        });
        return reply(
          below === 0
            ? 'The low-balance alert is off.'
            : `One message will be posted in <#${channel.id}> when the balance falls below ${below} credits.`,
        );
      }
      case 'grant':
      case 'take': {
        const { amount, reason } = args.options;
        const move = args.subcommand === 'grant' ? grant : take;
        const outcome = await move(context.db, { guildId, amount, actorId, reason, key: interaction.id });
        const verb = args.subcommand === 'grant' ? 'Added' : 'Removed';
        return reply(`${verb} ${amount} credits. The balance is now ${outcome.balance}.`);
      }
      case 'allowance': {
        const { amount } = args.options;
        const outcome = await setMonthlyAllowance(context.db, { guildId, amount, actorId, key: interaction.id });
        return reply(
          amount === 0
            ? 'The monthly allowance is off.'
            : `The monthly allowance is ${outcome.monthlyAllowance} credits (was ${outcome.previous}): at its first use each month (UTC) the balance is topped up to it.`,
        );
      }
      case 'account': {
        const account = await context.musicApi.getCredits();
        const credits = await getGuildCredits(context.db, guildId);
        return reply(
          `The music service account has **${account.credits}** credits${account.extraCredits > 0 ? ` (+${account.extraCredits} extra)` : ''}.` +
            (credits ? ` This server’s balance in the bot: ${credits.balance}.` : ''),
        );
      }
    }
  },
  buttons: {
    'history-page': {
      acknowledge: 'update',
      async execute(interaction, id, context) {
        const scope = scopeOf(id);
        const beforeId = Number(id.arg);
        if (!Number.isSafeInteger(beforeId) || beforeId < 1) throw new Refusal('not_found', 'This button no longer works.');
        const caller = await moderatorOf(interaction, context);
        await interaction.editReply({ ...(await historyAnswer(context, caller.guild.id, scope, beforeId)), allowedMentions: { parse: [] } });
      },
    },
    'history-csv': {
      acknowledge: 'ephemeral',
      async execute(interaction, id, context) {
        const scope = scopeOf(id);
        const caller = await moderatorOf(interaction, context);
        await answerInPlace(interaction, await csvAnswer(context, caller.guild.id, scope));
      },
    },
  },
});
