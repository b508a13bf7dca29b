/**
 * The voice commands' requests, one guild at a time and only in the process that holds the
 * guild's lease: play and radio (join the member's channel when the bot may, or add to the
 * queue), queue, skip (at once for who may control the player, by vote otherwise), stop, pause
 * and resume; the other controls are controls.ts's. Each ends in an answer for the member; the
 * host does the playing.
 */
import { PermissionFlagsBits, type Guild, type VoiceBasedChannel } from 'discord.js';
import { allowedChannelsText, checkPlaceAndRole, isModerator } from '../guilds/access.js';
import type { GuildRow } from '../guilds/settings.js';
import { localText, type LocalText } from '../i18n/index.js';
import { loggableError } from '../logger.js';
import { escapeMarkdown, truncate } from '../text.js';
import { isControlOp, runControl } from './controls.js';
import { listenersIn } from './idle-watcher.js';
import { answer, type PlayerAnswer, type PlayerRequest, type Requester } from './player-requests.js';
import { channelHasRoom, clock, controlsPlayer, missingVoicePermissions, skipDecision, votePasses, votesNeeded } from './rules.js';
import type { RequestParts } from './player-parts.js';
import type { PlayerState, QueueEntry } from './store.js';

export type { EndReason, LivePlayer, PlayerLine, PlayerParts, RequestParts } from './player-parts.js';

/** Runs one request in the guild's order, while this process holds the guild. Never throws: a failure is an answer. */
export async function handleRequest(parts: RequestParts, request: PlayerRequest): Promise<PlayerAnswer> {
  try {
    // Checked again in the guild's order: a request that waited there may find the guild taken over.
    return await parts.serially(request.guildId, async () => ((await parts.holds(request.guildId)) ? dispatch(parts, request) : answer(true, localText('player.unreachable'))));
  } catch (error) {
    parts.logger.error({ err: loggableError(error), guildId: request.guildId, op: request.action.op }, 'voice request failed');
    return answer(true, localText('player.failed'));
  }
}

async function dispatch(parts: RequestParts, request: PlayerRequest): Promise<PlayerAnswer> {
  const { guildId, requester, action } = request;
  const guild = parts.guild(guildId);
  if (!guild) return answer(true, localText('player.unreachable'));
  const row = await parts.settings(guildId);
  const rules = { moderatorRoleId: row?.moderatorRoleId ?? null, djRoleId: row?.djRoleId ?? null };
  const controls = controlsPlayer(rules, requester);
  const state = await parts.store.read(guildId);
  const live = parts.live(guildId);
  parts.logger.debug({ guildId, op: action.op, live: live !== undefined, playing: state?.current?.jobId ?? null, paused: state?.paused }, 'voice request');
  if (isControlOp(action)) return runControl(parts, { guild, requester, controls, state, live }, action);

  switch (action.op) {
    case 'play':
    case 'radio': {
      if (!parts.ffmpeg.found) return answer(true, localText('player.noFfmpeg'));
      if (action.op === 'radio' && action.stay && !isModerator({ moderatorRoleId: rules.moderatorRoleId }, requester)) {
        return answer(true, localText('player.stayModeratorsOnly'));
      }
      const target = await targetChannel(parts, guild, requester, row, state);
      if ('refusal' in target) return answer(true, target.refusal);
      const channel = target.channel;
      let entries: QueueEntry[];
      if (action.op === 'play') entries = [action.entry];
      else {
        entries = await parts.radioRound(guildId, action.radio, requester.userId);
        if (entries.length === 0) return answer(true, localText('player.radioEmpty'));
      }
      const radio = action.op === 'radio' ? action.radio : (state?.radio ?? null);
      const stay = action.op === 'radio' ? action.stay : (state?.stay ?? false);
      if (live && state?.current) {
        const position = await parts.store.enqueue(guildId, ...entries);
        await parts.store.write(guildId, { ...state, radio, stay });
        if (action.op === 'radio') return answer(false, localText('player.radioQueued', { count: entries.length }));
        return answer(false, localText('player.queued', { title: escapeMarkdown(action.entry.title), position }));
      }
      const fresh: PlayerState = {
        voiceChannelId: channel.id,
        textChannelId: requester.channelId,
        guildLocale: requester.guildLocale,
        nowPlayingMessageId: state?.nowPlayingMessageId ?? null,
        current: null,
        paused: false,
        radio,
        stay,
      };
      await parts.store.clearQueue(guildId);
      await parts.store.enqueue(guildId, ...entries);
      await parts.store.write(guildId, fresh);
      const started = parts.connect(guild, channel);
      await parts.advance(started);
      parts.checkListeners(guildId);
      const first = (await parts.store.read(guildId))?.current ?? entries[0]!;
      return action.op === 'radio'
        ? answer(false, localText(action.radio.chart ? 'player.radioChartStarted' : stay ? 'player.radioStay' : 'player.radioStarted', { channel: channel.id, count: entries.length }))
        : answer(false, localText('player.playing', { title: escapeMarkdown(first.title), channel: channel.id }));
    }
    case 'queue': {
      if (!live || !state?.current) return answer(true, localText('player.nothingPlaying'));
      const queue = await parts.store.queue(guildId);
      const elapsed = (await live.line.playbackMs()) / 1000;
      const length = state.current.durationSeconds;
      const lines: LocalText[] = [
        localText(state.paused ? 'player.queue.paused' : 'player.queue.now', {
          title: escapeMarkdown(state.current.title),
          maker: state.current.makerId,
          elapsed: clock(elapsed),
          length: length === null ? '?' : clock(length),
        }),
      ];
      if (queue.length === 0) lines.push(localText(state.radio ? 'player.queue.radioNext' : 'player.queue.empty'));
      else {
        lines.push(localText('player.queue.next'));
        queue.slice(0, 10).forEach((entry, index) =>
          lines.push(localText('player.queue.entry', { position: index + 1, title: escapeMarkdown(truncate(entry.title, 80)), maker: entry.makerId, requester: entry.requestedBy })),
        );
        if (queue.length > 10) lines.push(localText('player.queue.more', { count: queue.length - 10 }));
      }
      return answer(false, ...lines);
    }
    case 'skip': {
      if (!live || !state?.current) return answer(true, localText('player.nothingPlaying'));
      const listeners = listenersIn(guild, state.voiceChannelId);
      if (skipDecision({ controls, userId: requester.userId, requestedBy: state.current.requestedBy }) === 'skip') {
        await parts.skip(live);
        return answer(false, localText('player.skipped', { title: escapeMarkdown(state.current.title), user: requester.userId }));
      }
      if (!listeners.includes(requester.userId)) return answer(true, localText('player.voteListenersOnly', { channel: state.voiceChannelId }));
      const votes = await parts.store.vote(guildId, requester.userId);
      if (votePasses(votes, listeners.length)) {
        await parts.skip(live);
        return answer(false, localText('player.voteSkipped', { title: escapeMarkdown(state.current.title) }));
      }
      return answer(false, localText('player.voted', { votes, needed: votesNeeded(listeners.length) }));
    }
    case 'stop': {
      // No player here, yet the gateway has the bot in a channel (a killed process's, a player
      // lost with Redis's data, a join that failed): /stop takes it out all the same.
      const sitting = guild.voiceStates.cache.get(guild.client.user.id)?.channelId ?? null;
      const channelId = live && state ? state.voiceChannelId : sitting;
      if (channelId === null) return answer(true, localText('player.nothingPlaying'));
      const listeners = listenersIn(guild, channelId);
      const alone = listeners.length === 1 && listeners[0] === requester.userId;
      if (!controls && !alone) return answer(true, localText('player.controllersOnly'));
      if (!live) {
        const left = parts.leaveChannel(guild);
        parts.logger.info({ guildId, channelId, left }, 'voice channel left with no player in it');
      }
      await parts.finish(guildId, 'player.stoppedBy', requester.userId);
      return answer(false, localText('player.stopped'));
    }
    case 'pause':
    case 'resume': {
      if (!live || !state?.current) return answer(true, localText('player.nothingPlaying'));
      const listeners = listenersIn(guild, state.voiceChannelId);
      const alone = listeners.length === 1 && listeners[0] === requester.userId;
      if (!controls && !alone && requester.userId !== state.current.requestedBy) return answer(true, localText('player.pauseNotAllowed'));
      const pause = action.op === 'pause';
      if (state.paused === pause) return answer(true, localText(pause ? 'player.alreadyPaused' : 'player.notPaused'));
      await (pause ? live.line.pause() : live.line.unpause());
      await parts.store.write(guildId, { ...state, paused: pause });
      await parts.showNowPlaying(guildId);
      return answer(false, localText(pause ? 'player.paused' : 'player.resumed', { user: requester.userId }));
    }
  }
}

/** The member's voice channel, if the bot may play there; else why not. */
async function targetChannel(
  parts: RequestParts,
  guild: Guild,
  requester: Requester,
  row: GuildRow | undefined,
  state: PlayerState | undefined,
): Promise<{ channel: VoiceBasedChannel } | { refusal: LocalText }> {
  const channelId = guild.voiceStates.cache.get(requester.userId)?.channelId ?? null;
  if (channelId === null) return { refusal: localText('player.notInVoice') };
  const channel = guild.channels.cache.get(channelId);
  if (!channel?.isVoiceBased()) return { refusal: localText('player.notInVoice') };
  if (parts.live(guild.id) !== undefined && state && state.voiceChannelId !== channelId) {
    return { refusal: localText('player.elsewhere', { channel: state.voiceChannelId }) };
  }
  if (row) {
    const access = checkPlaceAndRole(row, { channelId, parentChannelId: null }, requester);
    if (access?.reason === 'channel_not_allowed') {
      return { refusal: localText('player.channelNotAllowed', { channels: allowedChannelsText(access.allowedChannelIds) }) };
    }
    if (access?.reason === 'missing_role') return { refusal: localText('refusal.missingRole', { role: access.roleId }) };
  }
  const me = guild.members.me ?? (await guild.members.fetchMe());
  const permissions = channel.permissionsFor(me);
  const missing = missingVoicePermissions((name) => permissions?.has(PermissionFlagsBits[name]) ?? false);
  if (missing.length > 0) {
    return { refusal: localText('player.missingPermissions', { channel: channel.id, permissions: missing.map((name) => PERMISSION_NAMES[name]).join(', ') }) };
  }
  const inside = channel.members.has(me.id);
  if (!inside && !channelHasRoom(channel.userLimit, channel.members.size)) return { refusal: localText('player.channelFull', { channel: channel.id }) };
  return { channel };
}

/** How each missing permission is named to the member: as Discord's settings show it. */
const PERMISSION_NAMES = { ViewChannel: 'View Channel', Connect: 'Connect', Speak: 'Speak' } as const;
