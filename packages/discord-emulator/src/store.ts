import { EventEmitter } from 'node:events';
import type {
  APIAutoModerationRule,
  APIChannel,
  APIEntitlement,
  APIGuild,
  APIGuildMember,
  APIInteractionGuildMember,
  APIOverwrite,
  APIRole,
  APIUser,
  ChannelType,
  GatewayGuildCreateDispatchData,
} from 'discord-api-types/v10';
import type { EmulatorClock } from './clock.js';
import type { SnowflakeGenerator } from './snowflake.js';
import { storeAttachment } from './store/attachments.js';
import { createRule, deleteRule, getRule, listRules, modifyRule, type RuleInput } from './store/auto-moderation.js';
import { addBot, addMember, addUser, createChannel, createGuild, createRole, denyChannel, dmChannel, removeBot, setChannelNsfw, setMemberRole, setOverwrite, setRolePermissions } from './store/guilds.js';
import type { CreateChannelInput, CreateGuildInput } from './store/guilds.js';
import { channelMessages, createMessage, deleteMessage, editMessage, publicMessage, restoreMessage } from './store/messages.js';
import { basePermissions, canSeeThread, channelPermissions } from './store/permissions.js';
import type { CreateMessageInput, MessageWrite, StoredChannel, StoredGuild, StoredMember, StoredMessage, Upload } from './store/records.js';
import { requireChannel, requireGuild } from './store/state.js';
import type { CdnFile, StoreState } from './store/state.js';
import { Monetization } from './store/monetization.js';
import type { EntitlementDelivery, EntitlementEventType } from './store/monetization.js';
import { createForumPost, createThread } from './store/threads.js';
import { apiChannel, apiGuild, apiMember, apiThreadFor, guildCreatePayload, interactionMember } from './store/views.js';
import type { EmulatorAttachment, EmulatorMessage } from './types.js';

/** An entitlement change the bot should hear of, and how. */
export interface EntitlementEvent {
  type: EntitlementEventType;
  entitlement: APIEntitlement;
  delivery: EntitlementDelivery;
}

/**
 * The emulated Discord's state: users, guilds, channels, roles, members, messages and uploaded
 * files. Changes a bot would hear about are emitted as `dispatch`. Each method's work is done
 * in `store/`, one module per part of the world.
 */
export class EmulatorStore implements StoreState {
  readonly users = new Map<string, APIUser>();
  readonly guilds = new Map<string, StoredGuild>();
  readonly channels = new Map<string, StoredChannel>();
  readonly messages = new Map<string, StoredMessage>();
  readonly channelMessageIds = new Map<string, string[]>();
  readonly deniedChannels = new Set<string>();
  /** Users who take no direct messages from the bot (DMs from server members off, or the bot blocked). */
  readonly closedDirectMessages = new Set<string>();
  /** Users' client languages (Discord's `locale`) where a test set one; `en-US` otherwise. */
  readonly userLocales = new Map<string, string>();
  readonly cdn = new Map<string, CdnFile>();
  readonly automodRules = new Map<string, Map<string, APIAutoModerationRule>>();
  /**
   * `dispatch` (StoreDispatch), `message` (StoredMessage, 'create' | 'update'), `message-delete` (StoredMessage),
   * `entitlement` (EntitlementEvent).
   */
  readonly events = new EventEmitter();
  /** The application's SKUs, entitlements and subscriptions. */
  readonly monetization: Monetization;
  readonly botUser: APIUser;
  readonly ids: SnowflakeGenerator;
  readonly clock: EmulatorClock;
  readonly cdnBase: () => string;

  constructor(options: { ids: SnowflakeGenerator; clock: EmulatorClock; botUser: APIUser; cdnBase: () => string; applicationId: string }) {
    this.ids = options.ids;
    this.monetization = new Monetization({
      ids: options.ids,
      clock: options.clock,
      applicationId: options.applicationId,
      deliver: (type, entitlement, delivery) => this.events.emit('entitlement', { type, entitlement, delivery } satisfies EntitlementEvent),
    });
    this.clock = options.clock;
    this.cdnBase = options.cdnBase;
    this.botUser = options.botUser;
    this.users.set(options.botUser.id, options.botUser);
    this.events.setMaxListeners(0);
  }

  /** Whether a premium button may name this SKU (message checks). */
  readonly purchasableSku = (skuId: unknown): boolean => this.monetization.isPurchasable(skuId);

  nextId(): string {
    return this.ids.next();
  }

  // ---- guilds, roles, members, channels ----

  addUser(input: { id?: string; username: string; globalName?: string | null; bot?: boolean }): APIUser {
    return addUser(this, input);
  }

  guild(guildId: string): StoredGuild {
    return requireGuild(this, guildId);
  }

  channel(channelId: string): StoredChannel {
    return requireChannel(this, channelId);
  }

  createGuild(input: CreateGuildInput): StoredGuild {
    return createGuild(this, input);
  }

  /** The bot is kicked from the guild: GUILD_DELETE (not unavailable), and it is left out of READY. */
  removeBot(guildId: string): void {
    removeBot(this, guildId);
  }

  /** The bot is invited back: GUILD_CREATE with the guild as it is now. */
  addBot(guildId: string): void {
    addBot(this, guildId);
  }

  createChannel(guildId: string, input: CreateChannelInput): StoredChannel {
    return createChannel(this, guildId, input);
  }

  /** The DM channel between the bot and `userId`, created on first use. */
  dmChannel(userId: string): StoredChannel {
    return dmChannel(this, userId);
  }

  createRole(guildId: string, input: { id?: string; name: string; permissions?: bigint | string; position?: number }): APIRole {
    return createRole(this, guildId, input);
  }

  setRolePermissions(guildId: string, roleId: string, permissions: bigint): APIRole {
    return setRolePermissions(this, guildId, roleId, permissions);
  }

  setMemberRole(guildId: string, userId: string, roleId: string, give: boolean): StoredMember {
    return setMemberRole(this, guildId, userId, roleId, give);
  }

  addMember(
    guildId: string,
    input: { userId?: string; username: string; globalName?: string; roles?: string[]; permissions?: bigint | string; nick?: string },
  ): StoredMember {
    return addMember(this, guildId, input);
  }

  /**
   * Whether the bot may post in its DM with `userId`, as Discord decides: not to a bot, not to
   * a user who closed their DMs, and only to a user who shares a server with the bot.
   */
  takesDirectMessages(userId: string): boolean {
    const user = this.users.get(userId);
    if (!user || user.bot || this.closedDirectMessages.has(userId)) return false;
    for (const guild of this.guilds.values()) if (!guild.botRemoved && guild.members.has(userId)) return true;
    return false;
  }

  /** Takes the bot's access to a channel away, as a permission overwrite on the channel. */
  denyChannel(channelId: string): void {
    denyChannel(this, channelId);
  }

  setChannelNsfw(channelId: string, nsfw: boolean): void {
    setChannelNsfw(this, channelId, nsfw);
  }

  setOverwrite(channelId: string, overwrite: APIOverwrite): void {
    setOverwrite(this, channelId, overwrite);
  }

  // ---- threads and forum posts ----

  createThread(
    parentId: string,
    input: { id?: string; name: string; type: ChannelType.PublicThread | ChannelType.PrivateThread; ownerId: string; memberIds?: string[]; invitable?: boolean },
  ): StoredChannel {
    return createThread(this, parentId, input);
  }

  createForumPost(forumId: string, input: { name: string; authorId: string; message: MessageWrite }): { thread: StoredChannel; starter: StoredMessage } {
    return createForumPost(this, forumId, input);
  }

  canSeeThread(guild: StoredGuild, thread: StoredChannel, userId: string): boolean {
    return canSeeThread(this, guild, thread, userId);
  }

  // ---- Auto Moderation ----

  listAutoModerationRules(guildId: string): APIAutoModerationRule[] {
    return listRules(this, guildId);
  }

  autoModerationRule(guildId: string, ruleId: string): APIAutoModerationRule {
    return getRule(this, guildId, ruleId);
  }

  createAutoModerationRule(guildId: string, creatorId: string, input: RuleInput): APIAutoModerationRule {
    return createRule(this, guildId, creatorId, input);
  }

  modifyAutoModerationRule(guildId: string, ruleId: string, input: RuleInput): APIAutoModerationRule {
    return modifyRule(this, guildId, ruleId, input);
  }

  deleteAutoModerationRule(guildId: string, ruleId: string): void {
    deleteRule(this, guildId, ruleId);
  }

  // ---- permissions ----

  basePermissions(guild: StoredGuild, userId: string): bigint {
    return basePermissions(guild, userId);
  }

  channelPermissions(guild: StoredGuild, channel: StoredChannel, userId: string): bigint {
    return channelPermissions(this, guild, channel, userId);
  }

  // ---- Discord-shaped views ----

  apiMember(guild: StoredGuild, member: StoredMember): APIGuildMember {
    return apiMember(this, guild, member);
  }

  interactionMember(guild: StoredGuild, channel: StoredChannel, userId: string): APIInteractionGuildMember {
    return interactionMember(this, guild, channel, userId);
  }

  apiChannel(channel: StoredChannel): APIChannel {
    return apiChannel(this, channel);
  }

  apiThreadFor(thread: StoredChannel, userId: string): APIChannel {
    return apiThreadFor(this, thread, userId);
  }

  apiGuild(guild: StoredGuild): APIGuild {
    return apiGuild(guild);
  }

  guildCreatePayload(guild: StoredGuild, allMembers: boolean, voiceStates = false): GatewayGuildCreateDispatchData {
    return guildCreatePayload(this, guild, allMembers, voiceStates);
  }

  // ---- messages and attachments ----

  createMessage(input: CreateMessageInput): StoredMessage {
    return createMessage(this, input);
  }

  restoreMessage(message: EmulatorMessage): void {
    restoreMessage(this, message);
  }

  editMessage(stored: StoredMessage, body: MessageWrite, uploads: Upload[]): StoredMessage {
    return editMessage(this, stored, body, uploads);
  }

  deleteMessage(stored: StoredMessage): void {
    deleteMessage(this, stored);
  }

  storeAttachment(
    channelId: string,
    upload: { filename: string; contentType?: string; data: Buffer; description?: string; url?: string; redirectTo?: string },
    ephemeral = false,
  ): EmulatorAttachment {
    return storeAttachment(this, channelId, upload, ephemeral);
  }

  publicMessage(stored: StoredMessage): EmulatorMessage {
    return publicMessage(stored);
  }

  channelMessages(channelId: string, includeEphemeral = false): StoredMessage[] {
    return channelMessages(this, channelId, includeEphemeral);
  }
}
