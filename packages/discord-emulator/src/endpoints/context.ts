/** What a module of REST routes is handed by the REST API (../rest-api.ts): a way to add routes, the emulator's parts, and the shared access checks. */
import type { CommandRegistry } from '../commands.js';
import type { InteractionRegistry } from '../interactions.js';
import type { EmulatorStore } from '../store.js';
import type { OAuth2Authorizations } from '../oauth2/authorizations.js';
import type { Monetization } from '../store/monetization.js';
import type { StoredChannel, StoredGuild, StoredMessage, Upload } from '../store/records.js';

export type Method = 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';

/** Who made the request: the bot (its token), a user through an OAuth2 access token, or nobody in particular. */
export type Caller = { kind: 'bot' } | { kind: 'user'; userId: string; scopes: readonly string[] } | { kind: 'anonymous' };

/**
 * Who may call a route: `true` the bot token only, `false` anyone (interaction and webhook-token
 * routes), `{ bearer }` the bot token or an OAuth2 access token holding that scope.
 */
export type RouteAuth = boolean | { bearer: string };

/** One request as a route's handler sees it: path parameters, query, JSON (or `payload_json`) body, files. */
export interface HandlerContext {
  params: Record<string, string>;
  query: URLSearchParams;
  body: unknown;
  uploads: Upload[];
  /** The fields of a form-encoded body (only OAuth2's token routes take one); undefined for any other body. */
  form: Record<string, string> | undefined;
  /** The Authorization header as sent (the token routes read client credentials from it). */
  authorization: string | undefined;
  caller: Caller;
}

export interface HandlerResult {
  status: number;
  body?: unknown;
  headers?: Record<string, string>;
}

/** Answers one request; a thrown DiscordHttpError becomes Discord's error answer. */
export type RouteHandler = (context: HandlerContext) => HandlerResult | Promise<HandlerResult>;

export interface RouteContext {
  /** Serves `method` on a `/channels/{channel_id}`-style template; `auth`: who may call it. */
  route(method: Method, template: string, auth: RouteAuth, handler: RouteHandler): void;
  readonly store: EmulatorStore;
  readonly interactions: InteractionRegistry;
  readonly commands: CommandRegistry;
  /** SKUs, entitlements and subscriptions (Premium Apps). */
  readonly monetization: Monetization;
  /** The application's OAuth2 codes and tokens. */
  readonly oauth2: OAuth2Authorizations;
  readonly applicationId: string;
  /** The application's public key, hex. */
  readonly verifyKey: string;
  readonly gatewayUrl: () => string;
  readonly shards: { recommended: number; maxConcurrency: number };
  /** Resolves once an interaction's HTTP response, if on its way, has been applied. */
  readonly deliverySettled: (token: string) => Promise<void>;
  /** The channel, if the bot sees it: 10003 Unknown Channel, or 50001 Missing Access. */
  readableChannel(channelId: string): StoredChannel;
  /** 50013 Missing Permissions unless the bot has `permission` in a guild channel. */
  requirePermission(channel: StoredChannel, permission: bigint): void;
  /** A non-ephemeral message of the channel, or 10008 Unknown Message. */
  channelMessage(channel: StoredChannel, messageId: string): StoredMessage;
  /** 50001 Missing Access unless `applicationId` is the emulator's application. */
  application(applicationId: string): void;
  /** The guild, or 10004 Unknown Guild. */
  guild(guildId: string): StoredGuild;
}

export const ok = (body: unknown): HandlerResult => ({ status: 200, body });
export const noContent: HandlerResult = { status: 204 };

/** A stored message as the API sends it. */
export const wire = (stored: StoredMessage): unknown => structuredClone(stored.api);

export function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
