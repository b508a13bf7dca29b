/** What a module of REST routes is handed by the REST API (../rest-api.ts): a way to add routes, the emulator's parts, and the shared access checks. */
import type { CommandRegistry } from '../commands.js';
import type { InteractionRegistry } from '../interactions.js';
import type { EmulatorStore } from '../store.js';
import type { Monetization } from '../store/monetization.js';
import type { StoredChannel, StoredGuild, StoredMessage, Upload } from '../store/records.js';

export type Method = 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';

/** One request as a route's handler sees it: path parameters, query, JSON (or `payload_json`) body, files. */
export interface HandlerContext {
  params: Record<string, string>;
  query: URLSearchParams;
  body: unknown;
  uploads: Upload[];
}

export interface HandlerResult {
  status: number;
  body?: unknown;
}

/** Answers one request; a thrown DiscordHttpError becomes Discord's error answer. */
export type RouteHandler = (context: HandlerContext) => HandlerResult | Promise<HandlerResult>;

export interface RouteContext {
  /** Serves `method` on a `/channels/{channel_id}`-style template; `auth`: whether it needs the bot token (interaction and webhook-token routes do not). */
  route(method: Method, template: string, auth: boolean, handler: RouteHandler): void;
  readonly store: EmulatorStore;
  readonly interactions: InteractionRegistry;
  readonly commands: CommandRegistry;
  /** SKUs, entitlements and subscriptions (Premium Apps). */
  readonly monetization: Monetization;
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
