/** Threads in text channels and posts in forums, and who is told of a new one. */
import { ChannelType, GatewayDispatchEvents, GatewayIntentBits } from 'discord-api-types/v10';
import { createMessage } from './messages.js';
import { canSeeThread } from './permissions.js';
import type { MessageWrite, StoredChannel, StoredMessage } from './records.js';
import { dispatch, requireChannel, requireGuild } from './state.js';
import type { StoreState } from './state.js';
import { apiThreadFor } from './views.js';

/**
 * A thread in a text channel, or (`forumPost`) a post in a forum: a public thread whose parent
 * is the forum. THREAD_CREATE goes to the bot when it can see the thread: a public one when it
 * can view the parent, a private one only when it was added or holds Manage Threads.
 */
export function createThread(
  state: StoreState,
  parentId: string,
  input: { id?: string; name: string; type: ChannelType.PublicThread | ChannelType.PrivateThread; ownerId: string; memberIds?: string[]; invitable?: boolean },
  forumPost = false,
): StoredChannel {
  const parent = requireChannel(state, parentId);
  if (!parent.guildId) throw new Error(`channel ${parentId} is not a guild channel; threads live in guild channels`);
  if (parent.type === ChannelType.GuildForum && !forumPost) throw new Error(`channel ${parentId} is a forum: create a post in it with createForumPost`);
  if (forumPost && parent.type !== ChannelType.GuildForum) throw new Error(`channel ${parentId} is not a forum`);
  if (!forumPost && parent.type !== ChannelType.GuildText) {
    throw new Error(`channel ${parentId} (type ${parent.type}) cannot hold public or private threads; a text channel can`);
  }
  if (forumPost && input.type !== ChannelType.PublicThread) throw new Error('a forum post is a public thread');
  const guild = requireGuild(state, parent.guildId);
  const memberIds = new Set([input.ownerId, ...(input.memberIds ?? [])]);
  for (const userId of memberIds) {
    if (!guild.members.has(userId)) throw new Error(`user ${userId} is not a member of guild ${guild.id}`);
  }
  const id = input.id ?? state.ids.next();
  if (state.channels.has(id)) throw new Error(`channel ${id} already exists`);
  const channel: StoredChannel = {
    id,
    type: input.type,
    name: input.name,
    guildId: guild.id,
    position: 0,
    topic: null,
    parentId: parent.id,
    overwrites: [],
    nsfw: false,
    recipientIds: [],
    lastMessageId: null,
    thread: {
      ownerId: input.ownerId,
      memberIds,
      createdAt: state.clock.iso(),
      messageCount: 0,
      totalMessageSent: 0,
      invitable: input.type === ChannelType.PrivateThread ? (input.invitable ?? true) : false,
    },
  };
  state.channels.set(channel.id, channel);
  guild.threadIds.push(channel.id);
  if (canSeeThread(state, guild, channel, state.botUser.id)) {
    dispatch(state, GatewayDispatchEvents.ThreadCreate, { ...apiThreadFor(state, channel, state.botUser.id), newly_created: true }, GatewayIntentBits.Guilds);
  }
  return channel;
}

/** A post in a forum: a public thread whose first message (the same id as the thread) is the author's. */
export function createForumPost(
  state: StoreState,
  forumId: string,
  input: { name: string; authorId: string; message: MessageWrite },
): { thread: StoredChannel; starter: StoredMessage } {
  const id = state.ids.next();
  const author = state.users.get(input.authorId);
  if (!author) throw new Error(`the emulator has no user ${input.authorId}`);
  const thread = createThread(state, forumId, { id, name: input.name, type: ChannelType.PublicThread, ownerId: input.authorId }, true);
  const starter = createMessage(state, { id, channelId: thread.id, author, body: input.message, uploads: [] });
  requireChannel(state, forumId).lastMessageId = thread.id;
  return { thread, starter };
}

