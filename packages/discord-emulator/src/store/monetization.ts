/**
 * Premium Apps: the application's SKUs, the entitlements users and guilds hold, and the
 * subscriptions behind guild subscriptions, with what Discord's checkout and its REST routes
 * refuse. Each change is handed to `deliver` as the ENTITLEMENT_* event Discord sends; how it
 * travels (gateway, webhook events) is the emulator's business.
 */
import { EntitlementType, RESTJSONErrorCodes, SKUFlags, SKUType } from 'discord-api-types/v10';
import type { APIEntitlement, APISKU } from 'discord-api-types/v10';
import type { EmulatorClock } from '../clock.js';
import { DiscordHttpError } from '../errors.js';
import type { SnowflakeGenerator } from '../snowflake.js';

/** What a test calls a SKU's kind; Discord's types 3, 2 and 5. */
export type SkuKind = 'consumable' | 'durable' | 'subscription';

export interface CreateSkuInput {
  /** Keeps a SKU's id across runs (the bot's configuration names it). */
  id?: string;
  name: string;
  type: SkuKind;
  /** @defaultValue AVAILABLE, plus GUILD_SUBSCRIPTION for a subscription */
  flags?: number;
}

/**
 * The order List Entitlements answers in, which Discord does not document (it documents the
 * filters: `before`, `after`, `limit`). Each takes the first `limit` entitlements in its order.
 * - `from-cursor`: newest first, but oldest first from an `after` cursor (the page nearest a cursor).
 * - `newest-first`: always newest first, so `after` gives the newest page after the cursor.
 * - `oldest-first`: always oldest first, so `before` gives the oldest page before the cursor.
 */
export type EntitlementOrder = 'from-cursor' | 'newest-first' | 'oldest-first';

/** When the bot hears of an entitlement change: once (Discord's way), twice (a duplicate), never (only REST shows it), or late. */
export type EntitlementDelivery = 'normal' | 'twice' | 'never' | { delayMs: number };

export type EntitlementEventType = 'ENTITLEMENT_CREATE' | 'ENTITLEMENT_UPDATE' | 'ENTITLEMENT_DELETE';

/** The subscription behind a guild-subscription entitlement (GET /skus/{sku_id}/subscriptions). */
export interface EmulatorSubscription {
  id: string;
  user_id: string;
  sku_ids: string[];
  entitlement_ids: string[];
  renewal_sku_ids: string[] | null;
  current_period_start: string;
  current_period_end: string;
  /** 0 active, 1 inactive, 2 ending. */
  status: 0 | 1 | 2;
  canceled_at: string | null;
}

/** One thing that happened to an entitlement, by a member, the bot or a test. */
export interface EntitlementRecord {
  /** Emulator clock time. */
  at: number;
  action: 'purchase' | 'subscribe' | 'end' | 'refund' | 'consume' | 'create-test' | 'delete-test' | 'redeliver';
  entitlementId: string;
  skuId: string;
  /** For `consume`: the entitlement was consumed already (the call changed nothing). */
  repeated?: boolean;
}

/** Entitlements as the store keeps them: Discord's object plus what only the emulator knows. */
interface StoredEntitlement {
  api: APIEntitlement & { promotion_id?: string | null; gift_code_flags?: number; subscription_id?: string };
  test: boolean;
  /** The last event sent about it, for a redelivery. */
  lastEvent: EntitlementEventType;
}

export interface MonetizationOptions {
  ids: SnowflakeGenerator;
  clock: EmulatorClock;
  applicationId: string;
  /** Sends an entitlement event to the bot, as `delivery` says. */
  deliver: (type: EntitlementEventType, entitlement: APIEntitlement, delivery: EntitlementDelivery) => void;
}

/** One-time purchases: what `purchase` sells. */
const ONE_TIME_TYPES: readonly SKUType[] = [SKUType.Consumable, SKUType.Durable];

const SKU_TYPES: Record<SkuKind, SKUType> = { consumable: SKUType.Consumable, durable: SKUType.Durable, subscription: SKUType.Subscription };

export class Monetization {
  readonly skus = new Map<string, APISKU>();
  readonly records: EntitlementRecord[] = [];
  /** How List Entitlements orders its answer. */
  order: EntitlementOrder = 'from-cursor';
  readonly #entitlements = new Map<string, StoredEntitlement>();
  readonly #subscriptions = new Map<string, EmulatorSubscription>();
  readonly #options: MonetizationOptions;

  constructor(options: MonetizationOptions) {
    this.#options = options;
  }

  // ---- SKUs ----

  /** A SKU of the application; a subscription also gets its SUBSCRIPTION_GROUP twin (type 6), as Discord makes one. */
  createSku(input: CreateSkuInput): APISKU {
    const type = SKU_TYPES[input.type];
    if (type === undefined) throw new Error(`a SKU's type is 'consumable', 'durable' or 'subscription', not ${String(input.type)}`);
    if (!input.name.trim()) throw new Error('a SKU needs a name');
    if (input.id !== undefined && this.skus.has(input.id)) throw new Error(`there is already a SKU ${input.id}`);
    const flags = input.flags ?? (type === SKUType.Subscription ? SKUFlags.Available | SKUFlags.GuildSubscription : SKUFlags.Available);
    if (type === SKUType.Subscription) this.#addSku(this.#options.ids.next(), SKUType.SubscriptionGroup, input.name, flags);
    return structuredClone(this.#addSku(input.id ?? this.#options.ids.next(), type, input.name, flags));
  }

  #addSku(id: string, type: SKUType, name: string, flags: number): APISKU {
    const sku = {
      id,
      type,
      dependent_sku_id: null,
      application_id: this.#options.applicationId,
      manifest_labels: null,
      access_type: 1,
      name,
      features: [],
      release_date: null,
      premium: false,
      slug: name.toLowerCase().replace(/[^a-z0-9]+/g, '-').replace(/^-|-$/g, ''),
      flags,
      show_age_gate: false,
    } as APISKU;
    this.skus.set(id, sku);
    return sku;
  }

  /** SKUs in creation order, as List SKUs answers. */
  listSkus(): APISKU[] {
    return [...this.skus.values()].map((sku) => structuredClone(sku));
  }

  #sku(skuId: string): APISKU {
    const sku = this.skus.get(skuId);
    if (!sku) throw new Error(`the application has no SKU ${skuId}`);
    return sku;
  }

  /** Whether a premium button may name this SKU: one of the application's, not a subscription group. */
  isPurchasable(skuId: unknown): boolean {
    const sku = typeof skuId === 'string' ? this.skus.get(skuId) : undefined;
    return sku !== undefined && sku.type !== SKUType.SubscriptionGroup;
  }

  isGuildSubscription(skuId: string): boolean {
    const sku = this.#sku(skuId);
    return sku.type === SKUType.Subscription && (sku.flags & SKUFlags.UserSubscription) === 0;
  }

  // ---- a member buying ----

  /** A member buys a one-time SKU: a PURCHASE entitlement of the user's. A consumable held unconsumed cannot be bought again. */
  purchase(input: { userId: string; skuId: string; delivery?: EntitlementDelivery }): APIEntitlement {
    const sku = this.#sku(input.skuId);
    if (!ONE_TIME_TYPES.includes(sku.type)) {
      throw new Error(`SKU ${sku.id} (${sku.name}) is a subscription, not a one-time purchase; use subscribe`);
    }
    const held = [...this.#entitlements.values()].find(
      (stored) => stored.api.sku_id === sku.id && stored.api.user_id === input.userId && this.#active(stored) && (sku.type === SKUType.Durable || !stored.api.consumed),
    );
    if (held) {
      throw new Error(
        sku.type === SKUType.Consumable
          ? `user ${input.userId} already holds an unconsumed "${sku.name}" (entitlement ${held.api.id}): Discord lets them buy it again only once the app consumes it`
          : `user ${input.userId} already owns "${sku.name}" (entitlement ${held.api.id})`,
      );
    }
    const entitlement = this.#add(sku.id, { user_id: input.userId, type: EntitlementType.Purchase, starts_at: null, ends_at: null }, false);
    this.#record('purchase', entitlement.api);
    return this.#emit('ENTITLEMENT_CREATE', entitlement, input.delivery);
  }

  /** A member subscribes a guild to a subscription SKU: an APPLICATION_SUBSCRIPTION entitlement of the guild's, and its subscription. */
  subscribe(input: { userId: string; guildId: string; skuId: string; delivery?: EntitlementDelivery }): APIEntitlement {
    const sku = this.#sku(input.skuId);
    if (sku.type !== SKUType.Subscription) throw new Error(`SKU ${sku.id} (${sku.name}) is not a subscription; use purchase`);
    const guildWide = this.isGuildSubscription(sku.id);
    const held = [...this.#entitlements.values()].find(
      (stored) => stored.api.sku_id === sku.id && this.#active(stored) && (guildWide ? stored.api.guild_id === input.guildId : stored.api.user_id === input.userId),
    );
    if (held) throw new Error(`"${sku.name}" is already active for ${guildWide ? `guild ${input.guildId}` : `user ${input.userId}`} (entitlement ${held.api.id})`);
    const now = this.#options.clock.now();
    const subscriptionId = this.#options.ids.next();
    const entitlement = this.#add(
      sku.id,
      {
        user_id: input.userId,
        type: EntitlementType.ApplicationSubscription,
        starts_at: new Date(now).toISOString(),
        ends_at: null,
        ...(guildWide ? { guild_id: input.guildId } : {}),
        subscription_id: subscriptionId,
      },
      false,
    );
    this.#subscriptions.set(subscriptionId, {
      id: subscriptionId,
      user_id: input.userId,
      sku_ids: [sku.id],
      entitlement_ids: [entitlement.api.id],
      renewal_sku_ids: null,
      current_period_start: new Date(now).toISOString(),
      current_period_end: new Date(addMonth(now)).toISOString(),
      status: 0,
      canceled_at: null,
    });
    this.#record('subscribe', entitlement.api);
    return this.#emit('ENTITLEMENT_CREATE', entitlement, input.delivery);
  }

  /** The subscription ends: `ends_at` set, ENTITLEMENT_UPDATE (the only update Discord sends for a subscription). */
  endSubscription(entitlementId: string, input: { endsAt?: Date; delivery?: EntitlementDelivery } = {}): APIEntitlement {
    const stored = this.#stored(entitlementId);
    if (stored.api.type !== EntitlementType.ApplicationSubscription) throw new Error(`entitlement ${entitlementId} is not a subscription's`);
    if (stored.api.ends_at) throw new Error(`the subscription of entitlement ${entitlementId} has ended already`);
    const endsAt = input.endsAt ?? new Date(this.#options.clock.now());
    stored.api.ends_at = endsAt.toISOString();
    const subscription = stored.api.subscription_id ? this.#subscriptions.get(stored.api.subscription_id) : undefined;
    if (subscription) {
      subscription.status = 1;
      subscription.canceled_at ??= endsAt.toISOString();
      subscription.current_period_end = endsAt.toISOString();
    }
    this.#record('end', stored.api);
    return this.#emit('ENTITLEMENT_UPDATE', stored, input.delivery);
  }

  /** Discord refunds: the entitlement is deleted (ENTITLEMENT_DELETE); lists hide it unless asked. */
  refund(entitlementId: string, input: { delivery?: EntitlementDelivery } = {}): void {
    const stored = this.#stored(entitlementId);
    if (stored.api.deleted) throw new Error(`entitlement ${entitlementId} is deleted already`);
    stored.api.deleted = true;
    const subscription = stored.api.subscription_id ? this.#subscriptions.get(stored.api.subscription_id) : undefined;
    if (subscription) subscription.status = 1;
    this.#record('refund', stored.api);
    this.#emit('ENTITLEMENT_DELETE', stored, input.delivery);
  }

  /** Sends the last event about the entitlement again (or the one named): a duplicate delivery. */
  redeliver(entitlementId: string, type?: 'create' | 'update' | 'delete'): void {
    const stored = this.#stored(entitlementId);
    const event = type ? (`ENTITLEMENT_${type.toUpperCase()}` as EntitlementEventType) : stored.lastEvent;
    this.#record('redeliver', stored.api);
    this.#emit(event, stored, 'normal');
  }

  // ---- the bot's REST routes ----

  /** Consume an Entitlement: only a consumable's; consuming one again changes nothing (recorded as repeated). */
  consume(entitlementId: string): void {
    const stored = this.#entitlements.get(entitlementId);
    if (!stored || stored.api.deleted) throw unknownEntitlement();
    if (this.skus.get(stored.api.sku_id)?.type !== SKUType.Consumable) {
      throw new DiscordHttpError(400, RESTJSONErrorCodes.OnlyConsumableSKUsCanBeConsumed, 'Only consumable SKUs can be consumed');
    }
    const repeated = stored.api.consumed === true;
    stored.api.consumed = true;
    this.#record('consume', stored.api, repeated);
  }

  /** Create Test Entitlement: a partial object (no starts_at, ends_at, subscription_id), valid until deleted. */
  createTest(input: { skuId: string; ownerId: string; ownerType: 1 | 2 }): APIEntitlement {
    const sku = this.skus.get(input.skuId);
    if (!sku) throw new DiscordHttpError(404, RESTJSONErrorCodes.UnknownSKU, 'Unknown SKU');
    if (sku.type === SKUType.SubscriptionGroup) throw new DiscordHttpError(400, RESTJSONErrorCodes.InvalidSKU, 'Invalid SKU');
    const owner = input.ownerType === 1 ? { guild_id: input.ownerId } : { user_id: input.ownerId };
    const held = [...this.#entitlements.values()].some(
      (stored) =>
        stored.api.sku_id === sku.id &&
        this.#active(stored) &&
        !stored.api.consumed &&
        (input.ownerType === 1 ? stored.api.guild_id === input.ownerId : stored.api.user_id === input.ownerId && !stored.api.guild_id),
    );
    if (held) {
      throw new DiscordHttpError(400, RESTJSONErrorCodes.AnEntitlementHasAlreadyBeenGrantedForThisResource, 'An entitlement has already been granted for this resource');
    }
    const stored = this.#add(sku.id, { ...owner, type: EntitlementType.TestModePurchase }, true);
    this.#record('create-test', stored.api);
    return this.#emit('ENTITLEMENT_CREATE', stored, 'normal');
  }

  /** Delete Test Entitlement: only test entitlements; ENTITLEMENT_DELETE. */
  deleteTest(entitlementId: string): void {
    const stored = this.#entitlements.get(entitlementId);
    if (!stored || stored.api.deleted) throw unknownEntitlement();
    if (!stored.test) throw new DiscordHttpError(400, RESTJSONErrorCodes.YouCanOnlyDeleteSandboxEntitlements, 'You can only delete sandbox entitlements.');
    stored.api.deleted = true;
    this.#record('delete-test', stored.api);
    this.#emit('ENTITLEMENT_DELETE', stored, 'normal');
  }

  /** Get Entitlement: deleted ones included (they say `deleted: true`). */
  get(entitlementId: string): APIEntitlement {
    const stored = this.#entitlements.get(entitlementId);
    if (!stored) throw unknownEntitlement();
    return structuredClone(stored.api);
  }

  /** List Entitlements, filtered as documented; `limit` of them in the emulator's `order`. */
  list(query: {
    userId?: string;
    guildId?: string;
    skuIds?: string[];
    before?: string;
    after?: string;
    limit: number;
    excludeEnded: boolean;
    excludeDeleted: boolean;
  }): APIEntitlement[] {
    const now = this.#options.clock.now();
    let found = [...this.#entitlements.values()]
      .map((stored) => stored.api)
      .filter(
        (api) =>
          (query.userId === undefined || api.user_id === query.userId) &&
          (query.guildId === undefined || api.guild_id === query.guildId) &&
          (query.skuIds === undefined || query.skuIds.includes(api.sku_id)) &&
          (query.before === undefined || BigInt(api.id) < BigInt(query.before)) &&
          (query.after === undefined || BigInt(api.id) > BigInt(query.after)) &&
          !(query.excludeDeleted && api.deleted) &&
          !(query.excludeEnded && ended(api, now)),
      )
      .sort((a, b) => (BigInt(a.id) < BigInt(b.id) ? -1 : 1));
    const oldestFirst = this.order === 'oldest-first' || (this.order === 'from-cursor' && query.after !== undefined);
    if (!oldestFirst) found = found.reverse();
    return found.slice(0, query.limit).map((api) => structuredClone(api));
  }

  listSubscriptions(skuId: string, query: { userId?: string; before?: string; after?: string; limit: number }): EmulatorSubscription[] {
    const found = [...this.#subscriptions.values()]
      .filter(
        (subscription) =>
          subscription.sku_ids.includes(skuId) &&
          (query.userId === undefined || subscription.user_id === query.userId) &&
          (query.before === undefined || BigInt(subscription.id) < BigInt(query.before)) &&
          (query.after === undefined || BigInt(subscription.id) > BigInt(query.after)),
      )
      .sort((a, b) => (BigInt(a.id) < BigInt(b.id) ? -1 : 1));
    return (query.after === undefined ? found.reverse() : found).slice(0, query.limit).map((subscription) => structuredClone(subscription));
  }

  subscription(skuId: string, subscriptionId: string): EmulatorSubscription | undefined {
    const subscription = this.#subscriptions.get(subscriptionId);
    return subscription?.sku_ids.includes(skuId) ? structuredClone(subscription) : undefined;
  }

  // ---- what tests and interaction payloads look at ----

  all(): APIEntitlement[] {
    return [...this.#entitlements.values()].map((stored) => structuredClone(stored.api));
  }

  find(entitlementId: string): APIEntitlement | undefined {
    const stored = this.#entitlements.get(entitlementId);
    return stored ? structuredClone(stored.api) : undefined;
  }

  /**
   * What an interaction's `entitlements` carries: the user's and the guild's active entitlements
   * (not deleted, not ended, consumables not yet consumed), oldest first.
   */
  activeFor(userId: string, guildId: string | null): APIEntitlement[] {
    return [...this.#entitlements.values()]
      .filter((stored) => this.#active(stored) && !stored.api.consumed)
      .filter((stored) => (stored.api.guild_id ? stored.api.guild_id === guildId : stored.api.user_id === userId))
      .map((stored) => structuredClone(stored.api));
  }

  // ---- internals ----

  #active(stored: StoredEntitlement): boolean {
    return !stored.api.deleted && !ended(stored.api, this.#options.clock.now());
  }

  /** A new entitlement of this application to `skuId`: live, unconsumed, with what `fields` adds (its type, owner, times). */
  #add(skuId: string, fields: Pick<StoredEntitlement['api'], 'type'> & Partial<StoredEntitlement['api']>, test: boolean): StoredEntitlement {
    const api = {
      id: this.#options.ids.next(),
      sku_id: skuId,
      application_id: this.#options.applicationId,
      promotion_id: null,
      deleted: false,
      gift_code_flags: 0,
      consumed: false,
      ...fields,
    } as StoredEntitlement['api'];
    const stored: StoredEntitlement = { api, test, lastEvent: 'ENTITLEMENT_CREATE' };
    this.#entitlements.set(api.id, stored);
    return stored;
  }

  #stored(entitlementId: string): StoredEntitlement {
    const stored = this.#entitlements.get(entitlementId);
    if (!stored) throw new Error(`the emulator has no entitlement ${entitlementId}`);
    return stored;
  }

  #emit(type: EntitlementEventType, stored: StoredEntitlement, delivery: EntitlementDelivery = 'normal'): APIEntitlement {
    stored.lastEvent = type;
    this.#options.deliver(type, structuredClone(stored.api), delivery);
    return structuredClone(stored.api);
  }

  #record(action: EntitlementRecord['action'], api: APIEntitlement, repeated?: boolean): void {
    this.records.push({ at: this.#options.clock.now(), action, entitlementId: api.id, skuId: api.sku_id, ...(repeated === undefined ? {} : { repeated }) });
  }
}

function ended(api: APIEntitlement, now: number): boolean {
  return typeof api.ends_at === 'string' && Date.parse(api.ends_at) <= now;
}

function unknownEntitlement(): DiscordHttpError {
  return new DiscordHttpError(404, RESTJSONErrorCodes.UnknownEntitlement, 'Unknown Entitlement');
}

function addMonth(ms: number): number {
  const date = new Date(ms);
  date.setUTCMonth(date.getUTCMonth() + 1);
  return date.getTime();
}
