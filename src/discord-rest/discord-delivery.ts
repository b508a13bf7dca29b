/**
 * Talking to Discord without a gateway: workers edit interaction replies and post channel
 * messages over REST (DISCORD_API_URL) through @discordjs/core's REST-only API. Interaction tokens
 * travel in URL paths only and never reach a log line (error routes are redacted below).
 */
import { createHash } from 'node:crypto';
import { API } from '@discordjs/core/http-only';
import { DiscordAPIError, REST, RateLimitError, type RawFile } from '@discordjs/rest';
import {
  MessageFlags,
  type APIGuildMember,
  type APIMessage,
  type APIRole,
  type RESTPatchAPIWebhookWithTokenMessageJSONBody,
  type RESTPostAPIChannelMessageJSONBody,
} from 'discord-api-types/v10';
import { restTrafficOptions, type RestTraffic } from './rest-requests.js';

export interface OutgoingFile {
  readonly name: string;
  readonly data: Buffer;
  readonly contentType?: string;
}

export type OutgoingMessage = RESTPostAPIChannelMessageJSONBody & RESTPatchAPIWebhookWithTokenMessageJSONBody;

export interface DiscordDelivery {
  editOriginal(applicationId: string, token: string, message: OutgoingMessage, files?: readonly OutgoingFile[]): Promise<APIMessage>;
  /**
   * Edits the reply to show progress, only if Discord takes it now: it never waits for a rate
   * limit and is never retried. Resolves `false` when the reply's bucket is empty; the progress
   * edit is dropped, and the next one (or the result) shows the newer state.
   */
  editProgress(applicationId: string, token: string, message: OutgoingMessage): Promise<boolean>;
  /** Edits a message of an interaction: its reply (`@original`) or one of its follow-ups, ephemeral ones too. */
  editInteractionMessage(applicationId: string, token: string, messageId: string, message: OutgoingMessage): Promise<APIMessage>;
  /** A follow-up to an interaction; `ephemeral` shows it to the member who asked only. */
  followUp(applicationId: string, token: string, message: OutgoingMessage, options?: { ephemeral?: boolean }): Promise<APIMessage>;
  postChannelMessage(channelId: string, message: OutgoingMessage, files?: readonly OutgoingFile[]): Promise<APIMessage>;
  editChannelMessage(channelId: string, messageId: string, message: OutgoingMessage, files?: readonly OutgoingFile[]): Promise<APIMessage>;
  deleteChannelMessage(channelId: string, messageId: string): Promise<void>;
  /** A direct message: opens (or finds) the DM channel with the user, then posts in it. */
  sendDirectMessage(userId: string, message: OutgoingMessage): Promise<APIMessage>;
  /** The bot's own user id (asked once, then kept). */
  botUserId(): Promise<string>;
  /** A server's roles, with their positions and permissions. */
  guildRoles(guildId: string): Promise<APIRole[]>;
  /** One member of a server, with their roles. */
  guildMember(guildId: string, userId: string): Promise<APIGuildMember>;
  /** Gives a member a role (Discord refuses without Manage Roles, or for a role at or above the bot's highest). */
  addMemberRole(guildId: string, userId: string, roleId: string, reason: string): Promise<void>;
}

/**
 * Discord's answers that mean nothing more can be sent through an interaction: the one list
 * for the router's first answer and for a result's delivery.
 */
const GONE_INTERACTION_CODES: ReadonlySet<number> = new Set([
  50027, // Invalid Webhook Token: the token's 15 minutes are over
  10015, // Unknown Webhook
  10062, // Unknown interaction: not answered within 3 seconds
  40060, // Interaction has already been acknowledged
  10008, // Unknown Message: the reply it would edit was deleted
]);

/**
 * By shape, not `instanceof`: discord.js (CommonJS) throws the CommonJS build's DiscordAPIError,
 * and this module imports the ESM build's, two different classes for the one error.
 */
export function isGoneInteraction(error: unknown): boolean {
  const code = error instanceof Error && error.name.startsWith('DiscordAPIError') ? (error as { code?: unknown }).code : undefined;
  return typeof code === 'number' && GONE_INTERACTION_CODES.has(code);
}

/**
 * A message's nonce for `key` (a job id, say), within Discord's 25 characters: Discord drops a
 * second message with the same nonce (`enforce_nonce`), so a retried post does not appear twice.
 */
export function nonceFor(key: string): string {
  return createHash('sha256').update(key).digest('base64url').slice(0, 25);
}

/** Discord's answer to a message the user does not take: DMs closed, the bot blocked, or no server shared. */
const CANNOT_SEND_TO_USER = 50007;

/**
 * A direct message the user does not take (50007). By shape, not `instanceof`: the CommonJS and
 * ESM builds of @discordjs/rest throw two classes.
 */
export function isCannotSendToUser(error: unknown): boolean {
  return error instanceof Error && error.name.startsWith('DiscordAPIError') && (error as { code?: unknown }).code === CANNOT_SEND_TO_USER;
}

/** 403: the bot cannot see or write to the channel. Retrying will not help. */
export function isMissingAccess(error: unknown): boolean {
  return error instanceof DiscordAPIError && error.status === 403;
}

/** An error safe to log: the route is cut before any token. */
export function describeDiscordError(error: unknown): Record<string, unknown> {
  if (error instanceof DiscordAPIError) {
    return { status: error.status, code: error.code, method: error.method, route: redactRoute(error.url), message: error.message };
  }
  return { message: error instanceof Error ? redactRoute(error.message) : 'unknown error' };
}

/** `/webhooks/<app>/<token>/…` → `/webhooks/<app>/[token]/…` */
export function redactRoute(text: string): string {
  return text.replace(/(\/webhooks\/\d+\/)[^/?\s]+/g, '$1[token]').replace(/(\/interactions\/\d+\/)[^/?\s]+/g, '$1[token]');
}

/** The message with its files: each named in `attachments` by its index, as Discord wants. */
function withFiles(message: OutgoingMessage, files: readonly OutgoingFile[] | undefined): OutgoingMessage & { files?: RawFile[] } {
  if (!files || files.length === 0) return message;
  return {
    ...message,
    attachments: files.map((file, id) => ({ id: String(id), filename: file.name })),
    files: files.map((file) => ({ name: file.name, data: file.data, ...(file.contentType && { contentType: file.contentType }) })),
  };
}

/**
 * Every interaction token is a route of its own to the REST client, which keeps a rate-limit
 * handler and bucket hash per route: by default for hours. Tokens die after 15 minutes, so
 * sweeping every minute and forgetting after 20 keeps memory flat with thousands of jobs.
 */
export const REST_SWEEPS = { handlerSweepInterval: 60_000, hashSweepInterval: 60_000, hashLifetime: 20 * 60_000 } as const;

/**
 * For a REST client that answers interactions: their callbacks and webhooks are not bound by
 * Discord's global limit of 50 requests a second, so the client does not apply it to them.
 * Discord's own 429s, per route or global, are still obeyed.
 */
export const INTERACTION_REST = { ...REST_SWEEPS, globalRequestsPerSecond: 1_000_000 } as const;

/** A progress edit that takes longer than this is given up: it holds the job's row lock meanwhile. */
export const PROGRESS_EDIT_TIMEOUT_MS = 3_000;

export function createDiscordDelivery(options: { apiUrl: string; token: string; timeoutMs?: number; traffic?: RestTraffic }): DiscordDelivery {
  const timeout = options.timeoutMs ?? 15_000;
  const common = { api: options.apiUrl, timeout, retries: 2, ...REST_SWEEPS, ...restTrafficOptions(options.traffic ?? {}, timeout) };
  const bot = new API(new REST(common).setToken(options.token));
  // Interaction webhooks are not bound by Discord's global limit of 50 requests a second (only
  // by their own per-route buckets, which this client still follows), so they get a client of
  // their own: at 50 completions a second they must not queue behind channel posts.
  const { interactions } = new API(new REST({ ...common, ...INTERACTION_REST }));
  // Progress edits have a client of their own that refuses to wait: where the results' client
  // queues behind an empty bucket and retries a 429, this one throws at once, so a progress edit
  // never stands in a rate-limit queue (holding the job's row lock) while a result waits.
  const progress = new API(
    new REST({
      ...common,
      globalRequestsPerSecond: 1_000_000,
      retries: 0,
      timeout: PROGRESS_EDIT_TIMEOUT_MS,
      rejectOnRateLimit: () => true,
    }),
  ).interactions;
  let botId: Promise<string> | undefined;
  return {
    editOriginal: (applicationId, token, message, files) => interactions.editReply(applicationId, token, withFiles(message, files)),
    editProgress: async (applicationId, token, message) => {
      try {
        await progress.editReply(applicationId, token, message);
        return true;
      } catch (err) {
        if (err instanceof RateLimitError) return false;
        throw err;
      }
    },
    editInteractionMessage: (applicationId, token, messageId, message) => interactions.editReply(applicationId, token, message, messageId),
    followUp: (applicationId, token, message, options = {}) =>
      interactions.followUp(applicationId, token, { ...message, ...(options.ephemeral && { flags: MessageFlags.Ephemeral }) }),
    postChannelMessage: (channelId, message, files) => bot.channels.createMessage(channelId, withFiles(message, files)),
    editChannelMessage: (channelId, messageId, message, files) =>
      bot.channels.editMessage(channelId, messageId, withFiles(message, files)),
    deleteChannelMessage: (channelId, messageId) => bot.channels.deleteMessage(channelId, messageId),
    async sendDirectMessage(userId, message) {
      const channel = await bot.users.createDM(userId);
      return bot.channels.createMessage(channel.id, message);
    },
    async botUserId() {
      botId ??= bot.users.getCurrent().then((user) => user.id);
      return botId.catch((error: unknown) => {
        botId = undefined;
        throw error;
      });
    },
    guildRoles: (guildId) => bot.guilds.getRoles(guildId),
    guildMember: (guildId, userId) => bot.guilds.getMember(guildId, userId),
    addMemberRole: (guildId, userId, roleId, reason) => bot.guilds.addRoleToMember(guildId, userId, roleId, { reason }),
  };
}
