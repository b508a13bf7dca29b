/** What the store keeps of the emulated Discord (guilds, members, channels, threads, messages), and the inputs that change it. */
import { ChannelType } from 'discord-api-types/v10';
import type {
  APIAllowedMentions,
  APIMessage,
  APIMessageInteractionMetadata,
  APIOverwrite,
  APIRole,
  APIUser,
  GatewayDispatchEvents,
  Locale,
  MessageType,
} from 'discord-api-types/v10';

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
  /** Who is in which voice channel, by user id (the bot included). */
  voiceStates: Map<string, StoredVoiceState>;
}

/** A user in a voice channel of the guild, as Discord's voice state. */
export interface StoredVoiceState {
  userId: string;
  channelId: string;
  /** The gateway session id for the bot; a random one for members. */
  sessionId: string;
  selfMute: boolean;
  selfDeaf: boolean;
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
  /** Age-restricted (Discord's `nsfw`); a thread has none of its own and follows its parent. */
  nsfw: boolean;
  /** Voice channels: members allowed at once (0: no limit) and bits per second. */
  userLimit?: number;
  bitrate?: number;
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
  /** The event's data, or a function making it, called only once a session holds `intent`. */
  d: unknown;
  intent: number;
  /** The guild the event concerns, for the shards; absent, `d.guild_id` says. */
  guildId?: string;
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
