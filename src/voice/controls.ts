/**
 * The player's controls beyond pause and skip: volume, seek, loop, shuffle, and removing,
 * moving and clearing queue entries. Each checks who may use it (rules.ts), changes the state
 * or the queue in Redis, and, for volume and seek, starts the song's decoder again where it is
 * (or where asked). Runs in the guild's order, from the dispatcher.
 */
import type { Guild } from 'discord.js';
import { localText, type LocalText } from '../i18n/index.js';
import { escapeMarkdown } from '../text.js';
import type { LivePlayer, RequestParts } from './player-parts.js';
import { listenersIn } from './idle-watcher.js';
import { answer, type PlayerAnswer, type PlayerOp, type Requester } from './player-requests.js';
import { moveEntry, removeAt, shuffleQueue } from './queue-edits.js';
import { clock, mayUseControl, VOLUME_RANGE, type PlayerControl } from './rules.js';
import type { PlayerState } from './store.js';

export type ControlOp = Extract<PlayerOp, { readonly op: PlayerControl }>;

export function isControlOp(action: PlayerOp): action is ControlOp {
  return (CONTROLS as readonly string[]).includes(action.op);
}

const CONTROLS = ['volume', 'seek', 'loop', 'shuffle', 'remove', 'move', 'clear'] as const satisfies readonly PlayerControl[];

/** What a control needs of the request: the guild, the member, whether they control the player, and the player. */
export interface ControlRequest {
  readonly guild: Guild;
  readonly requester: Requester;
  readonly controls: boolean;
  readonly state: PlayerState | undefined;
  readonly live: LivePlayer | undefined;
}

/** The refusal each control gives to a member the DJ rules leave out. */
const REFUSALS: Record<PlayerControl, LocalText> = {
  volume: localText('player.control.notAllowed'),
  seek: localText('player.control.seekNotAllowed'),
  loop: localText('player.control.notAllowed'),
  shuffle: localText('player.control.notAllowed'),
  remove: localText('player.control.removeNotAllowed'),
  move: localText('player.control.notAllowed'),
  clear: localText('player.control.notAllowed'),
};

export async function runControl(parts: RequestParts, request: ControlRequest, action: ControlOp): Promise<PlayerAnswer> {
  const { guild, requester, state, live } = request;
  if (!live || !state?.current) return answer(true, localText('player.nothingPlaying'));
  const guildId = guild.id;
  const current = state.current;
  const queue = await parts.store.queue(guildId);
  const listeners = listenersIn(guild, state.voiceChannelId);
  const alone = listeners.length === 1 && listeners[0] === requester.userId;
  const position = action.op === 'remove' ? action.position : undefined;
  const requestedBy = action.op === 'seek' ? current.requestedBy : position === undefined ? undefined : queue[position - 1]?.requestedBy;
  if (!mayUseControl(action.op, { controls: request.controls, alone, userId: requester.userId, ...(requestedBy !== undefined && { requestedBy }) })) {
    return answer(true, REFUSALS[action.op]);
  }

  switch (action.op) {
    case 'volume': {
      if (!Number.isInteger(action.level) || action.level < VOLUME_RANGE.min || action.level > VOLUME_RANGE.max) {
        return answer(true, localText('player.control.volumeRange', VOLUME_RANGE));
      }
      const startMs = await live.line.playbackMs();
      await parts.store.write(guildId, { ...state, volume: action.level });
      await restart(parts, live, { ...state, volume: action.level }, startMs);
      return answer(false, localText('player.control.volume', { level: action.level, user: requester.userId }));
    }
    case 'seek': {
      const length = current.durationSeconds;
      if (!Number.isFinite(action.seconds) || action.seconds < 0 || (length !== null && action.seconds >= length)) {
        return answer(true, localText('player.control.seekBeyond', { length: length === null ? '?' : clock(length) }));
      }
      await restart(parts, live, state, action.seconds * 1000);
      return answer(false, localText('player.control.seeked', { title: escapeMarkdown(current.title), at: clock(action.seconds), user: requester.userId }));
    }
    case 'loop': {
      await parts.store.write(guildId, { ...state, loop: action.mode });
      await parts.showNowPlaying(guildId);
      return answer(false, localText(`player.control.loop.${action.mode}`, { user: requester.userId }));
    }
    case 'shuffle': {
      if (queue.length < 2) return answer(true, localText('player.control.tooFewToShuffle'));
      await parts.store.replaceQueue(guildId, shuffleQueue(queue));
      return answer(false, localText('player.control.shuffled', { count: queue.length, user: requester.userId }));
    }
    case 'remove': {
      const edited = removeAt(queue, action.position);
      if (!edited) return answer(true, noSuchPosition(queue.length));
      await parts.store.replaceQueue(guildId, edited.queue);
      await parts.showNowPlaying(guildId);
      return answer(false, localText('player.control.removed', { title: escapeMarkdown(edited.removed.title), position: action.position, user: requester.userId }));
    }
    case 'move': {
      const edited = moveEntry(queue, action.from, action.to);
      if (!edited) return answer(true, noSuchPosition(queue.length));
      await parts.store.replaceQueue(guildId, edited.queue);
      return answer(false, localText('player.control.moved', { title: escapeMarkdown(edited.moved.title), position: action.to, user: requester.userId }));
    }
    case 'clear': {
      if (queue.length === 0) return answer(true, localText('player.queue.empty'));
      await parts.store.replaceQueue(guildId, []);
      // A radio would fill the queue again: clearing it ends the radio too, the song playing plays on.
      await parts.store.write(guildId, { ...state, radio: null });
      await parts.showNowPlaying(guildId);
      return answer(false, localText('player.control.cleared', { count: queue.length, user: requester.userId }));
    }
  }
}

function noSuchPosition(length: number) {
  return length === 0 ? localText('player.queue.empty') : localText('player.control.noSuchPosition', { count: length });
}

/** Starts the song playing again at `startMs` with the state's volume, paused again if it was; then the card shows where it is. */
async function restart(parts: RequestParts, live: LivePlayer, state: PlayerState, startMs: number): Promise<void> {
  parts.play(live, state.current!, { startMs, volume: state.volume ?? 100 });
  if (state.paused) await live.line.pause();
  await parts.showNowPlaying(live.guildId);
}
