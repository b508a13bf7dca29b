/**
 * Interactions that Discord POSTs to the bot (`INTERACTIONS=http`), built by discord.js on a
 * client that never logs in and routed by the same router and handlers as the gateway's. The
 * first answer (the callback) is taken on its way out and becomes the HTTP response; the rest
 * goes to Discord's webhook routes as usual.
 * - The HTTP answer carries no files: a first answer with files is sent as a deferral (type 5,
 *   or 6 for an update) and the message with its files then replaces the original.
 * - The callback resolves only once the response has been written out.
 */
import { Client, Events, MessageFlags, Partials, type Channel, type Interaction } from 'discord.js';
import {
  InteractionResponseType,
  Routes,
  type APIInteraction,
  type APIInteractionResponse,
  type RESTPostAPIInteractionCallbackJSONBody,
} from 'discord-api-types/v10';
import type { RequestData, RouteLike } from '@discordjs/rest';
import type { Command } from './command.js';
import type { BaseCommandContext } from './context.js';
import { INTERACTION_REST } from '../discord-rest/discord-delivery.js';
import type { MakeRequest } from '../discord-rest/rest-requests.js';
import { loggableError } from '../logger.js';
import { CACHE_LIMITS } from './gateway.js';
import { createInteractionRouter } from './router.js';
import { entitlementNoticeOf } from './entitlement-notice.js';

/** What to send back to Discord, and a callback to call once it has been written out. */
export interface HttpInteractionAnswer {
  readonly body: APIInteractionResponse;
  /** Call once the response has left (or the connection closed): the handler then goes on. */
  readonly sent: () => void;
}

export interface HttpInteractionReceiver {
  /**
   * Routes one interaction and resolves with its first answer, or undefined when the handler
   * finished without one (Discord then shows the member that the interaction failed).
   */
  receive(payload: APIInteraction): Promise<HttpInteractionAnswer | undefined>;
  /** Waits for the interactions still being handled (their follow-ups), then lets the client go. */
  stop(): Promise<void>;
}

export interface HttpInteractionOptions {
  readonly context: BaseCommandContext;
  readonly commands: readonly Command[];
  /** How its REST requests are sent: through the deployment's shared budget, counted (src/discord-rest/rest-requests.ts). */
  readonly makeRequest?: MakeRequest;
}

interface Exchange {
  readonly payload: APIInteraction;
  answered: boolean;
  answer: (body: APIInteractionResponse) => Promise<void>;
}

const CALLBACK_ROUTE = /^\/interactions\/(\d+)\/[^/]+\/callback$/;

/** The discord.js client that builds interactions from payloads; it never connects to the gateway. */
function createPayloadClient(context: BaseCommandContext, makeRequest: MakeRequest | undefined): Client {
  const client = new Client({
    intents: [],
    partials: [Partials.Channel],
    rest: { api: context.config.discordApiUrl, ...INTERACTION_REST, ...(makeRequest && { makeRequest }) },
    allowedMentions: { parse: [] },
    ...CACHE_LIMITS,
  });
  client.token = context.config.discordToken;
  client.rest.setToken(context.config.discordToken);
  return client;
}

export function createHttpInteractionReceiver(options: HttpInteractionOptions): HttpInteractionReceiver {
  const { context } = options;
  const client = createPayloadClient(context, options.makeRequest);
  const exchanges = new Map<string, Exchange>();
  // The payload's entitlements, read by the router as the gateway's are (discord.js cannot build them here).
  const route = createInteractionRouter(context, options.commands, {
    entitlementsOf: (interaction) => (exchanges.get(interaction.id)?.payload.entitlements ?? []).map(entitlementNoticeOf),
  });
  const handling = new Set<Promise<void>>();
  // The channel each interaction names, for `interaction.channel` (a thread counts as its
  // parent): without the gateway no guild is cached, so discord.js would not keep it.
  const channelUsers = new Map<string, number>();

  const post = client.rest.post.bind(client.rest);
  client.rest.post = async (fullRoute: RouteLike, request: RequestData = {}) => {
    const exchange = exchanges.get(CALLBACK_ROUTE.exec(fullRoute)?.[1] ?? '');
    if (!exchange || exchange.answered) return post(fullRoute, request);
    exchange.answered = true;
    const body = request.body as RESTPostAPIInteractionCallbackJSONBody;
    if (!request.files?.length || !('data' in body)) {
      await exchange.answer(body as APIInteractionResponse);
      return undefined;
    }
    // The HTTP answer carries no files: defer now, then put the message with its files in place.
    const data = body.data as { flags?: number };
    await exchange.answer(
      body.type === InteractionResponseType.UpdateMessage
        ? { type: InteractionResponseType.DeferredMessageUpdate }
        : { type: InteractionResponseType.DeferredChannelMessageWithSource, data: { flags: (data.flags ?? 0) & MessageFlags.Ephemeral } },
    );
    const { application_id: applicationId, token } = exchange.payload;
    await client.rest.patch(Routes.webhookMessage(applicationId, token, '@original'), { body: data, files: request.files, auth: false });
    return undefined;
  };

  const routing = new Map<string, Promise<void>>();
  client.on(Events.InteractionCreate, (interaction: Interaction) => {
    const routed = route(interaction);
    routing.set(interaction.id, routed);
    handling.add(routed);
    void routed.finally(() => handling.delete(routed));
  });

  function holdChannel(payload: APIInteraction): () => void {
    const raw = payload.channel;
    if (!raw || !payload.guild_id) return () => undefined;
    if (!client.channels.cache.has(raw.id)) {
      // `allowUnknownGuild` builds the channel without its guild and leaves caching to us.
      const channels = client.channels as unknown as { _add(data: unknown, guild: null, options: { allowUnknownGuild: boolean; cache: boolean }): Channel | null };
      const channel = channels._add({ ...raw, guild_id: payload.guild_id }, null, { allowUnknownGuild: true, cache: false });
      if (channel) client.channels.cache.set(channel.id, channel);
    }
    channelUsers.set(raw.id, (channelUsers.get(raw.id) ?? 0) + 1);
    return () => {
      const left = (channelUsers.get(raw.id) ?? 1) - 1;
      if (left > 0) return void channelUsers.set(raw.id, left);
      channelUsers.delete(raw.id);
      client.channels.cache.delete(raw.id);
    };
  }

  return {
    receive(payload) {
      return new Promise<HttpInteractionAnswer | undefined>((resolve) => {
        let wasSent: () => void = () => undefined;
        const sent = new Promise<void>((done) => (wasSent = done));
        exchanges.set(payload.id, {
          payload,
          answered: false,
          answer: (body) => {
            resolve({ body, sent: wasSent });
            return sent;
          },
        });
        const releaseChannel = holdChannel(payload);
        try {
          // The same action the gateway's INTERACTION_CREATE runs: it builds the interaction and emits it.
          // discord.js reads two fields without checking them. Its entitlements would need the
          // application, which only the gateway's READY brings: the router reads the payload's.
          const data = { ...payload, authorizing_integration_owners: payload.authorizing_integration_owners ?? {}, entitlements: [] };
          (client as unknown as { actions: { InteractionCreate: { handle(data: unknown): void } } }).actions.InteractionCreate.handle(data);
        } catch (error) {
          context.logger.error({ err: loggableError(error, [payload.token]), interactionId: payload.id }, 'could not read an interaction');
        }
        const routed = routing.get(payload.id) ?? Promise.resolve();
        routing.delete(payload.id);
        void routed.finally(() => {
          exchanges.delete(payload.id);
          releaseChannel();
          // Answered by now, or never: a second resolve is ignored.
          resolve(undefined);
        });
      });
    },
    async stop() {
      await Promise.allSettled([...handling]);
      await client.destroy();
    },
  };
}
