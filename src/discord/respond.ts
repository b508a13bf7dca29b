/**
 * How the bot answers an interaction once the router has acknowledged it.
 *
 * The rule for requests whose result the channel sees (songs, lyrics, videos, …): the router
 * defers a public reply at once, before any database call, because the guild's settings are
 * not known yet. Then:
 * - refused (bad input, disallowed channel, no credits, …): the public "thinking…" reply is
 *   deleted and the reason goes to the member alone, as an ephemeral follow-up;
 * - admitted in a guild whose visibility is `public`: the reply is edited into a short
 *   "starting" line *before* the pipeline is called (so no edit of the pipeline's can ever be
 *   overwritten); once the pipeline accepts, it owns that reply (progress, then the result),
 *   and what the request cost and what is left go to the member as an ephemeral follow-up
 *   (if the pipeline refuses after all, the line is deleted like any refusal);
 * - accepted in a guild whose visibility is `private`: the public reply is deleted before the
 *   pipeline is called, and the acknowledgement is an ephemeral follow-up.
 * Everything else (credits, settings, lists) is deferred ephemerally and edited in place.
 *
 * Discord turns the first follow-up after a deferral into the deferred reply itself (and
 * ignores its ephemeral flag), which is why the public reply is always edited or deleted
 * before anything is sent privately.
 */
import {
  MessageFlags,
  type BaseMessageOptions,
  type Interaction,
  type MessageComponentInteraction,
  type ModalSubmitInteraction,
  type RepliableInteraction,
} from 'discord.js';
import type { ReplyTarget } from '../pipeline/requests.js';

/**
 * How the router answers Discord before the handler touches the database: `public` and
 * `ephemeral` defer a reply; `update` defers an update of the message the button sits on;
 * `modal` leaves the first answer to the handler, which must open a modal at once.
 */
export type AcknowledgementKind = 'public' | 'ephemeral' | 'update' | 'modal';

interface ReplyState {
  kind: AcknowledgementKind;
  /** The public reply was deleted, or handed to the pipeline: not ours to delete any more. */
  publicReplySettled: boolean;
}

const states = new WeakMap<Interaction, ReplyState>();

/** Mentions in our texts are never pings: prompts and names come from members. */
const NO_PINGS = { parse: [] } as const;

/** Sends the first answer Discord needs within 3 seconds. */
export async function acknowledge(interaction: RepliableInteraction, kind: AcknowledgementKind): Promise<void> {
  states.set(interaction, { kind, publicReplySettled: false });
  switch (kind) {
    case 'public':
      await interaction.deferReply();
      return;
    case 'ephemeral':
      await interaction.deferReply({ flags: MessageFlags.Ephemeral });
      return;
    case 'update':
      await (interaction as MessageComponentInteraction | ModalSubmitInteraction).deferUpdate();
      return;
    case 'modal':
      return;
  }
}

export type Answer = Pick<BaseMessageOptions, 'content' | 'embeds' | 'components' | 'files'>;

function complete(answer: Answer) {
  return { ...answer, content: answer.content ?? '', embeds: answer.embeds ?? [], components: answer.components ?? [], allowedMentions: NO_PINGS };
}

/** Edits the deferred reply (public or ephemeral, as it was deferred). */
export async function answerInPlace(interaction: RepliableInteraction, answer: Answer): Promise<void> {
  const state = states.get(interaction);
  if (!interaction.deferred && !interaction.replied) {
    await interaction.reply({ ...complete(answer), flags: MessageFlags.Ephemeral });
  } else if (state?.kind === 'update' || state?.kind === 'modal') {
    await interaction.followUp({ ...complete(answer), flags: MessageFlags.Ephemeral });
  } else {
    await interaction.editReply(complete(answer));
  }
}

/**
 * Answers the member alone. A public deferral still ours is deleted first, so that nothing
 * public remains of a refused request; a button that deferred an update gets an ephemeral
 * follow-up and its message stays as it was.
 */
export async function answerPrivately(interaction: RepliableInteraction, answer: Answer): Promise<void> {
  const state = states.get(interaction);
  const kind = state?.kind ?? (interaction.ephemeral ? 'ephemeral' : 'public');
  if (!interaction.deferred && !interaction.replied) {
    await interaction.reply({ ...complete(answer), flags: MessageFlags.Ephemeral });
    return;
  }
  if (kind === 'ephemeral') {
    await interaction.editReply(complete(answer));
    return;
  }
  if (kind === 'public' && !state?.publicReplySettled) await dropPublicReply(interaction);
  await interaction.followUp({ ...complete(answer), flags: MessageFlags.Ephemeral });
}

/** Deletes the public deferred reply. */
export async function dropPublicReply(interaction: RepliableInteraction): Promise<void> {
  await interaction.deleteReply();
  settle(interaction);
}

/** From now on the public deferred reply belongs to the pipeline (progress, then the result). */
export function handOverPublicReply(interaction: RepliableInteraction): void {
  settle(interaction);
}

function settle(interaction: RepliableInteraction): void {
  const state = states.get(interaction);
  if (state) state.publicReplySettled = true;
  else states.set(interaction, { kind: 'public', publicReplySettled: true });
}

/** Where the pipeline answers: the interaction's token, valid 15 minutes from its creation. */
export function replyTargetOf(interaction: RepliableInteraction): ReplyTarget {
  return { applicationId: interaction.applicationId, interactionToken: interaction.token, createdAt: interaction.createdAt };
}
