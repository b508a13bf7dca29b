import { RESTJSONErrorCodes } from 'discord-api-types/v10';

/** One leaf of Discord's nested `errors` object in a 50035 answer. */
export interface FormErrorDetail {
  code: string;
  message: string;
}

export interface FormErrorTree {
  _errors?: FormErrorDetail[];
  [key: string]: FormErrorTree | FormErrorDetail[] | undefined;
}

/** Collects field errors by path and renders them the way Discord nests them. */
export class FormErrors {
  readonly #tree: FormErrorTree = {};
  #count = 0;

  add(path: ReadonlyArray<string | number>, code: string, message: string): void {
    let node = this.#tree;
    for (const segment of path) {
      const key = String(segment);
      const next = node[key];
      if (next === undefined || Array.isArray(next)) {
        const created: FormErrorTree = {};
        node[key] = created;
        node = created;
      } else {
        node = next;
      }
    }
    (node._errors ??= []).push({ code, message });
    this.#count += 1;
  }

  get isEmpty(): boolean {
    return this.#count === 0;
  }

  toJSON(): FormErrorTree {
    return this.#tree;
  }

  /** Throws a 50035 Invalid Form Body error when anything was collected. */
  throwIfAny(): void {
    if (!this.isEmpty) throw DiscordErrors.invalidFormBody(this);
  }
}

/** An error answered to the bot with Discord's JSON error shape. */
export class DiscordHttpError extends Error {
  readonly status: number;
  readonly code: number;
  readonly errors: FormErrorTree | undefined;
  readonly headers: Record<string, string>;

  constructor(status: number, code: number, message: string, errors?: FormErrors, headers: Record<string, string> = {}) {
    super(message);
    this.name = 'DiscordHttpError';
    this.status = status;
    this.code = code;
    this.errors = errors?.toJSON();
    this.headers = headers;
  }

  toBody(): { code: number; message: string; errors?: FormErrorTree } {
    return this.errors ? { code: this.code, message: this.message, errors: this.errors } : { code: this.code, message: this.message };
  }
}

/** The errors Discord answers where a bot can get things wrong, with Discord's codes and wording. */
export const DiscordErrors = {
  notFound: () => new DiscordHttpError(404, 0, '404: Not Found'),
  unauthorized: () => new DiscordHttpError(401, 0, '401: Unauthorized'),
  unknownInteraction: () => new DiscordHttpError(404, RESTJSONErrorCodes.UnknownInteraction, 'Unknown interaction'),
  alreadyAcknowledged: () =>
    new DiscordHttpError(400, RESTJSONErrorCodes.InteractionHasAlreadyBeenAcknowledged, 'Interaction has already been acknowledged.'),
  invalidWebhookToken: () => new DiscordHttpError(401, RESTJSONErrorCodes.InvalidWebhookToken, 'Invalid Webhook Token'),
  unknownWebhook: () => new DiscordHttpError(404, RESTJSONErrorCodes.UnknownWebhook, 'Unknown Webhook'),
  unknownMessage: () => new DiscordHttpError(404, RESTJSONErrorCodes.UnknownMessage, 'Unknown Message'),
  unknownChannel: () => new DiscordHttpError(404, RESTJSONErrorCodes.UnknownChannel, 'Unknown Channel'),
  unknownGuild: () => new DiscordHttpError(404, RESTJSONErrorCodes.UnknownGuild, 'Unknown Guild'),
  unknownMember: () => new DiscordHttpError(404, RESTJSONErrorCodes.UnknownMember, 'Unknown Member'),
  unknownRole: () => new DiscordHttpError(404, RESTJSONErrorCodes.UnknownRole, 'Unknown Role'),
  unknownUser: () => new DiscordHttpError(404, RESTJSONErrorCodes.UnknownUser, 'Unknown User'),
  unknownApplication: () => new DiscordHttpError(404, RESTJSONErrorCodes.UnknownApplication, 'Unknown Application'),
  unknownCommand: () =>
    new DiscordHttpError(404, RESTJSONErrorCodes.UnknownApplicationCommand, 'Unknown application command'),
  missingAccess: () => new DiscordHttpError(403, RESTJSONErrorCodes.MissingAccess, 'Missing Access'),
  missingPermissions: () => new DiscordHttpError(403, RESTJSONErrorCodes.MissingPermissions, 'Missing Permissions'),
  cannotEditOthersMessage: () =>
    new DiscordHttpError(403, RESTJSONErrorCodes.CannotEditMessageAuthoredByAnotherUser, 'Cannot edit a message authored by another user'),
  cannotSendToUser: () => new DiscordHttpError(403, RESTJSONErrorCodes.CannotSendMessagesToThisUser, 'Cannot send messages to this user'),
  emptyMessage: () => new DiscordHttpError(400, RESTJSONErrorCodes.CannotSendAnEmptyMessage, 'Cannot send an empty message'),
  invalidJson: () =>
    new DiscordHttpError(400, RESTJSONErrorCodes.RequestBodyContainsInvalidJSON, 'The request body contains invalid JSON.'),
  entityTooLarge: () => new DiscordHttpError(413, RESTJSONErrorCodes.RequestEntityTooLarge, 'Request entity too large'),
  invalidFormBody: (errors: FormErrors) =>
    new DiscordHttpError(400, RESTJSONErrorCodes.InvalidFormBodyOrContentType, 'Invalid Form Body', errors),
} as const;
