/**
 * Whether the channel an interaction ran in is age-restricted, as Discord's `nsfw` flag says.
 * A thread (a forum post too) has no flag of its own: its parent channel's holds. The interaction
 * carries a channel's flag; a thread's parent is read from the gateway's channel cache, or when
 * there is none (interactions over HTTP) fetched once with GET /channels/{id}. Asked only when a
 * request uses a word of the server's explicit list, so no other request pays for the fetch.
 */
import { ChannelType, Routes } from 'discord-api-types/v10';
import { describeDiscordError } from '../discord-rest/discord-delivery.js';
import type { Logger } from '../logger.js';
import type { InteractionPort } from './interaction-port.js';

const THREADS: ReadonlySet<ChannelType> = new Set([ChannelType.PublicThread, ChannelType.PrivateThread, ChannelType.AnnouncementThread]);

/** Never throws: a parent Discord does not show is taken as not age-restricted, the stricter answer. */
export async function isAgeRestricted(interaction: Pick<InteractionPort, 'channel' | 'client'>, logger: Logger): Promise<boolean> {
  const { channel } = interaction;
  if (channel === null) return false;
  if (!THREADS.has(channel.type)) return channel.nsfw === true;
  const parentId = channel.parentId;
  if (!parentId) return false;
  const cached = interaction.client.channels?.cache.get(parentId);
  if (cached) return cached.nsfw === true;
  try {
    const parent = (await interaction.client.rest.get(Routes.channel(parentId))) as { nsfw?: unknown };
    return parent.nsfw === true;
  } catch (err) {
    logger.warn({ channelId: parentId, error: describeDiscordError(err) }, "could not read a thread's parent channel: taken as not age-restricted");
    return false;
  }
}
