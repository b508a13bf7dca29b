/**
 * A guild's blocked words: stored here, compiled once per process and version
 * (src/safety/blocklist.ts matches them). Every change raises the guild's `blocklist_version`
 * in its own transaction, so each process reads the list again on the next request it serves
 * for that guild, and never otherwise: the guild's single read carries the version.
 */
import { and, asc, count, eq, inArray, sql } from 'drizzle-orm';
import type { Database, Executor } from '../db/client.js';
import { auditLog, guildBlockedWords, guilds } from '../db/schema.js';
import { compileBlocklist, type Blocklist } from '../safety/blocklist.js';
import { lockGuild } from '../credits/audit.js';
import { localText } from '../i18n/index.js';
import { SettingsError } from './settings-error.js';

/** At most this many entries per guild, each at most {@link BLOCKED_ENTRY_MAX} characters. */
export const BLOCKLIST_MAX_ENTRIES = 1_000;
export const BLOCKED_ENTRY_MAX = 100;
/** Compiled lists kept per database; the least recently compiled goes first. */
const CACHED_GUILDS = 10_000;

export const EMPTY_BLOCKLIST: Blocklist = compileBlocklist([]);

const compiled = new WeakMap<Database, Map<string, { readonly version: number; readonly list: Blocklist }>>();

/** The guild's compiled list at `version` (the guild row's `blocklistVersion`): read from Postgres only when this process has another. */
export async function blocklistOf(db: Database, guildId: string, version: number): Promise<Blocklist> {
  if (version === 0) return EMPTY_BLOCKLIST;
  let lists = compiled.get(db);
  if (!lists) compiled.set(db, (lists = new Map()));
  const cached = lists.get(guildId);
  if (cached && cached.version === version) return cached.list;
  // Read after the version was: never older than the version it is kept under. A change
  // committed in between raises the version, and the next request reads the list again.
  const list = compileBlocklist(await listBlockedWords(db, guildId));
  lists.delete(guildId);
  if (lists.size >= CACHED_GUILDS) lists.delete(lists.keys().next().value!);
  lists.set(guildId, { version, list });
  return list;
}

/** The guild's entries as moderators wrote them, in alphabetical order. */
export async function listBlockedWords(db: Executor, guildId: string): Promise<string[]> {
  const rows = await db.select({ entry: guildBlockedWords.entry }).from(guildBlockedWords).where(eq(guildBlockedWords.guildId, guildId)).orderBy(asc(guildBlockedWords.entry));
  return rows.map((row) => row.entry);
}

/**
 * The entries a moderator typed: separated by commas or new lines, trimmed, each kept once.
 * @throws SettingsError when none is left, or one is too long or matches nothing.
 */
export function parseBlockedWords(typed: string): string[] {
  const entries = [...new Set(typed.split(/[,\n]/).map((entry) => entry.trim().replace(/\s+/g, ' ')).filter((entry) => entry !== ''))];
  if (entries.length === 0) throw new SettingsError(localText('blocklist.empty'));
  for (const entry of entries) {
    if (entry.length > BLOCKED_ENTRY_MAX) throw new SettingsError(localText('blocklist.entryTooLong', { max: BLOCKED_ENTRY_MAX }));
    // The matcher drops an entry it could never match: its judgement, not a second one here.
    if (compileBlocklist([entry]).size === 0) throw new SettingsError(localText('blocklist.entryMatchesNothing', { entry }));
  }
  return entries;
}

export interface BlocklistChange {
  readonly guildId: string;
  readonly actorId: string;
  readonly entries: readonly string[];
}

/**
 * Adds entries (already parsed), leaves out those listed already, raises the version and
 * writes the audit log, in one transaction. Returns what was added and how many are listed.
 * @throws SettingsError past {@link BLOCKLIST_MAX_ENTRIES}: nothing is added then.
 */
export async function addBlockedWords(db: Database, change: BlocklistChange): Promise<{ added: string[]; total: number }> {
  return db.transaction(async (tx) => {
    await lockGuild(tx, change.guildId);
    const added = (
      await tx
        .insert(guildBlockedWords)
        .values(change.entries.map((entry) => ({ guildId: change.guildId, entry, addedBy: change.actorId })))
        .onConflictDoNothing()
        .returning({ entry: guildBlockedWords.entry })
    ).map((row) => row.entry);
    const total = await countEntries(tx, change.guildId);
    if (total > BLOCKLIST_MAX_ENTRIES) throw new SettingsError(localText('blocklist.full', { max: BLOCKLIST_MAX_ENTRIES }));
    if (added.length > 0) await recordChange(tx, change, 'blocklist_add', added);
    return { added, total };
  });
}

/** Removes entries (as listed), raises the version and writes the audit log, in one transaction. */
export async function removeBlockedWords(db: Database, change: BlocklistChange): Promise<{ removed: string[]; total: number }> {
  return db.transaction(async (tx) => {
    await lockGuild(tx, change.guildId);
    const removed = (
      await tx
        .delete(guildBlockedWords)
        .where(and(eq(guildBlockedWords.guildId, change.guildId), inArray(guildBlockedWords.entry, [...change.entries])))
        .returning({ entry: guildBlockedWords.entry })
    ).map((row) => row.entry);
    if (removed.length > 0) await recordChange(tx, change, 'blocklist_remove', removed);
    return { removed, total: await countEntries(tx, change.guildId) };
  });
}

async function countEntries(tx: Executor, guildId: string): Promise<number> {
  const [row] = await tx.select({ n: count() }).from(guildBlockedWords).where(eq(guildBlockedWords.guildId, guildId));
  return row?.n ?? 0;
}

async function recordChange(tx: Executor, change: BlocklistChange, action: 'blocklist_add' | 'blocklist_remove', entries: readonly string[]): Promise<void> {
  await tx
    .update(guilds)
    .set({ blocklistVersion: sql`${guilds.blocklistVersion} + 1`, updatedAt: sql`now()` })
    .where(eq(guilds.id, change.guildId));
  await tx.insert(auditLog).values({ guildId: change.guildId, actorId: change.actorId, action, details: { entries } });
}
