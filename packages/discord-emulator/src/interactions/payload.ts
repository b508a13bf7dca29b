/** A new interaction as Discord creates it when a member acts: its id, token and INTERACTION_CREATE payload. */
import { randomBytes } from 'node:crypto';
import { ApplicationIntegrationType, InteractionContextType } from 'discord-api-types/v10';
import type { APIInteraction, InteractionType } from 'discord-api-types/v10';
import type { StoredChannel, StoredGuild, StoredMessage } from '../store/records.js';
import type { InteractionContext, InteractionRecord } from './record.js';
import { wireMessage } from './replies.js';

/** Discord's default upload limit per attachment for bots (10 MiB). */
export const DEFAULT_ATTACHMENT_SIZE_LIMIT = 10 * 1024 * 1024;

export interface NewInteraction {
  type: InteractionType;
  guild: StoredGuild;
  channel: StoredChannel;
  userId: string;
  data: unknown;
  /** For components, and modals opened from one: the message acted on. */
  source?: StoredMessage;
  /** For a modal submit: the interaction the bot answered with the modal. */
  triggeredBy?: InteractionRecord;
  locale?: string;
  /** The payload's `entitlements` as given, instead of the member's and the guild's (a forged payload). */
  entitlements?: unknown[];
}

/**
 * The record of an interaction a member starts in a guild channel, payload included; nothing is
 * registered or sent. Throws when the user is not a member, or cannot see the thread.
 */
export function createInteraction(context: InteractionContext, attachmentSizeLimit: number, input: NewInteraction): InteractionRecord {
  const { type, guild, channel, userId, data } = input;
  const store = context.store;
  const member = store.interactionMember(guild, channel, userId);
  if (channel.thread && !store.canSeeThread(guild, channel, userId)) {
    throw new Error(`user ${userId} cannot see thread ${channel.id}: a private thread shows only to its members (and Manage Threads)`);
  }
  const id = store.nextId();
  const token = `emulator.${id}.${randomBytes(48).toString('base64url')}`;
  const channelPayload = {
    ...store.apiChannel(channel),
    permissions: store.channelPermissions(guild, channel, userId).toString(),
  };
  const payload = {
    id,
    application_id: context.applicationId,
    type,
    data,
    guild_id: guild.id,
    guild: { id: guild.id, locale: guild.locale, features: [] },
    channel: channelPayload,
    channel_id: channel.id,
    member,
    token,
    version: 1,
    app_permissions: store.channelPermissions(guild, channel, store.botUser.id).toString(),
    locale: input.locale ?? store.userLocales.get(userId) ?? 'en-US',
    guild_locale: guild.locale,
    // The member's and the guild's active entitlements, as Discord puts them on every interaction.
    entitlements: input.entitlements ?? store.monetization.activeFor(userId, guild.id),
    authorizing_integration_owners: { [ApplicationIntegrationType.GuildInstall]: guild.id },
    context: InteractionContextType.Guild,
    attachment_size_limit: attachmentSizeLimit,
    ...(input.source ? { message: wireMessage(input.source) } : {}),
  } as APIInteraction;
  return {
    id,
    token,
    type,
    payload,
    createdAt: context.clock.now(),
    guildId: guild.id,
    channelId: channel.id,
    user: member.user,
    sourceMessageId: input.source?.api.id,
    baselineVersion: context.version(input.source),
    response: undefined,
    originalMessageId: undefined,
    followUpIds: [],
    modal: undefined,
    triggeredBy: input.triggeredBy,
  };
}
