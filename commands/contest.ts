/**
 * `/contest`: a server's song contest. Moderators `start` one (a theme, a deadline in days, where
 * it is announced, how many songs each member may enter, a role for the winner) and `end` it
 * early or cancel it; members `enter` their own songs made since it started (or press Enter
 * contest on such a result), and anyone sees its `status`. Likes from other members during the
 * contest are the votes; the results are posted once at the deadline (src/pipeline/contests.ts).
 */
import { ApplicationCommandOptionType, ChannelType, InteractionContextType, type RESTPostAPIApplicationCommandsJSONBody } from 'discord-api-types/v10';
import { loadCaller, requireModerator } from '../src/discord/caller.js';
import { defineCommand, type ButtonHandler, type CommandContext, type GuildButton, type GuildChatInput } from '../src/discord/command.js';
import { Refusal } from '../src/discord/errors.js';
import { isJobId } from '../src/discord/job-lookup.js';
import { answerInPlace } from '../src/discord/respond.js';
import { english, localText, resolveLocale } from '../src/i18n/index.js';
import { CONTEST_DAYS, CONTEST_ENTRIES, CONTEST_THEME_MAX, type EntryOutcome } from '../src/pipeline/contests.js';
import { deadlineText, standingLines } from '../src/pipeline/render-contest.js';
import { describeJob } from '../src/pipeline/titles.js';
import { discordTimestamp, escapeMarkdown, truncate } from '../src/text.js';

export const definition = {
  name: 'contest',
  description: english('command.contest.description'),
  contexts: [InteractionContextType.Guild],
  dm_permission: false,
  options: [
    {
      type: ApplicationCommandOptionType.Subcommand,
      name: 'start',
      description: english('command.contest.start.description'),
      options: [
        { type: ApplicationCommandOptionType.String, name: 'theme', description: english('command.contest.start.theme.description'), required: true, max_length: CONTEST_THEME_MAX },
        {
          type: ApplicationCommandOptionType.Integer,
          name: 'days',
          description: english('command.contest.start.days.description'),
          required: true,
          min_value: CONTEST_DAYS.min,
          max_value: CONTEST_DAYS.max,
        },
        {
          type: ApplicationCommandOptionType.Channel,
          name: 'channel',
          description: english('command.contest.start.channel.description'),
          channel_types: [ChannelType.GuildText, ChannelType.GuildAnnouncement],
        },
        {
          type: ApplicationCommandOptionType.Integer,
          name: 'max-entries',
          description: english('command.contest.start.max-entries.description'),
          min_value: CONTEST_ENTRIES.min,
          max_value: CONTEST_ENTRIES.max,
        },
        { type: ApplicationCommandOptionType.Role, name: 'winner-role', description: english('command.contest.start.winner-role.description') },
      ],
    },
    {
      type: ApplicationCommandOptionType.Subcommand,
      name: 'enter',
      description: english('command.contest.enter.description'),
      options: [{ type: ApplicationCommandOptionType.String, name: 'song', description: english('command.contest.enter.song.description'), required: true, autocomplete: true }],
    },
    { type: ApplicationCommandOptionType.Subcommand, name: 'status', description: english('command.contest.status.description') },
    {
      type: ApplicationCommandOptionType.Subcommand,
      name: 'end',
      description: english('command.contest.end.description'),
      options: [{ type: ApplicationCommandOptionType.Boolean, name: 'cancel', description: english('command.contest.end.cancel.description') }],
    },
  ],
} as const satisfies RESTPostAPIApplicationCommandsJSONBody;

/** Enters the member's song and answers them; a refusal says why not. */
async function enter(interaction: GuildChatInput | GuildButton, context: CommandContext, jobId: string): Promise<void> {
  const entered: EntryOutcome = isJobId(jobId)
    ? await context.pipeline.enterContest({ guildId: interaction.guildId, userId: interaction.user.id, jobId })
    : { outcome: 'not_yours' };
  const title = (job: Parameters<typeof describeJob>[0]) => truncate(escapeMarkdown(describeJob(job, context.t)), 100);
  switch (entered.outcome) {
    case 'entered': {
      const { contest, job, count } = entered;
      const content = context.t('contest.entered', { title: title(job), theme: escapeMarkdown(contest.theme), count, max: contest.maxEntries, deadline: deadlineText(contest.endsAt) });
      return answerInPlace(interaction, { content });
    }
    case 'already':
      return answerInPlace(interaction, { content: context.t('contest.alreadyEntered', { title: title(entered.job), theme: escapeMarkdown(entered.contest.theme) }) });
    case 'no_contest':
      throw new Refusal('not_found', localText('contest.none'));
    case 'closed':
      throw new Refusal('not_allowed', localText('contest.closed', { theme: escapeMarkdown(entered.contest.theme), deadline: discordTimestamp(entered.contest.endsAt, 'R') }));
    case 'not_yours':
      throw new Refusal('not_allowed', localText('contest.notYours'));
    case 'too_early':
      throw new Refusal('not_allowed', localText('contest.tooEarly', { started: discordTimestamp(entered.contest.startedAt, 'f') }));
    case 'limit':
      throw new Refusal('not_allowed', localText('contest.limit', { max: entered.contest.maxEntries }));
  }
}

/** The song an entry names: its id (an autocomplete choice), or the title of one of the member's enterable songs as typed. */
async function songNamed(context: CommandContext, interaction: GuildChatInput, typed: string): Promise<string> {
  if (isJobId(typed)) return typed;
  const songs = await context.pipeline.enterableSongs(interaction.guildId, interaction.user.id);
  const named = songs.filter((job) => describeJob(job, context.t).toLowerCase() === typed.toLowerCase());
  return named.length === 1 ? named[0]!.id : typed;
}

async function status(interaction: GuildChatInput, context: CommandContext): Promise<void> {
  const now = await context.pipeline.contestStatus(interaction.guildId);
  if (!now) throw new Refusal('not_found', localText('contest.none'));
  const { contest, entries, top } = now;
  const lines = [context.t('contest.status', { theme: escapeMarkdown(contest.theme), deadline: deadlineText(contest.endsAt), entries })];
  if (top.length === 0) lines.push(context.t('contest.statusNoEntries'));
  else {
    const shown = top.map(({ job, votes }) => ({ jobId: job.id, userId: job.userId, title: describeJob(job, context.t), votes }));
    lines.push(context.t('contest.statusLeaders'), ...standingLines(shown, context.t));
  }
  await answerInPlace(interaction, { content: truncate(lines.join('\n'), 2_000) });
}

export default defineCommand({
  definition,
  acknowledge: () => 'ephemeral',
  async execute(interaction, args, context) {
    switch (args.subcommand) {
      case 'start': {
        const caller = await loadCaller(interaction, context);
        requireModerator(caller);
        const theme = args.options.theme.trim();
        if (theme.length === 0) throw new Refusal('invalid_input', localText('contest.themeEmpty'));
        const channelId = args.options.channel?.id ?? interaction.channelId ?? '';
        const started = await context.pipeline.startContest({
          guildId: interaction.guildId,
          channelId,
          theme,
          days: args.options.days,
          maxEntries: args.options['max-entries'] ?? CONTEST_ENTRIES.default,
          winnerRoleId: args.options['winner-role']?.id,
          startedBy: interaction.user.id,
          locale: resolveLocale(interaction.guildLocale),
        });
        if (started.outcome === 'no_access') throw new Refusal('missing_permission', localText('contest.noAccess', { channel: channelId }));
        const { contest } = started;
        const deadline = deadlineText(contest.endsAt);
        if (started.outcome === 'running') throw new Refusal('not_allowed', localText('contest.alreadyRunning', { theme: escapeMarkdown(contest.theme), deadline }));
        return answerInPlace(interaction, { content: context.t('contest.started', { theme: escapeMarkdown(contest.theme), channel: contest.channelId, deadline }) });
      }
      case 'enter':
        return enter(interaction, context, await songNamed(context, interaction, args.options.song.trim()));
      case 'status':
        return status(interaction, context);
      case 'end': {
        const caller = await loadCaller(interaction, context);
        requireModerator(caller);
        const ended = await context.pipeline.endContest(interaction.guildId, { cancel: args.options.cancel === true });
        if (ended.outcome === 'no_contest') throw new Refusal('not_found', localText('contest.none'));
        const theme = escapeMarkdown(ended.contest.theme);
        const content = ended.outcome === 'cancelled' ? context.t('contest.cancelled', { theme }) : context.t('contest.ended', { theme, channel: ended.contest.channelId });
        return answerInPlace(interaction, { content });
      }
    }
  },
  async autocomplete(interaction, context) {
    const typed = interaction.options.getFocused().trim().toLowerCase();
    const songs = await context.pipeline.enterableSongs(interaction.guildId, interaction.user.id);
    return songs
      .map((job) => ({ name: truncate(`${describeJob(job, context.t, 80)} · ${job.id.slice(0, 8)}`, 100), value: job.id }))
      .filter((choice) => typed === '' || choice.name.toLowerCase().includes(typed) || choice.value.startsWith(typed))
      .slice(0, 25);
  },
  buttons: {
    'contest-enter': {
      acknowledge: 'ephemeral',
      execute: (interaction, id, context) => enter(interaction, context, id.subject),
    } satisfies ButtonHandler,
  },
});
