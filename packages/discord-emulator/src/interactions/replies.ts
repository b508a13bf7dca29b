/** The messages an interaction's answers post or change: replies by the app, their interaction metadata, and the message a component sat on. */
import { ApplicationIntegrationType, InteractionType, MessageType } from 'discord-api-types/v10';
import type { APIMessageInteractionMetadata } from 'discord-api-types/v10';
import { DiscordErrors } from '../errors.js';
import type { MessageWrite, StoredMessage, Upload } from '../store/records.js';
import type { InteractionContext, InteractionRecord } from './record.js';

/** A stored message as Discord sends it (no emulator extras). */
export function wireMessage(stored: StoredMessage): StoredMessage['api'] {
  return structuredClone(stored.api);
}

/** The message a component interaction (or a modal opened from one) came from. */
export function sourceMessage(context: InteractionContext, record: InteractionRecord): StoredMessage {
  const source = record.sourceMessageId ? context.store.messages.get(record.sourceMessageId) : undefined;
  if (!source) throw DiscordErrors.unknownMessage();
  return source;
}

/** `interaction_metadata` of the app's messages answering the interaction. */
export function interactionMetadata(record: InteractionRecord): APIMessageInteractionMetadata {
  const base = {
    id: record.id,
    type: record.type,
    user: record.user,
    authorizing_integration_owners: { [ApplicationIntegrationType.GuildInstall]: record.guildId },
    ...(record.originalMessageId ? { original_response_message_id: record.originalMessageId } : {}),
  };
  if (record.type === InteractionType.MessageComponent) {
    return { ...base, interacted_message_id: record.sourceMessageId ?? '' } as APIMessageInteractionMetadata;
  }
  if (record.type === InteractionType.ModalSubmit && record.triggeredBy) {
    return { ...base, triggering_interaction_metadata: interactionMetadata(record.triggeredBy) } as APIMessageInteractionMetadata;
  }
  return base as APIMessageInteractionMetadata;
}

/** A message by the app in the interaction's channel, as a reply or follow-up (`loading`: a defer's "thinking" placeholder). */
export function createReply(
  context: InteractionContext,
  record: InteractionRecord,
  body: MessageWrite,
  uploads: Upload[],
  ephemeral: boolean,
  loading: boolean,
): StoredMessage {
  return context.store.createMessage({
    channelId: record.channelId,
    author: context.store.botUser,
    body,
    uploads,
    type: record.type === InteractionType.ApplicationCommand ? MessageType.ChatInputCommand : MessageType.Default,
    webhookId: context.applicationId,
    applicationId: context.applicationId,
    interactionMetadata: interactionMetadata(record),
    interactionId: record.id,
    ephemeral,
    loading,
  });
}

