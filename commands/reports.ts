/**
 * Reports and what follows them, from the Discord side: the Report button on every result and
 * the Report message command (the "Apps" menu on one of the bot's results) open a form asking
 * why; submitting it records the report (src/pipeline/reports.ts), which reaches the server's
 * review channel. The review message's buttons are the moderators' (Hide, Block the requester,
 * Dismiss); the Delete button on a result is its requester's. A hidden or deleted song stops in
 * voice too (the player is told through src/voice). `/moderation reports` lists the open
 * reports. Every answer is private.
 */
import { ActionRowBuilder, ButtonBuilder, ButtonStyle, ModalBuilder, TextInputBuilder, TextInputStyle } from 'discord.js';
import { ApplicationCommandType, InteractionContextType } from 'discord-api-types/v10';
import { loadCaller, requireModerator } from '../src/discord/caller.js';
import type { ButtonHandler, GuildButton, GuildMessageCommand, MessageCommand, ModalHandler } from '../src/discord/command.js';
import type { CommandContext } from '../src/discord/context.js';
import { Refusal } from '../src/discord/errors.js';
import { isJobId } from '../src/discord/job-lookup.js';
import { localizedNames } from '../src/discord/localize.js';
import { answerInPlace, answerPrivately, type Answer } from '../src/discord/respond.js';
import { encodeCustomId } from '../src/discord-rest/custom-ids.js';
import { english, LOCALES, localText, translator, type Translator } from '../src/i18n/index.js';
import { isShownResult } from '../src/pipeline/job-rows.js';
import { messageLink } from '../src/pipeline/render-review.js';
import { isReportable, REPORT_REASON_MAX, REVIEW_BLOCK_DAYS } from '../src/pipeline/reports.js';
import { describeJob } from '../src/pipeline/titles.js';
import { escapeMarkdown } from '../src/text.js';
import { withinBudget } from './lyrics.js';

/** The form's one field. */
const REASON_FIELD = 'reason';
/** A job id, as a result's footer ends with it. */
const JOB_ID_AT_END = /([0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12})$/i;

/** The "why?" form, in the member's language. */
function reportForm(t: Translator, jobId: string): ModalBuilder {
  return new ModalBuilder()
    .setCustomId(encodeCustomId({ action: 'report-modal', subject: jobId }))
    .setTitle(t('report.form.title'))
    .addComponents(
      new ActionRowBuilder<TextInputBuilder>().addComponents(
        new TextInputBuilder()
          .setCustomId(REASON_FIELD)
          .setLabel(t('report.form.reason'))
          .setPlaceholder(t('report.form.placeholder'))
          .setStyle(TextInputStyle.Paragraph)
          .setRequired(true)
          .setMinLength(1)
          .setMaxLength(REPORT_REASON_MAX),
      ),
    );
}

/**
 * Opens the form for a result of this guild that can be reported. The form must be Discord's
 * first answer, so the lookup before it is bounded in time.
 */
async function openReport(interaction: GuildButton | GuildMessageCommand, context: CommandContext, jobId: string | undefined): Promise<void> {
  const job = await withinBudget(jobId !== undefined && isJobId(jobId) ? context.jobs.getJob(jobId) : Promise.resolve(undefined));
  if (!isReportable(job, interaction.guildId)) throw new Refusal('not_found', localText('report.gone'));
  await interaction.showModal(reportForm(context.t, job.id));
}

/** The result a message command was used on: one of the bot's own result messages, by the job id in its footer. */
function jobIdOfMessage(interaction: GuildMessageCommand): string | undefined {
  const message = interaction.targetMessage;
  if (message.author.id !== interaction.applicationId) return undefined;
  const footer = message.embeds[0]?.footer?.text;
  const id = footer === undefined ? undefined : JOB_ID_AT_END.exec(footer)?.[1]?.toLowerCase();
  // A result's footer exactly, in the language it was written in: not a review message, nor any other of the bot's.
  return id !== undefined && LOCALES.some((locale) => translator(locale)('job.footer', { id }) === footer) ? id : undefined;
}

const reportMessageCommand: MessageCommand = {
  definition: {
    type: ApplicationCommandType.Message,
    name: english('command.reportMessage.name'),
    name_localizations: localizedNames('command.reportMessage.name'),
    contexts: [InteractionContextType.Guild],
  },
  acknowledge: 'modal',
  async execute(interaction, context) {
    const jobId = jobIdOfMessage(interaction);
    if (jobId === undefined) throw new Refusal('invalid_input', localText('report.notAResult'));
    await openReport(interaction, context, jobId);
  },
};

export const reportMessageCommands: readonly MessageCommand[] = [reportMessageCommand];

/** The moderators' decision from a review message's button. */
async function decide(interaction: GuildButton, context: CommandContext, jobId: string, decision: string | undefined): Promise<void> {
  const caller = await loadCaller(interaction, context);
  requireModerator(caller);
  const actorId = caller.member.userId;
  const guildId = caller.guild.id;
  const job = isJobId(jobId) ? await context.pipeline.findJob(guildId, jobId) : undefined;
  if (!job) throw new Refusal('not_found', localText('review.gone'));
  switch (decision) {
    case 'hide': {
      const decided = await context.pipeline.decideReport({ guildId, jobId, actorId, outcome: 'hidden' });
      if (decided.outcome === 'not_found') throw new Refusal('not_found', localText('review.gone'));
      if (decided.outcome === 'already_decided') throw new Refusal('not_allowed', localText('review.alreadyDecided'));
      await context.voice?.songRemoved(guildId, jobId);
      return answerInPlace(interaction, { content: context.t(job.kind === 'voice' ? 'review.done.hiddenVoice' : 'review.done.hidden') });
    }
    case 'block': {
      if (job.userId === actorId) throw new Refusal('invalid_input', localText('moderation.blockSelf'));
      const block = await context.guilds.blockMember({ guildId, userId: job.userId, actorId, days: REVIEW_BLOCK_DAYS, reason: `reported result ${job.id}` });
      const decided = await context.pipeline.decideReport({ guildId, jobId, actorId, outcome: 'blocked' });
      if (decided.outcome === 'not_found') throw new Refusal('not_found', localText('review.gone'));
      return answerInPlace(interaction, { content: context.t('review.done.blocked', { user: job.userId, at: Math.floor((block.until ?? new Date()).getTime() / 1000) }) });
    }
    case 'dismiss': {
      const decided = await context.pipeline.decideReport({ guildId, jobId, actorId, outcome: 'dismissed' });
      if (decided.outcome === 'not_found') throw new Refusal('not_found', localText('review.gone'));
      if (decided.outcome === 'already_decided') throw new Refusal('not_allowed', localText('review.alreadyDecided'));
      return answerInPlace(interaction, { content: context.t('review.done.dismissed') });
    }
    default:
      throw new Refusal('not_found', localText('refusal.buttonGone'));
  }
}

export const reportButtons = {
  report: {
    acknowledge: 'modal',
    execute: (interaction, id, context) => openReport(interaction, context, id.subject),
  },
  review: {
    acknowledge: 'ephemeral',
    execute: (interaction, id, context) => decide(interaction, context, id.subject, id.arg),
  },
  'delete-result': {
    acknowledge: 'ephemeral',
    async execute(interaction, id, context) {
      const job = isJobId(id.subject) ? await context.pipeline.findJob(interaction.guildId, id.subject) : undefined;
      if (!job || !isShownResult(job)) throw new Refusal('not_found', localText('delete.gone'));
      if (job.userId !== interaction.user.id) throw new Refusal('not_allowed', localText('delete.onlyRequester'));
      const confirm = new ButtonBuilder()
        .setCustomId(encodeCustomId({ action: 'delete-confirm', subject: job.id }))
        .setLabel(context.t('delete.button.confirm'))
        .setStyle(ButtonStyle.Danger);
      await answerPrivately(interaction, {
        content: context.t('delete.confirm', { cost: job.cost }),
        components: [new ActionRowBuilder<ButtonBuilder>().addComponents(confirm)],
      });
    },
  },
  /** On the member's private confirmation: its message becomes the answer. */
  'delete-confirm': {
    acknowledge: 'update',
    async execute(interaction, id, context) {
      const deleted = isJobId(id.subject)
        ? await context.pipeline.deleteOwnResult({ guildId: interaction.guildId, jobId: id.subject, userId: interaction.user.id })
        : ({ outcome: 'gone' } as const);
      if (deleted.outcome === 'not_yours') throw new Refusal('not_allowed', localText('delete.onlyRequester'));
      if (deleted.outcome === 'deleted') await context.voice?.songRemoved(interaction.guildId, id.subject);
      const content = deleted.outcome === 'deleted' ? context.t('delete.done', { cost: deleted.cost }) : context.t('delete.gone');
      await interaction.editReply({ content, components: [], allowedMentions: { parse: [] } });
    },
  },
} as const satisfies Record<'report' | 'review' | 'delete-result' | 'delete-confirm', ButtonHandler>;

export const reportModals = {
  'report-modal': {
    acknowledge: 'ephemeral',
    async execute(interaction, id, context) {
      const data = interaction.fields.fields.get(REASON_FIELD);
      const reason = data && 'value' in data && typeof data.value === 'string' ? data.value.trim() : '';
      if (reason === '') throw new Refusal('invalid_input', localText('report.reasonMissing'));
      if (!isJobId(id.subject)) throw new Refusal('not_found', localText('report.gone'));
      const caller = await loadCaller(interaction, context);
      const reported = await context.pipeline.reportResult({
        guildId: caller.guild.id,
        jobId: id.subject,
        reporterId: caller.member.userId,
        reason,
        reviewChannelId: caller.guild.reviewChannelId,
      });
      if (reported.outcome === 'not_reportable') throw new Refusal('not_found', localText('report.gone'));
      await answerPrivately(interaction, { content: context.t(reported.outcome === 'already_reported' ? 'report.already' : 'report.recorded') });
    },
  },
} as const satisfies Record<'report-modal', ModalHandler>;

/**
 * `/moderation reports` lists this many a page: a line with its link and a title escaped
 * (up to twice its 60 characters) takes up to about 290 characters, and a message 2,000.
 */
export const REPORTS_PER_PAGE = 6;

function pageButton(label: string, page: number, enabled: boolean): ButtonBuilder {
  return new ButtonBuilder()
    .setCustomId(encodeCustomId({ action: 'reports-page', subject: String(page) }))
    .setLabel(label)
    .setStyle(ButtonStyle.Secondary)
    .setDisabled(!enabled);
}

/**
 * `/moderation reports`: a page of the open reports with links, the most recently reported
 * first, and Newer/Older buttons when there are more than a page (the caller is a moderator).
 * A page past the last (reports decided meanwhile) shows the last.
 */
export async function openReportsPage(context: CommandContext, guildId: string, page = 1): Promise<Answer> {
  let { total, shown } = await context.pipeline.openReports(guildId, REPORTS_PER_PAGE, (page - 1) * REPORTS_PER_PAGE);
  if (total === 0) return { content: context.t('moderation.reportsEmpty'), components: [] };
  const pages = Math.ceil(total / REPORTS_PER_PAGE);
  if (page > pages) {
    page = pages;
    ({ total, shown } = await context.pipeline.openReports(guildId, REPORTS_PER_PAGE, (page - 1) * REPORTS_PER_PAGE));
  }
  const lines = shown.map(({ job, reports, reportedAt }) => {
    const title = job ? escapeMarkdown(describeJob(job, context.t, 60)) : '?';
    const link = job && messageLink(job);
    return `- ${context.t('moderation.reportLine', { title: link ? `[${title}](${link})` : title, user: job?.userId ?? '', count: reports, at: Math.floor(reportedAt.getTime() / 1000) })}`;
  });
  const content = [context.t('moderation.reportsHeading', { count: total }), ...lines, ...(pages > 1 ? [context.t('moderation.reportsPage', { page, pages })] : [])].join('\n');
  if (pages === 1) return { content, components: [] };
  const buttons = new ActionRowBuilder<ButtonBuilder>().addComponents(
    pageButton(context.t('moderation.reportsNewer'), page - 1, page > 1),
    pageButton(context.t('moderation.reportsOlder'), page + 1, page < pages),
  );
  return { content, components: [buttons] };
}

export const reportPageButtons = {
  /** On the moderator's private list: its message becomes the page. */
  'reports-page': {
    acknowledge: 'update',
    async execute(interaction, id, context) {
      const caller = await loadCaller(interaction, context);
      requireModerator(caller);
      const page = /^\d{1,6}$/.test(id.subject) ? Math.max(1, Number(id.subject)) : 1;
      await interaction.editReply({ ...(await openReportsPage(context, caller.guild.id, page)), allowedMentions: { parse: [] } });
    },
  },
} as const satisfies Record<'reports-page', ButtonHandler>;
