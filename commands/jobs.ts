import {
  ApplicationCommandOptionType,
  InteractionContextType,
  type RESTPostAPIApplicationCommandsJSONBody,
} from 'discord-api-types/v10';
import { escapeMarkdown, type RepliableInteraction } from 'discord.js';
import { getBalance } from '../src/credits/index.js';
import { openCaller, type Caller } from '../src/discord/caller.js';
import type { CommandContext } from '../src/discord/context.js';
import { Refusal } from '../src/discord/errors.js';
import { describeJob, findGuildJob, isJobId, jobChoices } from '../src/discord/job-lookup.js';
import { removePlaceholder } from '../src/discord/placeholders.js';
import { answerInPlace, deferNow, handOverPublicReply, replyTargetOf } from '../src/discord/respond.js';
import type { JobRow } from '../src/pipeline/job-rows.js';
import { defineCommand } from '../src/discord/command.js';

const idOption = {
  type: ApplicationCommandOptionType.String,
  name: 'id',
  description: 'The job id (pick one, or paste it or its first 8 characters).',
  required: true,
  autocomplete: true,
} as const;

export const definition = {
  name: 'jobs',
  description: 'Your requests: list them, show a result again, cancel one that has not started.',
  contexts: [InteractionContextType.Guild],
  dm_permission: false,
  options: [
    { type: ApplicationCommandOptionType.Subcommand, name: 'list', description: 'Your recent requests on this server.' },
    {
      type: ApplicationCommandOptionType.Subcommand,
      name: 'show',
      description: 'Post a finished result again, with working buttons.',
      options: [idOption],
    },
    {
      type: ApplicationCommandOptionType.Subcommand,
      name: 'cancel',
      description: 'Cancel a request that was not yet sent to the service; its credits come back.',
      options: [idOption],
    },
  ],
} as const satisfies RESTPostAPIApplicationCommandsJSONBody;

const STATE_WORDS: Record<JobRow['state'], string> = {
  queued: 'waiting',
  submitting: 'being sent',
  submitted: 'in progress',
  succeeded: 'done',
  failed: 'failed',
  timed_out: 'timed out',
  cancelled: 'cancelled',
};

/** A job of this guild the caller may act on: their own, or any if they moderate. */
async function ownJob(context: CommandContext, caller: Caller, typed: string): Promise<JobRow> {
  const job = await findGuildJob(context, caller.guild.id, typed, caller.isModerator ? {} : { userId: caller.member.userId });
  if (!job) throw new Refusal('not_found', 'No request of yours on this server has that id. `/jobs list` shows them.');
  return job;
}

/** Cancels before submission; returns the sentence that tells the member how it went. */
async function cancelJob(interaction: RepliableInteraction, context: CommandContext, caller: Caller, job: JobRow): Promise<string> {
  const outcome = await context.pipeline.cancel(job.id, { userId: caller.member.userId, isModerator: caller.isModerator });
  if (!outcome.cancelled) {
    switch (outcome.reason) {
      case 'not_allowed':
        throw new Refusal('not_allowed', 'Only the member who asked, or a moderator, can cancel this request.');
      case 'already_submitted':
        throw new Refusal('not_allowed', 'Too late to cancel: the music service is already working on it.');
      case 'already_final':
        throw new Refusal('not_allowed', `That request is already ${STATE_WORDS[job.state]}.`);
      default:
        throw new Refusal('not_found', 'No request of yours on this server has that id.');
    }
  }
  await removePlaceholder(interaction.client.rest, job, context.logger);
  const balance = await getBalance(context.db, caller.guild.id);
  return `Cancelled your ${job.kind.replace('_', ' ')} request: ${outcome.refunded} credits back${balance === null ? '' : `, ${balance} on this server now`}.`;
}

/** Has the pipeline edit this interaction's public reply into the job's result, buttons included. */
async function showJob(interaction: RepliableInteraction, context: CommandContext, caller: Caller, typed: string): Promise<void> {
  const job = await ownJob(context, caller, typed);
  if (job.state === 'cancelled') throw new Refusal('not_found', 'That request was cancelled: it has no result.');
  if (!['succeeded', 'failed', 'timed_out'].includes(job.state)) {
    const position = job.state === 'queued' ? await context.pipeline.queuePosition(job.id) : undefined;
    throw new Refusal(
      'not_found',
      `That request is ${STATE_WORDS[job.state]}${position ? ` (position ${position} in the queue)` : ''}; its result will be posted when it is done.`,
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
    const caller = await openCaller(interaction, context);
    switch (args.subcommand) {
      case 'list': {
        const jobs = await context.pipeline.listJobs(caller.guild.id, { userId: caller.member.userId, limit: 15 });
        const lines = jobs.map(
          (job) =>
            `\`${job.id.slice(0, 8)}\` ${job.kind.replace('_', ' ')} · ${STATE_WORDS[job.state]} · ${escapeMarkdown(describeJob(job))} · <t:${Math.floor(job.createdAt.getTime() / 1000)}:R>`,
        );
        await answerInPlace(interaction, {
          content: lines.length === 0 ? 'You have no requests on this server yet.' : `**Your recent requests**\n${lines.join('\n')}`.slice(0, 2000),
        });
        return;
      }
      case 'show':
        await showJob(interaction, context, caller, args.options.id);
        return;
      case 'cancel': {
        const job = await ownJob(context, caller, args.options.id);
        await answerInPlace(interaction, { content: await cancelJob(interaction, context, caller, job) });
        return;
      }
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
        if (!isJobId(id.subject)) throw new Refusal('not_found', 'That request no longer exists.');
        await showJob(interaction, context, await openCaller(interaction, context), id.subject);
      },
    },
    /** On the acknowledgement of a request: the acknowledgement itself becomes the answer. */
    cancel: {
      acknowledge: 'update',
      async execute(interaction, id, context) {
        if (!isJobId(id.subject)) throw new Refusal('not_found', 'That request no longer exists.');
        const caller = await openCaller(interaction, context);
        const job = await ownJob(context, caller, id.subject);
        const text = await cancelJob(interaction, context, caller, job);
        await interaction.editReply({ content: text, components: [], allowedMentions: { parse: [] } });
      },
    },
  },
});
