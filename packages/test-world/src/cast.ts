/** The guilds, channels, roles and members a world is seeded with, on the Discord emulator. */
import { PermissionFlagsBits, type APIRole } from 'discord-api-types/v10';
import type { DiscordEmulator, EmulatorGuild } from '@music-bot/discord-emulator';

/** User ids of a cast guild's members. */
export interface Members {
  /** A member with no special rights. */
  readonly alice: string;
  /** Holds the DJ role. */
  readonly bob: string;
  /** Holds Manage Server. */
  readonly manager: string;
  /** Holds the "Music mods" role: a moderator once `/settings moderator-role` names it. */
  readonly roleModerator: string;
  /** Meant for BOT_OWNER_IDS, without Manage Server. */
  readonly owner: string;
}

export interface CastGuild {
  readonly guild: EmulatorGuild;
  /** The music channel, where commands are run. */
  readonly channelId: string;
  readonly otherChannelId: string;
  readonly moderatorRole: APIRole;
  readonly djRole: APIRole;
  readonly members: Members;
}

/**
 * A guild with a music and a general channel, the moderators' and the DJ role, and the cast of
 * members. Given `members`, those users join again (another guild, the same people); the others
 * are new users.
 */
export function seedCast(emulator: DiscordEmulator, options: { name?: string; members?: Partial<Members> } = {}): CastGuild {
  const guild = emulator.createGuild({ name: options.name ?? 'Music makers' });
  const channel = emulator.createChannel(guild.id, { name: 'music' });
  const other = emulator.createChannel(guild.id, { name: 'general' });
  const moderatorRole = emulator.createRole(guild.id, { name: 'Music mods' });
  const djRole = emulator.createRole(guild.id, { name: 'DJ' });
  const join = (name: keyof Members, input: { roles?: string[]; permissions?: bigint }) =>
    emulator.addMember(guild.id, { userId: options.members?.[name], username: name.toLowerCase(), ...input }).id;
  const members: Members = {
    alice: join('alice', {}),
    bob: join('bob', { roles: [djRole.id] }),
    manager: join('manager', { permissions: PermissionFlagsBits.ManageGuild | PermissionFlagsBits.ViewChannel | PermissionFlagsBits.SendMessages }),
    roleModerator: join('roleModerator', { roles: [moderatorRole.id] }),
    owner: join('owner', {}),
  };
  return { guild, channelId: channel.id, otherChannelId: other.id, moderatorRole, djRole, members };
}

/** Where a member runs a command: their guild, its channel, and them. */
export interface Place {
  readonly guildId: string;
  readonly channelId: string;
  readonly userId: string;
}

/** `guilds` guilds named `<name> <n>`, each with a channel and `members` members: every member's place. */
export function populateGuilds(emulator: DiscordEmulator, guilds: number, members: number, name = 'Bench'): Place[] {
  const places: Place[] = [];
  for (let g = 0; g < guilds; g += 1) {
    const guild = emulator.createGuild({ name: `${name} ${g}` });
    const channel = emulator.createChannel(guild.id, { name: 'songs' });
    for (let m = 0; m < members; m += 1) {
      places.push({ guildId: guild.id, channelId: channel.id, userId: emulator.addMember(guild.id, { username: `member-${g}-${m}` }).id });
    }
  }
  return places;
}
