import { EventEmitter } from 'node:events';
import {
  ChannelType,
  GatewayDispatchEvents,
  GatewayIntentBits,
  GuildDefaultMessageNotifications,
  GuildExplicitContentFilter,
  GuildMFALevel,
  GuildNSFWLevel,
  GuildPremiumTier,
  GuildSystemChannelFlags,
  GuildVerificationLevel,
  Locale,
  MessageFlags,
  MessageType,
  OverwriteType,
  PermissionFlagsBits,
} from 'discord-api-types/v10';
import type {
  ChannelFlags,
  GuildMemberFlags,
  RoleFlags,
  APIAllowedMentions,
  APIAttachment,
  APIChannel,
  APIEmbed,
  APIGuild,
  APIGuildMember,
  APIInteractionGuildMember,
  APIMessage,
  APIMessageInteractionMetadata,
  APIOverwrite,
  APIRole,
  APIThreadChannel,
  APIThreadMember,
  APIUser,
  GatewayGuildCreateDispatchData,
  ThreadMemberFlags,
} from 'discord-api-types/v10';
import type { EmulatorClock } from './clock.js';
import type { SnowflakeGenerator } from './snowflake.js';
import type { EmulatorAttachment, EmulatorMessage } from './types.js';

/** Discord's "no flags set"; the flag enums have no zero member. */
const NO_FLAGS = 0;

/** Every permission bit Discord defines: what owners and administrators have. */
export const ALL_PERMISSIONS = Object.values(PermissionFlagsBits).reduce((all, bit) => all | bit, 0n);

/** What the bot's managed role grants unless a test says otherwise. */
export const DEFAULT_BOT_PERMISSIONS =
  PermissionFlagsBits.ViewChannel |
  PermissionFlagsBits.SendMessages |
  PermissionFlagsBits.SendMessagesInThreads |
  PermissionFlagsBits.EmbedLinks |
  PermissionFlagsBits.AttachFiles |
  PermissionFlagsBits.ReadMessageHistory |
  PermissionFlagsBits.AddReactions |
  PermissionFlagsBits.UseExternalEmojis |
  PermissionFlagsBits.UseApplicationCommands;

/** What @everyone may do in a new guild. */
export const DEFAULT_EVERYONE_PERMISSIONS =
  PermissionFlagsBits.ViewChannel |
  PermissionFlagsBits.SendMessages |
  PermissionFlagsBits.SendMessagesInThreads |
  PermissionFlagsBits.EmbedLinks |
  PermissionFlagsBits.AttachFiles |
  PermissionFlagsBits.ReadMessageHistory |
  PermissionFlagsBits.AddReactions |
  PermissionFlagsBits.UseExternalEmojis |
  PermissionFlagsBits.UseApplicationCommands |
  PermissionFlagsBits.Connect |
  PermissionFlagsBits.Speak;

export interface StoredMember {
  userId: string;
  roles: string[];
  nick: string | null;
  joinedAt: string;
  /** Set by a test to fix the member's permissions regardless of roles. */
  permissionsOverride?: bigint;
}

export interface StoredGuild {
  id: string;
  name: string;
  ownerId: string;
  botRoleId: string;
  joinedAt: string;
  locale: Locale;
  channelIds: string[];
  /** Threads and forum posts: not in `channelIds`, as Discord lists them apart from channels. */
  threadIds: string[];
  roles: Map<string, APIRole>;
  members: Map<string, StoredMember>;
  /** Where Discord posts join messages, and where a bot may greet the guild. */
  systemChannelId: string | null;
  /** The bot was removed (GUILD_DELETE); the guild is kept so that it can come back. */
  botRemoved: boolean;
}

export interface StoredChannel {
  id: string;
  type: ChannelType;
  name: string | null;
  guildId: string | null;
  position: number;
  topic: string | null;
  parentId: string | null;
  overwrites: APIOverwrite[];
  recipientIds: string[];
  lastMessageId: string | null;
  /** Set for threads (types 10, 11, 12), forum posts included. */
  thread?: StoredThread;
}

export interface StoredThread {
  ownerId: string;
  /** Users added to the thread; for a private thread, the only members who see it. */
  memberIds: Set<string>;
  createdAt: string;
  /** Messages after the first (a forum post's starter message does not count), as Discord counts them. */
  messageCount: number;
  totalMessageSent: number;
  invitable: boolean;
}

/** The thread types: announcement, public and private threads. */
export const THREAD_TYPES: readonly ChannelType[] = [ChannelType.AnnouncementThread, ChannelType.PublicThread, ChannelType.PrivateThread];

export function isThread(channel: StoredChannel): boolean {
  return THREAD_TYPES.includes(channel.type);
}

export interface StoredMessage {
  api: APIMessage;
  guildId: string | null;
  files: Map<string, Buffer>;
  allowedMentions: APIAllowedMentions | undefined;
  ephemeral: boolean;
  interactionId: string | undefined;
}

/** A file from a multipart request. */
export interface Upload {
  field: string;
  /** `n` of a `files[n]` field; `null` for other field names. */
  index: number | null;
  filename: string;
  contentType: string;
  data: Buffer;
}

/** A gateway event the store wants sent to bots holding `intent`. */
export interface StoreDispatch {
  t: GatewayDispatchEvents;
  d: unknown;
  intent: number;
}

/** The body fields of a message create or edit the store understands. */
export interface MessageWrite {
  content?: unknown;
  embeds?: unknown;
  components?: unknown;
  attachments?: unknown;
  allowed_mentions?: unknown;
  flags?: unknown;
  tts?: unknown;
  message_reference?: unknown;
  sticker_ids?: unknown;
  poll?: unknown;
  nonce?: unknown;
}

export interface CreateMessageInput {
  /** A forum post's first message has the thread's id. */
  id?: string;
  channelId: string;
  author: APIUser;
  body: MessageWrite;
  uploads: Upload[];
  type?: MessageType;
  webhookId?: string;
  applicationId?: string;
  interactionMetadata?: APIMessageInteractionMetadata;
  interactionId?: string;
  ephemeral?: boolean;
  /** A deferred reply's "thinking" placeholder. */
  loading?: boolean;
}

const CONTENT_TYPES: Record<string, string> = {
  mp3: 'audio/mpeg',
  wav: 'audio/wav',
  ogg: 'audio/ogg',
  flac: 'audio/flac',
  m4a: 'audio/mp4',
  mp4: 'video/mp4',
  webm: 'video/webm',
  png: 'image/png',
  jpg: 'image/jpeg',
  jpeg: 'image/jpeg',
  gif: 'image/gif',
  webp: 'image/webp',
  txt: 'text/plain; charset=utf-8',
  json: 'application/json; charset=utf-8',
};

/** Guesses a content type from a file name, as Discord does for uploads without a usable one. */
export function contentTypeFor(filename: string, declared?: string): string {
  if (declared && declared !== 'application/octet-stream') return declared;
  const extension = filename.split('.').pop()?.toLowerCase() ?? '';
  return CONTENT_TYPES[extension] ?? 'application/octet-stream';
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/**
 * The emulated Discord's state: users, guilds, channels, roles, members, messages,
 * commands and uploaded files. Changes a bot would hear about are emitted as `dispatch`.
 */
export class EmulatorStore {
  readonly users = new Map<string, APIUser>();
  readonly guilds = new Map<string, StoredGuild>();
  readonly channels = new Map<string, StoredChannel>();
  readonly messages = new Map<string, StoredMessage>();
  readonly channelMessageIds = new Map<string, string[]>();
  readonly deniedChannels = new Set<string>();
  readonly cdn = new Map<string, { data: Buffer; contentType: string }>();
  /** `dispatch` (StoreDispatch), `message` (StoredMessage, 'create' | 'update'), `message-delete` (StoredMessage). */
  readonly events = new EventEmitter();
  readonly botUser: APIUser;
  readonly #ids: SnowflakeGenerator;
  readonly #clock: EmulatorClock;
  readonly #cdnBase: () => string;

  constructor(options: { ids: SnowflakeGenerator; clock: EmulatorClock; botUser: APIUser; cdnBase: () => string }) {
    this.#ids = options.ids;
    this.#clock = options.clock;
    this.#cdnBase = options.cdnBase;
    this.botUser = options.botUser;
    this.users.set(options.botUser.id, options.botUser);
    this.events.setMaxListeners(0);
  }

  nextId(): string {
    return this.#ids.next();
  }

  addUser(input: { id?: string; username: string; globalName?: string | null; bot?: boolean }): APIUser {
    const existing = input.id ? this.users.get(input.id) : undefined;
    if (existing) return existing;
    const user: APIUser = {
      id: input.id ?? this.#ids.next(),
      username: input.username,
      discriminator: '0',
      global_name: input.globalName ?? null,
      avatar: null,
      bot: input.bot ?? false,
    };
    this.users.set(user.id, user);
    return user;
  }

  guild(guildId: string): StoredGuild {
    const guild = this.guilds.get(guildId);
    if (!guild) throw new Error(`the emulator has no guild ${guildId}`);
    return guild;
  }

  channel(channelId: string): StoredChannel {
    const channel = this.channels.get(channelId);
    if (!channel) throw new Error(`the emulator has no channel ${channelId}`);
    return channel;
  }

  createGuild(input: {
    id?: string;
    name: string;
    ownerId?: string;
    botPermissions?: bigint;
    everyonePermissions?: bigint;
    locale?: Locale;
    /** A text channel made with the guild and named its system channel, as Discord makes #general. */
    systemChannel?: string;
  }): StoredGuild {
    const id = input.id ?? this.#ids.next();
    if (this.guilds.has(id)) throw new Error(`guild ${id} already exists`);
    const owner = input.ownerId
      ? (this.users.get(input.ownerId) ?? this.addUser({ id: input.ownerId, username: `owner-${input.ownerId}` }))
      : this.addUser({ username: `${input.name.toLowerCase().replace(/[^a-z0-9]+/g, '-')}-owner` });
    const everyone = this.#role(id, { name: '@everyone', permissions: input.everyonePermissions ?? DEFAULT_EVERYONE_PERMISSIONS, position: 0 });
    const botRole = this.#role(this.#ids.next(), {
      name: this.botUser.username,
      permissions: input.botPermissions ?? DEFAULT_BOT_PERMISSIONS,
      position: 1,
      managed: true,
      botId: this.botUser.id,
    });
    const now = this.#clock.iso();
    const guild: StoredGuild = {
      id,
      name: input.name,
      ownerId: owner.id,
      botRoleId: botRole.id,
      joinedAt: now,
      locale: input.locale ?? Locale.EnglishUS,
      channelIds: [],
      threadIds: [],
      roles: new Map([
        [everyone.id, everyone],
        [botRole.id, botRole],
      ]),
      members: new Map([
        [owner.id, { userId: owner.id, roles: [], nick: null, joinedAt: now }],
        [this.botUser.id, { userId: this.botUser.id, roles: [botRole.id], nick: null, joinedAt: now }],
      ]),
      systemChannelId: null,
      botRemoved: false,
    };
    this.guilds.set(id, guild);
    if (input.systemChannel !== undefined) {
      // Part of the guild the bot joins: told in GUILD_CREATE, not by CHANNEL_CREATE.
      guild.systemChannelId = this.#addChannel(guild, { name: input.systemChannel }).id;
    }
    this.#dispatch(GatewayDispatchEvents.GuildCreate, null, GatewayIntentBits.Guilds, guild.id);
    return guild;
  }

  /** The bot is kicked from the guild: GUILD_DELETE (not unavailable), and it is left out of READY. */
  removeBot(guildId: string): void {
    const guild = this.guild(guildId);
    guild.botRemoved = true;
    this.#dispatch(GatewayDispatchEvents.GuildDelete, { id: guildId }, GatewayIntentBits.Guilds);
  }

  /** The bot is invited back: GUILD_CREATE with the guild as it is now. */
  addBot(guildId: string): void {
    const guild = this.guild(guildId);
    guild.botRemoved = false;
    guild.joinedAt = this.#clock.iso();
    this.#dispatch(GatewayDispatchEvents.GuildCreate, null, GatewayIntentBits.Guilds, guild.id);
  }

  #role(id: string, input: { name: string; permissions: bigint; position: number; managed?: boolean; botId?: string }): APIRole {
    return {
      id,
      name: input.name,
      color: 0,
      colors: { primary_color: 0, secondary_color: null, tertiary_color: null },
      hoist: false,
      icon: null,
      unicode_emoji: null,
      position: input.position,
      permissions: input.permissions.toString(),
      managed: input.managed ?? false,
      mentionable: false,
      flags: NO_FLAGS as RoleFlags,
      ...(input.botId ? { tags: { bot_id: input.botId } } : {}),
    };
  }

  createChannel(guildId: string, input: { id?: string; name: string; type?: ChannelType; topic?: string; parentId?: string }): StoredChannel {
    const channel = this.#addChannel(this.guild(guildId), input);
    this.#dispatch(GatewayDispatchEvents.ChannelCreate, this.apiChannel(channel), GatewayIntentBits.Guilds);
    return channel;
  }

  /** Adds a channel to the guild, telling no one (the caller dispatches, or GUILD_CREATE will). */
  #addChannel(guild: StoredGuild, input: { id?: string; name: string; type?: ChannelType; topic?: string; parentId?: string }): StoredChannel {
    if (input.id !== undefined && this.channels.has(input.id)) throw new Error(`channel ${input.id} already exists`);
    const channel: StoredChannel = {
      id: input.id ?? this.#ids.next(),
      type: input.type ?? ChannelType.GuildText,
      name: input.name,
      guildId: guild.id,
      position: guild.channelIds.length,
      topic: input.topic ?? null,
      parentId: input.parentId ?? null,
      overwrites: [],
      recipientIds: [],
      lastMessageId: null,
    };
    this.channels.set(channel.id, channel);
    guild.channelIds.push(channel.id);
    return channel;
  }

  /**
   * A thread in a text channel, or (`forumPost`) a post in a forum: a public thread whose parent
   * is the forum. THREAD_CREATE goes to the bot when it can see the thread: a public one when it
   * can view the parent, a private one only when it was added or holds Manage Threads.
   */
  createThread(
    parentId: string,
    input: { id?: string; name: string; type: ChannelType.PublicThread | ChannelType.PrivateThread; ownerId: string; memberIds?: string[]; invitable?: boolean },
    forumPost = false,
  ): StoredChannel {
    const parent = this.channel(parentId);
    if (!parent.guildId) throw new Error(`channel ${parentId} is not a guild channel; threads live in guild channels`);
    if (parent.type === ChannelType.GuildForum && !forumPost) throw new Error(`channel ${parentId} is a forum: create a post in it with createForumPost`);
    if (forumPost && parent.type !== ChannelType.GuildForum) throw new Error(`channel ${parentId} is not a forum`);
    if (!forumPost && parent.type !== ChannelType.GuildText) {
      throw new Error(`channel ${parentId} (type ${parent.type}) cannot hold public or private threads; a text channel can`);
    }
    if (forumPost && input.type !== ChannelType.PublicThread) throw new Error('a forum post is a public thread');
    const guild = this.guild(parent.guildId);
    const memberIds = new Set([input.ownerId, ...(input.memberIds ?? [])]);
    for (const userId of memberIds) {
      if (!guild.members.has(userId)) throw new Error(`user ${userId} is not a member of guild ${guild.id}`);
    }
    const id = input.id ?? this.#ids.next();
    if (this.channels.has(id)) throw new Error(`channel ${id} already exists`);
    const channel: StoredChannel = {
      id,
      type: input.type,
      name: input.name,
      guildId: guild.id,
      position: 0,
      topic: null,
      parentId: parent.id,
      overwrites: [],
      recipientIds: [],
      lastMessageId: null,
      thread: {
        ownerId: input.ownerId,
        memberIds,
        createdAt: this.#clock.iso(),
        messageCount: 0,
        totalMessageSent: 0,
        invitable: input.type === ChannelType.PrivateThread ? (input.invitable ?? true) : false,
      },
    };
    this.channels.set(channel.id, channel);
    guild.threadIds.push(channel.id);
    if (this.canSeeThread(guild, channel, this.botUser.id)) {
      this.#dispatch(GatewayDispatchEvents.ThreadCreate, { ...this.apiThreadFor(channel, this.botUser.id), newly_created: true }, GatewayIntentBits.Guilds);
    }
    return channel;
  }

  /** A post in a forum: a public thread whose first message (the same id as the thread) is the author's. */
  createForumPost(forumId: string, input: { name: string; authorId: string; message: MessageWrite }): { thread: StoredChannel; starter: StoredMessage } {
    const id = this.#ids.next();
    const author = this.users.get(input.authorId);
    if (!author) throw new Error(`the emulator has no user ${input.authorId}`);
    const thread = this.createThread(forumId, { id, name: input.name, type: ChannelType.PublicThread, ownerId: input.authorId }, true);
    const starter = this.createMessage({ id, channelId: thread.id, author, body: input.message, uploads: [] });
    this.channel(forumId).lastMessageId = thread.id;
    return { thread, starter };
  }

  /** Whether `userId` sees the thread: the parent's View Channel, and for a private thread membership or Manage Threads. */
  canSeeThread(guild: StoredGuild, thread: StoredChannel, userId: string): boolean {
    const permissions = this.channelPermissions(guild, thread, userId);
    if ((permissions & PermissionFlagsBits.ViewChannel) === 0n) return false;
    if (thread.type !== ChannelType.PrivateThread) return true;
    return thread.thread?.memberIds.has(userId) === true || (permissions & PermissionFlagsBits.ManageThreads) !== 0n;
  }

  /** The thread as `userId` gets it over the gateway: with `member` when they were added to it. */
  apiThreadFor(thread: StoredChannel, userId: string): APIChannel {
    const api = this.apiChannel(thread);
    if (!thread.thread?.memberIds.has(userId)) return api;
    const member: APIThreadMember = { id: thread.id, user_id: userId, join_timestamp: thread.thread.createdAt, flags: NO_FLAGS as ThreadMemberFlags };
    return { ...(api as APIThreadChannel), member };
  }

  /** The DM channel between the bot and `userId`, created on first use. */
  dmChannel(userId: string): StoredChannel {
    for (const channel of this.channels.values()) {
      if (channel.type === ChannelType.DM && channel.recipientIds.includes(userId)) return channel;
    }
    const channel: StoredChannel = {
      id: this.#ids.next(),
      type: ChannelType.DM,
      name: null,
      guildId: null,
      position: 0,
      topic: null,
      parentId: null,
      overwrites: [],
      recipientIds: [userId],
      lastMessageId: null,
    };
    this.channels.set(channel.id, channel);
    return channel;
  }

  createRole(guildId: string, input: { id?: string; name: string; permissions?: bigint | string }): APIRole {
    const guild = this.guild(guildId);
    if (input.id !== undefined && guild.roles.has(input.id)) throw new Error(`role ${input.id} already exists`);
    const role = this.#role(input.id ?? this.#ids.next(), {
      name: input.name,
      permissions: BigInt(input.permissions ?? 0n),
      position: guild.roles.size,
    });
    guild.roles.set(role.id, role);
    this.#dispatch(GatewayDispatchEvents.GuildRoleCreate, { guild_id: guildId, role }, GatewayIntentBits.Guilds);
    return role;
  }

  addMember(
    guildId: string,
    input: { userId?: string; username: string; globalName?: string; roles?: string[]; permissions?: bigint | string; nick?: string },
  ): StoredMember {
    const guild = this.guild(guildId);
    for (const roleId of input.roles ?? []) {
      if (!guild.roles.has(roleId)) throw new Error(`guild ${guildId} has no role ${roleId}`);
    }
    const user = this.addUser({ id: input.userId, username: input.username, globalName: input.globalName ?? null });
    const member: StoredMember = {
      userId: user.id,
      roles: input.roles ?? [],
      nick: input.nick ?? null,
      joinedAt: this.#clock.iso(),
      ...(input.permissions !== undefined ? { permissionsOverride: BigInt(input.permissions) } : {}),
    };
    guild.members.set(user.id, member);
    this.#dispatch(
      GatewayDispatchEvents.GuildMemberAdd,
      { ...this.apiMember(guild, member), guild_id: guildId },
      GatewayIntentBits.GuildMembers,
    );
    return member;
  }

  /** Takes the bot's access to a channel away, as a permission overwrite on the channel. */
  denyChannel(channelId: string): void {
    const channel = this.channel(channelId);
    this.deniedChannels.add(channelId);
    if (channel.guildId) {
      channel.overwrites = channel.overwrites.filter((overwrite) => overwrite.id !== this.botUser.id);
      channel.overwrites.push({
        id: this.botUser.id,
        type: OverwriteType.Member,
        allow: '0',
        deny: (PermissionFlagsBits.ViewChannel | PermissionFlagsBits.SendMessages).toString(),
      });
      this.#dispatch(GatewayDispatchEvents.ChannelUpdate, this.apiChannel(channel), GatewayIntentBits.Guilds);
    }
  }

  #dispatch(t: GatewayDispatchEvents, d: unknown, intent: number, guildCreateId?: string): void {
    this.events.emit('dispatch', { t, d: guildCreateId ?? d, intent } satisfies StoreDispatch);
  }

  // ---- permissions ----

  basePermissions(guild: StoredGuild, userId: string): bigint {
    if (userId === guild.ownerId) return ALL_PERMISSIONS;
    const member = guild.members.get(userId);
    if (member?.permissionsOverride !== undefined) return member.permissionsOverride;
    let permissions = BigInt(guild.roles.get(guild.id)?.permissions ?? '0');
    for (const roleId of member?.roles ?? []) permissions |= BigInt(guild.roles.get(roleId)?.permissions ?? '0');
    return (permissions & PermissionFlagsBits.Administrator) !== 0n ? ALL_PERMISSIONS : permissions;
  }

  channelPermissions(guild: StoredGuild, channel: StoredChannel, userId: string): bigint {
    // A thread has no overwrites of its own: its permissions are its parent's.
    const parent = channel.thread && channel.parentId ? this.channels.get(channel.parentId) : undefined;
    if (parent) return this.channelPermissions(guild, parent, userId);
    let permissions = this.basePermissions(guild, userId);
    if ((permissions & PermissionFlagsBits.Administrator) !== 0n || userId === guild.ownerId) return ALL_PERMISSIONS;
    const member = guild.members.get(userId);
    const apply = (overwrite: APIOverwrite | undefined): void => {
      if (!overwrite) return;
      permissions &= ~BigInt(overwrite.deny);
      permissions |= BigInt(overwrite.allow);
    };
    apply(channel.overwrites.find((overwrite) => overwrite.id === guild.id));
    let roleAllow = 0n;
    let roleDeny = 0n;
    for (const overwrite of channel.overwrites) {
      if (overwrite.type === OverwriteType.Role && member?.roles.includes(overwrite.id)) {
        roleAllow |= BigInt(overwrite.allow);
        roleDeny |= BigInt(overwrite.deny);
      }
    }
    permissions = (permissions & ~roleDeny) | roleAllow;
    apply(channel.overwrites.find((overwrite) => overwrite.type === OverwriteType.Member && overwrite.id === userId));
    return permissions;
  }

  // ---- Discord-shaped views ----

  apiMember(guild: StoredGuild, member: StoredMember): APIGuildMember {
    const user = this.users.get(member.userId);
    if (!user) throw new Error(`member ${member.userId} has no user`);
    return {
      user,
      nick: member.nick,
      avatar: null,
      banner: null,
      roles: member.roles,
      joined_at: member.joinedAt,
      premium_since: null,
      deaf: false,
      mute: false,
      flags: NO_FLAGS as GuildMemberFlags,
      pending: false,
      communication_disabled_until: null,
    };
  }

  interactionMember(guild: StoredGuild, channel: StoredChannel, userId: string): APIInteractionGuildMember {
    const member = guild.members.get(userId);
    if (!member) throw new Error(`user ${userId} is not a member of guild ${guild.id}; add them with addMember first`);
    return { ...this.apiMember(guild, member), permissions: this.channelPermissions(guild, channel, userId).toString() };
  }

  /** A channel object; its exact shape depends on the channel type, hence one documented cast. */
  apiChannel(channel: StoredChannel): APIChannel {
    if (channel.type === ChannelType.DM) {
      return {
        id: channel.id,
        type: ChannelType.DM,
        name: null,
        last_message_id: channel.lastMessageId,
        recipients: channel.recipientIds.flatMap((id) => {
          const user = this.users.get(id);
          return user ? [user] : [];
        }),
        flags: NO_FLAGS as ChannelFlags,
      };
    }
    const common = {
      id: channel.id,
      type: channel.type,
      guild_id: channel.guildId ?? undefined,
      name: channel.name ?? '',
      position: channel.position,
      permission_overwrites: channel.overwrites,
      parent_id: channel.parentId,
      nsfw: false,
      flags: 0,
    };
    if (channel.type === ChannelType.GuildCategory) return common as APIChannel;
    if (channel.thread) {
      const thread = channel.thread;
      const parent = channel.parentId ? this.channels.get(channel.parentId) : undefined;
      return {
        id: channel.id,
        type: channel.type,
        guild_id: channel.guildId ?? undefined,
        name: channel.name ?? '',
        parent_id: channel.parentId,
        owner_id: thread.ownerId,
        last_message_id: channel.lastMessageId,
        last_pin_timestamp: null,
        rate_limit_per_user: 0,
        flags: NO_FLAGS as ChannelFlags,
        message_count: thread.messageCount,
        // Discord stops counting at 50.
        member_count: Math.min(thread.memberIds.size, 50),
        total_message_sent: thread.totalMessageSent,
        thread_metadata: {
          archived: false,
          archive_timestamp: thread.createdAt,
          auto_archive_duration: 1440,
          locked: false,
          create_timestamp: thread.createdAt,
          ...(channel.type === ChannelType.PrivateThread ? { invitable: thread.invitable } : {}),
        },
        ...(parent?.type === ChannelType.GuildForum ? { applied_tags: [] } : {}),
      } as APIThreadChannel;
    }
    if (channel.type === ChannelType.GuildForum) {
      return {
        ...common,
        topic: channel.topic,
        last_message_id: channel.lastMessageId,
        rate_limit_per_user: 0,
        default_auto_archive_duration: 1440,
        default_thread_rate_limit_per_user: 0,
        available_tags: [],
        default_reaction_emoji: null,
        default_sort_order: null,
        default_forum_layout: 0,
      } as APIChannel;
    }
    if (channel.type === ChannelType.GuildVoice || channel.type === ChannelType.GuildStageVoice) {
      return { ...common, bitrate: 64000, user_limit: 0, rtc_region: null, last_message_id: channel.lastMessageId, rate_limit_per_user: 0 } as APIChannel;
    }
    return {
      ...common,
      topic: channel.topic,
      last_message_id: channel.lastMessageId,
      rate_limit_per_user: 0,
      last_pin_timestamp: null,
      default_auto_archive_duration: 1440,
      default_thread_rate_limit_per_user: 0,
    } as APIChannel;
  }

  apiGuild(guild: StoredGuild): APIGuild {
    return {
      id: guild.id,
      name: guild.name,
      icon: null,
      splash: null,
      discovery_splash: null,
      banner: null,
      owner_id: guild.ownerId,
      afk_channel_id: null,
      afk_timeout: 300,
      widget_enabled: false,
      widget_channel_id: null,
      verification_level: GuildVerificationLevel.None,
      default_message_notifications: GuildDefaultMessageNotifications.OnlyMentions,
      explicit_content_filter: GuildExplicitContentFilter.Disabled,
      roles: [...guild.roles.values()],
      emojis: [],
      stickers: [],
      features: [],
      mfa_level: GuildMFALevel.None,
      application_id: null,
      system_channel_id: guild.systemChannelId,
      system_channel_flags: GuildSystemChannelFlags.SuppressJoinNotifications,
      rules_channel_id: null,
      max_presences: null,
      max_members: 500000,
      vanity_url_code: null,
      description: null,
      premium_tier: GuildPremiumTier.None,
      premium_subscription_count: 0,
      preferred_locale: guild.locale,
      public_updates_channel_id: null,
      max_video_channel_users: 25,
      max_stage_video_channel_users: 50,
      nsfw_level: GuildNSFWLevel.Default,
      premium_progress_bar_enabled: false,
      hub_type: null,
      safety_alerts_channel_id: null,
      incidents_data: null,
    };
  }

  /** GUILD_CREATE as the bot receives it; without GUILD_MEMBERS only the bot's own member is listed. */
  guildCreatePayload(guild: StoredGuild, allMembers: boolean): GatewayGuildCreateDispatchData {
    const members = [...guild.members.values()]
      .filter((member) => allMembers || member.userId === this.botUser.id)
      .map((member) => this.apiMember(guild, member));
    return {
      ...this.apiGuild(guild),
      joined_at: guild.joinedAt,
      large: false,
      unavailable: false,
      member_count: guild.members.size,
      voice_states: [],
      members,
      channels: guild.channelIds.flatMap((id) => {
        const channel = this.channels.get(id);
        return channel ? [this.apiChannel(channel)] : [];
      }) as GatewayGuildCreateDispatchData['channels'],
      // Active threads the bot can see; Discord lists them apart from the channels.
      threads: guild.threadIds.flatMap((id) => {
        const thread = this.channels.get(id);
        return thread && this.canSeeThread(guild, thread, this.botUser.id) ? [this.apiThreadFor(thread, this.botUser.id)] : [];
      }) as GatewayGuildCreateDispatchData['threads'],
      presences: [],
      stage_instances: [],
      guild_scheduled_events: [],
      soundboard_sounds: [],
    };
  }

  // ---- messages ----

  createMessage(input: CreateMessageInput): StoredMessage {
    const channel = this.channel(input.channelId);
    const id = input.id ?? this.#ids.next();
    if (this.messages.has(id)) throw new Error(`message ${id} already exists`);
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
      timestamp: this.#clock.iso(),
      edited_timestamp: null,
      tts: body.tts === true,
      mention_everyone: false,
      mentions: [],
      mention_roles: [],
      attachments: this.#attachments(channel.id, body.attachments, input.uploads, files),
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
    this.#applyMentions(api, channel, allowedMentions);
    const stored: StoredMessage = {
      api,
      guildId: channel.guildId,
      files,
      allowedMentions,
      ephemeral: input.ephemeral ?? false,
      interactionId: input.interactionId,
    };
    this.messages.set(id, stored);
    const list = this.channelMessageIds.get(channel.id) ?? [];
    list.push(id);
    this.channelMessageIds.set(channel.id, list);
    if (!stored.ephemeral) channel.lastMessageId = id;
    if (channel.thread && !stored.ephemeral && id !== channel.id) {
      channel.thread.messageCount += 1;
      channel.thread.totalMessageSent += 1;
    }
    this.events.emit('message', stored, 'create');
    this.#dispatchMessage(GatewayDispatchEvents.MessageCreate, stored);
    return stored;
  }

  /**
   * Puts back a message kept from an earlier run, as Discord keeps a channel's history (the
   * playground uses it). Its attachments move to this run's CDN; nothing is dispatched.
   */
  restoreMessage(message: EmulatorMessage): void {
    const channel = this.channel(message.channel_id);
    if (this.messages.has(message.id)) throw new Error(`message ${message.id} already exists`);
    const files = new Map<string, Buffer>();
    const attachments = message.attachments.map(({ data, ...attachment }) => {
      const path = `/attachments/${channel.id}/${attachment.id}/${encodeURIComponent(attachment.filename)}`;
      this.cdn.set(path, { data, contentType: contentTypeFor(attachment.filename, attachment.content_type) });
      files.set(attachment.id, data);
      const url = `${this.#cdnBase()}${path}`;
      return { ...attachment, url, proxy_url: url };
    });
    const { ephemeral: _ephemeral, interactionId, allowed_mentions: allowedMentions, ...api } = structuredClone(message);
    this.messages.set(message.id, { api: { ...api, attachments }, guildId: channel.guildId, files, allowedMentions, ephemeral: false, interactionId });
    const list = this.channelMessageIds.get(channel.id) ?? [];
    list.push(message.id);
    list.sort((a, b) => (BigInt(a) < BigInt(b) ? -1 : BigInt(a) > BigInt(b) ? 1 : 0));
    this.channelMessageIds.set(channel.id, list);
    channel.lastMessageId = list.at(-1) ?? null;
  }

  /** Applies an edit: fields present replace, `attachments` lists what stays. */
  editMessage(stored: StoredMessage, body: MessageWrite, uploads: Upload[]): StoredMessage {
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
      api.attachments = [...kept, ...this.#attachments(api.channel_id, body.attachments, uploads, stored.files)];
    }
    api.edited_timestamp = this.#clock.iso();
    this.#applyMentions(api, this.channel(api.channel_id), stored.allowedMentions);
    this.events.emit('message', stored, 'update');
    this.#dispatchMessage(GatewayDispatchEvents.MessageUpdate, stored);
    return stored;
  }

  deleteMessage(stored: StoredMessage): void {
    this.messages.delete(stored.api.id);
    const list = this.channelMessageIds.get(stored.api.channel_id);
    if (list) this.channelMessageIds.set(stored.api.channel_id, list.filter((id) => id !== stored.api.id));
    this.events.emit('message-delete', stored);
    this.#dispatchMessage(GatewayDispatchEvents.MessageDelete, stored);
  }

  /** MESSAGE_* events go to bots with GUILD_MESSAGES (or DIRECT_MESSAGES); ephemeral messages are never dispatched. */
  #dispatchMessage(t: GatewayDispatchEvents, stored: StoredMessage): void {
    if (stored.ephemeral) return;
    const intent = stored.guildId ? GatewayIntentBits.GuildMessages : GatewayIntentBits.DirectMessages;
    const guildPart = stored.guildId ? { guild_id: stored.guildId } : {};
    if (t === GatewayDispatchEvents.MessageDelete) {
      this.#dispatch(t, { id: stored.api.id, channel_id: stored.api.channel_id, ...guildPart }, intent);
      return;
    }
    const guild = stored.guildId ? this.guilds.get(stored.guildId) : undefined;
    const member = guild?.members.get(stored.api.author.id);
    const memberPart = guild && member ? { member: (({ user: _user, ...rest }) => rest)(this.apiMember(guild, member)) } : {};
    this.#dispatch(t, { ...structuredClone(stored.api), ...guildPart, ...memberPart }, intent);
  }

  /** Stores bytes at the emulator's CDN route and returns the attachment object. */
  storeAttachment(channelId: string, upload: { filename: string; contentType?: string; data: Buffer; description?: string }, ephemeral = false): EmulatorAttachment {
    const id = this.#ids.next();
    const path = `/attachments/${channelId}/${id}/${encodeURIComponent(upload.filename)}`;
    const contentType = contentTypeFor(upload.filename, upload.contentType);
    this.cdn.set(path, { data: upload.data, contentType });
    const url = `${this.#cdnBase()}${path}`;
    return {
      id,
      filename: upload.filename,
      size: upload.data.length,
      url,
      proxy_url: url,
      content_type: contentType,
      ...(upload.description ? { description: upload.description } : {}),
      ...(ephemeral ? { ephemeral: true } : {}),
      data: upload.data,
    };
  }

  /** New attachments for uploaded files; `requested` (the body's `attachments`) names and describes them by index. */
  #attachments(channelId: string, requested: unknown, uploads: Upload[], files: Map<string, Buffer>): APIAttachment[] {
    const metadata = Array.isArray(requested) ? requested.filter(isRecord) : [];
    return uploads.map((upload) => {
      const meta = metadata.find((entry) => upload.index !== null && String(entry.id) === String(upload.index));
      const { data, ...attachment } = this.storeAttachment(channelId, {
        filename: typeof meta?.filename === 'string' ? meta.filename : upload.filename,
        contentType: upload.contentType,
        data: upload.data,
        description: typeof meta?.description === 'string' ? meta.description : undefined,
      });
      files.set(attachment.id, data);
      return attachment;
    });
  }

  #applyMentions(api: APIMessage, channel: StoredChannel, allowed: APIAllowedMentions | undefined): void {
    const parse = allowed?.parse;
    const userAllowed = (id: string): boolean =>
      !allowed || parse === undefined ? true : parse.includes('users' as never) || (allowed.users ?? []).includes(id);
    const roleAllowed = (id: string): boolean =>
      !allowed || parse === undefined ? true : parse.includes('roles' as never) || (allowed.roles ?? []).includes(id);
    const guild = channel.guildId ? this.guilds.get(channel.guildId) : undefined;
    const userIds = [...api.content.matchAll(/<@!?(\d+)>/g)].map((match) => match[1] ?? '');
    api.mentions = [...new Set(userIds)].flatMap((id) => {
      const user = this.users.get(id);
      return user && userAllowed(id) ? [user] : [];
    });
    const roleIds = [...api.content.matchAll(/<@&(\d+)>/g)].map((match) => match[1] ?? '');
    api.mention_roles = [...new Set(roleIds)].filter((id) => guild?.roles.has(id) && roleAllowed(id));
    api.mention_everyone =
      /@(everyone|here)/.test(api.content) && (!allowed || parse === undefined || parse.includes('everyone' as never));
  }

  /** The message as a test sees it: Discord's shape plus bytes and what the bot asked for. */
  publicMessage(stored: StoredMessage): EmulatorMessage {
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

  channelMessages(channelId: string, includeEphemeral = false): StoredMessage[] {
    return (this.channelMessageIds.get(channelId) ?? []).flatMap((id) => {
      const stored = this.messages.get(id);
      return stored && (includeEphemeral || !stored.ephemeral) ? [stored] : [];
    });
  }
}

function normalizeEmbed(embed: APIEmbed): APIEmbed {
  return isRecord(embed) ? { type: 'rich' as APIEmbed['type'], ...embed } : embed;
}
