/**
 * Interactions delivered by HTTP once an app has an Interactions Endpoint URL, as Discord does:
 * POSTed signed with Ed25519 (`X-Signature-Ed25519` over `X-Signature-Timestamp` + body); the
 * response is the first answer, held to a callback's rules (one answer, within 3 s).
 */
import { generateKeyPairSync, sign, type KeyObject } from 'node:crypto';
import type { APIInteraction } from 'discord-api-types/v10';
import { InteractionType } from 'discord-api-types/v10';
import { DiscordHttpError } from './errors.js';

/** How long Discord waits for the response to its POST. */
export const HTTP_RESPONSE_TIMEOUT_MS = 3_000;

/** How long a request that overtook its interaction's response waits for it (see `settled`). */
const OVERTAKE_GRACE_MS = 250;

export interface HttpDeliveryStats {
  /** Interactions POSTed to the endpoint. */
  delivered: number;
  /** Of those, answered with a valid first answer in the response. */
  answered: number;
  /** Answered late, not 200, not an interaction response, or refused by Discord's rules. */
  failed: number;
}

export interface HttpDeliveryOptions {
  readonly applicationId: string;
  /** Applies the response as a callback would (`InteractionRegistry.respond`); throws Discord's error when it breaks a rule. */
  readonly respond: (id: string, token: string, body: unknown) => void;
  /** Told about a response Discord would not take: the member would see "This interaction failed". */
  readonly onFailure: (interaction: APIInteraction, message: string, details: string[]) => void;
}

export class HttpInteractionDelivery {
  readonly #privateKey: KeyObject;
  /** The application's public key, hex: what the app's DISCORD_PUBLIC_KEY must be. */
  readonly publicKey: string;
  readonly stats: HttpDeliveryStats = { delivered: 0, answered: 0, failed: 0 };
  readonly #options: HttpDeliveryOptions;
  #endpoint: string | undefined;
  /** Deliveries whose response has not been applied yet, by interaction token. */
  readonly #pending = new Map<string, Promise<void>>();
  /** Of those, the ones whose response has begun to arrive (status and headers received). */
  readonly #arrived = new Set<string>();

  constructor(options: HttpDeliveryOptions) {
    this.#options = options;
    const { privateKey, publicKey } = generateKeyPairSync('ed25519');
    this.#privateKey = privateKey;
    const jwk = publicKey.export({ format: 'jwk' });
    this.publicKey = Buffer.from(jwk.x ?? '', 'base64url').toString('hex');
  }

  get endpoint(): string | undefined {
    return this.#endpoint;
  }

  /** Signs as Discord does; `timestamp` in seconds. */
  signatureHeaders(body: string, timestamp = Math.floor(Date.now() / 1000)): Record<string, string> {
    const signature = sign(null, Buffer.from(`${timestamp}${body}`, 'utf8'), this.#privateKey).toString('hex');
    return { 'x-signature-ed25519': signature, 'x-signature-timestamp': String(timestamp) };
  }

  /**
   * Saves the Interactions Endpoint URL after Discord's checks: a signed PING must get
   * `{"type": 1}` and a badly signed request 401. Throws, with Discord's reason, when the
   * endpoint fails them. `null` goes back to the gateway.
   */
  async setEndpoint(url: string | null): Promise<void> {
    if (url === null) {
      this.#endpoint = undefined;
      return;
    }
    const ping = JSON.stringify({ id: '0', application_id: this.#options.applicationId, type: InteractionType.Ping, token: 'ping', version: 1 });
    const valid = await this.#post(url, ping, this.signatureHeaders(ping));
    const pong = valid.ok ? await valid.json().catch(() => undefined) : undefined;
    if (!valid.ok || (pong as { type?: unknown } | undefined)?.type !== 1) {
      throw new Error(`interactions endpoint ${url} did not answer a signed PING with {"type": 1} (status ${valid.status})`);
    }
    const forged = await this.#post(url, ping, { ...this.signatureHeaders(ping), 'x-signature-ed25519': '0'.repeat(128) });
    if (forged.status !== 401) throw new Error(`interactions endpoint ${url} answered a badly signed request with ${forged.status}, not 401`);
    this.#endpoint = url;
  }

  /** POSTs the interaction and applies the response as its first answer. */
  deliver(interaction: APIInteraction): void {
    const url = this.#endpoint;
    if (!url) throw new Error('no interactions endpoint');
    this.stats.delivered += 1;
    const delivery = this.#deliver(url, interaction).finally(() => {
      this.#pending.delete(interaction.token);
      this.#arrived.delete(interaction.token);
    });
    this.#pending.set(interaction.token, delivery);
  }

  /**
   * Resolves once the interaction's HTTP response, if it has begun to arrive (or arrives within
   * `OVERTAKE_GRACE_MS`), has been applied; the webhook routes wait on it. Otherwise resolves at
   * once and the interaction counts as unanswered. See docs/decisions/emulator-http-interactions.md.
   */
  async settled(token: string): Promise<void> {
    const pending = this.#pending.get(token);
    if (pending === undefined) return;
    if (!this.#arrived.has(token)) {
      await Promise.race([pending, new Promise((resolve) => setTimeout(resolve, OVERTAKE_GRACE_MS))]);
      if (!this.#arrived.has(token)) return;
    }
    await pending;
  }

  async #deliver(url: string, interaction: APIInteraction): Promise<void> {
    const body = JSON.stringify(interaction);
    const fail = (message: string, details: string[] = []) => {
      this.stats.failed += 1;
      this.#options.onFailure(interaction, message, details);
    };
    let response: Response;
    try {
      response = await this.#post(url, body, this.signatureHeaders(body), HTTP_RESPONSE_TIMEOUT_MS);
    } catch (error) {
      fail(`interaction ${interaction.id}: no response within ${HTTP_RESPONSE_TIMEOUT_MS} ms (${(error as Error).message})`);
      return;
    }
    this.#arrived.add(interaction.token);
    const text = await response.text().catch(() => '');
    if (response.status !== 200) {
      fail(`interaction ${interaction.id}: the endpoint answered ${response.status}`, [text.slice(0, 200)]);
      return;
    }
    let answer: unknown;
    try {
      answer = JSON.parse(text);
    } catch {
      fail(`interaction ${interaction.id}: the response is not JSON`, [text.slice(0, 200)]);
      return;
    }
    try {
      this.#options.respond(interaction.id, interaction.token, answer);
      this.stats.answered += 1;
    } catch (error) {
      const reason = error instanceof DiscordHttpError ? JSON.stringify(error.toBody()) : (error as Error).message;
      fail(`interaction ${interaction.id}: Discord would refuse the response`, [reason]);
    }
  }

  async #post(url: string, body: string, signature: Record<string, string>, timeoutMs = 10_000): Promise<Response> {
    return fetch(url, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'user-agent': 'Discord-Interactions/1.0 (+https://discord.com)', ...signature },
      body,
      signal: AbortSignal.timeout(timeoutMs),
    });
  }
}
