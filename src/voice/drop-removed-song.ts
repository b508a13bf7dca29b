/**
 * A song a moderator hid or its requester deleted leaves the guild's player here: every copy
 * goes from the queue, and the song skips if it plays, with a line in the channel that does not
 * name it (it may have been hidden for its words). Runs in the guild's order; never throws.
 */
import { localText, type LocalText } from '../i18n/index.js';
import { loggableError } from '../logger.js';
import type { PlayerParts } from './dispatcher.js';

export interface DropParts extends Pick<PlayerParts, 'store' | 'logger' | 'live' | 'skip'> {
  /** Posts a line in the channel the guild's player talks in. */
  post(guildId: string, text: LocalText): Promise<void>;
}

export async function dropRemovedSong(parts: DropParts, guildId: string, jobId: string): Promise<void> {
  try {
    const live = parts.live(guildId);
    if (!live || live.stopped) return;
    const queued = await parts.store.removeFromQueue(guildId, jobId);
    const playing = (await parts.store.read(guildId))?.current?.jobId === jobId;
    if (queued === 0 && !playing) return;
    parts.logger.info({ guildId, jobId, queued, playing }, 'voice song removed from the library; dropped');
    if (!playing) return;
    await parts.post(guildId, localText('player.removedSkipped'));
    await parts.skip(live);
  } catch (error) {
    parts.logger.warn({ err: loggableError(error), guildId, jobId }, 'voice song removed from the library could not be dropped');
  }
}
