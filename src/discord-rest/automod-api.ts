/** Discord's List Auto Moderation Rules, as the bot reads a server's AutoMod rules. */
import { API } from '@discordjs/core';
import { DiscordAPIError, REST } from '@discordjs/rest';
import type { AutomodRuleRecord } from '../safety/automod.js';
import { REST_SWEEPS } from './discord-delivery.js';
import { restTrafficOptions, type RestTraffic } from './rest-requests.js';

/** The guild's rules, or why the bot may not read them. */
export type AutomodRulesRead = { readonly rules: readonly AutomodRuleRecord[] } | { readonly refused: 'missing_permission' | 'unknown_guild' };

export interface AutomodApi {
  /** Needs Manage Server in the guild: without it Discord answers 403, read as `missing_permission`. */
  listRules(guildId: string): Promise<AutomodRulesRead>;
}

export function createAutomodApi(options: { apiUrl: string; token: string; timeoutMs?: number; traffic?: RestTraffic }): AutomodApi {
  // Read while a member waits for an answer: a slow Discord costs one short wait, not several.
  const timeout = options.timeoutMs ?? 3_000;
  const rest = new REST({ api: options.apiUrl, timeout, retries: 0, ...REST_SWEEPS, ...restTrafficOptions(options.traffic ?? {}, timeout) });
  const { guilds } = new API(rest.setToken(options.token));
  return {
    async listRules(guildId) {
      try {
        return { rules: await guilds.getAutoModerationRules(guildId) };
      } catch (error) {
        if (error instanceof DiscordAPIError && error.status === 403) return { refused: 'missing_permission' };
        if (error instanceof DiscordAPIError && error.status === 404) return { refused: 'unknown_guild' };
        throw error;
      }
    },
  };
}
