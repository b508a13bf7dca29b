/**
 * How every Discord REST client of the bot sends a request (`makeRequest` of @discordjs/rest):
 * a request under Discord's global limit first takes a permit from the deployment's shared
 * budget; then it is sent as @discordjs/rest sends it, and its answer is counted by status and
 * class of route. Interaction callbacks and webhooks are outside the global limit and never wait.
 */
import { DefaultRestOptions, type RESTOptions } from '@discordjs/rest';
import type { DiscordRouteClass, Metrics } from '../metrics.js';

/** The classes of route counted in `musicbot_discord_rest_responses_total`: a fixed list. */
export type RouteClass = DiscordRouteClass;

/** Discord's global limit (per bot token) shared by every process: see src/queue/request-budget.ts. */
export interface GlobalBudget {
  take(signal?: AbortSignal): Promise<void>;
}

export interface RestTraffic {
  /** Absent: the client keeps to the limit of @discordjs/rest alone, per process. */
  readonly budget?: GlobalBudget;
  readonly metrics?: Pick<Metrics, 'discordRestResponses'>;
}

export type MakeRequest = RESTOptions['makeRequest'];

const CLASSES: ReadonlyArray<readonly [RegExp, RouteClass]> = [
  [/^\/interactions\/\d+\/[^/]+\/callback$/, 'interaction_callback'],
  // Webhooks by token: the bot's are its interactions' (follow-ups and edits of replies).
  [/^\/webhooks\/\d+\/[^/]+(\/|$)/, 'interaction_webhook'],
  [/^\/channels\/\d+\/messages(\/|$)/, 'channel_message'],
  [/^\/applications\/\d+\/entitlements(\/|$)/, 'entitlement'],
  [/^\/applications\/\d+\/(guilds\/\d+\/)?commands(\/|$)/, 'command'],
];

/** Not bound by Discord's global limit. */
const EXEMPT: ReadonlySet<RouteClass> = new Set(['interaction_callback', 'interaction_webhook']);

/** The class of a request's route, from its full URL (`…/api/v10/channels/1/messages`). */
export function routeClassOf(url: string): RouteClass {
  const path = new URL(url).pathname.replace(/^.*?\/v\d+(?=\/)/, '');
  return CLASSES.find(([pattern]) => pattern.test(path))?.[1] ?? 'other';
}

/** Whether a request to this route counts toward Discord's global limit. */
export function isUnderGlobalLimit(routeClass: RouteClass): boolean {
  return !EXEMPT.has(routeClass);
}

/**
 * The `makeRequest` of a REST client: the shared budget first, then @discordjs/rest's own request,
 * counted. `timeoutMs` is the client's `timeout`: a request that waited for its permit still gets
 * all of it, since the client's timer started before the wait.
 */
export function createMakeRequest(traffic: RestTraffic, options: { timeoutMs?: number } = {}): MakeRequest {
  const { budget, metrics } = traffic;
  const timeoutMs = options.timeoutMs ?? DefaultRestOptions.timeout;
  return async (url, init) => {
    const routeClass = routeClassOf(url);
    let timer: NodeJS.Timeout | undefined;
    let request = init;
    if (budget && isUnderGlobalLimit(routeClass)) {
      // Aborted by the client's timeout while it waits: nothing was sent, and the client tries again.
      await budget.take((init.signal ?? undefined) as AbortSignal | undefined);
      // Were the client's timer to abort the request once sent, the client would send it again.
      const controller = new AbortController();
      timer = setTimeout(() => controller.abort(), timeoutMs);
      request = { ...init, signal: controller.signal as NonNullable<typeof init.signal> };
    }
    try {
      const response = await DefaultRestOptions.makeRequest(url, request);
      metrics?.discordRestResponses.inc({ status: String(response.status), route_class: routeClass });
      return response;
    } catch (error) {
      // No answer: refused, reset or timed out.
      metrics?.discordRestResponses.inc({ status: 'error', route_class: routeClass });
      throw error;
    } finally {
      clearTimeout(timer);
    }
  };
}

/**
 * The REST options of a client that goes through the shared budget: the budget holds Discord's
 * global limit, so the client's own (per process) is lifted; Discord's 429s are still obeyed.
 */
export function restTrafficOptions(traffic: RestTraffic, timeoutMs: number): { makeRequest: MakeRequest; globalRequestsPerSecond?: number } {
  return { makeRequest: createMakeRequest(traffic, { timeoutMs }), ...(traffic.budget && { globalRequestsPerSecond: 1_000_000 }) };
}
