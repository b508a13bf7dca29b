/**
 * The review message in a guild's review channel: the reported result (a link to its message),
 * its requester, what they asked for, the reports with their reasons, and while it is open the
 * moderators' buttons. Pure: rendered again from the rows at every report and decision.
 */
import { ButtonStyle, ComponentType, type APIButtonComponent, type APIEmbedField } from 'discord-api-types/v10';
import type { resultReviews } from '../db/schema.js';
import { encodeCustomId } from '../discord-rest/custom-ids.js';
import type { OutgoingMessage } from '../discord-rest/discord-delivery.js';
import type { Translator } from '../i18n/index.js';
import { escapeMarkdown, truncate } from '../text.js';
import type { JobRow } from './job-rows.js';
import { DISCORD_LIMITS } from './render.js';
import { describeJob } from './titles.js';

export interface ReviewView {
  readonly job: JobRow;
  readonly review: typeof resultReviews.$inferSelect;
  /** The newest reports, newest first; `reason` null once retention cleared it. */
  readonly reports: ReadonlyArray<{ readonly reporterId: string; readonly reason: string | null; readonly createdAt: Date }>;
  readonly total: number;
  readonly blockDays: number;
}

const COLOURS = { open: 0xfee75c, closed: 0x99aab5 } as const;

/** Discord's link to a message, which opens it in the client. */
export function messageLink(job: Pick<JobRow, 'guildId' | 'channelId' | 'messageId'>): string | undefined {
  return job.messageId ? `https://discord.com/channels/${job.guildId}/${job.channelId}/${job.messageId}` : undefined;
}

const at = (date: Date) => Math.floor(date.getTime() / 1000);

function reviewButton(label: string, jobId: string, decision: 'hide' | 'block' | 'dismiss', style: ButtonStyle.Danger | ButtonStyle.Secondary): APIButtonComponent {
  return { type: ComponentType.Button, style, label, custom_id: encodeCustomId({ action: 'review', subject: jobId, arg: decision }) };
}

/** Where the review stands, in a line: open, or who decided what and when. */
function statusLine(view: ReviewView, t: Translator): string {
  const { job, review } = view;
  if (job.removal === 'deleted' && job.removedAt) return t('review.outcome.deleted', { at: at(job.removedAt) });
  if (review.outcome === null || review.decidedBy === null || review.decidedAt === null) return t('review.open', { days: view.blockDays });
  return t(`review.outcome.${review.outcome}`, { by: review.decidedBy, user: job.userId, at: at(review.decidedAt) });
}

/** The buttons the review still offers: all three while open, Hide after a block, none once hidden, deleted or dismissed. */
function buttonsOf(view: ReviewView, t: Translator): APIButtonComponent[] {
  const { job, review } = view;
  if (job.removedAt !== null) return [];
  const hide = reviewButton(t('review.button.hide'), job.id, 'hide', ButtonStyle.Danger);
  if (review.outcome === 'blocked') return [hide];
  if (review.outcome !== null) return [];
  return [hide, reviewButton(t('review.button.block'), job.id, 'block', ButtonStyle.Danger), reviewButton(t('review.button.dismiss'), job.id, 'dismiss', ButtonStyle.Secondary)];
}

export function renderReview(view: ReviewView, t: Translator): OutgoingMessage {
  const { job } = view;
  const link = messageLink(job);
  const prompt = typeof job.request.prompt === 'string' && job.request.prompt.trim() ? job.request.prompt : undefined;
  const fields: APIEmbedField[] = [];
  if (prompt) fields.push({ name: t('review.field.prompt'), value: truncate(escapeMarkdown(prompt), 500) });
  const lines = view.reports.map((report) =>
    t('review.reportLine', { user: report.reporterId, reason: report.reason === null ? t('review.reasonCleared') : escapeMarkdown(report.reason), at: at(report.createdAt) }),
  );
  if (view.total > view.reports.length) lines.push(t('review.more', { count: view.total - view.reports.length }));
  fields.push({ name: t('review.field.reports', { count: view.total }), value: truncate(lines.join('\n') || '-', DISCORD_LIMITS.fieldValue) });
  const description = [
    link ? t('review.result', { url: link, user: job.userId }) : t('review.resultNoLink', { user: job.userId }),
    statusLine(view, t),
  ].join('\n');
  const buttons = buttonsOf(view, t);
  return {
    content: '',
    embeds: [
      {
        title: truncate(t('review.title', { title: escapeMarkdown(describeJob(job, t)) }), DISCORD_LIMITS.embedTitle),
        description,
        color: view.review.outcome === null && job.removedAt === null ? COLOURS.open : COLOURS.closed,
        fields,
        footer: { text: t('review.footer', { id: job.id }) },
      },
    ],
    components: buttons.length === 0 ? [] : [{ type: ComponentType.ActionRow, components: buttons }],
    allowed_mentions: { parse: [] },
  };
}
