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
import { compileAutomodRules, type AutomodRulesSource, type AutomodState } from '../safety/automod.js';

export type { AutomodRulesSource, AutomodState };

/** How long rules read are trusted without an event: the safety net for one missed. */
export const AUTOMOD_RULES_TTL_MS = 5 * 60_000;
/** How long a refusal or failure is remembered before Discord is asked again. */
export const AUTOMOD_RETRY_MS = 60_000;
/** Guilds kept per process; the least recently read goes first. */
const CACHED_GUILDS = 10_000;

interface Entry {
  readonly version: number;
  /** Until when the state is fresh. */
  until: number;
  readonly state: Promise<AutomodState>;
  /** The state once read. */
  settled?: AutomodState;
  /** A read in the background is under way (the state has aged, its version has not moved). */
  refreshing?: boolean;
}

/**
 * The process's cache of guilds' AutoMod rules. Requests of one guild that arrive while its
 * rules are being read share the one read. Rules that only aged (their version did not move)
 * keep judging while they are read again in the background, and rules in use stay in use
 * when reading them again fails.
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

  /** The guild's state read from Discord, and until when to trust it; a failure keeps `previous` rules in use. */
  const load = async (guildId: string, previous: AutomodState | undefined): Promise<{ state: AutomodState; until: number }> => {
    let state: AutomodState;
    try {
      const answer = await api.listRules(guildId);
      if ('rules' in answer) return { state: { status: 'in_use', rules: compileAutomodRules(answer.rules) }, until: now() + ttlMs };
      state = { status: answer.refused === 'missing_permission' ? 'missing_permission' : 'unavailable' };
    } catch (err) {
      logger.warn({ err, guildId }, 'reading the AutoMod rules failed');
      state = { status: 'unavailable' };
    }
    return { state: state.status === 'unavailable' && previous?.status === 'in_use' ? previous : state, until: now() + retryMs };
  };

  const remember = (guildId: string, entry: Entry): void => {
    entries.delete(guildId);
    if (entries.size >= CACHED_GUILDS) entries.delete(entries.keys().next().value!);
    entries.set(guildId, entry);
  };

  return {
    rulesFor(guildId, version) {
      const cached = entries.get(guildId);
      if (cached && cached.version === version) {
        if (now() < cached.until) return cached.state;
        if (cached.settled?.status === 'in_use') {
          if (!cached.refreshing) {
            cached.refreshing = true;
            void load(guildId, cached.settled).then(({ state, until }) => {
              if (entries.get(guildId) === cached) remember(guildId, { version, until, state: Promise.resolve(state), settled: state });
            });
          }
          return cached.state;
        }
      }
      const entry: Entry = {
        version,
        until: now() + retryMs,
        state: load(guildId, cached?.settled).then(({ state, until }) => {
          entry.settled = state;
          entry.until = until;
          return state;
        }),
      };
      remember(guildId, entry);
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
