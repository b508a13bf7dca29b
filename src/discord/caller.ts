/**
 * Who is asking, in which guild, and whether they may: the checks every spending request passes
 * before the pipeline reserves anything, and its acknowledgement once accepted. The rules
 * themselves are plain functions in src/guilds and src/credits.
 */
import {
  ActionRowBuilder,
  ButtonBuilder,
  ButtonStyle,
  ChannelType,
  PermissionFlagsBits,
} from 'discord.js';
import type { JobKind } from '../db/schema.js';
import { allowedChannelsText, checkPlaceAndRole, isModerator, type Member, type Place } from '../guilds/access.js';
import type { LoadedGuild } from '../guilds/settings.js';
import type { GenerationRequest, Requester, SubmitResult } from '../pipeline/requests.js';
import type { CommandContext } from './context.js';
import { encodeCustomId } from '../discord-rest/custom-ids.js';
import { kindKey } from '../pipeline/render.js';
import { FIRST_ANSWER_COUNT_LIMIT, shownPosition } from '../pipeline/job-rows.js';
import { kindsSharingTaskType } from '../pipeline/upstream.js';
import { REFUSAL_TEXTS } from '../pipeline/refusal-texts.js';
import { localText, resolveLocale, type Translator } from '../i18n/index.js';
import { Refusal } from './errors.js';
import { isAgeRestricted } from './age-restriction.js';
import type { RepliablePort } from './interaction-port.js';
import { answerInPlace, answerPrivately, handOverPublicReply, replyTargetOf, sendPrivateNote } from './respond.js';

export interface Caller {
  readonly guild: LoadedGuild;
  readonly member: Member;
  readonly place: Place;
  readonly isModerator: boolean;
  readonly isOwner: boolean;
}

/** The member as the interaction describes it: no fetch, no extra intent. */
export function memberOf(interaction: RepliablePort): Member {
  const member = interaction.member;
  const roleIds = !member ? [] : 'cache' in member.roles ? [...member.roles.cache.keys()] : [...member.roles];
  return {
    userId: interaction.user.id,
    roleIds,
    canManageGuild: interaction.memberPermissions?.has(PermissionFlagsBits.ManageGuild) ?? false,
  };
}

/**
 * Where the interaction ran. A thread (a forum post too) counts as its parent channel for the
 * allowed channels; `interaction.channel` is built from the interaction's own channel data when
 * the thread is not cached (see the partials in gateway.ts), so no thread has to be known first.
 */
function placeOf(interaction: RepliablePort): Place {
  const channel = interaction.channel;
  const isThread =
    channel !== null &&
    (channel.type === ChannelType.PublicThread ||
      channel.type === ChannelType.PrivateThread ||
      channel.type === ChannelType.AnnouncementThread);
  return { channelId: interaction.channelId ?? '', parentChannelId: isThread ? channel.parentId : null };
}

/**
 * Loads (or creates) the guild and describes the caller. The first database call of most
 * handlers. `queuedFor`: a request of this kind is coming; the same read counts the jobs of
 * its task type waiting in the queue, for its position, so the request needs no query for it.
 */
export async function loadCaller(interaction: RepliablePort, context: CommandContext, options: { queuedFor?: JobKind } = {}): Promise<Caller> {
  if (!interaction.guildId) throw new Refusal('not_in_guild', localText('refusal.notInGuild'));
  const member = memberOf(interaction);
  const guild = await context.guilds.loadGuild(interaction.guildId, {
    startingCredits: context.settings.startingCredits,
    roleIds: member.roleIds,
    userId: member.userId,
    ...(options.queuedFor && { queuedKinds: kindsSharingTaskType(options.queuedFor) }),
  });
  return {
    guild,
    member,
    place: placeOf(interaction),
    isModerator: isModerator(guild, member),
    isOwner: context.settings.botOwnerIds.includes(member.userId),
  };
}

export function requireModerator(caller: Caller, options: { ownersToo?: boolean } = {}): void {
  if (caller.isModerator || (options.ownersToo === true && caller.isOwner)) return;
  throw new Refusal('missing_permission', localText('refusal.moderatorOnly'));
}

export function requireOwner(caller: Caller): void {
  if (!caller.isOwner) throw new Refusal('missing_permission', localText('refusal.ownerOnly'));
}

/** The cost of a request kind, from the one cost table. */
export function costOf(context: CommandContext, kind: JobKind): number {
  return context.pipeline.costOf(kind);
}

/**
 * The rules a spending request must pass here, where the member is known: the channel, the
 * role and the cooldown. What it may spend (the freeze, the daily cap, the balance) is the
 * pipeline's to decide, once, when it reserves (`submitAndAcknowledge`).
 *
 * @throws Refusal with a sentence for the member.
 */
export async function checkMayRequest(context: CommandContext, caller: Caller): Promise<void> {
  const { guild, member } = caller;
  if (guild.memberBlock) throw new Refusal('blocked_member', REFUSAL_TEXTS.blockedMember(guild.memberBlock.until));
  const access = checkPlaceAndRole(guild, caller.place, member);
  if (access?.reason === 'channel_not_allowed') {
    throw new Refusal('channel_not_allowed', localText('refusal.channelNotAllowed', { channels: allowedChannelsText(access.allowedChannelIds) }));
  }
  if (access?.reason === 'missing_role') {
    throw new Refusal('missing_role', localText('refusal.missingRole', { role: access.roleId }));
  }
  const wait = await context.guilds.cooldownLeft(guild, member, new Date());
  if (wait > 0) {
    throw new Refusal('cooldown', localText('refusal.cooldown', { count: wait }));
  }
}

/**
 * Hands an admitted request to the pipeline and answers once it is accepted (see respond.ts):
 * the reservation is made before the first answer, so a refusal is only ever private, and the
 * job is queued after it, so no progress edit reaches a reply not yet made. In a public guild
 * the first answer is the public "Starting…" line the pipeline then edits, and the cost goes
 * to the member in private; in a private guild the private acknowledgement is the answer.
 * The Cancel button is decided here, once: offered only to a job that waits for its turn
 * (docs/decisions/cancel-button.md).
 */
/** The member as a request's checks see them: where they write, their roles, their language. */
export function requesterOf(interaction: RepliablePort, context: CommandContext, caller: Caller): Requester {
  return {
    guildId: caller.guild.id,
    channelId: caller.place.channelId,
    parentChannelId: interaction.channel?.parentId ?? null,
    userId: caller.member.userId,
    roleIds: caller.member.roleIds,
    locale: resolveLocale(interaction.locale),
    guildLocale: resolveLocale(interaction.guildLocale),
    ageRestricted: () => isAgeRestricted(interaction, context.logger),
  };
}

export async function submitAndAcknowledge(
  interaction: RepliablePort,
  context: CommandContext,
  caller: Caller,
  request: GenerationRequest,
): Promise<SubmitResult> {
  const isPrivate = caller.guild.visibility === 'private';
  const reply = replyTargetOf(interaction);
  const accepted = await context.pipeline.accept({
    requester: requesterOf(interaction, context, caller),
    request,
    // Two gateway processes on one shard both get this interaction: one job, one charge, one answer.
    requestKey: interaction.id,
    reply,
    guild: caller.guild,
  });
  const acknowledgement = (withCancel: boolean) => acceptedAnswer(request, accepted, context.t, withCancel);
  try {
    if (isPrivate) {
      // Not in the queue yet: a job that waits surely has not been taken, so Cancel is shown without asking.
      const messageId = await answerPrivately(interaction, acknowledgement(accepted.waits));
      if (accepted.waits) void context.pipeline.cancelShown(accepted.jobId, reply, messageId);
    } else {
      await answerInPlace(interaction, { content: context.t(`job.starting.${kindKey(request.kind)}`, { user: caller.member.userId }) });
    }
    handOverPublicReply(interaction);
  } finally {
    // The credits are taken: the job is queued even when the answer failed.
    await context.pipeline.enqueue(accepted);
  }
  context.logger.info({ jobId: accepted.jobId, guildId: caller.guild.id, kind: request.kind, cost: accepted.cost }, 'request accepted');
  if (!isPrivate) {
    // In the queue now: should a worker have taken the job already, recording the button finds
    // it taken and removes the button at once.
    const messageId = await sendPrivateNote(interaction, acknowledgement(accepted.waits), { wait: accepted.waits });
    if (accepted.waits && messageId !== undefined) void context.pipeline.cancelShown(accepted.jobId, reply, messageId);
  }
  return accepted;
}

/** What the member alone reads once a request is accepted: its cost, the balance, and while it waits, a way to cancel. */
function acceptedAnswer(request: GenerationRequest, result: SubmitResult, t: Translator, withCancel: boolean) {
  const accepted = t(`job.accepted.${kindKey(request.kind)}`, { cost: result.cost, balance: result.balance });
  const position = result.queuePosition > 1 ? ` ${t('job.accepted.position', { position: shownPosition(result.queuePosition, FIRST_ANSWER_COUNT_LIMIT) })}` : '';
  const cancel = new ButtonBuilder()
    .setCustomId(encodeCustomId({ action: 'cancel', subject: result.jobId }))
    .setLabel(t('job.button.cancel'))
    .setStyle(ButtonStyle.Secondary);
  return {
    content: `${accepted}${position}\n${t('job.accepted.id', { id: result.jobId })}`,
    components: withCancel ? [new ActionRowBuilder<ButtonBuilder>().addComponents(cancel)] : [],
  };
}
