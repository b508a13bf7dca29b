/**
 * The playground's Discord: one server with two text channels, a voice channel, three roles
 * (Moderators gives Manage Server), four people to act as, and what the bot sells (a
 * consumable "100 credits", a guild subscription "Server plan"). Its ids
 * are kept in the data folder, because the bot's data (credits, settings, jobs) is kept there
 * too and names guilds, channels, roles and users by id.
 */
import { randomInt } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import { writeFile } from 'node:fs/promises';
import { ChannelType, PermissionFlagsBits } from 'discord-api-types/v10';
import type { DiscordEmulator } from '@music-bot/discord-emulator';

export type PlaygroundRole = 'member' | 'moderator' | 'owner';

export interface PlaygroundUser {
  readonly id: string;
  readonly username: string;
  readonly role: PlaygroundRole;
  readonly description: string;
}

/** Something the bot sells, as the bot's configuration names it (CREDIT_PACKS, SUBSCRIPTION_ALLOWANCES). */
export interface PlaygroundSku {
  readonly id: string;
  readonly name: string;
  readonly type: 'consumable' | 'subscription';
  /** Credits it gives: once for a pack, each period for a subscription. */
  readonly credits: number;
  /** What the page shows as its price; nothing is charged. */
  readonly price: string;
}

export interface PlaygroundWorld {
  readonly applicationId: string;
  readonly guild: { readonly id: string; readonly name: string };
  readonly channels: ReadonlyArray<{ readonly id: string; readonly name: string; readonly topic: string }>;
  /** Where the people join to hear what the bot plays. */
  readonly voiceChannel: { readonly id: string; readonly name: string };
  readonly roles: ReadonlyArray<{ readonly id: string; readonly name: string }>;
  readonly users: readonly PlaygroundUser[];
  readonly skus: readonly PlaygroundSku[];
}

interface WorldIds {
  applicationId: string;
  guildId: string;
  channelIds: [string, string];
  /** Absent from data folders made before the playground had one. */
  voiceChannelId?: string;
  roleIds: [string, string];
  /** The member, the moderator, the owner, then the second member (absent from older data folders). */
  userIds: [string, string, string] | [string, string, string, string];
  /** Absent from data folders made before the playground sold anything. */
  skuIds?: { credits: string; serverPlan: string };
  /** The role that gives Manage Server; absent from data folders made before the playground had one. */
  moderatorRoleId?: string;
}

/** A snowflake of a plausible age; uniqueness is all that matters here. */
function snowflake(): string {
  const ms = BigInt(Date.now() - 1_420_070_400_000 - randomInt(1_000_000));
  return ((ms << 22n) | BigInt(randomInt(4_194_304))).toString();
}

type KeptIds = Required<WorldIds> & { userIds: [string, string, string, string] };

async function loadIds(file: string): Promise<KeptIds> {
  if (existsSync(file)) {
    const kept = JSON.parse(readFileSync(file, 'utf8')) as WorldIds;
    const { userIds, voiceChannelId, skuIds, moderatorRoleId } = kept;
    if (voiceChannelId !== undefined && skuIds !== undefined && moderatorRoleId !== undefined && userIds.length === 4) return { ...kept, voiceChannelId, skuIds, moderatorRoleId, userIds };
    const ids: KeptIds = {
      ...kept,
      voiceChannelId: voiceChannelId ?? snowflake(),
      skuIds: skuIds ?? { credits: snowflake(), serverPlan: snowflake() },
      moderatorRoleId: moderatorRoleId ?? snowflake(),
      userIds: [userIds[0], userIds[1], userIds[2], userIds[3] ?? snowflake()],
    };
    await writeFile(file, `${JSON.stringify(ids, null, 2)}\n`);
    return ids;
  }
  const ids: KeptIds = {
    applicationId: snowflake(),
    guildId: snowflake(),
    channelIds: [snowflake(), snowflake()],
    voiceChannelId: snowflake(),
    roleIds: [snowflake(), snowflake()],
    userIds: [snowflake(), snowflake(), snowflake(), snowflake()],
    skuIds: { credits: snowflake(), serverPlan: snowflake() },
    moderatorRoleId: snowflake(),
  };
  await writeFile(file, `${JSON.stringify(ids, null, 2)}\n`);
  return ids;
}

/** The bot's application id, kept with the world's other ids in `file`. */
export async function playgroundApplicationId(file: string): Promise<string> {
  return (await loadIds(file)).applicationId;
}

/** Builds the playground's server in the emulator, with the ids kept in `file`. */
export async function seedWorld(emulator: DiscordEmulator, file: string): Promise<PlaygroundWorld> {
  const ids = await loadIds(file);
  // In the persona switcher's order; a second member to try what takes two (vote-skip, per-member limits).
  const users: PlaygroundUser[] = [
    { id: ids.userIds[0], username: 'you', role: 'member', description: 'a member of the server' },
    { id: ids.userIds[3], username: 'friend', role: 'member', description: 'another member of the server' },
    { id: ids.userIds[1], username: 'mod', role: 'moderator', description: 'a moderator (Manage Server)' },
    { id: ids.userIds[2], username: 'owner', role: 'owner', description: "the bot's owner (BOT_OWNER_IDS)" },
  ];
  const guild = emulator.createGuild({ id: ids.guildId, name: 'Music Makers' });
  const channels = [
    { id: ids.channelIds[0], name: 'music', topic: 'Playground: everything here runs on this machine, no Discord and no paid key' },
    { id: ids.channelIds[1], name: 'general', topic: 'Another channel, to try /settings channels' },
  ];
  for (const channel of channels) emulator.createChannel(guild.id, channel);
  const voiceChannel = { id: ids.voiceChannelId, name: 'Lounge' };
  emulator.createChannel(guild.id, { ...voiceChannel, type: ChannelType.GuildVoice });
  const roles = [
    { id: ids.roleIds[0], name: 'DJ' },
    { id: ids.roleIds[1], name: 'Listener' },
    { id: ids.moderatorRoleId, name: 'Moderators' },
  ];
  for (const role of roles) emulator.createRole(guild.id, { ...role, ...(role.id === ids.moderatorRoleId && { permissions: PermissionFlagsBits.ManageGuild }) });

  // A member has @everyone's permissions (the first also the DJ role); the moderator and the bot's
  // owner also manage the server, through a role as on Discord, so the dashboard sees it too.
  // The page gives and takes roles later, as a moderator would.
  for (const user of users) {
    const given = user.role !== 'member' ? [ids.moderatorRoleId] : user.id === ids.userIds[0] ? [ids.roleIds[0]] : [];
    emulator.addMember(guild.id, { userId: user.id, username: user.username, roles: given });
  }

  // The ids stay across runs: the bot's configuration and its ledger name them.
  const skus: PlaygroundSku[] = [
    { id: ids.skuIds.credits, name: '100 credits', type: 'consumable', credits: 100, price: '$0.99' },
    { id: ids.skuIds.serverPlan, name: 'Server plan', type: 'subscription', credits: 500, price: '$4.99/month' },
  ];
  for (const sku of skus) emulator.createSku({ id: sku.id, name: sku.name, type: sku.type });
  return { applicationId: ids.applicationId, guild: { id: guild.id, name: guild.name }, channels, voiceChannel, roles, users, skus };
}

/** The bot's environment for what the playground sells: `CREDIT_PACKS` and `SUBSCRIPTION_ALLOWANCES` (`<sku_id>:<credits>`). */
export function skuEnv(world: PlaygroundWorld): { CREDIT_PACKS: string; SUBSCRIPTION_ALLOWANCES: string } {
  const list = (type: PlaygroundSku['type']) =>
    world.skus
      .filter((sku) => sku.type === type)
      .map((sku) => `${sku.id}:${sku.credits}`)
      .join(',');
  return { CREDIT_PACKS: list('consumable'), SUBSCRIPTION_ALLOWANCES: list('subscription') };
}
