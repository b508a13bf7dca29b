/**
 * Reads a file from an address someone else gave the bot (a member's attachment, a song the
 * music service made) without letting that address decide how much the bot reads or where it
 * goes: a byte cap counted while the body arrives, a deadline, and redirects refused or kept
 * to the same scheme.
 */

export interface DownloadLimits {
  /** More than this many bytes, declared or received, and the download stops. */
  readonly maxBytes: number;
  readonly timeoutMs: number;
  /** `refuse`: a redirect is not followed. `same-scheme`: followed while it stays on the first address's scheme (at most five). */
  readonly redirects: 'refuse' | 'same-scheme';
}

export type DownloadFailure = 'too_large' | 'redirect' | 'status' | 'unreachable';

/** Why a download stopped: a body over the cap, a redirect not taken, an answer other than 2xx, or no answer in time. */
export class DownloadError extends Error {
  constructor(
    readonly reason: DownloadFailure,
    message: string,
  ) {
    super(message);
    this.name = 'DownloadError';
  }
}

export interface Downloaded {
  readonly data: Buffer;
  readonly contentType: string | null;
}

const MAX_REDIRECTS = 5;

/**
 * GETs `url` within `limits`.
 *
 * @throws DownloadError; the connection is closed before it returns.
 */
export async function downloadCapped(url: string, limits: DownloadLimits, fetcher: typeof globalThis.fetch = globalThis.fetch): Promise<Downloaded> {
  const stop = new AbortController();
  const timer = setTimeout(() => stop.abort(), limits.timeoutMs);
  try {
    const response = await followRedirects(url, limits.redirects, fetcher, stop.signal);
    if (!response.ok) {
      await response.body?.cancel().catch(() => {});
      throw new DownloadError('status', `answered ${response.status}`);
    }
    const declared = Number(response.headers.get('content-length') ?? Number.NaN);
    if (declared > limits.maxBytes) throw new DownloadError('too_large', `declared ${declared} bytes, over ${limits.maxBytes}`);
    if (!response.body) return { data: Buffer.alloc(0), contentType: response.headers.get('content-type') };
    const chunks: Uint8Array[] = [];
    let total = 0;
    try {
      for await (const chunk of response.body) {
        total += chunk.byteLength;
        if (total > limits.maxBytes) throw new DownloadError('too_large', `over ${limits.maxBytes} bytes while reading`);
        chunks.push(chunk);
      }
    } catch (error) {
      if (error instanceof DownloadError) throw error;
      throw new DownloadError('unreachable', `the body broke off: ${describe(error)}`);
    }
    return { data: Buffer.concat(chunks), contentType: response.headers.get('content-type') };
  } finally {
    clearTimeout(timer);
    // Whatever is left unread is not wanted: the connection closes now, not when the server finishes.
    stop.abort();
  }
}

/**
 * The first answer to a GET of `url` that is not a redirect, whatever its status, following
 * only what `redirects` allows. `headers` go with every request (a `Range`, say).
 *
 * @throws DownloadError: `redirect` for one not taken, `unreachable` for no answer.
 */
export async function followRedirects(
  url: string,
  redirects: DownloadLimits['redirects'],
  fetcher: typeof globalThis.fetch,
  signal: AbortSignal,
  headers: Record<string, string> = {},
): Promise<Response> {
  let address = new URL(url);
  for (let hop = 0; ; hop += 1) {
    if (address.protocol !== 'http:' && address.protocol !== 'https:') throw new DownloadError('redirect', `not an http(s) address: ${address.protocol}`);
    let response: Response;
    try {
      response = await fetcher(address, { redirect: 'manual', signal, headers });
    } catch (error) {
      throw new DownloadError('unreachable', describe(error));
    }
    if (response.status >= 300 && response.status < 400) {
      await response.body?.cancel().catch(() => {});
      const location = response.headers.get('location');
      const next = location === null ? undefined : parseUrl(location, address);
      if (redirects === 'refuse' || !next || next.protocol !== address.protocol || hop >= MAX_REDIRECTS) {
        throw new DownloadError('redirect', `answered ${response.status}, not followed`);
      }
      address = next;
      continue;
    }
    return response;
  }
}

function parseUrl(value: string, base: URL): URL | undefined {
  try {
    return new URL(value, base);
  } catch {
    return undefined;
  }
}

function describe(error: unknown): string {
  if (!(error instanceof Error)) return String(error);
  const cause = error.cause instanceof Error ? `: ${error.cause.message}` : '';
  return `${error.name === 'AbortError' ? 'timed out' : error.message}${cause}`;
}
