/**
 * `POST /webhook-events`: Discord's Webhook Events URL, for bots whose events come over HTTP.
 * Signed as interactions are (a bad signature gets 401). PING (type 0) gets 204; an entitlement
 * event (type 1) is received as the gateway's would be, and answered 204 once it is recorded or
 * after Discord's three seconds, whichever comes first; a failure answers 500 so Discord retries.
 */
import type { FastifyInstance } from 'fastify';
import type { Logger } from '../logger.js';
import type { EntitlementNotice, Purchases } from '../premium/purchases.js';
import { ed25519PublicKey, signedBody } from './interactions.js';
import type { RefusalLog } from './refusal-log.js';

export const WEBHOOK_EVENTS_ROUTE = '/webhook-events';
const BODY_LIMIT = 256 * 1024;
/** Discord waits three seconds for the 204; the work goes on past this. */
const ANSWER_WITHIN_MS = 2_500;
const ENTITLEMENT_EVENTS = new Set(['ENTITLEMENT_CREATE', 'ENTITLEMENT_UPDATE', 'ENTITLEMENT_DELETE']);

export interface WebhookEventsRouteOptions {
  readonly publicKey: string;
  readonly purchases: Purchases | undefined;
  readonly logger: Logger;
  readonly logRefusal: RefusalLog;
  readonly now?: () => number;
}

interface WebhookEventPayload {
  readonly type: number;
  readonly application_id?: string;
  readonly event?: { readonly type?: string; readonly data?: unknown };
}

function isEntitlement(value: unknown): value is EntitlementNotice {
  if (typeof value !== 'object' || value === null) return false;
  const candidate = value as Record<string, unknown>;
  return typeof candidate.id === 'string' && typeof candidate.sku_id === 'string' && typeof candidate.application_id === 'string';
}

export function registerWebhookEventsRoute(app: FastifyInstance, options: WebhookEventsRouteOptions): void {
  const key = ed25519PublicKey(options.publicKey);
  const now = options.now ?? Date.now;

  app.post(WEBHOOK_EVENTS_ROUTE, { bodyLimit: BODY_LIMIT }, async (request, reply) => {
    const rawBody = signedBody(request, reply, { key, nowMs: now(), logRefusal: options.logRefusal, what: 'webhook event' });
    if (!rawBody) return reply;
    let payload: WebhookEventPayload;
    try {
      payload = JSON.parse(rawBody.toString('utf8')) as WebhookEventPayload;
    } catch {
      return reply.code(400).send({ error: 'malformed body' });
    }
    if (typeof payload !== 'object' || payload === null || typeof payload.type !== 'number') return reply.code(400).send({ error: 'not a webhook event' });
    if (payload.type === 0) return reply.code(204).send();

    const eventType = payload.event?.type;
    const data = payload.event?.data;
    if (!eventType || !ENTITLEMENT_EVENTS.has(eventType) || !isEntitlement(data)) {
      options.logger.debug({ eventType }, 'webhook event not used');
      return reply.code(204).send();
    }
    if (!options.purchases) {
      options.logger.warn({ eventType, skuId: data.sku_id }, 'entitlement event ignored: nothing is sold (CREDIT_PACKS and SUBSCRIPTION_ALLOWANCES are empty)');
      return reply.code(204).send();
    }
    const work = options.purchases.receive(data, 'webhook');
    let timer: NodeJS.Timeout | undefined;
    const late = new Promise<'late'>((resolve) => (timer = setTimeout(() => resolve('late'), ANSWER_WITHIN_MS)));
    try {
      await Promise.race([work, late]);
    } catch (err) {
      options.logger.error({ err, entitlementId: data.id, eventType }, 'entitlement event failed; Discord will send it again');
      return reply.code(500).send({ error: 'not recorded' });
    } finally {
      clearTimeout(timer);
    }
    void work.catch((err: unknown) => options.logger.error({ err, entitlementId: data.id, eventType }, 'entitlement event failed after its answer'));
    return reply.code(204).send();
  });
}
