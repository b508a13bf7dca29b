/** The entitlement routes of Discord's REST API, as the bot uses them. */
import { API } from '@discordjs/core';
import { DiscordAPIError, REST } from '@discordjs/rest';
import type { RESTGetAPIEntitlementsQuery } from 'discord-api-types/v10';
import { REST_SWEEPS } from './discord-delivery.js';
import { restTrafficOptions, type RestTraffic } from './rest-requests.js';

/** What the bot reads of Discord's entitlement object. */
export interface EntitlementRecord {
  readonly id: string;
  readonly sku_id: string;
  readonly application_id: string;
  readonly user_id?: string;
  readonly guild_id?: string;
  /** Discord's entitlement type (1 purchase, 4 test-mode purchase, 8 app subscription, …). */
  readonly type: number;
  readonly deleted: boolean;
  readonly consumed?: boolean;
  readonly starts_at?: string | null;
  readonly ends_at?: string | null;
}

export interface EntitlementsApi {
  /** The entitlement as Discord has it; undefined when Discord does not know it (404). */
  get(entitlementId: string): Promise<EntitlementRecord | undefined>;
  /** One page of at most `limit`, in an order Discord does not document (see `listEntitlements` in src/premium). */
  list(query: RESTGetAPIEntitlementsQuery): Promise<EntitlementRecord[]>;
  consume(entitlementId: string): Promise<void>;
}

export function createEntitlementsApi(options: { apiUrl: string; token: string; applicationId: string; timeoutMs?: number; traffic?: RestTraffic }): EntitlementsApi {
  const timeout = options.timeoutMs ?? 15_000;
  const rest = new REST({ api: options.apiUrl, timeout, retries: 2, ...REST_SWEEPS, ...restTrafficOptions(options.traffic ?? {}, timeout) });
  const { monetization } = new API(rest.setToken(options.token));
  return {
    async get(entitlementId) {
      try {
        return await monetization.getEntitlement(options.applicationId, entitlementId);
      } catch (error) {
        if (error instanceof DiscordAPIError && error.status === 404) return undefined;
        throw error;
      }
    },
    list: (query) => monetization.getEntitlements(options.applicationId, query),
    consume: (entitlementId) => monetization.consumeEntitlement(options.applicationId, entitlementId),
  };
}
