/** An interaction as the registry keeps it, and what the registry's parts share. */
import type { EventEmitter } from 'node:events';
import type { APIInteraction, APIModalInteractionResponseCallbackData, APIUser, InteractionType } from 'discord-api-types/v10';
import type { EmulatorClock } from '../clock.js';
import type { EmulatorStore } from '../store.js';
import type { StoredMessage } from '../store/records.js';
import type { InteractionResponse } from '../types.js';

export interface InteractionRecord {
  id: string;
  token: string;
  type: InteractionType;
  payload: APIInteraction;
  createdAt: number;
  guildId: string;
  channelId: string;
  user: APIUser;
  /** For components, and modals opened from one: the message the interaction came from. */
  sourceMessageId: string | undefined;
  /** Edit count of the original message when it became this interaction's original. */
  baselineVersion: number;
  response: InteractionResponse | undefined;
  originalMessageId: string | undefined;
  followUpIds: string[];
  modal: APIModalInteractionResponseCallbackData | undefined;
  /** The interaction whose modal this submit answers. */
  triggeredBy: InteractionRecord | undefined;
}

export interface InteractionContext {
  readonly store: EmulatorStore;
  readonly clock: EmulatorClock;
  readonly applicationId: string;
  /** Emits `change` whenever a response, edit or follow-up arrives. */
  readonly events: EventEmitter;
  /** How many times the message has been edited while the registry watched it. */
  version(stored: StoredMessage | undefined): number;
}
