/**
 * How the bot answers an interaction once the router has acknowledged it.
 *
 * The rule for commands whose result the channel sees (songs, lyrics, videos, …): the router
 * defers a public reply at once, before any database call, because the guild's settings are
 * not known yet. Then:
 * - refused (bad input, disallowed channel, no credits, …): the public "thinking…" reply is
 *   deleted and the reason goes to the member alone, as an ephemeral follow-up;
 * - accepted in a guild whose visibility is `public`: the reply is edited into the
 *   acknowledgement (cost, balance left), which the pipeline later edits into the result;
 * - accepted in a guild whose visibility is `private`: the public reply is deleted and the
 *   acknowledgement is an ephemeral follow-up; the result is then delivered ephemerally too.
 * Everything else (credits, settings, lists) is deferred ephemerally and edited in place.
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

export type AcknowledgementKind = 'public' | 'ephemeral' | 'update' | 'modal';

const acknowledged = new WeakMap<Interaction, AcknowledgementKind>();

/** Mentions in our texts are never pings: prompts and names come from members. */
const NO_PINGS = { parse: [] } as const;

/** Sends the first answer Discord needs within 3 seconds. */
export async function acknowledge(interaction: RepliableInteraction, kind: AcknowledgementKind): Promise<void> {
  acknowledged.set(interaction, kind);
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

function withDefaults(answer: Answer): Answer & { allowedMentions: typeof NO_PINGS } {
  return { ...answer, content: answer.content ?? '', embeds: answer.embeds ?? [], components: answer.components ?? [], allowedMentions: NO_PINGS };
}

/** Edits the deferred reply (public or ephemeral, as it was deferred). */
export async function answerInPlace(interaction: RepliableInteraction, answer: Answer): Promise<void> {
  if (!interaction.deferred && !interaction.replied) {
    await interaction.reply({ ...withDefaults(answer), flags: MessageFlags.Ephemeral });
    return;
  }
  if (acknowledged.get(interaction) === 'update') {
    await interaction.followUp({ ...withDefaults(answer), flags: MessageFlags.Ephemeral });
    return;
  }
  await interaction.editReply(withDefaults(answer));
}

/**
 * Answers the member alone. A public deferral is replaced (deleted, then an ephemeral
 * follow-up) so that nothing public remains of a refused request; a button that deferred an
 * update gets an ephemeral follow-up and its message stays as it was.
 */
export async function answerPrivately(interaction: RepliableInteraction, answer: Answer): Promise<void> {
  const kind = acknowledged.get(interaction);
  if (!interaction.deferred && !interaction.replied) {
    await interaction.reply({ ...withDefaults(answer), flags: MessageFlags.Ephemeral });
  } else if (kind === 'ephemeral' || (kind === undefined && interaction.ephemeral === true)) {
    await interaction.editReply(withDefaults(answer));
  } else if (kind === 'update' || kind === 'modal') {
    await interaction.followUp({ ...withDefaults(answer), flags: MessageFlags.Ephemeral });
  } else {
    await interaction.deleteReply();
    await interaction.followUp({ ...withDefaults(answer), flags: MessageFlags.Ephemeral });
  }
}

/** Where the pipeline answers: the interaction's token, valid 15 minutes from its creation. */
export function replyTargetOf(interaction: RepliableInteraction): ReplyTarget {
  return { applicationId: interaction.applicationId, interactionToken: interaction.token, createdAt: interaction.createdAt };
}
