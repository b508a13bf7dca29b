/**
 * Where the music service posts a job's webhook: the HTTP server serves the route, the submit
 * step sends the address, and the configuration refuses a PUBLIC_URL too long for it.
 */
import { MAX_WEBHOOK_URL_LENGTH } from './music-api-spec.js';

/** The route under PUBLIC_URL; a job's id follows it. */
export const WEBHOOK_ROUTE_PREFIX = '/webhooks/music';

/** A job's webhook address. Job ids are UUIDs (36 characters), so its length depends on PUBLIC_URL alone. */
export function webhookUrlFor(publicUrl: string, jobId: string): string {
  return `${publicUrl}${WEBHOOK_ROUTE_PREFIX}/${jobId}`;
}

/** The longest PUBLIC_URL whose webhook addresses fit the service's `webhook_url` limit. */
export const MAX_PUBLIC_URL_LENGTH = MAX_WEBHOOK_URL_LENGTH - webhookUrlFor('', '00000000-0000-0000-0000-000000000000').length;
