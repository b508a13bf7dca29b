/** The Discord emulator's public types: its options, what it records, and the inputs of a user's actions. */
import type {
  APIAllowedMentions,
  APIAttachment,
  APIInteraction,
  APIMessage,
  APIModalInteractionResponseCallbackData,
  APIApplicationCommandOptionChoice,
  ApplicationCommandOptionType,
  InteractionResponseType,
  InteractionType,
} from 'discord-api-types/v10';
import type { Logger } from 'pino';
import type { RateLimitSettings } from './rate-limits.js';
import type { CreateSkuInput, EntitlementOrder } from './store/monetization.js';
import type { WebhookEventRetry } from './webhook-events.js';

/** Options for {@link startDiscordEmulator}. */
export interface DiscordEmulatorOptions {
  /** TCP port; `0` picks a free one. @defaultValue 0 */
  port?: number;
  /** Interface to listen on. @defaultValue '127.0.0.1' */
  host?: string;
  /** The bot's application id. @defaultValue the bot user id */
  applicationId?: string;
  /** The token the bot must present. @defaultValue 'emulator-bot-token' */
  botToken?: string;
  /** The bot user's id. @defaultValue a generated snowflake */
  botUserId?: string;
  /** The bot user's name. @defaultValue 'Emulated Bot' */
  botUsername?: string;
  /** Discord's OpenAPI description. @defaultValue `discord-api/openapi.json` beside the emulator */
  openApiPath?: string | URL;
  /** Check every REST request against the OpenAPI description. @defaultValue true */
  validateRequests?: boolean;
  /** HELLO heartbeat interval sent to gateway clients. @defaultValue 41250 */
  heartbeatIntervalMs?: number;
  /** Largest upload, in bytes, per attachment. @defaultValue 10 MiB (Discord's default) */
  attachmentSizeLimit?: number;
  /**
   * Where attachment URLs point, e.g. a proxy in front of the emulator that serves its
   * `/attachments/…` routes under this base. @defaultValue the emulator's own address
   */
  cdnUrl?: string;
  /** Structured log of requests and findings. @defaultValue silent */
  logger?: Logger;
  /**
   * Discord's rate limits: per-route buckets, the global limit, 429s. `false` turns them off;
   * an object changes some limits and keeps Discord's values for the rest.
   * @defaultValue true (Discord's limits, see `DISCORD_RATE_LIMITS`)
   */
  rateLimits?: boolean | RateLimitSettings;
  /**
   * The gateway's shards: the count `GET /gateway/bot` recommends, and how many shards may
   * identify in each 5-second window (`session_start_limit.max_concurrency`). Each guild's
   * events go to shard `(guild_id >> 22) % num_shards` of the IDENTIFY.
   * `identifyWindowMs`: the window, Discord's 5 s; 0 lets any number identify (for tests that
   * watch the gateway through sessions of their own beside the bot's).
   * @defaultValue { recommended: 1, maxConcurrency: 1, identifyWindowMs: 5000 }
   */
  shards?: { recommended?: number; maxConcurrency?: number; identifyWindowMs?: number };
  /**
   * The voice server. `decode`: decode the bot's Opus (off for benchmarks: frames are counted and
   * timed, loudness is not measured, `onVoiceAudio` gets nothing). `dave`: DAVE required, as on Discord since March 2026 (a
   * listening member decrypts the bot's frames; a bot without DAVE is closed with 4017 and a
   * finding); off, Session Description says version 0, as before DAVE.
   * `heartbeatIntervalMs`: the voice gateway's Hello. `receiveOnThread`: the UDP socket on a
   * thread of its own that times each frame's arrival, so a busy event loop here (a benchmark's
   * load) does not show as the bot's jitter.
   * @defaultValue { decode: true, dave: true, heartbeatIntervalMs: 13750, receiveOnThread: false }
   */
  voice?: { decode?: boolean; dave?: boolean; heartbeatIntervalMs?: number; receiveOnThread?: boolean };
  /** The application's SKUs (Premium Apps), as `createSku` makes them. @defaultValue none */
  skus?: CreateSkuInput[];
  /**
   * The order List Entitlements answers in, which Discord does not document; `setEntitlementOrder` changes it.
   * @defaultValue 'from-cursor' (newest first, oldest first from an `after` cursor)
   */
  entitlementOrder?: EntitlementOrder;
  /**
   * How webhook events are retried when the endpoint does not acknowledge them (a 2xx within 3 s).
   * @defaultValue { initialDelayMs: 500, maxDelayMs: 60000, giveUpAfterMs: 600000 } (Discord: up to 10 minutes)
   */
  webhookEvents?: WebhookEventRetry;
  /**
   * The application's OAuth2 tab in the developer portal: the client secret, the registered
   * redirects (`setOAuth2Redirects` changes them), "Public Client" (no secret; PKCE required),
   * and the owner that client credentials act as.
   * @defaultValue { clientSecret: 'emulator-client-secret', redirectUris: [], publicClient: false, ownerId: a user made on first use }
   */
  oauth2?: { clientSecret?: string; redirectUris?: string[]; publicClient?: boolean; ownerId?: string };
}

/** A file part of a multipart request, as the emulator received it. */
export interface RecordedFile {
  field: string;
  filename: string;
  contentType: string;
  size: number;
}

/** One REST request the bot made, with the emulator's answer. */
export interface RecordedRequest {
  /** Running number, in arrival order. */
  seq: number;
  /** Emulator clock time of arrival (ms since epoch). */
  at: number;
  method: string;
  /** Path below the versioned API base, e.g. `/channels/1/messages`. */
  path: string;
  query: Record<string, string>;
  /** The OpenAPI path template matched, when the description knows the path. */
  route: string | null;
  operationId: string | null;
  /** Whether a correct bot token was presented; `null` when none was sent. */
  authorized: boolean | null;
  /** JSON body (or `payload_json` of a multipart body). */
  body: unknown;
  files: RecordedFile[];
  status: number;
  response: unknown;
}

export type FindingKind =
  | 'unknown-route'
  | 'unknown-method'
  | 'not-emulated'
  | 'invalid-body'
  | 'invalid-query'
  | 'missing-body'
  | 'unexpected-body'
  | 'unsupported-content-type'
  /** A credential the operation does not take, e.g. an OAuth2 Bearer token on a bot-only route. */
  | 'invalid-auth'
  | 'gateway-protocol'
  /** The bot's voice: Update Voice State (op 4), the voice gateway, its UDP packets. */
  | 'voice-protocol'
  /** An interaction delivered by HTTP whose response Discord would not take (late, not 200, invalid). */
  | 'interaction-response';

/** Something the bot sent that Discord's published description or protocol does not accept. */
export interface Finding {
  kind: FindingKind;
  method: string;
  path: string;
  route: string | null;
  operationId: string | null;
  message: string;
  /** Validator messages, e.g. `/embeds/0/title: must NOT have more than 256 characters`. */
  details: string[];
  /** `seq` of the request that produced it (absent for gateway findings). */
  requestSeq?: number;
}

/** An attachment together with the bytes the bot uploaded. */
export interface EmulatorAttachment extends APIAttachment {
  data: Buffer;
}

/** A message as the emulator holds it: Discord's shape, plus what a test wants to look at. */
export interface EmulatorMessage extends Omit<APIMessage, 'attachments'> {
  attachments: EmulatorAttachment[];
  /** What the bot asked for in `allowed_mentions` (Discord does not echo it back). */
  allowed_mentions?: APIAllowedMentions;
  /** Only the invoking user could see it. */
  ephemeral: boolean;
  /** The interaction this message answers, if any. */
  interactionId?: string;
}

/** The bot's initial answer to an interaction. */
export interface InteractionResponse {
  type: InteractionResponseType;
  /** The callback's `data`, as sent (for type 9 the modal, for type 8 the choices). */
  data: unknown;
  ephemeral: boolean;
  /** Emulator clock time at which the answer arrived. */
  at: number;
}

/** Lets a test follow one interaction and await the bot's answers to it. */
export interface InteractionHandle {
  readonly id: string;
  readonly token: string;
  /** What the emulator dispatched over the gateway. */
  readonly payload: APIInteraction;
  /** The initial response, once the bot has sent it. */
  readonly response: InteractionResponse | undefined;
  /** Follow-up messages, oldest first. */
  readonly followUps: EmulatorMessage[];
  /** The current original message (the reply, or the message a component sits on). */
  original(): EmulatorMessage | undefined;
  /** The modal the bot opened (callback type 9), if it did. */
  modal(): APIModalInteractionResponseCallbackData | undefined;
  /** Resolves with the initial response. */
  waitForResponse(timeoutMs?: number): Promise<InteractionResponse>;
  /** Resolves with the original message once it has been edited (and matches `predicate`). */
  waitForEdit(predicate?: (message: EmulatorMessage) => boolean, timeoutMs?: number): Promise<EmulatorMessage>;
  /** Resolves with the first follow-up that matches `predicate`. */
  waitForFollowUp(predicate?: (message: EmulatorMessage) => boolean, timeoutMs?: number): Promise<EmulatorMessage>;
}

/** A plain option value: string, integer/number or boolean; user, channel, role and mentionable options take ids. */
export type PlainOptionValue = string | number | boolean;

/**
 * A value for a command option. Registered commands type their options; for a command the
 * bot did not register, a plain value is typed by its JavaScript type, and `{ type, value }`
 * names the type (e.g. `{ type: ApplicationCommandOptionType.User, value: userId }`).
 */
export type CommandOptionValue = PlainOptionValue | { type: ApplicationCommandOptionType; value: PlainOptionValue };

/** A file a user attaches to a command option. */
export interface AttachmentInput {
  filename: string;
  data: Buffer | Uint8Array | string;
  contentType?: string;
  /** The address the interaction gives for the file instead of the CDN's (as a forged payload might). */
  url?: string;
  /** The CDN answers the file's address with a 302 to this one instead of the bytes. */
  redirectTo?: string;
}

/** A request to the emulator's attachment CDN. */
export interface CdnRequest {
  method: string;
  /** The URL's path, `/attachments/{channel}/{id}/{filename}`. */
  path: string;
  /** Emulator clock time of arrival (ms since epoch). */
  at: number;
}

/**
 * Where and by whom: omitted ids default to the first guild created, its first channel, and
 * the first member added with `addMember` (else the guild's owner).
 */
export interface InteractionPlace {
  guildId?: string;
  channelId?: string;
  userId?: string;
}

export interface RunCommandInput extends InteractionPlace {
  name: string;
  subcommandGroup?: string;
  subcommand?: string;
  options?: Record<string, CommandOptionValue>;
  /** Attachment options by option name. */
  attachments?: Record<string, AttachmentInput>;
  locale?: string;
}

export interface AutocompleteInput extends InteractionPlace {
  name: string;
  subcommandGroup?: string;
  subcommand?: string;
  /** Values already filled in, besides the focused one. */
  options?: Record<string, CommandOptionValue>;
  /** The option being typed and what has been typed so far. */
  focused: { name: string; value: string };
  timeoutMs?: number;
  /** The member's language (Discord's `locale`); `en-US` when left out. */
  locale?: string;
}

export type AutocompleteChoice = APIApplicationCommandOptionChoice;

/** A member opens the "Apps" menu on a message and picks one of the bot's message commands. */
export interface RunMessageCommandInput {
  /** The registered message command's name, as the menu shows it. */
  name: string;
  /** The message the menu was opened on. */
  messageId: string;
  userId: string;
  /** The member's language (Discord's `locale`); `en-US` when left out. */
  locale?: string;
}

export interface ClickButtonInput {
  messageId: string;
  customId: string;
  userId: string;
  /** Defaults to the message's guild. */
  guildId?: string;
  /** The member's language (Discord's `locale`); `en-US` when left out. */
  locale?: string;
}

export interface SelectOptionInput {
  messageId: string;
  customId: string;
  userId: string;
  values: string[];
  /** The member's language (Discord's `locale`); `en-US` when left out. */
  locale?: string;
}

export interface SubmitModalInput {
  /** The interaction the bot answered with the modal; supplies ids and the layout. */
  interaction?: InteractionHandle;
  guildId?: string;
  channelId?: string;
  userId?: string;
  /** Defaults to the custom id of the modal the bot opened. */
  customId?: string;
  /** Text input values by their custom id. */
  fields: Record<string, string>;
  /** The member's language (Discord's `locale`); that of the interaction that opened the modal, else `en-US`. */
  locale?: string;
}

/**
 * An interaction whose `data` the emulator sends as it is, unchecked: for fuzzing a bot with
 * payloads Discord itself would never send (see `DiscordEmulator.dispatchUnchecked`).
 */
export interface UncheckedInteractionInput extends InteractionPlace {
  /** 2 (command), 3 (component), 4 (autocomplete) or 5 (modal submit). */
  type: InteractionType.ApplicationCommand | InteractionType.MessageComponent | InteractionType.ApplicationCommandAutocomplete | InteractionType.ModalSubmit;
  /** The interaction's `data`, sent without any check against the registered commands or the message's components. */
  data: unknown;
  /** The message the interaction came from: required for a component, optional for a modal submit. */
  messageId?: string;
  /** The member's language (Discord's `locale`); `en-US` when left out. */
  locale?: string;
  /** The payload's `entitlements` as given, instead of those Discord would list (a forged payload). */
  entitlements?: unknown[];
}
