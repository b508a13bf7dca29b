/**
 * A server's Discord AutoMod keyword rules, as its requests are judged by them: read from
 * Discord (List Auto Moderation Rules, which needs Manage Server), compiled once, and kept per
 * process under the guild's `automod_version` for at most a few minutes. The gateway process
 * that hears a rule change raises the version, and every process reads the rules again on the
 * next request it serves there (docs/decisions/automod-rules.md).
 */
import { eq, sql } from 'drizzle-orm';
import type { Executor } from '../db/client.js';
import { guilds } from '../db/schema.js';
import type { AutomodApi } from '../discord-rest/automod-api.js';
import type { Logger } from '../logger.js';
import { compileAutomodRules, type AutomodRules } from '../safety/automod.js';

/** Whether a guild's AutoMod rules judge its requests, and if not, why. */
export type AutomodState =
  | { readonly status: 'in_use'; readonly rules: AutomodRules }
  /** The bot lacks Manage Server there: Discord answered 403. */
  | { readonly status: 'missing_permission' }
  /** Discord could not be asked (an error, a timeout, or the bot is not in the guild): requests are not blocked by AutoMod meanwhile. */
  | { readonly status: 'unavailable' };

export interface AutomodRulesSource {
  /** The guild's state at `version` (its row's `automodVersion`): read from Discord when this process has no fresh one. */
  rulesFor(guildId: string, version: number): Promise<AutomodState>;
}

/** How long rules read are trusted without an event: the safety net for one missed. */
export const AUTOMOD_RULES_TTL_MS = 5 * 60_000;
/** How long a refusal or failure is remembered before Discord is asked again. */
export const AUTOMOD_RETRY_MS = 60_000;
/** Guilds kept per process; the least recently read goes first. */
const CACHED_GUILDS = 10_000;

interface Entry {
  readonly version: number;
  readonly until: number;
  readonly state: Promise<AutomodState>;
}

/**
 * The process's cache of guilds' AutoMod rules. Requests of one guild that arrive while its
 * rules are being read share the one read.
 */
export function createAutomodRules(options: {
  api: AutomodApi;
  logger: Pick<Logger, 'warn'>;
  /** @defaultValue {@link AUTOMOD_RULES_TTL_MS} */
  ttlMs?: number;
  /** @defaultValue {@link AUTOMOD_RETRY_MS} */
  retryMs?: number;
  now?: () => number;
}): AutomodRulesSource {
  const { api, logger } = options;
  const ttlMs = options.ttlMs ?? AUTOMOD_RULES_TTL_MS;
  const retryMs = options.retryMs ?? AUTOMOD_RETRY_MS;
  const now = options.now ?? Date.now;
  const entries = new Map<string, Entry>();

  const read = async (guildId: string): Promise<{ state: AutomodState; keepMs: number }> => {
    try {
      const answer = await api.listRules(guildId);
      if ('rules' in answer) return { state: { status: 'in_use', rules: compileAutomodRules(answer.rules) }, keepMs: ttlMs };
      return { state: { status: answer.refused === 'missing_permission' ? 'missing_permission' : 'unavailable' }, keepMs: retryMs };
    } catch (err) {
      logger.warn({ err, guildId }, 'reading the AutoMod rules failed; requests are not judged by them meanwhile');
      return { state: { status: 'unavailable' }, keepMs: retryMs };
    }
  };

  return {
    rulesFor(guildId, version) {
      const at = now();
      const cached = entries.get(guildId);
      if (cached && cached.version === version && at < cached.until) return cached.state;
      const reading = read(guildId);
      const entry: Entry = { version, until: at + retryMs, state: reading.then(({ state }) => state) };
      entries.delete(guildId);
      if (entries.size >= CACHED_GUILDS) entries.delete(entries.keys().next().value!);
      entries.set(guildId, entry);
      // Kept for as long as what was read deserves, once it is known.
      void reading.then(({ keepMs }) => {
        if (entries.get(guildId) === entry) entries.set(guildId, { ...entry, until: at + keepMs });
      });
      return entry.state;
    },
  };
}

/** A rule of the guild changed at Discord: every process reads its rules again on the next request there. */
export async function bumpAutomodVersion(db: Executor, guildId: string): Promise<void> {
  await db
    .update(guilds)
    .set({ automodVersion: sql`${guilds.automodVersion} + 1` })
    .where(eq(guilds.id, guildId));
}
