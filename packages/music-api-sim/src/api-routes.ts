/**
 * The service's API as the spec states it: get-credits, the creates and the task polls, with
 * authentication, faults, validation, concurrency limits and charging in the service's order.
 */
import { CREATE_OPERATIONS, RESPONSE_FIELDS, type CreateOperationName, type Platform } from './contract.js';
import type { Exchange } from './exchange.js';
import type { FaultPlan } from './fault-plan.js';
import { isRequestFault, TYPE_BY_STATUS, type RequestFault } from './faults.js';
import { pollBody } from './answers.js';
import type { TaskStore } from './tasks.js';
import { checkBody, type Refusal } from './validation.js';

/** Which API route a request is for. */
export type ApiRoute =
  | { kind: 'retired' }
  | { kind: 'credits' }
  | { kind: 'poll'; platform: Platform; taskId: string }
  | { kind: 'create'; operation: CreateOperationName }
  | { kind: 'unknown' };

/** One API call, read. */
export interface ApiCall {
  route: ApiRoute;
  path: string;
  authorized: boolean;
  /** Parsed JSON, or the raw text when it was not JSON. */
  body: unknown;
  validJson: boolean;
}

export interface ApiContext {
  tasks: TaskStore;
  faults: FaultPlan;
  models: readonly string[];
  allowHttpWebhooks: boolean;
  concurrencyLimit: number;
  baseUrl: () => string;
  /** How long the songs are (see `songSeconds`). */
  songSeconds: number;
}

export function handleApiCall(context: ApiContext, exchange: Exchange, call: ApiCall): void {
  const { tasks, faults } = context;
  const { route, path } = call;
  if (route.kind === 'retired') {
    refuse(exchange, { status: 410, type: 'endpoint_retired', message: 'this endpoint family is retired' });
    return;
  }
  if (!call.authorized) {
    refuse(exchange, { status: 401, type: 'unauthorized', message: 'missing or invalid bearer token' });
    return;
  }
  const operation = route.kind === 'create' ? route.operation : undefined;
  const chosen = faults.takeRequestFault(path);
  const drawn = chosen === undefined && route.kind !== 'unknown' ? faults.draw(path, operation !== undefined) : undefined;
  // A drawn task fault waits for the task; a drawn request fault answers this call.
  const injected = chosen ?? (drawn !== undefined && isRequestFault(drawn) ? drawn : undefined);
  const drawnTaskFault = drawn !== undefined && !isRequestFault(drawn) ? drawn : undefined;
  // A fault with `accepted` on a create answers only once the task is made.
  let afterAccepting = injected?.accepted === true && operation !== undefined ? injected : undefined;
  if (injected !== undefined && afterAccepting === undefined) {
    answerFault(exchange, injected);
    return;
  }

  if (route.kind === 'credits') {
    if (exchange.method !== 'GET') return notAllowed(exchange);
    exchange.send(200, { [RESPONSE_FIELDS.credits]: tasks.getCredits(), [RESPONSE_FIELDS.extraCredits]: 0 });
    return;
  }
  if (route.kind === 'poll') {
    if (exchange.method !== 'GET') return notAllowed(exchange);
    const task = tasks.get(route.taskId);
    if (task === undefined || task.view.platform !== route.platform) {
      refuse(exchange, { status: 404, type: 'not_found', message: 'no such task' });
      return;
    }
    exchange.send(200, pollBody(task, { baseUrl: context.baseUrl(), songSeconds: context.songSeconds }));
    return;
  }
  if (operation === undefined) {
    refuse(exchange, { status: 404, type: 'not_found', message: `no route ${path}` });
    return;
  }
  const create = CREATE_OPERATIONS[operation];
  if (exchange.method !== create.method) return notAllowed(exchange);
  if (!call.validJson) {
    refuse(exchange, { status: 400, type: 'validation_error', message: 'the body is not valid JSON' });
    return;
  }
  const markers = faults.dueMarkers(path, call.body);
  for (const { fault } of markers) {
    if (!isRequestFault(fault)) continue;
    if (fault.accepted === true) {
      afterAccepting ??= fault;
    } else {
      answerFault(exchange, fault);
      return;
    }
  }
  const refusal = checkBody(operation, call.body, { models: context.models, allowHttpWebhooks: context.allowHttpWebhooks });
  if (refusal !== undefined) {
    refuse(exchange, refusal);
    return;
  }
  if (tasks.inFlight(create.taskType) >= context.concurrencyLimit) {
    refuse(exchange, {
      status: 429,
      type: 'rate_limited',
      message: `too many ${create.taskType} tasks in flight (limit ${context.concurrencyLimit})`,
    });
    return;
  }
  const cost = tasks.costOf(operation);
  const credits = tasks.getCredits();
  if (credits < cost) {
    refuse(exchange, { status: 402, type: 'insufficient_credits', message: `needs ${cost} credits, ${credits} left` });
    return;
  }
  const task = tasks.create(operation, call.body as Record<string, unknown>, faults.behaviourFor(markers, drawnTaskFault));
  if (afterAccepting !== undefined) {
    answerFault(exchange, afterAccepting);
    return;
  }
  const accepted =
    create.platform === 'sonic'
      ? { code: 200, message: 'success', task_id: task.view.taskId }
      : { message: 'success', task_id: task.view.taskId };
  exchange.send(200, accepted);
}

function answerFault(exchange: Exchange, fault: RequestFault): void {
  switch (fault.kind) {
    case 'hang':
      exchange.hang();
      return;
    case 'reset':
      // The body was read; the client learns nothing (status stays undefined in the record).
      exchange.reset();
      return;
    case 'code': {
      const type = fault.type ?? TYPE_BY_STATUS[fault.code] ?? 'internal_error';
      exchange.send(200, { code: fault.code, type, message: `simulated ${fault.code} ${type}` });
      return;
    }
    case 'status': {
      const type = fault.type ?? TYPE_BY_STATUS[fault.status] ?? 'internal_error';
      exchange.send(fault.status, { type, message: `simulated ${fault.status} ${type}` });
      return;
    }
    case 'proxy':
      exchange.sendText(fault.status, 'text/html; charset=utf-8', proxyPage(fault.status));
  }
}

/** The page a proxy or CDN in front of the service answers with: no JSON, no `type`. */
function proxyPage(status: number): string {
  const title = status === 200 ? 'Checking your browser' : `${status} ${status === 502 ? 'Bad Gateway' : 'Error'}`;
  return `<html>\r\n<head><title>${title}</title></head>\r\n<body>\r\n<center><h1>${title}</h1></center>\r\n<hr><center>simulated proxy</center>\r\n</body>\r\n</html>\r\n`;
}

function notAllowed(exchange: Exchange): void {
  refuse(exchange, { status: 405, type: 'method_not_allowed', message: 'method not allowed' });
}

function refuse(exchange: Exchange, refusal: Refusal): void {
  exchange.send(refusal.status, { [RESPONSE_FIELDS.errorType]: refusal.type, [RESPONSE_FIELDS.errorMessage]: refusal.message });
}
