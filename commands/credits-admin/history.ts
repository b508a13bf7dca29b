/** `/credits-admin history`, its paging buttons and its CSV export. */
import { ApplicationCommandOptionType } from 'discord-api-types/v10';
import { ActionRowBuilder, AttachmentBuilder, ButtonBuilder, ButtonStyle } from 'discord.js';
import { exportCsv, history as ledgerHistory, type LedgerEntry } from '../../src/credits/index.js';
import { openCaller, requireModerator } from '../../src/discord/caller.js';
import type { CommandContext } from '../../src/discord/context.js';
import { encodeCustomId, type CustomId } from '../../src/delivery/custom-ids.js';
import { Refusal } from '../../src/discord/errors.js';
import { english, localText, type MessageKey, type Translator } from '../../src/i18n/index.js';
import type { LedgerKind } from '../../src/db/schema.js';
import { answerInPlace, type Answer } from '../../src/discord/respond.js';
import { discordTimestamp, escapeMarkdown } from '../../src/text.js';
import type { ButtonHandler, GuildButton } from '../../src/discord/command.js';
import { userOption } from './options.js';
import { defineSubcommand } from './subcommand.js';

const PAGE_SIZE = 10;
/** Rows in one CSV export: far more than a guild makes, and under Discord's upload limit. */
const CSV_MAX_ROWS = 50_000;

/** `all`, or the member the history is about: what the paging buttons carry. */
type Scope = 'all' | string;

function signed(amount: number): string {
  return amount > 0 ? `+${amount}` : String(amount);
}

const KIND_NAMES: Readonly<Record<LedgerKind, MessageKey>> = {
  grant: 'creditsAdmin.ledgerKind.grant',
  take: 'creditsAdmin.ledgerKind.take',
  adjust: 'creditsAdmin.ledgerKind.adjust',
  allowance: 'creditsAdmin.ledgerKind.allowance',
  reserve: 'creditsAdmin.ledgerKind.reserve',
  release: 'creditsAdmin.ledgerKind.release',
  refund: 'creditsAdmin.ledgerKind.refund',
};

function describeEntry(entry: LedgerEntry, t: Translator): string {
  const who = [entry.userId && t('creditsAdmin.historyFor', { user: entry.userId }), entry.actorId && t('creditsAdmin.historyBy', { user: entry.actorId })]
    .filter(Boolean)
    .join(' ');
  const why = entry.reason ? ` · ${escapeMarkdown(entry.reason.slice(0, 80))}` : '';
  const job = entry.jobId ? ` · ${t('creditsAdmin.historyJob', { job: entry.jobId.slice(0, 8) })}` : '';
  // Amounts and balances stay ungrouped, as in the CSV export: a ledger is read digit by digit.
  return `\`#${entry.id}\` ${discordTimestamp(entry.createdAt)} **${t.text({ key: KIND_NAMES[entry.kind] })}** ${signed(entry.amount)} → ${entry.balanceAfter}${who ? ` · ${who}` : ''}${job}${why}`;
}

async function historyAnswer(context: CommandContext, guildId: string, scope: Scope, beforeId?: number): Promise<Answer> {
  const page = await ledgerHistory(context.db, { guildId, userId: scope === 'all' ? undefined : scope, limit: PAGE_SIZE, beforeId });
  const { t } = context;
  const heading = scope === 'all' ? t('creditsAdmin.historyHeading') : t('creditsAdmin.historyHeadingOf', { user: scope });
  const body = page.entries.length === 0 ? t('creditsAdmin.historyEmpty') : page.entries.map((entry) => describeEntry(entry, t)).join('\n');
  const buttons = [
    new ButtonBuilder()
      .setCustomId(encodeCustomId({ action: 'history-csv', subject: scope }))
      .setLabel(t('creditsAdmin.exportButton'))
      .setStyle(ButtonStyle.Secondary),
  ];
  if (page.nextBeforeId !== null) {
    buttons.unshift(
      new ButtonBuilder()
        .setCustomId(encodeCustomId({ action: 'history-page', subject: scope, arg: String(page.nextBeforeId) }))
        .setLabel(t('creditsAdmin.olderButton'))
        .setStyle(ButtonStyle.Primary),
    );
  }
  return {
    content: `${heading}${beforeId === undefined ? '' : ` ${t('creditsAdmin.historyOlder')}`}\n${body}`.slice(0, 2000),
    components: [new ActionRowBuilder<ButtonBuilder>().addComponents(buttons)],
  };
}

async function csvAnswer(context: CommandContext, guildId: string, scope: Scope): Promise<Answer> {
  const rows: LedgerEntry[] = [];
  let beforeId: number | undefined;
  do {
    const page = await ledgerHistory(context.db, { guildId, userId: scope === 'all' ? undefined : scope, limit: 500, beforeId });
    rows.push(...page.entries);
    beforeId = page.nextBeforeId ?? undefined;
  } while (beforeId !== undefined && rows.length < CSV_MAX_ROWS);
  const day = new Date().toISOString().slice(0, 10);
  const file = new AttachmentBuilder(Buffer.from(exportCsv(rows.slice(0, CSV_MAX_ROWS)), 'utf8'), {
    name: `credits-${guildId}${scope === 'all' ? '' : `-${scope}`}-${day}.csv`,
  });
  const cut = rows.length > CSV_MAX_ROWS || beforeId !== undefined;
  const content = cut ? context.t('creditsAdmin.csvCut', { rows: CSV_MAX_ROWS }) : context.t('creditsAdmin.csv', { count: rows.length });
  return { content, files: [file] };
}

function scopeOf(id: CustomId): Scope {
  if (id.subject === 'all' || /^\d{17,20}$/.test(id.subject)) return id.subject;
  throw new Refusal('not_found', localText('creditsAdmin.buttonGone'));
}

/** The history buttons are moderators' too: Discord's command permissions do not cover them. */
async function moderatorGuildId(interaction: GuildButton, context: CommandContext): Promise<string> {
  const caller = await openCaller(interaction, context);
  requireModerator(caller, { ownersToo: true });
  return caller.guild.id;
}

export const history = defineSubcommand({
  definition: {
    type: ApplicationCommandOptionType.Subcommand,
    name: 'history',
    description: english('command.credits-admin.history.description'),
    options: [userOption(english('command.credits-admin.history.user.description'))],
  },
  ownersOnly: false,
  async execute(options, { interaction, context, caller }) {
    await answerInPlace(interaction, await historyAnswer(context, caller.guild.id, options.user?.id ?? 'all'));
  },
});

export const historyButtons = {
  'history-page': {
    acknowledge: 'update',
    async execute(interaction, id, context) {
      const scope = scopeOf(id);
      const beforeId = Number(id.arg);
      if (!Number.isSafeInteger(beforeId) || beforeId < 1) throw new Refusal('not_found', localText('creditsAdmin.buttonGone'));
      const guildId = await moderatorGuildId(interaction, context);
      await interaction.editReply({ ...(await historyAnswer(context, guildId, scope, beforeId)), allowedMentions: { parse: [] } });
    },
  },
  'history-csv': {
    acknowledge: 'ephemeral',
    async execute(interaction, id, context) {
      const scope = scopeOf(id);
      const guildId = await moderatorGuildId(interaction, context);
      await answerInPlace(interaction, await csvAnswer(context, guildId, scope));
    },
  },
} as const satisfies Record<'history-page' | 'history-csv', ButtonHandler>;
