import { describe, expect, it } from 'vitest';
import {
  channelHasRoom,
  clock,
  controlsPlayer,
  mayUseControl,
  missingVoicePermissions,
  parseTimestamp,
  progressBar,
  routeFor,
  shuffled,
  skipDecision,
  votePasses,
  votesNeeded,
} from '../../../src/voice/rules.js';

const member = (roleIds: string[] = [], canManageGuild = false) => ({ userId: '1', roleIds, canManageGuild });

describe('the vote to skip', () => {
  it('passes at more than half of the listeners, never at half', () => {
    expect([1, 2, 3, 4, 5, 10].map(votesNeeded)).toEqual([1, 2, 2, 3, 3, 6]);
    expect(votePasses(1, 2)).toBe(false);
    expect(votePasses(2, 2)).toBe(true);
    expect(votePasses(2, 4)).toBe(false);
    expect(votePasses(3, 4)).toBe(true);
    expect(votePasses(2, 3)).toBe(true);
  });

  it('needs one vote when nobody else listens', () => {
    expect(votesNeeded(0)).toBe(1);
    expect(votePasses(0, 0)).toBe(false);
  });
});

describe('who skips at once', () => {
  it('is the song’s requester, a moderator or the DJ role; anyone else votes', () => {
    expect(skipDecision({ controls: false, userId: 'a', requestedBy: 'a' })).toBe('skip');
    expect(skipDecision({ controls: true, userId: 'a', requestedBy: 'b' })).toBe('skip');
    expect(skipDecision({ controls: false, userId: 'a', requestedBy: 'b' })).toBe('vote');
  });

  it('counts Manage Server, the moderator role and the DJ role as control, and nothing else', () => {
    const guild = { moderatorRoleId: 'mod', djRoleId: 'dj' };
    expect(controlsPlayer(guild, member([], true))).toBe(true);
    expect(controlsPlayer(guild, member(['mod']))).toBe(true);
    expect(controlsPlayer(guild, member(['dj']))).toBe(true);
    expect(controlsPlayer(guild, member(['other']))).toBe(false);
    expect(controlsPlayer({ moderatorRoleId: null, djRoleId: null }, member(['dj']))).toBe(false);
  });
});

describe('the voice permissions', () => {
  it('names what is missing, in the order to fix it', () => {
    expect(missingVoicePermissions(() => true)).toEqual([]);
    expect(missingVoicePermissions((p) => p === 'ViewChannel')).toEqual(['Connect', 'Speak']);
    expect(missingVoicePermissions((p) => p !== 'Speak')).toEqual(['Speak']);
    expect(missingVoicePermissions(() => false)).toEqual(['ViewChannel', 'Connect', 'Speak']);
  });

  it('honours a user limit, 0 being none', () => {
    expect(channelHasRoom(0, 99)).toBe(true);
    expect(channelHasRoom(2, 1)).toBe(true);
    expect(channelHasRoom(2, 2)).toBe(false);
  });
});

describe('routing a voice request', () => {
  it('runs here only where this process’s gateway holds the guild', () => {
    expect(routeFor({ runsGateway: true, holdsGuild: true })).toBe('local');
    expect(routeFor({ runsGateway: true, holdsGuild: false })).toBe('remote');
    expect(routeFor({ runsGateway: false, holdsGuild: false })).toBe('remote');
  });
});

describe('radio order and times', () => {
  it('shuffles every song exactly once', () => {
    let seed = 7;
    const random = () => ((seed = (seed * 16807) % 2147483647) / 2147483647);
    const songs = Array.from({ length: 20 }, (_, i) => i);
    const order = shuffled(songs, random);
    expect([...order].sort((a, b) => a - b)).toEqual(songs);
    expect(order).not.toEqual(songs);
  });

  it('writes m:ss and h:mm:ss', () => {
    expect([0, 5, 65, 600, 3725].map(clock)).toEqual(['0:00', '0:05', '1:05', '10:00', '1:02:05']);
  });
});

describe('the player controls', () => {
  const member = { controls: false, alone: false, userId: 'u1' };
  it('are the DJ role’s, the moderators’ and a lone listener’s; seeking the song and removing an entry are also their requester’s', () => {
    for (const control of ['volume', 'seek', 'loop', 'shuffle', 'remove', 'move', 'clear'] as const) {
      expect(mayUseControl(control, { ...member, controls: true }), control).toBe(true);
      expect(mayUseControl(control, { ...member, alone: true }), control).toBe(true);
      expect(mayUseControl(control, member), control).toBe(false);
      expect(mayUseControl(control, { ...member, requestedBy: 'u1' }), control).toBe(control === 'seek' || control === 'remove');
      expect(mayUseControl(control, { ...member, requestedBy: 'u2' }), control).toBe(false);
    }
  });

  it('read a time as seconds, m:ss or h:mm:ss, and nothing else', () => {
    expect(['90', ' 1:30 ', '0:05', '1:02:03', '12:00'].map(parseTimestamp)).toEqual([90, 90, 5, 3723, 720]);
    for (const text of ['', '1:5', '1:60', '1:60:00', 'abc', '-5', '1.5', '1:30pm']) expect(parseTimestamp(text), text).toBeUndefined();
  });

  it('draw the progress bar with its knob where the song is, within the bar at both ends', () => {
    expect(progressBar(0, 100, 10)).toBe('🔘▬▬▬▬▬▬▬▬▬');
    expect(progressBar(50, 100, 10)).toBe('▬▬▬▬▬🔘▬▬▬▬');
    expect(progressBar(100, 100, 10)).toBe('▬▬▬▬▬▬▬▬▬🔘');
    expect(progressBar(500, 100, 10)).toBe('▬▬▬▬▬▬▬▬▬🔘');
    expect(progressBar(-3, 0, 10)).toBe('🔘▬▬▬▬▬▬▬▬▬');
    expect([...progressBar(37, 185)].filter((c) => c === '▬')).toHaveLength(13);
  });
});
