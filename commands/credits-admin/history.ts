/** `/credits-admin history`, its paging buttons and its CSV export. */
import { ApplicationCommandOptionType } from 'discord-api-types/v10';
import { ActionRowBuilder, ButtonBuilder, ButtonStyle } from 'discord.js';
import { ledgerKeys, purchaseOf, type HistoryEntry } from '../../src/credits/index.js';
import { loadCaller, requireModerator } from '../../src/discord/caller.js';
import type { CommandContext } from '../../src/discord/context.js';
import { encodeCustomId, type CustomId } from '../../src/discord-rest/custom-ids.js';
import { Refusal } from '../../src/discord/errors.js';
import { english, localText, type Translator } from '../../src/i18n/index.js';
import { answerInPlace, deferNow, type Answer } from '../../src/discord/respond.js';
import { attachmentLimitOf, editReplyWithDiskFiles, filesPerMessage, followUpWithDiskFiles } from '../../src/discord/file-answer.js';
import { discordTimestamp, escapeMarkdown } from '../../src/text.js';
import { KIND_WORDS, LEDGER_KIND_WORDS } from '../../src/pipeline/titles.js';
import type { ButtonHandler, GuildButton } from '../../src/discord/command.js';
import { userOption } from './options.js';
import { defineSubcommand } from './subcommand.js';

const PAGE_SIZE = 10;

/** `all`, or the member the history is about: what the paging buttons carry. */
type Scope = 'all' | string;

function signed(amount: number): string {
  return amount > 0 ? `+${amount}` : String(amount);
}

/** A `YYYY-MM` month as the reader says it. */
function monthOf(period: string, t: Translator): string {
  const [year, month] = period.split('-').map(Number);
  return t.month(new Date(Date.UTC(year!, month! - 1, 1)));
}

/**
 * What the movement was for: the job's kind, the allowance's month, the purchase's entitlement
 * and SKU (with a subscription's month), or the words a person gave.
 */
function purposeOf(entry: HistoryEntry, t: Translator): { label: string; why: string } {
  const kind = t.text({ key: LEDGER_KIND_WORDS[entry.kind] });
  if (entry.jobKind) return { label: `**${kind}** (${t.text({ key: KIND_WORDS[entry.jobKind] })})`, why: '' };
  const purchase = purchaseOf(entry);
  if (purchase) {
    const named = t('creditsAdmin.historyEntitlement', { entitlement: purchase.entitlementId, sku: purchase.skuId ?? '?' });
    return { label: `**${kind}** (${purchase.period ? `${monthOf(purchase.period, t)} · ` : ''}${named})`, why: '' };
  }
  const allowanceKey = ledgerKeys.allowance(entry.guildId, '');
  const period = entry.key.startsWith(allowanceKey) ? /^(\d{4})-(\d{2})$/.exec(entry.key.slice(allowanceKey.length)) : null;
  if (period) return { label: `**${kind}** (${monthOf(`${period[1]}-${period[2]}`, t)})`, why: '' };
  if (entry.key === ledgerKeys.startingCredits(entry.guildId)) return { label: `**${kind}** (${t('creditsAdmin.historyStartingCredits')})`, why: '' };
  // Only an owner's own words are shown: the bot's internal reasons are not for members.
  const why = entry.key.startsWith(ledgerKeys.manual('')) && entry.reason ? ` · ${escapeMarkdown(entry.reason.slice(0, 80))}` : '';
  return { label: `**${kind}**`, why };
}

function describeEntry(entry: HistoryEntry, t: Translator): string {
  const who = [entry.userId && t('creditsAdmin.historyFor', { user: entry.userId }), entry.actorId && t('creditsAdmin.historyBy', { user: entry.actorId })]
    .filter(Boolean)
    .join(' ');
  const { label, why } = purposeOf(entry, t);
  const job = entry.jobId ? ` · ${t('creditsAdmin.historyJob', { job: entry.jobId.slice(0, 8) })}` : '';
  // Amounts and balances stay ungrouped, as in the CSV export: a ledger is read digit by digit.
  return `\`#${entry.id}\` ${discordTimestamp(entry.createdAt)} ${label} ${signed(entry.amount)} → ${entry.balanceAfter}${who ? ` · ${who}` : ''}${job}${why}`;
}

/** Where a history page starts: the newest page, the page below an id (older) or the page just above one (newer). */
type PageStart = { readonly beforeId: number } | { readonly afterId: number } | undefined;

function pageButton(scope: Scope, direction: 'n' | 'o', id: number | null, label: string): ButtonBuilder {
  return new ButtonBuilder()
    .setCustomId(encodeCustomId({ action: 'history-page', subject: scope, arg: `${direction}${id ?? ''}` }))
    .setLabel(label)
    .setStyle(ButtonStyle.Primary)
    .setDisabled(id === null);
}

async function historyAnswer(context: CommandContext, guildId: string, scope: Scope, start?: PageStart): Promise<Answer> {
  const userId = scope === 'all' ? undefined : scope;
  let page = await context.credits.history({ guildId, userId, limit: PAGE_SIZE, ...start });
  // Nothing newer after all (an old message's button): the newest page is what the moderator wants.
  if (page.entries.length === 0 && start !== undefined) page = await context.credits.history({ guildId, userId, limit: PAGE_SIZE });
  const { t } = context;
  const heading = scope === 'all' ? t('creditsAdmin.historyHeading') : t('creditsAdmin.historyHeadingOf', { user: scope });
  const body = page.entries.length === 0 ? t('creditsAdmin.historyEmpty') : page.entries.map((entry) => describeEntry(entry, t)).join('\n');
  const buttons = [
    pageButton(scope, 'n', page.newerAfterId, t('creditsAdmin.newerButton')),
    pageButton(scope, 'o', page.nextBeforeId, t('creditsAdmin.olderButton')),
    new ButtonBuilder()
      .setCustomId(encodeCustomId({ action: 'history-csv', subject: scope }))
      .setLabel(t('creditsAdmin.exportButton'))
      .setStyle(ButtonStyle.Secondary),
  ];
  return {
    content: `${heading}${page.newerAfterId === null ? '' : ` ${t('creditsAdmin.historyOlder')}`}\n${body}`.slice(0, 2000),
    components: [new ActionRowBuilder<ButtonBuilder>().addComponents(buttons)],
  };
}

/**
 * The whole ledger (or a member's part) as CSV, newest first, written to disk page by page and
 * streamed from there: one file when it fits Discord's upload limit, else several, each with
 * the header, in as many messages as the limit asks. The files are deleted whatever happens.
 */
async function sendCsv(interaction: GuildButton, context: CommandContext, guildId: string, scope: Scope): Promise<void> {
  await deferNow(interaction);
  const limit = attachmentLimitOf(interaction);
  const exported = await context.credits.writeLedgerCsv({ guildId, userId: scope === 'all' ? undefined : scope, maxFileBytes: limit });
  try {
    const day = new Date().toISOString().slice(0, 10);
    const base = `credits-${guildId}${scope === 'all' ? '' : `-${scope}`}-${day}`;
    const count = exported.files.length;
    const files = exported.files.map((file, index) => ({
      name: count === 1 ? `${base}.csv` : `${base}-${index + 1}-of-${count}.csv`,
      path: file.path,
      bytes: file.bytes,
      contentType: 'text/csv; charset=utf-8',
    }));
    const { t } = context;
    const [first = [], ...rest] = filesPerMessage(files, limit);
    await editReplyWithDiskFiles(interaction, {
      content: count === 1 ? t('creditsAdmin.csv', { count: exported.rows }) : t('creditsAdmin.csvSplit', { count: exported.rows }),
      files: first,
    });
    for (const more of rest) await followUpWithDiskFiles(interaction, { content: t('creditsAdmin.csvSplitMore'), files: more });
  } finally {
    await exported.remove();
  }
}

function scopeOf(id: CustomId): Scope {
  if (id.subject === 'all' || /^\d{17,20}$/.test(id.subject)) return id.subject;
  throw new Refusal('not_found', localText('creditsAdmin.buttonGone'));
}

/** `o<id>`: older than the id; `n<id>`: newer; a bare id (buttons posted before Newer existed): older. */
function pageStartOf(arg: string | undefined): PageStart {
  const match = /^([no]?)(\d{1,15})$/.exec(arg ?? '');
  const id = Number(match?.[2]);
  if (!match || !Number.isSafeInteger(id) || id < 1) throw new Refusal('not_found', localText('creditsAdmin.buttonGone'));
  return match[1] === 'n' ? { afterId: id } : { beforeId: id };
}

/** The history buttons are moderators' too: Discord's command permissions do not cover them. */
async function moderatorGuildId(interaction: GuildButton, context: CommandContext): Promise<string> {
  const caller = await loadCaller(interaction, context);
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
      const start = pageStartOf(id.arg);
      const guildId = await moderatorGuildId(interaction, context);
      await interaction.editReply({ ...(await historyAnswer(context, guildId, scope, start)), allowedMentions: { parse: [] } });
    },
  },
  'history-csv': {
    acknowledge: 'ephemeral',
    async execute(interaction, id, context) {
      const scope = scopeOf(id);
      const guildId = await moderatorGuildId(interaction, context);
      await sendCsv(interaction, context, guildId, scope);
    },
  },
} as const satisfies Record<'history-page' | 'history-csv', ButtonHandler>;
