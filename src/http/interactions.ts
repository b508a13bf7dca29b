/**
 * `POST /interactions`: Discord's Interactions Endpoint URL (`INTERACTIONS=http`). A request
 * without a valid Ed25519 signature (`X-Signature-Ed25519` over `X-Signature-Timestamp` + raw
 * body), or signed more than five minutes from now, gets 401 and nothing else. PING gets PONG;
 * every other interaction goes to the router, and its first answer is the response.
 */
import { createPublicKey, verify, type KeyObject } from 'node:crypto';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { InteractionResponseType, InteractionType, type APIInteraction } from 'discord-api-types/v10';
import type { HttpInteractionReceiver } from '../discord/http-interactions.js';
import type { Logger } from '../logger.js';
import type { RefusalLog } from './refusal-log.js';

export const INTERACTIONS_ROUTE = '/interactions';
/**
 * Discord publishes no maximum. The largest genuine payload is a modal of five long fields, or
 * a component on a message of full embeds, well under this; one refused would lose a command.
 */
export const INTERACTIONS_BODY_LIMIT = 1024 * 1024;
/** How far a signature's timestamp may be from now, either way, in seconds. */
export const SIGNATURE_MAX_SKEW_SECONDS = 300;

export interface InteractionsRouteOptions {
  /** The application's public key: 64 hexadecimal characters (32 bytes). */
  readonly publicKey: string;
  readonly receiver: HttpInteractionReceiver;
  readonly logger: Logger;
  /** Where refused requests are logged (see refusal-log.ts). */
  readonly logRefusal: RefusalLog;
  /** Milliseconds since the epoch; tests move it. */
  readonly now?: () => number;
}

/** The raw 32-byte Ed25519 key as Node's crypto takes it. */
export function ed25519PublicKey(hex: string): KeyObject {
  if (!/^[0-9a-fA-F]{64}$/.test(hex)) throw new Error('an Ed25519 public key is 64 hexadecimal characters');
  return createPublicKey({ key: { kty: 'OKP', crv: 'Ed25519', x: Buffer.from(hex, 'hex').toString('base64url') }, format: 'jwk' });
}

export type SignatureVerdict = { ok: true } | { ok: false; reason: 'missing' | 'malformed' | 'stale' | 'mismatch' };

/** Checks Discord's signature over `timestamp + body`. Never throws. */
export function verifyInteractionSignature(input: {
  key: KeyObject;
  signature: string | string[] | undefined;
  timestamp: string | string[] | undefined;
  rawBody: Buffer;
  nowMs: number;
}): SignatureVerdict {
  const { signature, timestamp } = input;
  if (typeof signature !== 'string' || typeof timestamp !== 'string') return { ok: false, reason: 'missing' };
  if (!/^[0-9a-fA-F]{128}$/.test(signature) || !/^\d{1,12}$/.test(timestamp)) return { ok: false, reason: 'malformed' };
  const signed = verify(null, Buffer.concat([Buffer.from(timestamp, 'utf8'), input.rawBody]), input.key, Buffer.from(signature, 'hex'));
  if (!signed) return { ok: false, reason: 'mismatch' };
  // Checked after the signature, so that a stale answer says nothing to someone without the key.
  if (Math.abs(input.nowMs / 1000 - Number(timestamp)) > SIGNATURE_MAX_SKEW_SECONDS) return { ok: false, reason: 'stale' };
  return { ok: true };
}

/**
 * The raw body of a request Discord signed with `key`, or undefined once the request has been
 * answered 401 and logged as `what` refused (interactions and webhook events are signed alike).
 */
export function signedBody(
  request: FastifyRequest,
  reply: FastifyReply,
  options: { key: KeyObject; nowMs: number; logRefusal: RefusalLog; what: string },
): Buffer | undefined {
  const rawBody = Buffer.isBuffer(request.body) ? request.body : Buffer.alloc(0);
  const verdict = verifyInteractionSignature({
    key: options.key,
    signature: request.headers['x-signature-ed25519'],
    timestamp: request.headers['x-signature-timestamp'],
    rawBody,
    nowMs: options.nowMs,
  });
  if (verdict.ok) return rawBody;
  options.logRefusal({ reason: `${options.what} ${verdict.reason}` }, `${options.what} refused: bad signature`);
  void reply.code(401).send({ error: 'invalid request signature' });
  return undefined;
}

function isInteraction(value: unknown): value is APIInteraction {
  if (typeof value !== 'object' || value === null) return false;
  const candidate = value as Record<string, unknown>;
  return typeof candidate.id === 'string' && typeof candidate.token === 'string' && typeof candidate.type === 'number' && typeof candidate.application_id === 'string';
}

export function registerInteractionsRoute(app: FastifyInstance, options: InteractionsRouteOptions): void {
  const key = ed25519PublicKey(options.publicKey);
  const now = options.now ?? Date.now;

  app.post(INTERACTIONS_ROUTE, { bodyLimit: INTERACTIONS_BODY_LIMIT }, async (request, reply) => {
    const rawBody = signedBody(request, reply, { key, nowMs: now(), logRefusal: options.logRefusal, what: 'interaction' });
    if (!rawBody) return reply;

    let payload: unknown;
    try {
      payload = JSON.parse(rawBody.toString('utf8'));
    } catch {
      return reply.code(400).send({ error: 'malformed body' });
    }
    if (!isInteraction(payload)) return reply.code(400).send({ error: 'not an interaction' });
    if (payload.type === InteractionType.Ping) return reply.code(200).send({ type: InteractionResponseType.Pong });

    const answer = await options.receiver.receive(payload);
    if (!answer) {
      options.logger.warn({ interactionId: payload.id, interactionType: payload.type }, 'interaction handled without an answer');
      return reply.code(500).send({ error: 'no answer' });
    }
    // The handler goes on (edits, follow-ups) once Discord has the answer, not before.
    reply.raw.once('finish', answer.sent);
    reply.raw.once('close', answer.sent);
    return reply.code(200).header('content-type', 'application/json').send(JSON.stringify(answer.body));
  });
}
