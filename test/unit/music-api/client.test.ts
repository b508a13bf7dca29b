/**
 * The client's reading of answers the simulator never gives, through a stand-in fetch.
 */
import { describe, expect, it } from 'vitest';
import { MusicApiClient } from '../../../src/music-api/client.js';
import { MusicApiError } from '../../../src/music-api/errors.js';
import { english } from '../../../src/i18n/index.js';

const apiKey = 'sk-unit-key-0001';

interface Sent {
  url: string;
  init: RequestInit;
}

function clientAnswering(answer: (sent: Sent) => Response | Promise<Response>, baseUrl = 'https://api.example.com') {
  const sent: Sent[] = [];
  const fakeFetch = (async (input: string | URL | Request, init?: RequestInit) => {
    const call = { url: String(input), init: init ?? {} };
    sent.push(call);
    return answer(call);
  }) as typeof fetch;
  return { client: new MusicApiClient({ baseUrl, apiKey, fetch: fakeFetch }), sent };
}

function json(status: number, body: unknown, headers: Record<string, string> = {}): Response {
  return new Response(typeof body === 'string' ? body : JSON.stringify(body), {
    status,
    headers: { 'content-type': 'application/json', ...headers },
  });
}

async function failure(promise: Promise<unknown>): Promise<MusicApiError> {
  const error = await promise.then(
    () => undefined,
    (caught: unknown) => caught,
  );
  expect(error).toBeInstanceOf(MusicApiError);
  return error as MusicApiError;
}

describe('requests', () => {
  it('sends the bearer key and a JSON body to the base URL, whatever its trailing slash', async () => {
    const { client, sent } = clientAnswering(() => json(200, { message: 'success', task_id: 't-1' }), 'https://api.example.com/prefix/');
    await expect(client.createLyrics({ prompt: 'rain' })).resolves.toEqual({
      taskId: 't-1',
      raw: { message: 'success', task_id: 't-1' },
    });
    expect(sent[0]?.url).toBe('https://api.example.com/prefix/api/v1/producer/lyrics-create');
    expect(sent[0]?.init.method).toBe('POST');
    expect(sent[0]?.init.headers).toMatchObject({ authorization: `Bearer ${apiKey}`, 'content-type': 'application/json' });
    expect(JSON.parse(String(sent[0]?.init.body))).toEqual({ prompt: 'rain' });
  });

  it('escapes a task id in the polling path', async () => {
    const { client, sent } = clientAnswering(() => json(200, { code: 200, message: 'success', data: [], status: 'PENDING' }));
    await client.getProducerTask('a/b?c');
    expect(sent[0]?.url).toBe('https://api.example.com/api/v1/producer/task/a%2Fb%3Fc');
  });

  it('reads credits written as strings and a missing extra_credits', async () => {
    const { client } = clientAnswering(() => json(200, { credits: '50', plan: 'pro' }));
    await expect(client.getCredits()).resolves.toEqual({ credits: 50, extraCredits: 0, raw: { credits: 50, plan: 'pro' } });
  });
});

describe('answers the simulator does not give', () => {
  it('a 2xx create whose body cannot be read may have created a task', async () => {
    const { client } = clientAnswering(() => new Response('<html>ok</html>', { status: 200 }));
    const error = await failure(client.createSong({ sound: 'x' }));
    expect(error).toMatchObject({ kind: 'bad_response', status: 200, maybeAccepted: true, retryable: false });
    expect(error.detail).toContain('<html>');
  });

  it('a 2xx create carrying an error code created nothing', async () => {
    const { client } = clientAnswering(() => json(200, { code: 402, type: 'insufficient_credits', message: 'no credits' }));
    const error = await failure(client.createSong({ sound: 'x' }));
    expect(error).toMatchObject({ kind: 'insufficient_credits', status: 402, maybeAccepted: false });
  });

  it('a create answered 500, 503, 504 or another 5xx but 502 may have made a task: never retried', async () => {
    for (const status of [500, 503, 504, 507, 599]) {
      const { client } = clientAnswering(() => json(status, { type: 'internal_error' }));
      const error = await failure(client.createSong({ sound: 'x' }));
      expect(error, String(status)).toMatchObject({ status, maybeAccepted: true, retryable: false });
      expect(english.text(error.userText)).toMatch(/may still be processed/);
    }
  });

  it('a create answered 429 or 502 made nothing: retried', async () => {
    for (const [status, type] of [
      [429, 'rate_limited'],
      [502, 'upstream_error'],
    ] as const) {
      const { client } = clientAnswering(() => json(status, { type }));
      expect(await failure(client.createSong({ sound: 'x' })), String(status)).toMatchObject({ status, maybeAccepted: false, retryable: true });
    }
  });

  it('a 200 whose body carries code 500 may have made a task; code 502 made none', async () => {
    const uncertain = clientAnswering(() => json(200, { code: 500, type: 'internal_error', message: 'oops' }));
    expect(await failure(uncertain.client.createSong({ sound: 'x' }))).toMatchObject({ status: 500, maybeAccepted: true, retryable: false });
    const busy = clientAnswering(() => json(200, { code: 502, type: 'upstream_error' }));
    expect(await failure(busy.client.createSong({ sound: 'x' }))).toMatchObject({ status: 502, maybeAccepted: false, retryable: true });
  });

  it("a 502 without the spec's upstream_error body may have made a task: a proxy's page, another type, no body", async () => {
    const answers = [
      () => new Response('<html><head><title>502 Bad Gateway</title></head></html>', { status: 502, headers: { 'content-type': 'text/html' } }),
      () => json(502, { type: 'bad_gateway', message: 'origin unreachable' }),
      () => json(502, { message: 'upstream_error' }),
      () => new Response(null, { status: 502 }),
    ];
    for (const answer of answers) {
      const { client } = clientAnswering(answer);
      const error = await failure(client.createSong({ sound: 'x' }));
      expect(error, error.detail).toMatchObject({ status: 502, maybeAccepted: true, retryable: false });
    }
  });

  it('a 502 whose body is cut off on a create is uncertain: its type never arrived', async () => {
    const { client } = clientAnswering(
      () =>
        new Response(
          new ReadableStream({
            start(controller) {
              controller.enqueue(new TextEncoder().encode('{"type":"upstream_'));
              controller.error(new Error('terminated'));
            },
          }),
          { status: 502 },
        ),
    );
    expect(await failure(client.createSong({ sound: 'x' }))).toMatchObject({ status: 502, maybeAccepted: true, retryable: false });
  });

  it('a 200 carrying code 502 without the upstream_error type is uncertain', async () => {
    const { client } = clientAnswering(() => json(200, { code: 502, message: 'bad gateway' }));
    expect(await failure(client.createSong({ sound: 'x' }))).toMatchObject({ status: 502, maybeAccepted: true, retryable: false });
  });

  it('a 5xx poll is retried: a GET makes nothing', async () => {
    const { client } = clientAnswering(() => json(500, { type: 'internal_error' }));
    expect(await failure(client.getProducerTask('t-1'))).toMatchObject({ status: 500, maybeAccepted: false, retryable: true });
  });

  it('a 504 whose body is cut off on a create is uncertain too', async () => {
    const { client } = clientAnswering(
      () =>
        new Response(
          new ReadableStream({
            start(controller) {
              controller.enqueue(new TextEncoder().encode('{"type":'));
              controller.error(new Error('terminated'));
            },
          }),
          { status: 504 },
        ),
    );
    expect(await failure(client.createSong({ sound: 'x' }))).toMatchObject({ status: 504, maybeAccepted: true, retryable: false });
  });

  it('a poll without status is a bad response worth retrying', async () => {
    const { client } = clientAnswering(() => json(200, { code: 200, data: [] }));
    const error = await failure(client.getProducerTask('t-1'));
    expect(error).toMatchObject({ kind: 'bad_response', maybeAccepted: false, retryable: true });
  });

  it('an older 403 about credits, with its text in `error`', async () => {
    const { client } = clientAnswering(() => json(403, { error: 'Insufficient credits for this request' }));
    const error = await failure(client.createSong({ sound: 'x' }));
    expect(error).toMatchObject({ kind: 'insufficient_credits', status: 403, type: undefined });
    expect(english.text(error.userText)).not.toContain('Insufficient credits for this request');
  });

  it('a 429 with Retry-After', async () => {
    const { client } = clientAnswering(() => json(429, { type: 'rate_limited' }, { 'retry-after': '3' }));
    expect(await failure(client.createSong({ sound: 'x' }))).toMatchObject({ kind: 'rate_limited', retryAfterMs: 3000 });
  });

  it('an error body echoing the key has it blanked in detail', async () => {
    const { client } = clientAnswering(() => json(401, { type: 'unauthorized', message: `bad token Bearer ${apiKey}` }));
    const error = await failure(client.getCredits());
    expect(error.detail).toContain('[redacted]');
    expect(error.detail).not.toContain(apiKey);
  });

  it('a connection cut after sending a create may have created a task', async () => {
    const { client } = clientAnswering(() => {
      throw new TypeError('fetch failed', { cause: Object.assign(new Error('socket hang up'), { code: 'ECONNRESET' }) });
    });
    const error = await failure(client.createSong({ sound: 'x' }));
    expect(error).toMatchObject({ kind: 'network', maybeAccepted: true, retryable: false, detail: 'ECONNRESET' });
    expect((error.cause as Error & { code?: string }).code).toBe('ECONNRESET');
  });

  it('a call cancelled by its caller', async () => {
    const { client } = clientAnswering(
      ({ init }) =>
        new Promise<Response>((_resolve, reject) => {
          init.signal?.addEventListener('abort', () => reject(new DOMException('aborted', 'AbortError')));
        }),
    );
    const controller = new AbortController();
    const pending = client.getCredits({ signal: controller.signal });
    controller.abort();
    expect(await failure(pending)).toMatchObject({ kind: 'aborted', retryable: false });
  });
});
