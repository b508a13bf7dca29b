/** Messages: creating, restoring, editing and deleting them, their mentions, and the MESSAGE_* events bots hear. */
import { GatewayDispatchEvents, GatewayIntentBits, MessageFlags, MessageType } from 'discord-api-types/v10';
import type { APIAllowedMentions, APIEmbed, APIMessage } from 'discord-api-types/v10';
import type { EmulatorMessage } from '../types.js';
import { contentTypeFor, uploadedAttachments } from './attachments.js';
import type { CreateMessageInput, MessageWrite, StoredChannel, StoredMessage, Upload } from './records.js';
import { dispatch, dispatchLazily, requireChannel } from './state.js';
import type { StoreState } from './state.js';
import { apiMember } from './views.js';

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

export function createMessage(state: StoreState, input: CreateMessageInput): StoredMessage {
  const channel = requireChannel(state, input.channelId);
  const id = input.id ?? state.ids.next();
  if (state.messages.has(id)) throw new Error(`message ${id} already exists`);
  const body = input.body;
  const files = new Map<string, Buffer>();
  const flags =
    (typeof body.flags === 'number' ? body.flags : 0) |
    (input.ephemeral ? MessageFlags.Ephemeral : 0) |
    (input.loading ? MessageFlags.Loading : 0);
  const allowedMentions = isRecord(body.allowed_mentions) ? (body.allowed_mentions as APIAllowedMentions) : undefined;
  const content = typeof body.content === 'string' ? body.content : '';
  const api: APIMessage = {
    id,
    channel_id: channel.id,
    author: input.author,
    content,
    timestamp: state.clock.iso(),
    edited_timestamp: null,
    tts: body.tts === true,
    mention_everyone: false,
    mentions: [],
    mention_roles: [],
    attachments: uploadedAttachments(state, channel.id, body.attachments, input.uploads, files),
    embeds: Array.isArray(body.embeds) ? (body.embeds as APIEmbed[]).map(normalizeEmbed) : [],
    components: Array.isArray(body.components) ? (body.components as APIMessage['components']) : [],
    pinned: false,
    type: input.type ?? MessageType.Default,
    flags,
    ...(input.webhookId ? { webhook_id: input.webhookId } : {}),
    ...(input.applicationId ? { application_id: input.applicationId } : {}),
    ...(input.interactionMetadata ? { interaction_metadata: input.interactionMetadata } : {}),
    ...(isRecord(body.message_reference) ? { message_reference: body.message_reference as unknown as APIMessage['message_reference'] } : {}),
    ...(typeof body.nonce === 'string' || typeof body.nonce === 'number' ? { nonce: body.nonce } : {}),
  };
  applyMentions(state, api, channel, allowedMentions);
  const stored: StoredMessage = {
    api,
    guildId: channel.guildId,
    files,
    allowedMentions,
    ephemeral: input.ephemeral ?? false,
    interactionId: input.interactionId,
  };
  state.messages.set(id, stored);
  const list = state.channelMessageIds.get(channel.id) ?? [];
  list.push(id);
  state.channelMessageIds.set(channel.id, list);
  if (!stored.ephemeral) channel.lastMessageId = id;
  if (channel.thread && !stored.ephemeral && id !== channel.id) {
    channel.thread.messageCount += 1;
    channel.thread.totalMessageSent += 1;
  }
  state.events.emit('message', stored, 'create');
  dispatchMessage(state, GatewayDispatchEvents.MessageCreate, stored);
  return stored;
}

/**
 * Puts back a message kept from an earlier run, as Discord keeps a channel's history (the
 * playground uses it). Its attachments move to this run's CDN; nothing is dispatched.
 */
export function restoreMessage(state: StoreState, message: EmulatorMessage): void {
  const channel = requireChannel(state, message.channel_id);
  if (state.messages.has(message.id)) throw new Error(`message ${message.id} already exists`);
  const files = new Map<string, Buffer>();
  const attachments = message.attachments.map(({ data, ...attachment }) => {
    const path = `/attachments/${channel.id}/${attachment.id}/${encodeURIComponent(attachment.filename)}`;
    state.cdn.set(path, { data, contentType: contentTypeFor(attachment.filename, attachment.content_type) });
    files.set(attachment.id, data);
    const url = `${state.cdnBase()}${path}`;
    return { ...attachment, url, proxy_url: url };
  });
  const { ephemeral: _ephemeral, interactionId, allowed_mentions: allowedMentions, ...api } = structuredClone(message);
  state.messages.set(message.id, { api: { ...api, attachments }, guildId: channel.guildId, files, allowedMentions, ephemeral: false, interactionId });
  const list = state.channelMessageIds.get(channel.id) ?? [];
  list.push(message.id);
  list.sort((a, b) => (BigInt(a) < BigInt(b) ? -1 : BigInt(a) > BigInt(b) ? 1 : 0));
  state.channelMessageIds.set(channel.id, list);
  channel.lastMessageId = list.at(-1) ?? null;
}

/** Applies an edit: fields present replace, `attachments` lists what stays. */
export function editMessage(state: StoreState, stored: StoredMessage, body: MessageWrite, uploads: Upload[]): StoredMessage {
  const api = stored.api;
  if (typeof body.content === 'string' || body.content === null) api.content = body.content ?? '';
  if (Array.isArray(body.embeds) || body.embeds === null) api.embeds = ((body.embeds ?? []) as APIEmbed[]).map(normalizeEmbed);
  if (Array.isArray(body.components) || body.components === null) {
    api.components = (body.components ?? []) as APIMessage['components'];
  }
  if (isRecord(body.allowed_mentions)) stored.allowedMentions = body.allowed_mentions as APIAllowedMentions;
  const keepFlags = MessageFlags.Ephemeral | MessageFlags.IsComponentsV2;
  const oldFlags = api.flags ?? 0;
  const requested = typeof body.flags === 'number' ? body.flags : oldFlags;
  // Editing clears a deferred reply's "thinking" state; only a few flags can be changed by an edit.
  api.flags = (oldFlags & keepFlags) | (requested & (MessageFlags.SuppressEmbeds | MessageFlags.IsComponentsV2));
  if (body.attachments !== undefined || uploads.length > 0) {
    const kept = Array.isArray(body.attachments)
      ? api.attachments.filter((attachment) =>
          (body.attachments as unknown[]).some((entry) => isRecord(entry) && String(entry.id) === attachment.id),
        )
      : body.attachments === null
        ? []
        : api.attachments;
    for (const attachment of api.attachments) if (!kept.includes(attachment)) stored.files.delete(attachment.id);
    api.attachments = [...kept, ...uploadedAttachments(state, api.channel_id, body.attachments, uploads, stored.files)];
  }
  api.edited_timestamp = state.clock.iso();
  applyMentions(state, api, requireChannel(state, api.channel_id), stored.allowedMentions);
  state.events.emit('message', stored, 'update');
  dispatchMessage(state, GatewayDispatchEvents.MessageUpdate, stored);
  return stored;
}

export function deleteMessage(state: StoreState, stored: StoredMessage): void {
  state.messages.delete(stored.api.id);
  const list = state.channelMessageIds.get(stored.api.channel_id);
  if (list) state.channelMessageIds.set(stored.api.channel_id, list.filter((id) => id !== stored.api.id));
  state.events.emit('message-delete', stored);
  dispatchMessage(state, GatewayDispatchEvents.MessageDelete, stored);
}

/** MESSAGE_* events go to bots with GUILD_MESSAGES (or DIRECT_MESSAGES); ephemeral messages are never dispatched. */
function dispatchMessage(state: StoreState, t: GatewayDispatchEvents, stored: StoredMessage): void {
  if (stored.ephemeral) return;
  const intent = stored.guildId ? GatewayIntentBits.GuildMessages : GatewayIntentBits.DirectMessages;
  const guildPart = stored.guildId ? { guild_id: stored.guildId } : {};
  if (t === GatewayDispatchEvents.MessageDelete) {
    dispatch(state, t, { id: stored.api.id, channel_id: stored.api.channel_id, ...guildPart }, intent);
    return;
  }
  // Made (the message copied as it is now) only for a bot that receives it, during this call.
  const make = () => {
    const api = structuredClone(stored.api);
    const guild = stored.guildId ? state.guilds.get(stored.guildId) : undefined;
    const member = guild?.members.get(api.author.id);
    const memberPart = guild && member ? { member: (({ user: _user, ...rest }) => rest)(apiMember(state, guild, member)) } : {};
    return { ...api, ...guildPart, ...memberPart };
  };
  dispatchLazily(state, t, make, intent, stored.guildId ?? undefined);
}

function applyMentions(state: StoreState, api: APIMessage, channel: StoredChannel, allowed: APIAllowedMentions | undefined): void {
  const parse = allowed?.parse;
  const userAllowed = (id: string): boolean =>
    !allowed || parse === undefined ? true : parse.includes('users' as never) || (allowed.users ?? []).includes(id);
  const roleAllowed = (id: string): boolean =>
    !allowed || parse === undefined ? true : parse.includes('roles' as never) || (allowed.roles ?? []).includes(id);
  const guild = channel.guildId ? state.guilds.get(channel.guildId) : undefined;
  const userIds = [...api.content.matchAll(/<@!?(\d+)>/g)].map((match) => match[1] ?? '');
  api.mentions = [...new Set(userIds)].flatMap((id) => {
    const user = state.users.get(id);
    return user && userAllowed(id) ? [user] : [];
  });
  const roleIds = [...api.content.matchAll(/<@&(\d+)>/g)].map((match) => match[1] ?? '');
  api.mention_roles = [...new Set(roleIds)].filter((id) => guild?.roles.has(id) && roleAllowed(id));
  api.mention_everyone =
    /@(everyone|here)/.test(api.content) && (!allowed || parse === undefined || parse.includes('everyone' as never));
}

/** The message as a test sees it: Discord's shape plus bytes and what the bot asked for. */
export function publicMessage(stored: StoredMessage): EmulatorMessage {
  const api = structuredClone(stored.api);
  return {
    ...api,
    attachments: api.attachments.map((attachment) => ({
      ...attachment,
      data: Buffer.from(stored.files.get(attachment.id) ?? Buffer.alloc(0)),
    })),
    ...(stored.allowedMentions ? { allowed_mentions: structuredClone(stored.allowedMentions) } : {}),
    ephemeral: stored.ephemeral,
    ...(stored.interactionId ? { interactionId: stored.interactionId } : {}),
  };
}

export function channelMessages(state: StoreState, channelId: string, includeEphemeral = false): StoredMessage[] {
  return (state.channelMessageIds.get(channelId) ?? []).flatMap((id) => {
    const stored = state.messages.get(id);
    return stored && (includeEphemeral || !stored.ephemeral) ? [stored] : [];
  });
}

function normalizeEmbed(embed: APIEmbed): APIEmbed {
  return isRecord(embed) ? { type: 'rich' as APIEmbed['type'], ...embed } : embed;
}

