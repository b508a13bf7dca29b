/**
 * Plays for the charts: a song heard in the voice channel for at least half its length counts
 * once per playback (the state's `playback` key), whether it ended, was skipped or the player
 * stopped. What counts as heard is what the song's last decoder streamed: a seek or a volume
 * change starts that count again, so a play is never counted for what was not heard.
 */
import type { Executor } from '../db/client.js';
import { loggableError, type Logger } from '../logger.js';
import { recordPlay } from '../pipeline/charts.js';
import type { PlayerState } from './store.js';

/** Whether `heardMs` of a song `durationSeconds` long is a play; a song of unknown length never is. */
export function isHeard(heardMs: number, durationSeconds: number | null): boolean {
  return durationSeconds !== null && durationSeconds > 0 && heardMs >= (durationSeconds * 1000) / 2;
}

/** Records the song playing in `state` as played when `heardMs` of it was heard. Never throws. */
export async function countPlay(parts: { readonly db: Executor; readonly logger: Logger }, guildId: string, state: PlayerState | undefined, heardMs: number, now = new Date()): Promise<void> {
  const song = state?.current;
  if (!song || !state.playback || !isHeard(heardMs, song.durationSeconds)) return;
  try {
    await recordPlay(parts.db, { playKey: state.playback, guildId, jobId: song.jobId, heardMs, at: now });
  } catch (error) {
    parts.logger.warn({ err: loggableError(error), guildId, jobId: song.jobId }, 'voice play not counted');
  }
}
