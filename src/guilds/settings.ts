/**
 * A guild's settings (where and by whom the bot may be used, its defaults) and the audit row
 * naming the moderator who changed them. Credit settings (caps, freeze, allowance, alerts)
 * live in the credits module; these are the rest.
 */
import { and, eq, sql } from 'drizzle-orm';
import { allowanceDue, applyMonthlyAllowance, effectiveDailyCap, ensureGuild, type ChangeSource } from '../credits/index.js';
import { preparedOnce, type Database, type Executor } from '../db/client.js';
import { auditLog, guildMemberBlocks, guildRoleLimits, guilds, jobsInFlight, type JobKind } from '../db/schema.js';
import { localText } from '../i18n/index.js';
import { queuedCountOf } from '../pipeline/job-rows.js';
import type { Blocklist } from '../safety/blocklist.js';
import { wordListsOf } from './blocklist.js';
import { blockInForce } from './blocks.js';
import { SettingsError } from './settings-error.js';

export type GuildRow = typeof guilds.$inferSelect;
export type Visibility = GuildRow['visibility'];

/** Discord lets a member pick up to 25 channels in one go; more is a sign of a mistake. */
export const MAX_ALLOWED_CHANNELS = 25;
export const MAX_COOLDOWN_SECONDS = 24 * 60 * 60;

export const SETTINGS_AUDIT_ACTIONS = {
  allowedChannels: 'settings.allowed_channels',
  requiredRole: 'settings.required_role',
  moderatorRole: 'settings.moderator_role',
  djRole: 'settings.dj_role',
  defaultModel: 'settings.default_model',
  cooldown: 'settings.cooldown',
  visibility: 'settings.visibility',
  safety: 'settings.safety',
  notify: 'settings.notify',
} as const;

/**
 * The guild's row, created on first use (with the configured starting credits) and with
 * this month's allowance applied, as every use of the bot should see it.
 */
export async function loadGuild(
  db: Database,
  guildId: string,
  options: {
    startingCredits: number;
    now?: Date;
    roleIds?: readonly string[];
    /** Also count the jobs of these kinds waiting in the queue (where a new job would queue), in the same read. */
    queuedKinds?: readonly JobKind[];
    /** Also read whether the guild's moderators block this member, in the same read. */
    userId?: string;
  },
): Promise<LoadedGuild> {
  const now = options.now ?? new Date();
  const read = { roleIds: options.roleIds ?? [], ...(options.queuedKinds && { queuedKinds: options.queuedKinds }), ...(options.userId !== undefined && { userId: options.userId }) };
  // One round trip on the common path: the guild exists and its allowance is applied.
  const found = await readGuild(db, guildId, read);
  if (found && !allowanceDue(found, now)) return found;
  await ensureGuild(db, guildId, { startingCredits: options.startingCredits });
  await applyMonthlyAllowance(db, guildId, now);
  const opened = await readGuild(db, guildId, read);
  if (!opened) throw new Error('guild row missing right after it was ensured');
  return opened;
}

/**
 * The guild's row, the daily cap that holds for a member with `roleIds` (`effectiveDailyCap`;
 * null: none), and when asked, how many jobs of the given kinds were waiting in the queue (null: not asked).
 */
export type LoadedGuild = GuildRow & {
  readonly dailyCap: number | null;
  /** The guild's blocked words, compiled (read from Postgres only when this process has another version). */
  readonly blocklist: Blocklist;
  /** The guild's explicit words, compiled with the blocked ones: allowed only in age-restricted channels while `explicitInAgeRestrictedOnly` holds. */
  readonly explicitList: Blocklist;
  /** The member asked about (`userId`) is blocked here, until `until` (null: until unblocked); null: not blocked, or not asked. */
  readonly memberBlock: { readonly until: Date | null } | null;
  /** Jobs of `kinds` waiting in the queue (counted up to FIRST_ANSWER_COUNT_LIMIT), and at the service. */
  readonly queued: { readonly kinds: readonly JobKind[]; readonly count: number; readonly inFlight: number } | null;
};

async function readGuild(
  db: Database,
  guildId: string,
  { roleIds, queuedKinds, userId }: { roleIds: readonly string[]; queuedKinds?: readonly JobKind[]; userId?: string },
): Promise<LoadedGuild | undefined> {
  const [row] = await guildRead(db).execute({ guildId, roleIds: [...roleIds], queuedKinds: [...(queuedKinds ?? [])], userId: userId ?? '' });
  if (!row) return undefined;
  const lists = await wordListsOf(db, guildId, row.guild.blocklistVersion);
  return {
    ...row.guild,
    dailyCap: effectiveDailyCap(row.guild.userDailyCap, row.roleCaps.map(Number)),
    blocklist: lists.blocked,
    explicitList: lists.explicit,
    memberBlock: row.blocked ? { until: row.blockedUntil } : null,
    queued: queuedKinds === undefined ? null : { kinds: queuedKinds, count: Number(row.queued), inFlight: Number(row.inFlight) },
  };
}

/**
 * The read every command starts with, built once per database and run as one named statement:
 * its text is the same whatever the roles and kinds (each list is one array parameter), so
 * Postgres plans it once per connection, and this process builds it once.
 */
const guildRead = preparedOnce((db) => {
  const roleCaps = sql<number[]>`array(select ${guildRoleLimits.dailyCap} from ${guildRoleLimits}
    where ${guildRoleLimits.guildId} = ${guilds.id} and ${guildRoleLimits.roleId} = any(${sql.placeholder('roleIds')}::text[]))`;
  // Counted up to a limit, so a backlog costs each command no more.
  const queued = queuedCountOf(sql`${sql.placeholder('queuedKinds')}`);
  const inFlight = sql<number>`(select coalesce(sum(${jobsInFlight.count}), 0)::integer from ${jobsInFlight}
    where ${jobsInFlight.kind} = any(${sql.placeholder('queuedKinds')}::text[]))`;
  // A block in force for the member asked about ('' when none is: no user has that id).
  const memberBlock = and(eq(guildMemberBlocks.guildId, guilds.id), eq(guildMemberBlocks.userId, sql.placeholder('userId')), blockInForce());
  const blocked = sql<boolean>`exists(select 1 from ${guildMemberBlocks} where ${memberBlock})`;
  const blockedUntil = sql<Date | null>`(select ${guildMemberBlocks.until} from ${guildMemberBlocks} where ${memberBlock})`.mapWith(guildMemberBlocks.until);
  return db
    .select({ guild: guilds, roleCaps, queued, inFlight, blocked, blockedUntil })
    .from(guilds)
    .where(eq(guilds.id, sql.placeholder('guildId')))
    .prepare('open_guild');
});

export type SettingsChange =
  | {
      readonly setting: 'allowedChannels';
      readonly add?: string;
      readonly remove?: string;
      readonly clear?: boolean;
      /** The whole list at once (the dashboard's checkboxes); add, remove and clear then do nothing. */
      readonly set?: readonly string[];
    }
  | { readonly setting: 'requiredRole'; readonly roleId: string | null }
  | { readonly setting: 'moderatorRole'; readonly roleId: string | null }
  | { readonly setting: 'djRole'; readonly roleId: string | null }
  | { readonly setting: 'defaultModel'; readonly model: string | null }
  | { readonly setting: 'cooldown'; readonly seconds: number }
  | { readonly setting: 'visibility'; readonly visibility: Visibility }
  | { readonly setting: 'safety'; readonly safety: SafetySettings }
  | { readonly setting: 'notify'; readonly whenDone: boolean };

/** The safety settings a change names; one left out keeps its value. */
export interface SafetySettings {
  /** null: reports reach no channel. */
  readonly reviewChannelId?: string | null;
  readonly useAutomod?: boolean;
  readonly explicitInAgeRestrictedOnly?: boolean;
}

export { SettingsError };

/**
 * Applies one change under a lock on the guild's row and writes who made it, with the
 * value before and after, to the audit log. Returns the guild as it is afterwards.
 */
export async function changeSettings(
  db: Executor,
  input: { guildId: string; actorId: string; change: SettingsChange; models?: readonly string[]; source?: ChangeSource },
): Promise<GuildRow> {
  const { change } = input;
  return db.transaction(async (tx) => {
    const [guild] = await tx.select().from(guilds).where(eq(guilds.id, input.guildId)).for('update');
    if (!guild) throw new SettingsError(localText('settings.error.noGuild'));

    let values: Partial<GuildRow>;
    let before: unknown;
    let after: unknown;
    switch (change.setting) {
      case 'allowedChannels': {
        let channels = change.clear || change.set ? [...new Set(change.set ?? [])] : [...guild.allowedChannelIds];
        if (change.set === undefined && change.add !== undefined && !channels.includes(change.add)) channels.push(change.add);
        if (change.set === undefined && change.remove !== undefined) channels = channels.filter((id) => id !== change.remove);
        if (channels.length > MAX_ALLOWED_CHANNELS) {
          throw new SettingsError(localText('settings.error.tooManyChannels', { max: MAX_ALLOWED_CHANNELS }));
        }
        [before, after, values] = [guild.allowedChannelIds, channels, { allowedChannelIds: channels }];
        break;
      }
      case 'requiredRole':
        [before, after, values] = [guild.requiredRoleId, change.roleId, { requiredRoleId: change.roleId }];
        break;
      case 'moderatorRole':
        [before, after, values] = [guild.moderatorRoleId, change.roleId, { moderatorRoleId: change.roleId }];
        break;
      case 'djRole':
        [before, after, values] = [guild.djRoleId, change.roleId, { djRoleId: change.roleId }];
        break;
      case 'defaultModel':
        if (change.model !== null && input.models !== undefined && !input.models.includes(change.model)) {
          throw new SettingsError(localText('settings.error.unknownModel'));
        }
        [before, after, values] = [guild.defaultModel, change.model, { defaultModel: change.model }];
        break;
      case 'cooldown':
        if (!Number.isInteger(change.seconds) || change.seconds < 0 || change.seconds > MAX_COOLDOWN_SECONDS) {
          throw new SettingsError(localText('settings.error.cooldownRange', { max: MAX_COOLDOWN_SECONDS }));
        }
        [before, after, values] = [guild.cooldownSeconds, change.seconds, { cooldownSeconds: change.seconds }];
        break;
      case 'visibility':
        [before, after, values] = [guild.visibility, change.visibility, { visibility: change.visibility }];
        break;
      case 'notify':
        [before, after, values] = [guild.notifyWhenDone, change.whenDone, { notifyWhenDone: change.whenDone }];
        break;
      case 'safety': {
        const { reviewChannelId, useAutomod, explicitInAgeRestrictedOnly } = guild;
        const was = { reviewChannelId, useAutomod, explicitInAgeRestrictedOnly };
        values = Object.fromEntries(Object.entries(change.safety).filter(([, value]) => value !== undefined));
        [before, after] = [was, { ...was, ...values }];
        break;
      }
    }

    const [updated] = await tx
      .update(guilds)
      .set({ ...values, updatedAt: sql`now()` })
      .where(eq(guilds.id, input.guildId))
      .returning();
    await tx.insert(auditLog).values({
      guildId: input.guildId,
      actorId: input.actorId,
      action: SETTINGS_AUDIT_ACTIONS[change.setting],
      details: { before, after, ...(input.source !== undefined && { source: input.source }) },
    });
    if (!updated) throw new Error('guild row vanished inside its own lock');
    return updated;
  });
}

/** The guild's row as it is, or undefined for a guild that never used the bot. One primary-key read. */
export async function findGuild(db: Executor, guildId: string): Promise<GuildRow | undefined> {
  const [guild] = await db.select().from(guilds).where(eq(guilds.id, guildId));
  return guild;
}
