/** Settings changes (not credit movements) and the audit row naming who made them. */
import { and, eq, sql } from 'drizzle-orm';
import type { Executor } from '../db/client.js';
import { auditLog, guilds } from '../db/schema.js';
import { CreditsError } from './errors.js';

export type GuildRow = typeof guilds.$inferSelect;

export const AUDIT_ACTIONS = {
  monthlyAllowance: 'credits.monthly_allowance',
  dailyCap: 'credits.daily_cap',
  frozen: 'credits.frozen',
  lowBalanceAlert: 'credits.low_balance_alert',
  grant: 'credits.grant',
  take: 'credits.take',
  adjust: 'credits.adjust',
} as const;
export type AuditAction = (typeof AUDIT_ACTIONS)[keyof typeof AUDIT_ACTIONS];

/**
 * Where a moderator's change was made, when not through a slash command: written to the audit
 * row's details as `source`, so the moderation log names the dashboard. Absent: a command.
 */
export type ChangeSource = 'dashboard';

/** Locks the guild's row for the rest of the transaction, so settings changes take turns. */
export async function lockGuild(tx: Executor, guildId: string): Promise<GuildRow> {
  const [guild] = await tx.select().from(guilds).where(eq(guilds.id, guildId)).for('update');
  if (!guild) throw new CreditsError('unknown_guild', 'no credit account for guild', { guildId });
  return guild;
}

/** Whether a change with this idempotency key was already recorded (the row is locked first). */
export async function auditKeyUsed(tx: Executor, guildId: string, action: AuditAction, key: string): Promise<boolean> {
  const [row] = await tx
    .select({ id: auditLog.id })
    .from(auditLog)
    .where(and(eq(auditLog.guildId, guildId), eq(auditLog.action, action), sql`${auditLog.details} ->> 'key' = ${key}`))
    .limit(1);
  return row !== undefined;
}

export async function writeAudit(
  tx: Executor,
  entry: { guildId: string; actorId: string; action: AuditAction; details: Record<string, unknown>; key?: string | undefined; source?: ChangeSource | undefined },
): Promise<void> {
  await tx.insert(auditLog).values({
    guildId: entry.guildId,
    actorId: entry.actorId,
    action: entry.action,
    details: { ...entry.details, ...(entry.key !== undefined && { key: entry.key }), ...(entry.source !== undefined && { source: entry.source }) },
  });
}
