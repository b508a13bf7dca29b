/**
 * The simulator's HTTP face on fastify: its routes, how bodies are read and recorded, and how
 * handlers answer, hang or cut a connection.
 */
import type { ServerResponse } from 'node:http';
import Fastify, { type FastifyInstance, type FastifyReply, type FastifyRequest } from 'fastify';
import type { Logger } from 'pino';
import { handleApiCall, type ApiContext, type ApiRoute } from './api-routes.js';
import { CREATE_OPERATIONS, READ_ROUTES, RETIRED_FAMILIES, type CreateOperationName } from './contract.js';
import { CONTROL_ROUTES, controlNotFound, type ControlContext } from './control-routes.js';
import type { Exchange } from './exchange.js';
import { mediaFor, sendMedia, type MediaLibrary } from './media.js';
import { MODERATION_PATH, type ModerationStandIn } from './moderation.js';
import type { RecordedRequest } from './types.js';

/** Longer bodies are cut here, so they read as invalid JSON. */
const MAX_BODY_BYTES = 1_000_000;

export interface SimHttpOptions {
  apiKey: string;
  api: ApiContext;
  control: ControlContext;
  /** Where every request but the control API's is recorded. */
  requests: RecordedRequest[];
  /** Responses a `hang` fault left open; the owner destroys them on close. */
  hungResponses: Set<ServerResponse>;
  /** The files behind the media links. */
  media: MediaLibrary;
  /** The moderation service's stand-in, and the key it accepts. */
  moderation: { standIn: ModerationStandIn; apiKey: string };
  log: Logger;
}

export function createSimHttp(options: SimHttpOptions): FastifyInstance {
  const { api, control, log } = options;
  const crashed = (error: unknown, reply: FastifyReply) => {
    log.error({ err: error }, 'music-api-sim request crashed');
    if (!reply.sent) sendJson(reply, 500, { type: 'internal_error', message: 'simulator fault' });
  };
  const app = Fastify({
    logger: false,
    exposeHeadRoutes: false,
    // node's default rather than fastify's 72 s: idle client connections close as they would on a plain node server.
    keepAliveTimeout: 5000,
    routerOptions: { maxParamLength: 10_000 },
    bodyLimit: 64 * MAX_BODY_BYTES,
    frameworkErrors: (error, _request, reply) => crashed(error, reply),
  });
  // Every body is read as text and parsed here, whatever its content type, so that a body that
  // is not JSON is refused by the route and recorded as sent.
  app.removeAllContentTypeParsers();
  app.addContentTypeParser('*', { parseAs: 'string' }, (_request, body, done) => done(null, body));
  app.setErrorHandler((error, _request, reply) => crashed(error, reply));

  /** An exchange over fastify's reply; `record` gets the status answered. */
  function exchangeFor(request: FastifyRequest, reply: FastifyReply, record?: RecordedRequest): Exchange {
    return {
      method: request.method,
      send(status, body) {
        if (record !== undefined) record.status = status;
        if (body === undefined) void reply.code(status).send();
        else sendJson(reply, status, body);
      },
      sendText(status, contentType, text) {
        if (record !== undefined) record.status = status;
        void reply.code(status).header('content-type', contentType).send(Buffer.from(text));
      },
      hang() {
        reply.hijack();
        const response = reply.raw;
        options.hungResponses.add(response);
        response.on('close', () => options.hungResponses.delete(response));
      },
      reset() {
        reply.hijack();
        request.raw.socket.destroy();
      },
    };
  }

  function recordOf(request: FastifyRequest, apiKey = options.apiKey): { record: RecordedRequest; validJson: boolean } {
    const url = new URL(request.url, 'http://sim.invalid');
    const text = textOf(request.body);
    const parsed = parseJson(text);
    const { authorization, ...headers } = request.headers;
    const record: RecordedRequest = {
      method: request.method,
      path: url.pathname,
      query: url.search,
      headers,
      authorized: authorization === `Bearer ${apiKey}`,
      body: parsed.ok ? parsed.value : text,
      at: Date.now(),
      status: undefined,
    };
    options.requests.push(record);
    return { record, validJson: parsed.ok };
  }

  function serveApi(request: FastifyRequest, reply: FastifyReply, route: ApiRoute): void {
    const { record, validJson } = recordOf(request);
    const exchange = exchangeFor(request, reply, record);
    if (!record.path.startsWith('/api/')) {
      exchange.send(404, { type: 'not_found', message: `no route ${record.path}` });
      return;
    }
    handleApiCall(api, exchange, { route, path: record.path, authorized: record.authorized, body: record.body, validJson });
  }

  type TaskRequest = FastifyRequest<{ Params: { taskId: string } }>;
  const apiRoute = (url: string, route: (request: TaskRequest) => ApiRoute) =>
    app.all<{ Params: { taskId: string } }>(url, (request, reply) => serveApi(request, reply, route(request)));
  for (const [operation, create] of Object.entries(CREATE_OPERATIONS)) {
    apiRoute(create.path, () => ({ kind: 'create', operation: operation as CreateOperationName }));
  }
  apiRoute(READ_ROUTES.getCredits, () => ({ kind: 'credits' }));
  for (const platform of ['producer', 'sonic'] as const) {
    apiRoute(`/api/v1/${platform}/task/:taskId`, ({ params: { taskId } }) =>
      taskId === '' ? { kind: 'unknown' } : { kind: 'poll', platform, taskId },
    );
  }
  for (const family of RETIRED_FAMILIES) {
    apiRoute(`/api/v1/${family}/create`, () => ({ kind: 'retired' }));
    apiRoute(`/api/v1/${family}/task/:taskId`, () => ({ kind: 'retired' }));
  }

  app.all(MODERATION_PATH, (request, reply) => {
    const { record } = recordOf(request, options.moderation.apiKey);
    const exchange = exchangeFor(request, reply, record);
    if (request.method !== 'POST') return exchange.send(405, { error: { message: 'POST only', type: 'invalid_request_error', param: null, code: null } });
    options.moderation.standIn.handle(exchange, { authorized: record.authorized, body: record.body });
  });

  for (const platform of ['producer', 'sonic']) {
    app.route({
      method: ['GET', 'HEAD'],
      url: `/${platform}/:file`,
      handler(request, reply) {
        const { record } = recordOf(request);
        const file = mediaFor(record.path, options.media);
        if (file === undefined) {
          exchangeFor(request, reply, record).send(404, { type: 'not_found', message: `no route ${record.path}` });
          return;
        }
        // Ranges and HEAD are answered by hand (media.ts), on the raw response.
        reply.hijack();
        record.status = sendMedia(request.raw, reply.raw, file);
      },
    });
  }

  for (const route of CONTROL_ROUTES) {
    app.route<{ Params: Record<string, string> }>({
      method: route.methods,
      url: route.url,
      handler: (request, reply) => route.handle(control, exchangeFor(request, reply), { body: bodyOf(request.body), params: request.params }),
    });
  }

  app.setNotFoundHandler((request, reply) => {
    const path = new URL(request.url, 'http://sim.invalid').pathname;
    if (path.startsWith('/_sim/')) controlNotFound(exchangeFor(request, reply), path);
    else serveApi(request, reply, { kind: 'unknown' });
  });
  return app;
}

/** JSON with exactly `content-type: application/json` (a Buffer, so that fastify adds no charset). */
function sendJson(reply: FastifyReply, status: number, body: unknown): void {
  void reply.code(status).header('content-type', 'application/json').send(Buffer.from(JSON.stringify(body)));
}

function textOf(body: unknown): string {
  if (typeof body !== 'string') return '';
  return body.length > MAX_BODY_BYTES ? body.slice(0, MAX_BODY_BYTES) : body;
}

/** Parsed JSON, the text itself when it is not JSON, undefined when empty. */
function bodyOf(body: unknown): unknown {
  const text = textOf(body);
  const parsed = parseJson(text);
  return parsed.ok ? parsed.value : text;
}

function parseJson(text: string): { ok: boolean; value: unknown } {
  if (text.length === 0) return { ok: true, value: undefined };
  try {
    return { ok: true, value: JSON.parse(text) as unknown };
  } catch {
    return { ok: false, value: undefined };
  }
}
