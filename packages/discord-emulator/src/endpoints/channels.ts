/** Channels and their messages: reading a channel, typing, and listing, sending, editing and deleting messages, with the bot's permissions checked. */
import { ChannelType, PermissionFlagsBits } from 'discord-api-types/v10';
import { DiscordErrors, DiscordHttpError } from '../errors.js';
import { checkMessagePayload } from '../limits.js';
import type { MessageWrite, StoredMessage } from '../store/records.js';
import { isRecord, noContent, ok, wire } from './context.js';
import type { RouteContext } from './context.js';

/**
 * How long a `nonce` sent with `enforce_nonce` keeps a repeat from making a second message.
 * Discord says only "the past few minutes"; the emulator keeps the short end of that, so a bot
 * that leans on a longer window fails here first.
 */
export const ENFORCED_NONCE_WINDOW_MS = 2 * 60_000;

export function registerChannelRoutes(api: RouteContext): void {
  const { store } = api;
  /** Messages sent with `enforce_nonce`, by author and nonce: the message and when it was made. */
  const enforcedNonces = new Map<string, { messageId: string; at: number }>();
  const repeatOf = (authorId: string, body: unknown): { key: string; message?: StoredMessage } | undefined => {
    if (!isRecord(body) || body.enforce_nonce !== true) return undefined;
    if (typeof body.nonce !== 'string' && typeof body.nonce !== 'number') return undefined;
    const key = `${authorId}:${String(body.nonce)}`;
    const seen = enforcedNonces.get(key);
    if (!seen || store.clock.now() - seen.at > ENFORCED_NONCE_WINDOW_MS) return { key };
    return { key, message: store.messages.get(seen.messageId) };
  };

  api.route('GET', '/channels/{channel_id}', true, ({ params }) => ok(store.apiChannel(api.readableChannel(params.channel_id ?? ''))));
  api.route('POST', '/channels/{channel_id}/typing', true, ({ params }) => {
    api.readableChannel(params.channel_id ?? '');
    return noContent;
  });
  api.route('GET', '/channels/{channel_id}/messages', true, ({ params, query }) => {
    const channel = api.readableChannel(params.channel_id ?? '');
    api.requirePermission(channel, PermissionFlagsBits.ReadMessageHistory);
    return ok(listMessages(store.channelMessages(channel.id), query).map(wire));
  });
  api.route('POST', '/channels/{channel_id}/messages', true, ({ params, body, uploads }) => {
    const channel = api.readableChannel(params.channel_id ?? '');
    // A forum holds posts (threads), not messages.
    if (channel.type === ChannelType.GuildCategory || channel.type === ChannelType.GuildForum) {
      throw new DiscordHttpError(400, 50008, 'Cannot send messages in a non-text channel');
    }
    // A DM reaches only a user who takes the bot's messages (50007 otherwise, as Discord answers).
    if (channel.type === ChannelType.DM && !channel.recipientIds.every((id) => store.takesDirectMessages(id))) throw DiscordErrors.cannotSendToUser();
    // In a thread, Send Messages in Threads (from the parent) takes the place of Send Messages.
    api.requirePermission(channel, channel.thread ? PermissionFlagsBits.SendMessagesInThreads : PermissionFlagsBits.SendMessages);
    if (uploads.length > 0) api.requirePermission(channel, PermissionFlagsBits.AttachFiles);
    const { errors, empty } = checkMessagePayload(body, { fileCount: uploads.length, purchasableSku: store.purchasableSku });
    errors.throwIfAny();
    if (empty) throw DiscordErrors.emptyMessage();
    // The same author and nonce again within the window: that message, and no new one.
    const repeat = repeatOf(store.botUser.id, body);
    if (repeat?.message) return ok(wire(repeat.message));
    const stored = store.createMessage({
      channelId: channel.id,
      author: store.botUser,
      body: (isRecord(body) ? body : {}) as MessageWrite,
      uploads,
    });
    if (repeat) enforcedNonces.set(repeat.key, { messageId: stored.api.id, at: store.clock.now() });
    return ok(wire(stored));
  });
  api.route('GET', '/channels/{channel_id}/messages/{message_id}', true, ({ params }) => {
    const channel = api.readableChannel(params.channel_id ?? '');
    return ok(wire(api.channelMessage(channel, params.message_id ?? '')));
  });
  api.route('PATCH', '/channels/{channel_id}/messages/{message_id}', true, ({ params, body, uploads }) => {
    const channel = api.readableChannel(params.channel_id ?? '');
    const stored = api.channelMessage(channel, params.message_id ?? '');
    if (stored.api.author.id !== store.botUser.id) throw DiscordErrors.cannotEditOthersMessage();
    checkMessagePayload(body, { isEdit: true, existingFlags: stored.api.flags ?? 0, purchasableSku: store.purchasableSku }).errors.throwIfAny();
    return ok(wire(store.editMessage(stored, (isRecord(body) ? body : {}) as MessageWrite, uploads)));
  });
  api.route('DELETE', '/channels/{channel_id}/messages/{message_id}', true, ({ params }) => {
    const channel = api.readableChannel(params.channel_id ?? '');
    const stored = api.channelMessage(channel, params.message_id ?? '');
    if (stored.api.author.id !== store.botUser.id) api.requirePermission(channel, PermissionFlagsBits.ManageMessages);
    store.deleteMessage(stored);
    return noContent;
  });
}

/** GET /channels/{id}/messages: newest first, `limit` 1-100 (50), `before`/`after`/`around`. */
function listMessages(messages: StoredMessage[], query: URLSearchParams): StoredMessage[] {
  const limit = Math.min(Math.max(Number(query.get('limit') ?? 50) || 50, 1), 100);
  const newestFirst = [...messages].sort((a, b) => (BigInt(a.api.id) < BigInt(b.api.id) ? 1 : -1));
  const before = query.get('before');
  const after = query.get('after');
  const around = query.get('around');
  if (before) return newestFirst.filter((stored) => BigInt(stored.api.id) < BigInt(before)).slice(0, limit);
  if (after) {
    return newestFirst
      .filter((stored) => BigInt(stored.api.id) > BigInt(after))
      .slice(-limit);
  }
  if (around) {
    const index = newestFirst.findIndex((stored) => BigInt(stored.api.id) <= BigInt(around));
    const start = Math.max(0, (index === -1 ? newestFirst.length : index) - Math.floor(limit / 2));
    return newestFirst.slice(start, start + limit);
  }
  return newestFirst.slice(0, limit);
}
