/**
 * Interactions that Discord POSTs to the bot (`INTERACTIONS=http`), read from their payload
 * (payload-interaction.ts) and routed by the same router and handlers as the gateway's. The
 * first answer becomes the HTTP response; edits and follow-ups go to Discord's webhook routes
 * through @discordjs/core. Why not discord.js: docs/decisions/http-interactions-port.md
 * - The HTTP answer carries no files: a first answer with files is sent as a deferral (type 5,
 *   or 6 for an update) and the message with its files then replaces the original.
 * - The first answer resolves only once the response has been written out.
 */
import { API } from '@discordjs/core/http-only';
import { REST } from '@discordjs/rest';
import { InteractionResponseType, MessageFlags, type APIInteraction, type APIInteractionResponse } from 'discord-api-types/v10';
import type { Command } from './command.js';
import type { BaseCommandContext } from './context.js';
import { INTERACTION_REST } from '../discord-rest/discord-delivery.js';
import type { MakeRequest } from '../discord-rest/rest-requests.js';
import { loggableError } from '../logger.js';
import { PayloadInteraction, type AnswerFirst } from './payload-interaction.js';
import { createInteractionRouter } from './router.js';

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
  /** Waits for the interactions still being handled (their follow-ups). */
  stop(): Promise<void>;
}

export interface HttpInteractionOptions {
  readonly context: BaseCommandContext;
  readonly commands: readonly Command[];
  /** Where the follow-ups go and the bot token they carry. */
  readonly discord: { readonly apiUrl: string; readonly token: string };
  /** How its REST requests are sent: through the deployment's shared budget, counted (src/discord-rest/rest-requests.ts). */
  readonly makeRequest?: MakeRequest;
}

/** The deferral sent in place of a first answer that carries files. */
function deferralFor(body: APIInteractionResponse): APIInteractionResponse {
  if (body.type === InteractionResponseType.UpdateMessage) return { type: InteractionResponseType.DeferredMessageUpdate };
  const flags = 'data' in body ? ((body.data as { flags?: number } | undefined)?.flags ?? 0) : 0;
  return { type: InteractionResponseType.DeferredChannelMessageWithSource, data: { flags: flags & MessageFlags.Ephemeral } };
}

export function createHttpInteractionReceiver(options: HttpInteractionOptions): HttpInteractionReceiver {
  const { context } = options;
  const rest = new REST({ api: options.discord.apiUrl, ...INTERACTION_REST, ...(options.makeRequest && { makeRequest: options.makeRequest }) });
  rest.setToken(options.discord.token);
  const api = new API(rest);
  const route = createInteractionRouter(context, options.commands);
  const handling = new Set<Promise<void>>();

  return {
    receive(payload) {
      return new Promise<HttpInteractionAnswer | undefined>((resolve) => {
        let wasSent: () => void = () => undefined;
        const sent = new Promise<void>((done) => (wasSent = done));
        const answerFirst: AnswerFirst = async (body, files) => {
          if (files.length === 0) {
            resolve({ body, sent: wasSent });
            return sent;
          }
          // The HTTP answer carries no files: defer now, then put the message with its files in place.
          resolve({ body: deferralFor(body), sent: wasSent });
          await sent;
          const data = 'data' in body ? (body.data as Record<string, unknown>) : {};
          await api.interactions.editReply(payload.application_id, payload.token, { ...data, files: [...files] });
        };
        let interaction: PayloadInteraction;
        try {
          interaction = new PayloadInteraction(payload, { answerFirst, api, rest });
        } catch (error) {
          context.logger.error({ err: loggableError(error, [payload.token]), interactionId: payload.id }, 'could not read an interaction');
          return resolve(undefined);
        }
        const routed = route(interaction);
        handling.add(routed);
        void routed.finally(() => {
          handling.delete(routed);
          // Answered by now, or never: a second resolve is ignored.
          resolve(undefined);
        });
      });
    },
    async stop() {
      await Promise.allSettled([...handling]);
      rest.clearHashSweeper();
      rest.clearHandlerSweeper();
    },
  };
}
