/**
 * The emulator's HTTP face on fastify: the REST API as one catch-all under `/api/v10` (routed
 * inside by RestApi's route table), the attachment CDN, the web pages (OAuth2's authorize page),
 * and 404s for everything else.
 */
import type { IncomingMessage } from 'node:http';
import Fastify, { type FastifyError, type FastifyInstance, type FastifyReply, type FastifyRequest } from 'fastify';
import type { Logger } from 'pino';
import type { EmulatorClock } from './clock.js';
import { DiscordErrors } from './errors.js';
import { BodyTooLargeError, parseBody, readBody, type ParsedBody } from './http-body.js';
import type { RestAnswer, RestApi } from './rest-api.js';
import type { CdnFile } from './store/state.js';

declare module 'fastify' {
  interface FastifyRequest {
    /** Emulator clock time of arrival. */
    emulatorArrivedAt: number;
    /** The X-RateLimit-* headers of the request's bucket; the onSend hook puts them on its answer. */
    emulatorRateLimitHeaders: Record<string, string> | null;
  }
}

export interface EmulatorHttpOptions {
  rest: RestApi;
  /** An uploaded file by its URL path, `/attachments/{channel}/{id}/{filename}`; each call is one request to the CDN. */
  attachment: (method: string, path: string) => CdnFile | undefined;
  clock: EmulatorClock;
  /** The versioned API's path, `/api/v10`. */
  apiBase: string;
  /** Longer bodies are refused with 413. */
  bodyLimit: number;
  logger: Logger;
  /** Adds the web pages outside the API (the OAuth2 authorize page). */
  registerWeb: (app: FastifyInstance) => void;
}

const URL_BASE = 'http://emulator.invalid';

/** Errors fastify raises before reading a body that Discord would read: a content type fastify refuses, QUERY without one. */
const UNREAD_BODY_ERRORS = new Set(['FST_ERR_CTP_INVALID_MEDIA_TYPE', 'FST_ERR_ROUTE_MISSING_CONTENT_TYPE']);

/** The emulator's fastify app, not yet listening; the gateway takes the upgrades of `app.server`. */
export function createEmulatorHttp(options: EmulatorHttpOptions): FastifyInstance {
  const { rest, clock, logger, apiBase, bodyLimit } = options;
  const app = Fastify({
    logger: false,
    exposeHeadRoutes: false,
    // node's default rather than fastify's 72 s: idle client connections close as they would on a plain node server.
    keepAliveTimeout: 5000,
    bodyLimit,
    rewriteUrl: (request) => routableUrl(request, apiBase),
  });
  app.decorateRequest('emulatorArrivedAt', 0);
  app.decorateRequest('emulatorRateLimitHeaders', null);
  // Every body is read as bytes and parsed by http-body.ts (JSON, multipart, or kept as "other" for the findings).
  app.removeAllContentTypeParsers();
  app.addContentTypeParser('*', { parseAs: 'buffer' }, (request: FastifyRequest, raw: Buffer) =>
    parseBody(raw, request.headers['content-type']),
  );
  app.addHook('onRequest', (request, _reply, done) => {
    request.emulatorArrivedAt = clock.now();
    done();
  });
  app.addHook('onSend', putRateLimitHeaders);

  async function serveApi(request: FastifyRequest, reply: FastifyReply): Promise<FastifyReply> {
    try {
      const url = new URL(request.originalUrl, URL_BASE);
      const outside = rest.outsideApi(request.method, url.pathname);
      if (outside) return sendAnswer(reply, outside);
      let body = request.body as ParsedBody | undefined;
      if (body === undefined) {
        // A body fastify leaves unread (a GET's, or of a content type it refuses) is read here, for the findings.
        try {
          body = await parseBody(await readBody(request.raw, bodyLimit), request.headers['content-type']);
        } catch (error) {
          return sendAnswer(reply, bodyRefused(error));
        }
      }
      const answer = await rest.answer({
        method: request.method,
        url,
        authorization: request.headers.authorization,
        body,
        arrivedAt: request.emulatorArrivedAt,
      });
      request.emulatorRateLimitHeaders = answer.rateLimitHeaders ?? null;
      return sendAnswer(reply, answer);
    } catch (error) {
      logger.error({ err: error, method: request.method }, 'discord emulator request failed');
      return reply.code(500).send();
    }
  }

  function serveAttachment(request: FastifyRequest, reply: FastifyReply): FastifyReply {
    const file = options.attachment(request.method, new URL(request.originalUrl, URL_BASE).pathname);
    if (!file) return sendAnswer(reply, { status: 404, body: DiscordErrors.notFound().toBody() });
    if (file.redirectTo !== undefined) return reply.code(302).header('location', file.redirectTo).send();
    return reply.code(200).header('content-type', file.contentType).send(file.data);
  }

  app.route({ method: ['GET', 'HEAD'], url: '/attachments/*', handler: serveAttachment });
  options.registerWeb(app);
  app.all(apiBase, serveApi);
  app.all(`${apiBase}/*`, serveApi);
  // The rest is RestApi's 404 (a finding under /api/); a method fastify does not route still reaches the REST API.
  app.setNotFoundHandler(serveApi);
  // serveApi answers its own failures: what arrives here failed before it, while the body was read.
  app.setErrorHandler((error: FastifyError, request, reply) => {
    if (UNREAD_BODY_ERRORS.has(error.code)) return serveApi(request, reply);
    const pathname = new URL(request.originalUrl, URL_BASE).pathname;
    return sendAnswer(reply, rest.outsideApi(request.method, pathname) ?? bodyRefused(error));
  });
  return app;
}

function sendAnswer(reply: FastifyReply, answer: RestAnswer): FastifyReply {
  reply.code(answer.status);
  if (answer.headers) reply.headers(answer.headers);
  if (answer.status === 204 || answer.body === undefined) return reply.send();
  // A Buffer, so that fastify adds no charset: `application/json`, as Discord sends it.
  return reply.header('content-type', 'application/json').send(Buffer.from(JSON.stringify(answer.body)));
}

/** 413 for a body over the limit; anything else that could not be read is invalid JSON to Discord. */
function bodyRefused(error: unknown): RestAnswer {
  const tooLarge = error instanceof BodyTooLargeError || (error as Partial<FastifyError> | null)?.statusCode === 413;
  const refusal = tooLarge ? DiscordErrors.entityTooLarge() : DiscordErrors.invalidJson();
  return { status: refusal.status, body: refusal.toBody() };
}

/** Every answer to a counted request carries its bucket's headers; the answer's own (a 429's) win. */
function putRateLimitHeaders(request: FastifyRequest, reply: FastifyReply, payload: unknown, done: (error: null, payload: unknown) => void): void {
  const headers = request.emulatorRateLimitHeaders;
  if (headers !== null) {
    for (const name in headers) {
      if (!reply.hasHeader(name)) reply.header(name, headers[name]);
    }
  }
  done(null, payload);
}

/**
 * The path fastify routes on: the request's own when plain, else the path as the REST API reads
 * it (WHATWG URL: dots resolved, absolute form); one the router cannot decode goes to the API.
 */
function routableUrl(request: IncomingMessage, apiBase: string): string {
  const url = request.url ?? '/';
  if (url.startsWith('/') && !url.includes('%') && !url.includes('/.')) return url;
  const { pathname } = new URL(url, URL_BASE);
  try {
    decodeURI(pathname);
    return pathname;
  } catch {
    return apiBase;
  }
}
