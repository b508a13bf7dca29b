/**
 * What the channel sees of a contest: its announcement and its results, in the server's
 * language; pure functions of the contest's row, mentioning no role and pinging only the winners.
 */
import type { ContestResults, ContestRow } from '../db/schema.js';
import type { OutgoingMessage } from '../discord-rest/discord-delivery.js';
import type { MessageKey, Translator } from '../i18n/index.js';
import { discordTimestamp, escapeMarkdown, truncate } from '../text.js';
import { DISCORD_LIMITS } from './render.js';

const GOLD = 0xf1c40f;
const MEDALS = ['🥇', '🥈', '🥉'] as const;

/** One line per entry of a top: medal, title, maker and votes. */
export function standingLines(top: ContestResults['top'], t: Translator): string[] {
  return top.map((entry, i) =>
    t('contest.standing', { medal: MEDALS[i] ?? `${i + 1}.`, title: truncate(escapeMarkdown(entry.title), 100), user: entry.userId, votes: entry.votes }),
  );
}

/** The deadline written for every reader's clock: the date and time, and how far off. */
export function deadlineText(endsAt: Date): string {
  return `${discordTimestamp(endsAt, 'F')} (${discordTimestamp(endsAt, 'R')})`;
}

export function renderContestAnnouncement(contest: ContestRow, t: Translator): OutgoingMessage {
  const lines = [t('contest.announce.body', { deadline: deadlineText(contest.endsAt), max: contest.maxEntries })];
  if (contest.winnerRoleId !== null) lines.push(t('contest.announce.prize', { role: contest.winnerRoleId }));
  return {
    embeds: [
      {
        title: truncate(t('contest.announce.title', { theme: escapeMarkdown(contest.theme) }), DISCORD_LIMITS.embedTitle),
        description: lines.join('\n\n'),
        color: GOLD,
      },
    ],
    allowed_mentions: { parse: [] },
  };
}

const ROLE_TEXTS: Record<NonNullable<ContestResults['role']>, MessageKey> = {
  given: 'contest.role.given',
  missing_permission: 'contest.role.missingPermission',
  role_too_high: 'contest.role.tooHigh',
  role_gone: 'contest.role.gone',
  failed: 'contest.role.failed',
};

export function renderContestResults(contest: ContestRow, t: Translator): OutgoingMessage {
  const results: ContestResults = contest.results ?? { entries: 0, top: [] };
  const winner = results.top[0];
  const lines =
    results.top.length === 0
      ? [t('contest.results.none')]
      : [...standingLines(results.top, t), t('contest.results.entries', { count: results.entries })];
  if (results.role && winner && contest.winnerRoleId !== null) lines.push(t.text({ key: ROLE_TEXTS[results.role], params: { role: contest.winnerRoleId, user: winner.userId } }));
  return {
    content: winner ? t('contest.results.congratulations', { user: winner.userId }) : '',
    embeds: [
      {
        title: truncate(t('contest.results.title', { theme: escapeMarkdown(contest.theme) }), DISCORD_LIMITS.embedTitle),
        description: truncate(lines.join('\n'), DISCORD_LIMITS.embedDescription),
        color: GOLD,
      },
    ],
    allowed_mentions: { parse: [], users: [...new Set(results.top.map((entry) => entry.userId))] },
  };
}
