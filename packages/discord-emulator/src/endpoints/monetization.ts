/** Premium Apps: List SKUs, the entitlement routes (list, get, consume, test entitlements) and SKU subscriptions. */
import { RESTJSONErrorCodes } from 'discord-api-types/v10';
import { DiscordErrors, DiscordHttpError, FormErrors } from '../errors.js';
import { isRecord, noContent, ok } from './context.js';
import type { RouteContext } from './context.js';

const SNOWFLAKE = /^\d{1,20}$/;

export function registerMonetizationRoutes(api: RouteContext): void {
  const { monetization, store } = api;

  api.route('GET', '/applications/{application_id}/skus', true, ({ params }) => {
    api.application(params.application_id ?? '');
    return ok(monetization.listSkus());
  });

  api.route('GET', '/applications/{application_id}/entitlements', true, ({ params, query }) => {
    api.application(params.application_id ?? '');
    const errors = new FormErrors();
    const snowflake = (name: string): string | undefined => {
      const value = query.get(name);
      if (value === null || value === '') return undefined;
      if (!SNOWFLAKE.test(value)) errors.add([name], 'NUMBER_TYPE_COERCE', `Value "${value}" is not snowflake.`);
      return value;
    };
    const userId = snowflake('user_id');
    const guildId = snowflake('guild_id');
    const before = snowflake('before');
    const after = snowflake('after');
    const skuText = query.getAll('sku_ids').join(',');
    const skuIds = skuText === '' ? undefined : skuText.split(',').map((id) => id.trim()).filter((id) => id !== '');
    skuIds?.forEach((id, index) => {
      if (!SNOWFLAKE.test(id)) errors.add(['sku_ids', index], 'NUMBER_TYPE_COERCE', `Value "${id}" is not snowflake.`);
    });
    const limitText = query.get('limit');
    const limit = limitText === null || limitText === '' ? 100 : Number(limitText);
    if (!Number.isInteger(limit) || limit < 1 || limit > 100) errors.add(['limit'], 'NUMBER_TYPE_MAX', 'int value should be between 1 and 100.');
    const excludeEnded = booleanQuery(errors, query, 'exclude_ended', false);
    const excludeDeleted = booleanQuery(errors, query, 'exclude_deleted', true);
    errors.throwIfAny();
    return ok(monetization.list({ userId, guildId, skuIds, before, after, limit, excludeEnded, excludeDeleted }));
  });

  api.route('GET', '/applications/{application_id}/entitlements/{entitlement_id}', true, ({ params }) => {
    api.application(params.application_id ?? '');
    return ok(monetization.get(params.entitlement_id ?? ''));
  });

  api.route('POST', '/applications/{application_id}/entitlements/{entitlement_id}/consume', true, ({ params }) => {
    api.application(params.application_id ?? '');
    monetization.consume(params.entitlement_id ?? '');
    return noContent;
  });

  api.route('POST', '/applications/{application_id}/entitlements', true, ({ params, body }) => {
    api.application(params.application_id ?? '');
    const input = isRecord(body) ? body : {};
    const errors = new FormErrors();
    for (const field of ['sku_id', 'owner_id'] as const) {
      const value = input[field];
      if (value === undefined || value === null) errors.add([field], 'BASE_TYPE_REQUIRED', 'This field is required');
      else if (!SNOWFLAKE.test(String(value))) errors.add([field], 'NUMBER_TYPE_COERCE', `Value "${String(value)}" is not snowflake.`);
    }
    const ownerType = input.owner_type;
    if (ownerType === undefined || ownerType === null) errors.add(['owner_type'], 'BASE_TYPE_REQUIRED', 'This field is required');
    else if (ownerType !== 1 && ownerType !== 2) errors.add(['owner_type'], 'BASE_TYPE_CHOICES', 'Value must be one of {1, 2}.');
    errors.throwIfAny();
    const ownerId = String(input.owner_id);
    if (ownerType === 1) api.guild(ownerId);
    else if (!store.users.has(ownerId)) throw DiscordErrors.unknownUser();
    return ok(monetization.createTest({ skuId: String(input.sku_id), ownerId, ownerType: ownerType as 1 | 2 }));
  });

  api.route('DELETE', '/applications/{application_id}/entitlements/{entitlement_id}', true, ({ params }) => {
    api.application(params.application_id ?? '');
    monetization.deleteTest(params.entitlement_id ?? '');
    return noContent;
  });

  api.route('GET', '/skus/{sku_id}/subscriptions', true, ({ params, query }) => {
    const skuId = params.sku_id ?? '';
    if (!monetization.skus.has(skuId)) throw unknownSku();
    const userId = query.get('user_id') || undefined;
    // A bot must name the user (only an OAuth2 user token may leave it out).
    if (!userId) {
      const errors = new FormErrors();
      errors.add(['user_id'], 'BASE_TYPE_REQUIRED', 'This field is required');
      errors.throwIfAny();
    }
    const limit = Number(query.get('limit') || 50);
    if (!Number.isInteger(limit) || limit < 1 || limit > 100) {
      const errors = new FormErrors();
      errors.add(['limit'], 'NUMBER_TYPE_MAX', 'int value should be between 1 and 100.');
      errors.throwIfAny();
    }
    return ok(monetization.listSubscriptions(skuId, { userId, before: query.get('before') || undefined, after: query.get('after') || undefined, limit }));
  });

  api.route('GET', '/skus/{sku_id}/subscriptions/{subscription_id}', true, ({ params }) => {
    const skuId = params.sku_id ?? '';
    if (!monetization.skus.has(skuId)) throw unknownSku();
    const subscription = monetization.subscription(skuId, params.subscription_id ?? '');
    if (!subscription) throw DiscordErrors.notFound();
    return ok(subscription);
  });
}

function unknownSku(): DiscordHttpError {
  return new DiscordHttpError(404, RESTJSONErrorCodes.UnknownSKU, 'Unknown SKU');
}

/** Discord's boolean query strings: True/False, true/false, 1/0. */
function booleanQuery(errors: FormErrors, query: URLSearchParams, name: string, fallback: boolean): boolean {
  const value = query.get(name);
  if (value === null || value === '') return fallback;
  if (/^(true|1)$/i.test(value)) return true;
  if (/^(false|0)$/i.test(value)) return false;
  errors.add([name], 'BOOLEAN_TYPE_COERCE', `Value "${value}" is not a valid boolean.`);
  return fallback;
}
