/**
 * What the moderators' dashboard reads of a server through the bot's token: the server (name, owner, roles
 * with their permissions), a member's roles, the channels, and the servers the bot is in. OAuth
 * gives none of it (a member's roles are not in `identify guilds`). Each read is kept for at most
 * `maxAgeMs`, so a page view costs Discord nothing most of the time, and a role taken away is
 * seen within that time.
 */
import { API } from '@discordjs/core';
import { DiscordAPIError, REST } from '@discordjs/rest';
import { ChannelType, PermissionFlagsBits, type APIChannel, type APIGuild, type APIGuildMember, type RESTGetAPICurrentUserGuildsResult } from 'discord-api-types/v10';
import { REST_SWEEPS } from './discord-delivery.js';
import { restTrafficOptions, type RestTraffic } from './rest-requests.js';

export interface RoleFact {
  readonly id: string;
  readonly name: string;
  readonly permissions: bigint;
  readonly position: number;
  /** A bot's or an integration's own role: nobody can be given it. */
  readonly managed: boolean;
}

export interface GuildFacts {
  readonly id: string;
  readonly name: string;
  readonly ownerId: string;
  /** Every role, `@everyone` (whose id is the server's) included. */
  readonly roles: readonly RoleFact[];
}

export interface ChannelFact {
  readonly id: string;
  readonly name: string;
  /** `text`, `announcement`, `voice` or `forum`: the kinds the bot can be used in. */
  readonly kind: 'text' | 'announcement' | 'voice' | 'forum';
  readonly position: number;
}

export interface BotGuild {
  readonly id: string;
  readonly name: string;
}

/** The reads, each answered from Discord or from what was read less than `maxAgeMs` ago. */
export interface GuildReads {
  /** Undefined: the bot is not in that server (any more). */
  guild(guildId: string): Promise<GuildFacts | undefined>;
  /** The member's role ids; undefined: not a member. */
  memberRoles(guildId: string, userId: string): Promise<readonly string[] | undefined>;
  channels(guildId: string): Promise<readonly ChannelFact[]>;
  /**
   * Members' names as the server shows them (nickname, else display name, else username), by id;
   * a member who left, or an id that is no member's, is absent.
   */
  memberNames(guildId: string, userIds: readonly string[]): Promise<ReadonlyMap<string, string>>;
  /** The servers the bot is in (the first 1000). */
  botGuilds(): Promise<readonly BotGuild[]>;
}

/**
 * Whether a member holds Manage Server: the server's owner, or a role (`@everyone` included)
 * that grants Manage Server or Administrator. Server-wide, as Discord computes a member's
 * permissions before any channel's overwrites.
 */
export function canManageGuild(guild: GuildFacts, userId: string, roleIds: readonly string[]): boolean {
  if (guild.ownerId === userId) return true;
  const held = new Set([guild.id, ...roleIds]);
  let permissions = 0n;
  for (const role of guild.roles) if (held.has(role.id)) permissions |= role.permissions;
  return (permissions & (PermissionFlagsBits.Administrator | PermissionFlagsBits.ManageGuild)) !== 0n;
}

const KINDS = new Map<number, ChannelFact['kind']>([
  [ChannelType.GuildText, 'text'],
  [ChannelType.GuildAnnouncement, 'announcement'],
  [ChannelType.GuildVoice, 'voice'],
  [ChannelType.GuildForum, 'forum'],
]);

/** The bot's reads over REST, through the deployment's shared budget, cached for `maxAgeMs`. */
export function createGuildReads(options: { apiUrl: string; token: string; traffic?: RestTraffic; maxAgeMs: number; now?: () => number }): GuildReads {
  const timeout = 5_000;
  const rest = new REST({ api: options.apiUrl, timeout, retries: 1, ...REST_SWEEPS, ...restTrafficOptions(options.traffic ?? {}, timeout) });
  const api = new API(rest.setToken(options.token));
  const cache = createCache(options.maxAgeMs, options.now ?? Date.now);

  const absentOnMissing = async <T>(read: () => Promise<T>): Promise<T | undefined> => {
    try {
      return await read();
    } catch (error) {
      if (error instanceof DiscordAPIError && (error.status === 403 || error.status === 404)) return undefined;
      throw error;
    }
  };

  const member = (guildId: string, userId: string) =>
    cache.get(`member:${guildId}:${userId}`, (): Promise<APIGuildMember | undefined> => absentOnMissing(() => api.guilds.getMember(guildId, userId)));

  return {
    guild: (guildId) =>
      cache.get(`guild:${guildId}`, async () => {
        const guild: APIGuild | undefined = await absentOnMissing(() => api.guilds.get(guildId));
        if (!guild) return undefined;
        return {
          id: guild.id,
          name: guild.name,
          ownerId: guild.owner_id,
          roles: guild.roles.map((role) => ({ id: role.id, name: role.name, permissions: BigInt(role.permissions), position: role.position, managed: role.managed })),
        };
      }),
    memberRoles: async (guildId, userId) => (await member(guildId, userId))?.roles,
    memberNames: async (guildId, userIds) => {
      const named = await Promise.all(
        [...new Set(userIds)].map(async (userId) => {
          const found = await member(guildId, userId);
          return found ? ([userId, found.nick ?? found.user.global_name ?? found.user.username] as const) : undefined;
        }),
      );
      return new Map(named.filter((entry) => entry !== undefined));
    },
    channels: (guildId) =>
      cache.get(`channels:${guildId}`, async () => {
        const channels = ((await absentOnMissing(() => api.guilds.getChannels(guildId))) ?? []) as APIChannel[];
        return channels
          .flatMap((channel) => {
            const kind = KINDS.get(channel.type);
            return kind && 'name' in channel ? [{ id: channel.id, name: channel.name ?? channel.id, kind, position: 'position' in channel ? channel.position : 0 }] : [];
          })
          .sort((a, b) => a.position - b.position);
      }),
    botGuilds: () =>
      cache.get('bot-guilds', async () => {
        const all: BotGuild[] = [];
        let after: string | undefined;
        for (let page = 0; page < 5; page += 1) {
          const batch: RESTGetAPICurrentUserGuildsResult = await api.users.getGuilds({ limit: 200, ...(after && { after }) });
          all.push(...batch.map((guild) => ({ id: guild.id, name: guild.name })));
          if (batch.length < 200) break;
          after = batch.at(-1)!.id;
        }
        return all;
      }),
  };
}

/** Values kept for `maxAgeMs`; one read at a time per key (callers meanwhile share it); failures not kept. */
function createCache(maxAgeMs: number, now: () => number) {
  const entries = new Map<string, { at: number; value: Promise<unknown> }>();
  return {
    get<T>(key: string, read: () => Promise<T>): Promise<T> {
      const entry = entries.get(key);
      if (entry && now() - entry.at < maxAgeMs) return entry.value as Promise<T>;
      // A busy dashboard reads many servers and members: forget the oldest rather than grow.
      if (entries.size > 10_000) entries.delete(entries.keys().next().value!);
      const value = read();
      entries.set(key, { at: now(), value });
      value.catch(() => entries.get(key)?.value === value && entries.delete(key));
      return value;
    },
  };
}
