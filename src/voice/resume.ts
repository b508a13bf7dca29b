/**
 * After a restart or a shard's READY: every guild with a player in Redis that this process may
 * play starts again from the song that was playing (from the queue when none was, or when it
 * left the library meanwhile).
 */
import { loggableError } from '../logger.js';
import type { PlayerParts } from './dispatcher.js';

export interface ResumeOptions {
  /** Whether this process plays the guild (its shard and its lease); undefined: not here at all. */
  owns(guildId: string): Promise<boolean | undefined>;
  /** Runs `work` in the guild's order. */
  serially(guildId: string, work: () => Promise<void>): Promise<void>;
  /** The host is stopping: a resume still waiting its turn does nothing. */
  stopping(): boolean;
}

/** What resuming uses of the host's players. */
type ResumeParts = Pick<PlayerParts, 'store' | 'logger' | 'guild' | 'live' | 'connect' | 'play' | 'advance' | 'finish' | 'showNowPlaying' | 'checkListeners' | 'shown'>;

/** Resumes the guilds this process owns; returns how many another process still holds. */
export async function resumeGuilds(parts: ResumeParts, options: ResumeOptions): Promise<number> {
  let heldElsewhere = 0;
  for (const guildId of await parts.store.activeGuilds()) {
    if (parts.live(guildId)) continue;
    const owns = await options.owns(guildId);
    if (owns === undefined) continue;
    if (!owns) {
      heldElsewhere += 1;
      continue;
    }
    await options.serially(guildId, () => (options.stopping() ? Promise.resolve() : resumeGuild(parts, guildId)));
  }
  return heldElsewhere;
}

async function resumeGuild(parts: ResumeParts, guildId: string): Promise<void> {
  if (parts.live(guildId)) return;
  const state = await parts.store.read(guildId);
  if (!state) {
    await parts.store.clear(guildId);
    return;
  }
  parts.logger.info({ guildId, channelId: state.voiceChannelId, jobId: state.current?.jobId }, 'voice player resumed');
  try {
    const guild = parts.guild(guildId)!;
    const channel = guild.channels.cache.get(state.voiceChannelId);
    if (!channel?.isVoiceBased()) {
      await parts.finish(guildId, 'player.ended');
      return;
    }
    const live = parts.connect(guild, channel);
    // A song hidden or deleted while no process played the guild is not taken up again.
    if (state.current && (await parts.shown(state.current.jobId))) {
      await parts.store.write(guildId, { ...state, paused: false });
      parts.play(live, state.current, { volume: state.volume ?? 100 });
      await parts.showNowPlaying(guildId);
    } else {
      await parts.advance(live);
    }
    parts.checkListeners(guildId);
  } catch (error) {
    parts.logger.warn({ err: loggableError(error), guildId }, 'voice player could not resume');
  }
}
