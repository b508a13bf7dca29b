/**
 * What a voice command asks of the guild's player and what it answers, as plain data: a
 * request may cross Redis to the process that holds the guild, and the answer comes back the
 * same way, to be written in the member's language where the interaction is.
 */
import type { LocalText } from '../i18n/index.js';
import type { Member } from '../guilds/access.js';
import type { LoopMode, QueueEntry, RadioSettings } from './store.js';

/** The member asking, and where they asked. */
export interface Requester extends Member {
  /** The text channel the command came from: the now-playing message goes there. */
  readonly channelId: string;
  readonly parentChannelId: string | null;
  readonly guildLocale: string;
}

export type PlayerOp =
  | { readonly op: 'play'; readonly entry: QueueEntry }
  | { readonly op: 'radio'; readonly radio: RadioSettings; readonly stay: boolean }
  | { readonly op: 'queue' }
  | { readonly op: 'skip' }
  | { readonly op: 'stop' }
  | { readonly op: 'pause' }
  | { readonly op: 'resume' }
  /** Percent of each song's own loudness (0 to 200). */
  | { readonly op: 'volume'; readonly level: number }
  /** Seconds from the song's start. */
  | { readonly op: 'seek'; readonly seconds: number }
  | { readonly op: 'loop'; readonly mode: LoopMode }
  | { readonly op: 'shuffle' }
  /** Positions as `/queue` shows them: 1 is next. */
  | { readonly op: 'remove'; readonly position: number }
  | { readonly op: 'move'; readonly from: number; readonly to: number }
  | { readonly op: 'clear' };

export interface PlayerRequest {
  readonly guildId: string;
  readonly requester: Requester;
  readonly action: PlayerOp;
}

/** The answer: lines for the member, and whether only they should see it (refusals are private). */
export interface PlayerAnswer {
  readonly lines: readonly LocalText[];
  readonly private: boolean;
}

export function answer(privately: boolean, ...lines: LocalText[]): PlayerAnswer {
  return { lines, private: privately };
}

/** What the routing needs of the players in a gateway process (player.ts's PlayerHost). */
export interface PlayerService {
  /** Whether this process's gateway has the guild. */
  holdsGuild(guildId: string): boolean;
  /** Whether this process plays the guild (taking the claim when free). */
  owns(guildId: string): Promise<boolean>;
  handle(request: PlayerRequest): Promise<PlayerAnswer>;
  /**
   * A song left the library (hidden by a moderator, deleted by its requester): where this
   * process plays the guild, it is skipped if playing and taken out of the queue. Never throws.
   */
  dropSong(guildId: string, jobId: string): Promise<void>;
}
