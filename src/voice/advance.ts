/**
 * Moving on when a song ends, fails or is skipped: the loop's choice (the same song, the queue
 * again, or the next entry), a line in the channel for a song that could not be played, and the
 * end of the player when nothing is left. Runs in the guild's order, from the host.
 */
import { randomUUID } from 'node:crypto';
import type { Executor } from '../db/client.js';
import { localText, type LocalText } from '../i18n/index.js';
import { escapeMarkdown } from '../text.js';
import type { SongEnd } from './engine/engine.js';
import type { LivePlayer, PlayerParts } from './dispatcher.js';
import { nextEntry } from './library-entries.js';
import { countPlay } from './plays.js';
import { afterSong, type SongOutcome } from './queue-edits.js';
import type { PlayerState, QueueEntry } from './store.js';

export interface AdvanceParts extends Pick<PlayerParts, 'store' | 'logger' | 'play' | 'finish' | 'showNowPlaying'> {
  readonly db: Executor;
  /** Posts a line in the channel the guild's player talks in. */
  post(guildId: string, text: LocalText): Promise<void>;
}

/** The song playing ended (its decoder finished or failed, or a skip stopped it): the loop or the queue goes on. */
export async function songEnded(parts: AdvanceParts, live: LivePlayer, end: SongEnd): Promise<void> {
  if (live.stopped || live.advancing) return;
  const skipped = live.skipping === true;
  live.skipping = false;
  const state = await parts.store.read(live.guildId);
  const failed = end.exitCode !== 0 && end.exitCode !== null && state?.current !== undefined && state.current !== null;
  if (failed) {
    parts.logger.warn({ guildId: live.guildId, jobId: state.current!.jobId, code: end.exitCode, error: end.error.trim(), playedMs: end.playedMs }, 'voice song could not be played');
    await parts.post(live.guildId, localText('player.unplayable', { title: escapeMarkdown(state.current!.title) }));
  }
  await countPlay(parts, live.guildId, state, end.playedMs);
  await advancePlayer(parts, live, failed ? 'failed' : skipped ? 'skipped' : 'finished');
}

/** Plays what comes after the song playing (`outcome` says how it ended); nothing: the player ends. */
export async function advancePlayer(parts: AdvanceParts, live: LivePlayer, outcome: SongOutcome): Promise<void> {
  if (live.advancing) return;
  live.advancing = true;
  try {
    const { store } = parts;
    const state = await store.read(live.guildId);
    if (!state) return;
    const next = await followingEntry(parts, live.guildId, state, outcome);
    await store.clearVotes(live.guildId);
    if (!next) {
      live.advancing = false;
      await parts.finish(live.guildId, 'player.ended');
      return;
    }
    await store.write(live.guildId, { ...state, current: next, paused: false, playback: randomUUID() });
    parts.play(live, next, { volume: state.volume ?? 100 });
    await parts.showNowPlaying(live.guildId);
  } finally {
    live.advancing = false;
  }
}

/** The loop's pick: the song again, or the queue's next once the song went back to its end, or the queue's next. */
async function followingEntry(parts: AdvanceParts, guildId: string, state: PlayerState, outcome: SongOutcome): Promise<QueueEntry | undefined> {
  const then = state.current ? afterSong(state.loop, outcome) : 'next';
  if (then === 'replay') return state.current!;
  if (then === 'requeue') await parts.store.enqueue(guildId, state.current!);
  return nextEntry(parts.store, parts.db, guildId, state);
}
