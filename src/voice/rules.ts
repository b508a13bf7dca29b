/**
 * The player's rules as plain functions: who may do what, when a vote passes, which voice
 * permission is missing, and where a request is handled. No Discord types, no I/O.
 */
import type { Member } from '../guilds/access.js';

/** Votes a skip needs: more than half of the listeners (the bot not counted), at least one. */
export function votesNeeded(listeners: number): number {
  return Math.floor(Math.max(listeners, 1) / 2) + 1;
}

/** A vote passes with more than half of the listeners. */
export function votePasses(votes: number, listeners: number): boolean {
  return votes >= votesNeeded(listeners);
}

/** The permissions the bot needs in a voice channel, in the order a member should fix them. */
export const VOICE_PERMISSIONS = ['ViewChannel', 'Connect', 'Speak'] as const;
export type VoicePermission = (typeof VOICE_PERMISSIONS)[number];

/** The permissions of {@link VOICE_PERMISSIONS} that `has` says the bot lacks, in that order. */
export function missingVoicePermissions(has: (permission: VoicePermission) => boolean): VoicePermission[] {
  return VOICE_PERMISSIONS.filter((permission) => !has(permission));
}

/** Whether a channel with `members` people in it (the bot not among them) and this user limit (0: none) has room for the bot. */
export function channelHasRoom(userLimit: number, members: number): boolean {
  return userLimit === 0 || members < userLimit;
}

/** A moderator (Manage Server or the moderator role) or a member with the DJ role: skips any song, stops, clears. */
export function controlsPlayer(guild: { readonly moderatorRoleId: string | null; readonly djRoleId: string | null }, member: Member): boolean {
  return (
    member.canManageGuild ||
    (guild.moderatorRoleId !== null && member.roleIds.includes(guild.moderatorRoleId)) ||
    (guild.djRoleId !== null && member.roleIds.includes(guild.djRoleId))
  );
}

export type SkipDecision = 'skip' | 'vote';

/** The requester of the song and the player's controllers skip at once; anyone else votes. */
export function skipDecision(input: { readonly controls: boolean; readonly userId: string; readonly requestedBy: string }): SkipDecision {
  return input.controls || input.userId === input.requestedBy ? 'skip' : 'vote';
}

/** Where a voice request runs: here when this process's gateway holds the guild, else sent to the process that does. */
export function routeFor(input: { readonly runsGateway: boolean; readonly holdsGuild: boolean }): 'local' | 'remote' {
  return input.runsGateway && input.holdsGuild ? 'local' : 'remote';
}

/** Fisher–Yates with an injectable random source, for radio order. */
export function shuffled<T>(items: readonly T[], random: () => number = Math.random): T[] {
  const out = [...items];
  for (let i = out.length - 1; i > 0; i -= 1) {
    const j = Math.floor(random() * (i + 1));
    [out[i], out[j]] = [out[j]!, out[i]!];
  }
  return out;
}

/** `m:ss` (or `h:mm:ss`) for a number of seconds. */
export function clock(seconds: number): string {
  const total = Math.max(0, Math.floor(seconds));
  const h = Math.floor(total / 3600);
  const m = Math.floor((total % 3600) / 60);
  const s = String(total % 60).padStart(2, '0');
  return h > 0 ? `${h}:${String(m).padStart(2, '0')}:${s}` : `${m}:${s}`;
}

/** The player controls beyond skip and stop, by who may use them. */
export type PlayerControl = 'volume' | 'seek' | 'loop' | 'shuffle' | 'remove' | 'move' | 'clear';

/**
 * Who may use a control, as for pause and stop: the DJ role and moderators always, and a member
 * listening alone. Seeking the song playing is also its requester's, as pausing it is; removing
 * an entry is also whoever asked for that entry.
 */
export function mayUseControl(
  control: PlayerControl,
  input: { readonly controls: boolean; readonly alone: boolean; readonly userId: string; readonly requestedBy?: string },
): boolean {
  if (input.controls || input.alone) return true;
  return (control === 'seek' || control === 'remove') && input.requestedBy === input.userId;
}

/** The volumes `/volume` accepts, in percent of each song's own loudness. */
export const VOLUME_RANGE = { min: 0, max: 200 } as const;

/** Seconds for `90`, `1:30` or `1:02:03` (what `/seek to:` accepts); undefined for anything else. */
export function parseTimestamp(text: string): number | undefined {
  const trimmed = text.trim();
  if (/^\d{1,6}$/.test(trimmed)) return Number(trimmed);
  const match = /^(?:(\d{1,3}):)?(\d{1,3}):(\d{2})$/.exec(trimmed);
  if (!match) return undefined;
  const [, hours, minutes, seconds] = match;
  if (Number(seconds) > 59 || (hours !== undefined && Number(minutes) > 59)) return undefined;
  return Number(hours ?? 0) * 3600 + Number(minutes) * 60 + Number(seconds);
}

/** The now-playing card's bar: `width` cells, the knob where `elapsed` is in `length` (seconds). */
export function progressBar(elapsed: number, length: number, width = 14): string {
  const share = length > 0 ? Math.min(1, Math.max(0, elapsed / length)) : 0;
  const knob = Math.min(width - 1, Math.floor(share * width));
  return `${'▬'.repeat(knob)}🔘${'▬'.repeat(width - 1 - knob)}`;
}
