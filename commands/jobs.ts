import {
  ApplicationCommandOptionType,
  InteractionContextType,
  type RESTPostAPIApplicationCommandsJSONBody,
} from 'discord-api-types/v10';
import type { RepliablePort } from '../src/discord/interaction-port.js';
import { loadCaller, requesterOf, type Caller } from '../src/discord/caller.js';
import { LIBRARY_KINDS } from '../src/pipeline/library.js';
import { LIMITS } from '../src/pipeline/requests.js';
import type { CommandContext } from '../src/discord/context.js';
import { Refusal } from '../src/discord/errors.js';
import { isJobId, jobChoices, pickGuildJob, stateWord } from '../src/discord/job-lookup.js';
import { describeJob, kindWord } from '../src/pipeline/titles.js';
import { english, localText, type Translator } from '../src/i18n/index.js';
import { removePlaceholder } from '../src/discord/placeholders.js';
import { answerInPlace, deferNow, handOverPublicReply, replyTargetOf } from '../src/discord/respond.js';
import { shownPosition, type JobRow } from '../src/pipeline/job-rows.js';
import { discordTimestamp, escapeMarkdown, truncate } from '../src/text.js';
import { defineCommand } from '../src/discord/command.js';

const idOption = {
  type: ApplicationCommandOptionType.String,
  name: 'id',
  description: english('command.jobs.show.id.description'),
  required: true,
  autocomplete: true,
} as const;

export const definition = {
  name: 'jobs',
  description: english('command.jobs.description'),
  contexts: [InteractionContextType.Guild],
  dm_permission: false,
  options: [
    { type: ApplicationCommandOptionType.Subcommand, name: 'list', description: english('command.jobs.list.description') },
    {
      type: ApplicationCommandOptionType.Subcommand,
      name: 'show',
      description: english('command.jobs.show.description'),
      options: [idOption],
    },
    {
      type: ApplicationCommandOptionType.Subcommand,
      name: 'cancel',
      description: english('command.jobs.cancel.description'),
      options: [idOption],
    },
    {
      type: ApplicationCommandOptionType.Subcommand,
      name: 'rename',
      description: english('command.jobs.rename.description'),
      options: [
        { ...idOption, description: english('command.jobs.rename.id.description') },
        { type: ApplicationCommandOptionType.String, name: 'title', description: english('command.jobs.rename.title.description'), required: true, max_length: LIMITS.titleMax },
      ],
    },
  ],
} as const satisfies RESTPostAPIApplicationCommandsJSONBody;

/**
 * A job of this guild the caller may act on (their own, or any if they moderate), by id, id
 * start or title; `pick` is the menu that continues the subcommand if they are asked which.
 */
async function ownJob(context: CommandContext, caller: Caller, typed: string, pick: 'jobs-show-pick' | 'jobs-cancel-pick'): Promise<JobRow> {
  const named = !isJobId(typed.trim().toLowerCase());
  return pickGuildJob(context, caller.guild.id, typed, caller.isModerator ? {} : { userId: caller.member.userId }, {
    menu: { action: pick, subject: 'job' },
    notFound: named
      ? localText('jobs.refusal.noneNamed', { name: escapeMarkdown(truncate(typed.trim(), 100)) })
      : localText('jobs.refusal.notYours'),
  });
}

/** Cancels before submission; returns the sentence that tells the member how it went, in their language. */
async function cancelJob(interaction: RepliablePort, context: CommandContext, caller: Caller, job: JobRow): Promise<string> {
  const outcome = await context.pipeline.cancel(job.id, { userId: caller.member.userId, isModerator: caller.isModerator });
  if (!outcome.cancelled) {
    switch (outcome.reason) {
      case 'not_allowed':
        throw new Refusal('not_allowed', localText('jobs.refusal.cancelNotAllowed'));
      case 'already_submitted':
        throw new Refusal('not_allowed', localText('jobs.refusal.alreadySubmitted'));
      case 'already_final':
        throw new Refusal('not_allowed', localText('jobs.refusal.alreadyFinal', { state: stateWord(context.t, job.state) }));
      default:
        throw new Refusal('not_found', localText('jobs.refusal.unknown'));
    }
  }
  await removePlaceholder(interaction.client.rest, job, context.logger);
  const balance = await context.credits.getBalance(caller.guild.id);
  const kind = kindWord(context.t, job.kind);
  return balance === null
    ? context.t('jobs.cancelled', { kind, count: outcome.refunded })
    : context.t('jobs.cancelledWithBalance', { kind, count: outcome.refunded, balance });
}

/** `/jobs cancel` with what the member typed or picked. */
async function cancelTyped(interaction: RepliablePort, context: CommandContext, caller: Caller, typed: string): Promise<void> {
  const job = await ownJob(context, caller, typed, 'jobs-cancel-pick');
  await answerInPlace(interaction, { content: await cancelJob(interaction, context, caller, job) });
}

/** The songs that the videos and downloads among `jobs` were made of, by job id (a song deleted since is missing). */
async function songsOf(context: CommandContext, guildId: string, jobs: readonly JobRow[]): Promise<Map<string, JobRow>> {
  const ids = new Set(jobs.flatMap((job) => (typeof job.request.sourceJobId === 'string' ? [job.request.sourceJobId] : [])));
  const found = await Promise.all([...ids].map((id) => context.pipeline.findJob(guildId, id)));
  return new Map(found.flatMap((job) => (job ? [[job.id, job] as const] : [])));
}

/** One request of `/jobs list`: its id, kind (a download's format), state, what it is (a video's or download's song) and when. */
function listLine(t: Translator, job: JobRow, songs: ReadonlyMap<string, JobRow>): string {
  const format = job.kind === 'download' && (job.request.format === 'mp3' || job.request.format === 'wav') ? job.request.format : undefined;
  const song = typeof job.request.sourceJobId === 'string' ? songs.get(job.request.sourceJobId) : undefined;
  return [
    `\`${job.id.slice(0, 8)}\` ${kindWord(t, job.kind)}${format ? ` ${t(`command.download.format.choice.${format}`)}` : ''}`,
    stateWord(t, job.state),
    song ? t('jobs.list.forSong', { title: escapeMarkdown(describeJob(song, t, 80)) }) : escapeMarkdown(describeJob(job, t, 80)),
    discordTimestamp(job.createdAt, 'R'),
  ].join(' · ');
}

/** As many whole lines as fit in `max` characters. */
function linesWithin(lines: readonly string[], max: number): string {
  let text = '';
  for (const line of lines) {
    const next = text === '' ? line : `${text}\n${line}`;
    if (next.length > max) break;
    text = next;
  }
  return text;
}

/** Renames one of the caller's own songs (moderators too rename only their own). */
async function renameSong(interaction: RepliablePort, context: CommandContext, caller: Caller, typed: string, title: string): Promise<void> {
  let job: JobRow;
  try {
    job = await pickGuildJob(context, caller.guild.id, typed, { userId: caller.member.userId, kinds: LIBRARY_KINDS, succeededOnly: true }, {
      menu: { action: 'jobs-show-pick', subject: 'job' },
      notFound: localText('jobs.rename.notFound'),
    });
  } catch (error) {
    // Several of theirs fit: the new title is not kept for a menu, so they pick by its suggestions.
    if (error instanceof Refusal && error.kind === 'ambiguous') throw new Refusal('ambiguous', localText('jobs.rename.ambiguous'));
    throw error;
  }
  const outcome = await context.pipeline.renameOwnResult({ requester: requesterOf(interaction, context, caller), jobId: job.id, title, guild: caller.guild });
  switch (outcome.outcome) {
    case 'renamed':
      await answerInPlace(interaction, { content: context.t('jobs.rename.done', { before: escapeMarkdown(outcome.before), after: escapeMarkdown(outcome.after) }) });
      return;
    case 'invalid':
      throw new Refusal('invalid_input', outcome.text);
    case 'not_yours':
    case 'gone':
      throw new Refusal('not_found', localText('jobs.rename.notFound'));
  }
}

/** Has the pipeline edit this interaction's public reply into the job's result, buttons included. */
async function showJob(interaction: RepliablePort, context: CommandContext, caller: Caller, typed: string): Promise<void> {
  const job = await ownJob(context, caller, typed, 'jobs-show-pick');
  if (job.state === 'cancelled') throw new Refusal('not_found', localText('jobs.refusal.cancelledNoResult'));
  if (!['succeeded', 'failed', 'timed_out'].includes(job.state)) {
    const position = job.state === 'queued' ? await context.pipeline.queuePosition(job.id) : undefined;
    const state = stateWord(context.t, job.state);
    throw new Refusal(
      'not_found',
      position ? localText('jobs.refusal.notDoneQueued', { state, position: shownPosition(position) }) : localText('jobs.refusal.notDone', { state }),
    );
  }
  // The pipeline posts the result by editing the reply: there must be one to edit.
  await deferNow(interaction);
  await context.pipeline.redeliver(job.id, replyTargetOf(interaction));
  handOverPublicReply(interaction);
}

export default defineCommand({
  definition,
  acknowledge: (args) => (args.subcommand === 'show' ? 'public' : 'ephemeral'),
  async execute(interaction, args, context) {
    const caller = await loadCaller(interaction, context);
    switch (args.subcommand) {
      case 'list': {
        const jobs = await context.pipeline.listJobs(caller.guild.id, { userId: caller.member.userId, limit: 15 });
        const songs = await songsOf(context, caller.guild.id, jobs);
        const lines = jobs.map((job) => listLine(context.t, job, songs));
        await answerInPlace(interaction, {
          content: lines.length === 0 ? context.t('jobs.list.empty') : linesWithin([context.t('jobs.list.heading'), ...lines], 2000),
        });
        return;
      }
      case 'show':
        await showJob(interaction, context, caller, args.options.id);
        return;
      case 'cancel':
        await cancelTyped(interaction, context, caller, args.options.id);
        return;
      case 'rename':
        await renameSong(interaction, context, caller, args.options.id, args.options.title);
        return;
    }
  },
  async autocomplete(interaction, context) {
    return jobChoices(context, interaction.guildId, interaction.options.getFocused(), { userId: interaction.user.id });
  },
  buttons: {
    /** "Show again": the same as `/jobs show`. */
    show: {
      acknowledge: 'public',
      async execute(interaction, id, context) {
        if (!isJobId(id.subject)) throw new Refusal('not_found', localText('jobs.refusal.gone'));
        await showJob(interaction, context, await loadCaller(interaction, context), id.subject);
      },
    },
    /** On the acknowledgement of a request: the acknowledgement itself becomes the answer. */
    cancel: {
      acknowledge: 'update',
      async execute(interaction, id, context) {
        if (!isJobId(id.subject)) throw new Refusal('not_found', localText('jobs.refusal.gone'));
        const caller = await loadCaller(interaction, context);
        const job = await ownJob(context, caller, id.subject, 'jobs-cancel-pick');
        const text = await cancelJob(interaction, context, caller, job);
        await interaction.editReply({ content: text, components: [], allowedMentions: { parse: [] } });
      },
    },
  },
  selects: {
    /** The request picked when the typed title fitted several: `/jobs show` and `/jobs cancel` go on with it. */
    'jobs-show-pick': {
      acknowledge: 'public',
      async execute(interaction, _id, context) {
        await showJob(interaction, context, await loadCaller(interaction, context), interaction.values[0] ?? '');
      },
    },
    'jobs-cancel-pick': {
      acknowledge: 'ephemeral',
      async execute(interaction, _id, context) {
        await cancelTyped(interaction, context, await loadCaller(interaction, context), interaction.values[0] ?? '');
      },
    },
  },
});
