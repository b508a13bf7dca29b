/**
 * How the client sends its requests: the part of `fetch` it uses, so `globalThis.fetch` (or a
 * test's fake) fits. By default undici's `request`, the HTTP/1.1 client fetch is built on,
 * without its web streams. Why: docs/decisions/first-answer-path.md
 */
import { request, type Dispatcher } from 'undici';

export interface TransportResponse {
  readonly ok: boolean;
  readonly status: number;
  readonly headers: { get(name: string): string | null };
  text(): Promise<string>;
}

export type Transport = (
  url: string,
  init: { method: string; headers: Record<string, string>; body: string | null; signal: AbortSignal },
) => Promise<TransportResponse>;

export const undiciTransport: Transport = async (url, init) => {
  const response = await request(url, {
    method: init.method as Dispatcher.HttpMethod,
    headers: init.headers,
    body: init.body ?? undefined,
    signal: init.signal,
  });
  return {
    ok: response.statusCode >= 200 && response.statusCode < 300,
    status: response.statusCode,
    headers: {
      get(name) {
        const value = response.headers[name.toLowerCase()];
        return value === undefined ? null : Array.isArray(value) ? value.join(', ') : value;
      },
    },
    text: () => response.body.text(),
  };
};
