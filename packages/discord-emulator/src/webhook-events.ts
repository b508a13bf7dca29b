/**
 * Webhook events, as Discord sends them to an app's Webhook Events URL: saved only after a
 * signed PING (type 0) is answered 204 with an empty body; each event POSTed signed like an
 * interaction (`X-Signature-Ed25519` over `X-Signature-Timestamp` + body), and sent again with
 * exponential backoff until a 2xx arrives within 3 s, or the retry window closes.
 */

/** How long Discord waits for the answer to one POST. */
export const WEBHOOK_EVENT_TIMEOUT_MS = 3_000;

export interface WebhookEventRetry {
  /** Wait before the first retry; doubled each time. @defaultValue 500 */
  initialDelayMs?: number;
  /** Longest wait between two tries. @defaultValue 60000 */
  maxDelayMs?: number;
  /** Give up once this long has passed since the first try (Discord: up to 10 minutes). @defaultValue 600000 */
  giveUpAfterMs?: number;
}

/** One POST of a webhook event and how it went. */
export interface WebhookEventAttempt {
  /** Wall-clock time of the POST (ms since epoch). */
  at: number;
  /** The event's `type`, e.g. ENTITLEMENT_CREATE. */
  event: string;
  /** The entitlement (the event's `data.id`). */
  dataId: string | undefined;
  /** 1 for the first try. */
  attempt: number;
  /** The endpoint's status; null when it did not answer within 3 s or could not be reached. */
  status: number | null;
  ok: boolean;
  /** Whether this was the last try (acknowledged, or given up). */
  final: boolean;
}

export interface WebhookEventsOptions {
  readonly applicationId: string;
  /** Signature headers for a body, with the application's key. */
  readonly sign: (body: string) => Record<string, string>;
  readonly retry?: WebhookEventRetry;
  /** Each POST, as it settles. */
  readonly onAttempt: (attempt: WebhookEventAttempt) => void;
}

export class WebhookEventDelivery {
  readonly #options: WebhookEventsOptions;
  #url: string | undefined;
  /** Event types the app subscribed to. */
  #events = new Set<string>();
  readonly #timers = new Set<NodeJS.Timeout>();
  #closed = false;

  constructor(options: WebhookEventsOptions) {
    this.#options = options;
  }

  get url(): string | undefined {
    return this.#url;
  }

  /** Whether events of this type go to the URL. */
  subscribed(event: string): boolean {
    return this.#url !== undefined && this.#events.has(event);
  }

  /**
   * Saves the URL after a signed PING answered 204 with an empty body (else throws, saving
   * nothing). `null` removes it.
   */
  async setUrl(url: string | null, events: readonly string[]): Promise<void> {
    if (url === null) {
      this.#url = undefined;
      this.#events = new Set();
      return;
    }
    const ping = JSON.stringify({ version: 1, application_id: this.#options.applicationId, type: 0 });
    let status: number;
    let text: string;
    try {
      const response = await this.#post(url, ping);
      status = response.status;
      text = await response.text();
    } catch (error) {
      throw new Error(`webhook events URL ${url} did not answer the PING: ${(error as Error).message}`);
    }
    if (status !== 204 || text !== '') {
      throw new Error(`webhook events URL ${url} answered the PING with ${status}${text ? ` and a body` : ''}, not 204 with an empty body`);
    }
    this.#url = url;
    this.#events = new Set(events);
  }

  /** POSTs the event (type 1 payload) and retries it until acknowledged; no-op when not subscribed. */
  send(event: string, data: { id?: string }, timestamp: string): void {
    const url = this.#url;
    if (!url || !this.#events.has(event)) return;
    const body = JSON.stringify({ version: 1, application_id: this.#options.applicationId, type: 1, event: { type: event, timestamp, data } });
    const retry = this.#options.retry ?? {};
    const initial = retry.initialDelayMs ?? 500;
    const max = retry.maxDelayMs ?? 60_000;
    const giveUpAt = Date.now() + (retry.giveUpAfterMs ?? 600_000);
    const attempt = async (n: number): Promise<void> => {
      if (this.#closed) return;
      const at = Date.now();
      let status: number | null = null;
      try {
        const response = await this.#post(url, body);
        status = response.status;
        await response.arrayBuffer().catch(() => undefined);
      } catch {
        status = null;
      }
      const ok = status !== null && status >= 200 && status < 300;
      const delay = Math.min(initial * 2 ** (n - 1), max);
      const final = ok || this.#closed || Date.now() + delay > giveUpAt;
      this.#options.onAttempt({ at, event, dataId: data.id, attempt: n, status, ok, final });
      if (final) return;
      const timer = setTimeout(() => {
        this.#timers.delete(timer);
        void attempt(n + 1);
      }, delay);
      this.#timers.add(timer);
    };
    void attempt(1);
  }

  close(): void {
    this.#closed = true;
    for (const timer of this.#timers) clearTimeout(timer);
    this.#timers.clear();
  }

  async #post(url: string, body: string): Promise<Response> {
    return fetch(url, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'user-agent': 'Discord-Webhook/1.0 (+https://discord.com)', ...this.#options.sign(body) },
      body,
      signal: AbortSignal.timeout(WEBHOOK_EVENT_TIMEOUT_MS),
    });
  }
}
