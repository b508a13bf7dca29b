/**
 * A guild's word lists: the blocked words (never allowed) and the explicit ones (allowed only in
 * age-restricted channels, when the guild says so), stored here, compiled once per process and
 * version (src/safety/blocklist.ts matches them). Every change to either raises the guild's
 * `blocklist_version` in its own transaction, so each process reads the lists again on the
 * next request it serves for that guild, and never otherwise: the guild's single read carries the version.
 */
import { and, asc, count, eq, inArray, sql } from 'drizzle-orm';
import type { Database, Executor } from '../db/client.js';
import { auditLog, guildBlockedWords, guilds, type WordList } from '../db/schema.js';
import { compileBlocklist, type Blocklist } from '../safety/blocklist.js';
import { lockGuild, type ChangeSource } from '../credits/audit.js';
import { localText } from '../i18n/index.js';
import { SettingsError } from './settings-error.js';

/** At most this many entries per guild and list, each at most {@link BLOCKED_ENTRY_MAX} characters. */
export const BLOCKLIST_MAX_ENTRIES = 1_000;
export const BLOCKED_ENTRY_MAX = 100;
/** Compiled lists kept per database; the least recently compiled goes first. */
const CACHED_GUILDS = 10_000;

export const EMPTY_BLOCKLIST: Blocklist = compileBlocklist([]);

/** A guild's two lists, compiled. */
export interface GuildWordLists {
  readonly blocked: Blocklist;
  readonly explicit: Blocklist;
}

const NO_LISTS: GuildWordLists = { blocked: EMPTY_BLOCKLIST, explicit: EMPTY_BLOCKLIST };

const compiled = new WeakMap<Database, Map<string, { readonly version: number; readonly lists: GuildWordLists }>>();

/** The guild's compiled lists at `version` (the guild row's `blocklistVersion`): read from Postgres only when this process has another. */
export async function wordListsOf(db: Database, guildId: string, version: number): Promise<GuildWordLists> {
  if (version === 0) return NO_LISTS;
  let cache = compiled.get(db);
  if (!cache) compiled.set(db, (cache = new Map()));
  const cached = cache.get(guildId);
  if (cached && cached.version === version) return cached.lists;
  // Read after the version was: never older than the version it is kept under. A change
  // committed in between raises the version, and the next request reads the lists again.
  const rows = await db.select({ list: guildBlockedWords.list, entry: guildBlockedWords.entry }).from(guildBlockedWords).where(eq(guildBlockedWords.guildId, guildId));
  const entriesOf = (list: WordList) => rows.filter((row) => row.list === list).map((row) => row.entry);
  const lists = { blocked: compileBlocklist(entriesOf('blocked')), explicit: compileBlocklist(entriesOf('explicit')) };
  cache.delete(guildId);
  if (cache.size >= CACHED_GUILDS) cache.delete(cache.keys().next().value!);
  cache.set(guildId, { version, lists });
  return lists;
}

/** The entries of one of the guild's lists as moderators wrote them, in alphabetical order. */
export async function listBlockedWords(db: Executor, guildId: string, list: WordList = 'blocked'): Promise<string[]> {
  const rows = await db
    .select({ entry: guildBlockedWords.entry })
    .from(guildBlockedWords)
    .where(and(eq(guildBlockedWords.guildId, guildId), eq(guildBlockedWords.list, list)))
    .orderBy(asc(guildBlockedWords.entry));
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
  /** @defaultValue 'blocked' */
  readonly list?: WordList;
  readonly source?: ChangeSource;
}

/**
 * Adds entries (already parsed) to a list, leaves out those listed already (on either list: an
 * entry is on one at most), raises the version and writes the audit log, in one transaction.
 * Returns what was added and how many the list holds.
 * @throws SettingsError past {@link BLOCKLIST_MAX_ENTRIES}: nothing is added then.
 */
export async function addBlockedWords(db: Database, change: BlocklistChange): Promise<{ added: string[]; total: number }> {
  return db.transaction(async (tx) => {
    await lockGuild(tx, change.guildId);
    const added = (
      await tx
        .insert(guildBlockedWords)
        .values(change.entries.map((entry) => ({ guildId: change.guildId, list: listOf(change), entry, addedBy: change.actorId })))
        .onConflictDoNothing()
        .returning({ entry: guildBlockedWords.entry })
    ).map((row) => row.entry);
    const total = await countEntries(tx, change.guildId, listOf(change));
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
        .where(and(eq(guildBlockedWords.guildId, change.guildId), eq(guildBlockedWords.list, listOf(change)), inArray(guildBlockedWords.entry, [...change.entries])))
        .returning({ entry: guildBlockedWords.entry })
    ).map((row) => row.entry);
    if (removed.length > 0) await recordChange(tx, change, 'blocklist_remove', removed);
    return { removed, total: await countEntries(tx, change.guildId, listOf(change)) };
  });
}

const listOf = (change: BlocklistChange): WordList => change.list ?? 'blocked';

async function countEntries(tx: Executor, guildId: string, list: WordList): Promise<number> {
  const [row] = await tx.select({ n: count() }).from(guildBlockedWords).where(and(eq(guildBlockedWords.guildId, guildId), eq(guildBlockedWords.list, list)));
  return row?.n ?? 0;
}

async function recordChange(tx: Executor, change: BlocklistChange, action: 'blocklist_add' | 'blocklist_remove', entries: readonly string[]): Promise<void> {
  await tx
    .update(guilds)
    .set({ blocklistVersion: sql`${guilds.blocklistVersion} + 1`, updatedAt: sql`now()` })
    .where(eq(guilds.id, change.guildId));
  await tx.insert(auditLog).values({ guildId: change.guildId, actorId: change.actorId, action, details: { entries, ...(listOf(change) !== 'blocked' && { list: listOf(change) }), ...(change.source !== undefined && { source: change.source }) } });
}
