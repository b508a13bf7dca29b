/** The initial response to an interaction (POST /interactions/{id}/{token}/callback), held to Discord's rules. */
import { InteractionResponseType, InteractionType, MessageFlags } from 'discord-api-types/v10';
import type { APIModalInteractionResponseCallbackData } from 'discord-api-types/v10';
import { DiscordErrors, FormErrors } from '../errors.js';
import { checkAutocompleteChoices, checkMessagePayload, checkModal } from '../limits.js';
import type { MessageWrite, Upload } from '../store/records.js';
import type { InteractionContext, InteractionRecord } from './record.js';
import { createReply, sourceMessage, wireMessage } from './replies.js';

/** Discord's window for the initial response to an interaction. */
export const INITIAL_RESPONSE_WINDOW_MS = 3_000;

/** The response types Discord accepts for each interaction type. */
const ALLOWED_RESPONSES: Record<InteractionType, readonly InteractionResponseType[]> = {
  [InteractionType.Ping]: [InteractionResponseType.Pong],
  [InteractionType.ApplicationCommand]: [
    InteractionResponseType.ChannelMessageWithSource,
    InteractionResponseType.DeferredChannelMessageWithSource,
    InteractionResponseType.Modal,
  ],
  [InteractionType.MessageComponent]: [
    InteractionResponseType.ChannelMessageWithSource,
    InteractionResponseType.DeferredChannelMessageWithSource,
    InteractionResponseType.DeferredMessageUpdate,
    InteractionResponseType.UpdateMessage,
    InteractionResponseType.Modal,
  ],
  [InteractionType.ApplicationCommandAutocomplete]: [InteractionResponseType.ApplicationCommandAutocompleteResult],
  [InteractionType.ModalSubmit]: [
    InteractionResponseType.ChannelMessageWithSource,
    InteractionResponseType.DeferredChannelMessageWithSource,
    InteractionResponseType.DeferredMessageUpdate,
    InteractionResponseType.UpdateMessage,
  ],
};

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/**
 * Applies the bot's response to an interaction found by id and token: 204, or 200 with the
 * callback response object when `withResponse`. Throws Discord's errors, changing nothing.
 */
export function respond(
  context: InteractionContext,
  record: InteractionRecord,
  body: unknown,
  uploads: Upload[],
  withResponse: boolean,
): { status: number; body?: unknown } {
  if (record.response) throw DiscordErrors.alreadyAcknowledged();
  const now = context.clock.now();
  if (now - record.createdAt > INITIAL_RESPONSE_WINDOW_MS) throw DiscordErrors.unknownInteraction();
  const request = isRecord(body) ? body : {};
  const type = request.type as InteractionResponseType;
  const allowed = ALLOWED_RESPONSES[record.type].filter(
    (candidate) =>
      record.sourceMessageId !== undefined ||
      (candidate !== InteractionResponseType.DeferredMessageUpdate && candidate !== InteractionResponseType.UpdateMessage),
  );
  if (!allowed.includes(type)) {
    const errors = new FormErrors();
    errors.add(['type'], 'BASE_TYPE_CHOICES', `Value must be one of {${allowed.join(', ')}}.`);
    throw DiscordErrors.invalidFormBody(errors);
  }
  const data = request.data;
  const dataRecord = (isRecord(data) ? data : {}) as MessageWrite;
  const ephemeral = typeof dataRecord.flags === 'number' && (dataRecord.flags & MessageFlags.Ephemeral) !== 0;

  // Validate everything before changing anything.
  switch (type) {
    case InteractionResponseType.ChannelMessageWithSource: {
      const { errors, empty } = checkMessagePayload(data, { path: ['data'], fileCount: uploads.length, purchasableSku: context.store.purchasableSku });
      errors.throwIfAny();
      if (empty) throw DiscordErrors.emptyMessage();
      break;
    }
    case InteractionResponseType.UpdateMessage: {
      const source = sourceMessage(context, record);
      checkMessagePayload(data, { path: ['data'], isEdit: true, existingFlags: source.api.flags ?? 0, purchasableSku: context.store.purchasableSku }).errors.throwIfAny();
      break;
    }
    case InteractionResponseType.Modal:
      checkModal(data).throwIfAny();
      break;
    case InteractionResponseType.ApplicationCommandAutocompleteResult:
      checkAutocompleteChoices(data).throwIfAny();
      break;
    default:
      break;
  }

  let messageId: string | undefined;
  switch (type) {
    case InteractionResponseType.ChannelMessageWithSource:
      messageId = createReply(context, record, dataRecord, uploads, ephemeral, false).api.id;
      break;
    case InteractionResponseType.DeferredChannelMessageWithSource:
      messageId = createReply(context, record, { flags: dataRecord.flags }, [], ephemeral, true).api.id;
      break;
    case InteractionResponseType.DeferredMessageUpdate:
      messageId = sourceMessage(context, record).api.id;
      break;
    case InteractionResponseType.UpdateMessage: {
      const source = sourceMessage(context, record);
      context.store.editMessage(source, dataRecord, uploads);
      messageId = source.api.id;
      break;
    }
    case InteractionResponseType.Modal:
      record.modal = data as APIModalInteractionResponseCallbackData;
      break;
    default:
      break;
  }
  if (messageId && record.originalMessageId === undefined) {
    record.originalMessageId = messageId;
    if (type !== InteractionResponseType.UpdateMessage && type !== InteractionResponseType.DeferredMessageUpdate) {
      record.baselineVersion = 0;
    }
  }
  record.response = { type, data: structuredClone(data), ephemeral, at: now };
  context.events.emit('change');

  if (!withResponse) return { status: 204 };
  const original = messageId ? context.store.messages.get(messageId) : undefined;
  return {
    status: 200,
    body: {
      interaction: {
        id: record.id,
        type: record.type,
        ...(original
          ? {
              response_message_id: original.api.id,
              response_message_loading: ((original.api.flags ?? 0) & MessageFlags.Loading) !== 0,
              response_message_ephemeral: original.ephemeral,
            }
          : {}),
      },
      resource: { type, ...(original ? { message: wireMessage(original) } : {}) },
    },
  };
}

