/** A member's own choices in a server, beside the server's defaults. */
import { and, eq, sql } from 'drizzle-orm';
import type { Executor } from '../db/client.js';
import { memberSettings } from '../db/schema.js';

/** What a member chose for "tell me when a long job is done": on, off, or the server's default. */
export type NotifyChoice = 'on' | 'off' | 'server';

/** Saves the member's choice (the guild's row exists: the caller has loaded it). */
export async function setNotifyWhenDone(db: Executor, guildId: string, userId: string, choice: NotifyChoice): Promise<void> {
  const value = choice === 'server' ? null : choice === 'on';
  await db
    .insert(memberSettings)
    .values({ guildId, userId, notifyWhenDone: value })
    .onConflictDoUpdate({ target: [memberSettings.guildId, memberSettings.userId], set: { notifyWhenDone: value, updatedAt: sql`now()` } });
}

/** The member's own choice, for `/notify` to show. */
export async function notifyChoiceOf(db: Executor, guildId: string, userId: string): Promise<NotifyChoice> {
  const [row] = await db
    .select({ value: memberSettings.notifyWhenDone })
    .from(memberSettings)
    .where(and(eq(memberSettings.guildId, guildId), eq(memberSettings.userId, userId)));
  return row?.value === true ? 'on' : row?.value === false ? 'off' : 'server';
}
