/** Webhook delivery as the spec describes it: best effort, retried with exponential backoff. */
import { randomUUID } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import type { Logger } from 'pino';
import { signWebhookBody, WEBHOOK_HEADERS, type SignatureEncoding, type SignatureScheme } from './contract.js';

export interface WebhookRetry {
  /** Attempts in all, the first included. @defaultValue 4 */
  attempts: number;
  /** Wait before the second attempt; doubled before each next one. @defaultValue 500 */
  baseMs: number;
}

export const DEFAULT_WEBHOOK_RETRY: Readonly<WebhookRetry> = Object.freeze({ attempts: 4, baseMs: 500 });

/** One POST to a webhook receiver and how it ended. */
export interface WebhookAttempt {
  taskId: string;
  /** The event's id (X-Webhook-Id in the timestamped scheme); the same across retries and duplicates. */
  eventId: string;
  /** 1 for the first try of a delivery, 2 for its first retry, ... */
  attempt: number;
  /** 1, or 2 for the second copy of a `webhook-twice` delivery. */
  copy: number;
  /** `song.completed`, `song.failed`, or `song.streaming` for an intermediate callback. */
  event: string;
  /** Signed with a wrong secret (the `bad-signature` fault): a receiver must refuse it. */
  badSignature: boolean;
  url: string;
  headers: Record<string, string>;
  body: string;
  at: number;
  /** The receiver's status; undefined when it could not be reached. */
  status: number | undefined;
  error: string | undefined;
}

export interface Delivery {
  taskId: string;
  url: string;
  secret: string | undefined;
  /** The body, exactly as sent. */
  payload: Record<string, unknown>;
  /** `song.completed` or `song.failed`. */
  event: string;
  copies: number;
  lateMs: number;
  badSignature: boolean;
}

export interface DeliveryContext {
  scheme: SignatureScheme;
  /** How the spec scheme writes the digest. */
  encoding: SignatureEncoding;
  retry: WebhookRetry;
  timeoutMs: number;
  signal: AbortSignal;
  record: (attempt: WebhookAttempt) => void;
  log: Logger;
}

/** Delivers one event (once, or twice for the `webhook-twice` fault). Never throws. */
export async function deliverWebhook(delivery: Delivery, context: DeliveryContext): Promise<void> {
  const eventId = randomUUID();
  try {
    if (delivery.lateMs > 0) await sleep(delivery.lateMs, undefined, { signal: context.signal });
    for (let copy = 1; copy <= delivery.copies; copy += 1) {
      await deliverWithRetries(delivery, context, eventId, copy);
    }
  } catch (error) {
    if (!context.signal.aborted) context.log.warn({ err: error, taskId: delivery.taskId }, 'webhook delivery crashed');
  }
}

async function deliverWithRetries(delivery: Delivery, context: DeliveryContext, eventId: string, copy: number): Promise<void> {
  const body = JSON.stringify(delivery.payload);
  for (let attempt = 1; attempt <= context.retry.attempts; attempt += 1) {
    if (context.signal.aborted) return;
    const headers = headersFor(delivery, context, body, eventId);
    let status: number | undefined;
    let error: string | undefined;
    try {
      const response = await fetch(delivery.url, {
        method: 'POST',
        headers,
        body,
        signal: AbortSignal.any([context.signal, AbortSignal.timeout(context.timeoutMs)]),
      });
      status = response.status;
      await response.arrayBuffer().catch(() => undefined);
    } catch (cause) {
      if (context.signal.aborted) return;
      error = cause instanceof Error ? (cause.cause instanceof Error ? cause.cause.message : cause.message) : String(cause);
    }
    context.record({
      taskId: delivery.taskId,
      eventId,
      attempt,
      copy,
      event: delivery.event,
      badSignature: delivery.badSignature && delivery.secret !== undefined,
      url: delivery.url,
      headers,
      body,
      at: Date.now(),
      status,
      error,
    });
    if (status !== undefined && status >= 200 && status < 300) return;
    context.log.info({ taskId: delivery.taskId, attempt, status, error }, 'webhook not accepted');
    if (attempt < context.retry.attempts) {
      await sleep(context.retry.baseMs * 2 ** (attempt - 1), undefined, { signal: context.signal });
    }
  }
}

function headersFor(delivery: Delivery, context: DeliveryContext, body: string, eventId: string): Record<string, string> {
  const { scheme, encoding } = context;
  const headers: Record<string, string> = { 'content-type': 'application/json', 'user-agent': 'music-api-sim' };
  if (scheme === 'timestamped') {
    headers[WEBHOOK_HEADERS.id] = eventId;
    headers[WEBHOOK_HEADERS.idempotencyKey] = eventId;
    headers[WEBHOOK_HEADERS.event] = delivery.event;
  }
  if (delivery.secret !== undefined) {
    const secret = delivery.badSignature ? `${delivery.secret}-wrong` : delivery.secret;
    Object.assign(headers, signWebhookBody(body, secret, scheme, undefined, encoding));
  } else if (scheme === 'timestamped') {
    headers[WEBHOOK_HEADERS.timestamp] = String(Math.floor(Date.now() / 1000));
  }
  return headers;
}
