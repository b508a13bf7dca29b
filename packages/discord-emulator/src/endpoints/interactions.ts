/** The bot's answers to an interaction: the initial callback, and the interaction webhook's follow-ups and @original. */
import type { InteractionRegistry } from '../interactions.js';
import { noContent, ok, wire } from './context.js';
import type { RouteContext } from './context.js';

export function registerInteractionRoutes(api: RouteContext): void {
  const { interactions } = api;

  api.route('POST', '/interactions/{interaction_id}/{interaction_token}/callback', false, ({ params, query, body, uploads }) =>
    interactions.respond(params.interaction_id ?? '', params.interaction_token ?? '', body, uploads, query.get('with_response') === 'true'),
  );
  // An interaction delivered by HTTP: its response left the bot before any of these requests.
  const webhook = async (params: Record<string, string>): Promise<ReturnType<InteractionRegistry['resolveWebhook']>> => {
    await api.deliverySettled(params.webhook_token ?? '');
    return interactions.resolveWebhook(params.webhook_id ?? '', params.webhook_token ?? '');
  };
  api.route('POST', '/webhooks/{webhook_id}/{webhook_token}', false, async ({ params, query, body, uploads }) => {
    const stored = interactions.followUp(await webhook(params), body, uploads);
    return query.get('wait') === 'true' ? ok(wire(stored)) : noContent;
  });
  for (const messagePath of ['/messages/@original', '/messages/{message_id}']) {
    const template = `/webhooks/{webhook_id}/{webhook_token}${messagePath}`;
    const messageId = (params: Record<string, string>): string => params.message_id ?? '@original';
    api.route('GET', template, false, async ({ params }) => ok(wire(interactions.getMessage(await webhook(params), messageId(params)))));
    api.route('PATCH', template, false, async ({ params, body, uploads }) =>
      ok(wire(interactions.editMessage(await webhook(params), messageId(params), body, uploads))),
    );
    api.route('DELETE', template, false, async ({ params }) => {
      interactions.deleteMessage(await webhook(params), messageId(params));
      return noContent;
    });
  }
}
