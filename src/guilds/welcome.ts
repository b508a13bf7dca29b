/**
 * The welcome a guild gets when the bot joins it, once: the row is taken before the message
 * is posted (`ON CONFLICT DO NOTHING`), so two gateway processes, a restart or a rejoin never
 * post it twice. When the post fails the row is given back, so a later join can try again.
 */
import { eq } from 'drizzle-orm';
import type { Database } from '../db/client.js';
import { guildWelcomes } from '../db/schema.js';

/** Takes the guild's one welcome; false when it was already taken. */
export async function claimWelcome(db: Database, guildId: string, channelId: string, now = new Date()): Promise<boolean> {
  const taken = await db
    .insert(guildWelcomes)
    .values({ guildId, channelId, welcomedAt: now })
    .onConflictDoNothing()
    .returning({ guildId: guildWelcomes.guildId });
  return taken.length > 0;
}

/** Gives the welcome back after a post that failed. */
export async function releaseWelcome(db: Database, guildId: string): Promise<void> {
  await db.delete(guildWelcomes).where(eq(guildWelcomes.guildId, guildId));
}
