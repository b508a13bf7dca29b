/** What the bot does with an interaction token (`/webhooks/{application_id}/{token}`): follow-ups, and reading, editing and deleting its messages. */
import { InteractionResponseType, MessageFlags } from 'discord-api-types/v10';
import { DiscordErrors } from '../errors.js';
import { checkMessagePayload } from '../limits.js';
import type { MessageWrite, StoredMessage, Upload } from '../store/records.js';
import type { InteractionContext, InteractionRecord } from './record.js';
import { createReply } from './replies.js';

/** How long an interaction token can be used for edits and follow-ups. */
export const INTERACTION_TOKEN_LIFETIME_MS = 15 * 60_000;

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function originalMessage(context: InteractionContext, record: InteractionRecord): StoredMessage {
  if (!record.response) throw DiscordErrors.unknownWebhook();
  const stored = record.originalMessageId ? context.store.messages.get(record.originalMessageId) : undefined;
  if (!stored) throw DiscordErrors.unknownMessage();
  return stored;
}

function ownedMessage(context: InteractionContext, record: InteractionRecord, messageId: string): StoredMessage {
  if (messageId === '@original') return originalMessage(context, record);
  const owned = messageId === record.originalMessageId || record.followUpIds.includes(messageId);
  const stored = owned ? context.store.messages.get(messageId) : undefined;
  if (!stored) throw DiscordErrors.unknownMessage();
  return stored;
}

export function getMessage(context: InteractionContext, record: InteractionRecord, messageId: string): StoredMessage {
  return ownedMessage(context, record, messageId);
}

export function editMessage(context: InteractionContext, record: InteractionRecord, messageId: string, body: unknown, uploads: Upload[]): StoredMessage {
  const stored = ownedMessage(context, record, messageId);
  const { errors } = checkMessagePayload(body, { isEdit: true, existingFlags: stored.api.flags ?? 0, purchasableSku: context.store.purchasableSku });
  errors.throwIfAny();
  context.store.editMessage(stored, (isRecord(body) ? body : {}) as MessageWrite, uploads);
  context.events.emit('change');
  return stored;
}

export function deleteMessage(context: InteractionContext, record: InteractionRecord, messageId: string): void {
  const stored = ownedMessage(context, record, messageId);
  context.store.deleteMessage(stored);
  context.events.emit('change');
}

/** POST /webhooks/{application_id}/{token}: a follow-up (the first one after a defer fills the placeholder). */
export function followUp(context: InteractionContext, record: InteractionRecord, body: unknown, uploads: Upload[]): StoredMessage {
  const response = record.response;
  if (
    !response ||
    response.type === InteractionResponseType.Modal ||
    response.type === InteractionResponseType.ApplicationCommandAutocompleteResult
  ) {
    throw DiscordErrors.unknownWebhook();
  }
  const { errors, empty } = checkMessagePayload(body, { fileCount: uploads.length, purchasableSku: context.store.purchasableSku });
  errors.throwIfAny();
  if (empty) throw DiscordErrors.emptyMessage();
  const write = (isRecord(body) ? body : {}) as MessageWrite;
  const original = record.originalMessageId ? context.store.messages.get(record.originalMessageId) : undefined;
  let stored: StoredMessage;
  if (
    response.type === InteractionResponseType.DeferredChannelMessageWithSource &&
    original &&
    ((original.api.flags ?? 0) & MessageFlags.Loading) !== 0
  ) {
    // Discord fills the "thinking" placeholder with the first follow-up, keeping the defer's ephemerality.
    stored = context.store.editMessage(original, write, uploads);
  } else {
    const ephemeral = typeof write.flags === 'number' && (write.flags & MessageFlags.Ephemeral) !== 0;
    stored = createReply(context, record, write, uploads, ephemeral, false);
  }
  record.followUpIds.push(stored.api.id);
  context.events.emit('change');
  return stored;
}

