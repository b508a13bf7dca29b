/**
 * Members a guild's moderators keep from using the bot: for some days or until unblocked. The
 * guild's single read says whether the member asking is blocked (src/guilds/settings.ts), so a
 * block costs a request nothing to check; each change is in the audit log, with who and why.
 */
import { and, asc, eq, gt, isNull, or, sql } from 'drizzle-orm';
import type { Database, Executor } from '../db/client.js';
import { auditLog, guildMemberBlocks } from '../db/schema.js';

/** The longest block with an end; a block without `days` lasts until a moderator lifts it. */
export const MAX_BLOCK_DAYS = 365;
export const BLOCK_REASON_MAX = 200;
const DAY_MS = 86_400_000;

export interface MemberBlock {
  readonly userId: string;
  readonly until: Date | null;
  readonly reason: string | null;
  readonly blockedBy: string;
  readonly createdAt: Date;
}

/** Blocks a member (again: a new block replaces the one in force), and writes the audit log, in one transaction. */
export async function blockMember(
  db: Database,
  block: { guildId: string; userId: string; actorId: string; days?: number; reason?: string; now?: Date },
): Promise<MemberBlock> {
  const now = block.now ?? new Date();
  const until = block.days === undefined ? null : new Date(now.getTime() + block.days * DAY_MS);
  const reason = block.reason?.trim().slice(0, BLOCK_REASON_MAX) || null;
  return db.transaction(async (tx) => {
    const values = { guildId: block.guildId, userId: block.userId, until, reason, blockedBy: block.actorId, createdAt: now };
    const [row] = await tx
      .insert(guildMemberBlocks)
      .values(values)
      .onConflictDoUpdate({ target: [guildMemberBlocks.guildId, guildMemberBlocks.userId], set: { until, reason, blockedBy: block.actorId, createdAt: now } })
      .returning();
    await tx.insert(auditLog).values({ guildId: block.guildId, actorId: block.actorId, action: 'member_blocked', details: { userId: block.userId, until: until?.toISOString() ?? null, reason } });
    return row!;
  });
}

/** Lifts a member's block; false when none was in force. Writes the audit log when one was. */
export async function unblockMember(db: Database, unblock: { guildId: string; userId: string; actorId: string }): Promise<boolean> {
  return db.transaction(async (tx) => {
    const removed = await tx
      .delete(guildMemberBlocks)
      .where(and(eq(guildMemberBlocks.guildId, unblock.guildId), eq(guildMemberBlocks.userId, unblock.userId), blockInForce()))
      .returning({ userId: guildMemberBlocks.userId });
    // An expired block is gone as well, but it lifted nothing.
    await tx.delete(guildMemberBlocks).where(and(eq(guildMemberBlocks.guildId, unblock.guildId), eq(guildMemberBlocks.userId, unblock.userId)));
    if (removed.length === 0) return false;
    await tx.insert(auditLog).values({ guildId: unblock.guildId, actorId: unblock.actorId, action: 'member_unblocked', details: { userId: unblock.userId } });
    return true;
  });
}

/** The member's block in force in the guild, if any: for the ways in that skip the guild's read (voice, autocomplete). */
export async function memberBlockOf(db: Executor, guildId: string, userId: string): Promise<{ until: Date | null } | undefined> {
  const [row] = await db
    .select({ until: guildMemberBlocks.until })
    .from(guildMemberBlocks)
    .where(and(eq(guildMemberBlocks.guildId, guildId), eq(guildMemberBlocks.userId, userId), blockInForce()));
  return row;
}

/** The blocks in force in a guild, the ones that end soonest first and those without an end last. */
export async function listBlocks(db: Executor, guildId: string): Promise<MemberBlock[]> {
  return db
    .select({ userId: guildMemberBlocks.userId, until: guildMemberBlocks.until, reason: guildMemberBlocks.reason, blockedBy: guildMemberBlocks.blockedBy, createdAt: guildMemberBlocks.createdAt })
    .from(guildMemberBlocks)
    .where(and(eq(guildMemberBlocks.guildId, guildId), blockInForce()))
    .orderBy(sql`${guildMemberBlocks.until} asc nulls last`, asc(guildMemberBlocks.createdAt));
}

/** A block that has not ended: without an end, or ending later. */
export const blockInForce = () => or(isNull(guildMemberBlocks.until), gt(guildMemberBlocks.until, sql`now()`));
