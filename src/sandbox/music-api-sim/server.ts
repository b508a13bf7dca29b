/**
 * The music API simulator: the service as the spec states it, on a local port, with credits,
 * tasks, media files, webhooks, fault injection and a record of everything it was asked.
 */
import { randomUUID } from 'node:crypto';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { silentLogger, type Logger } from '../../logger.js';
import {
  costOf,
  CREATE_OPERATIONS,
  createOperationAt,
  DEFAULT_MODEL,
  DEFAULT_PERSONA_SONG_COST,
  READ_ROUTES,
  REQUEST_FIELDS,
  RESPONSE_FIELDS,
  RETIRED_FAMILIES,
  SPEC_MODELS,
  WEBHOOK_EVENTS,
  type CreateOperationName,
  type Platform,
  type SignatureEncoding,
  type SignatureScheme,
} from './contract.js';
import {
  applyTaskFault,
  createRandomFaults,
  isRequestFault,
  NORMAL_BEHAVIOUR,
  parseFault,
  parseMarkers,
  parseRandomFaults,
  TYPE_BY_STATUS,
  type Marker,
  type RandomFaults,
  type RandomFaultSource,
  type RandomFaultState,
  type RequestFault,
  type SimFault,
  type TaskBehaviour,
  type TaskFault,
} from './faults.js';
import { mediaFor, sendMedia } from './media.js';
import { checkBody, type Refusal } from './validation.js';
import { DEFAULT_WEBHOOK_RETRY, deliverWebhook, type WebhookAttempt, type WebhookRetry } from './webhooks.js';

export const DEFAULT_TASK_MS = 2000;
export const DEFAULT_CONCURRENCY_LIMIT = 20;

/** Path names under which the retired family answers 410 (see ./contract.ts). */
export { RETIRED_FAMILIES };

export interface MusicApiSimOptions {
  apiKey: string;
  /** Starting balance. */
  credits: number;
  /** 0 picks a free port. @defaultValue 0 */
  port?: number;
  /** @defaultValue '127.0.0.1' */
  host?: string;
  /** How long a task takes from submission to its end. @defaultValue 2000 */
  taskMs?: number;
  /** Accept `http://` webhook URLs to loopback addresses (tests, local try-outs). @defaultValue false */
  allowHttpWebhooks?: boolean;
  /** @defaultValue 'spec' */
  signatureScheme?: SignatureScheme;
  /** How the spec scheme writes the digest (the spec leaves it open). @defaultValue 'hex' */
  signatureEncoding?: SignatureEncoding;
  /** Tasks in flight per task type before 429 `rate_limited`. @defaultValue 20 */
  concurrencyLimit?: number;
  /** @defaultValue { attempts: 4, baseMs: 500 } */
  webhookRetry?: WebhookRetry;
  /** Time limit of one webhook POST. @defaultValue 5000 */
  webhookTimeoutMs?: number;
  /** Accepted `mv` values. @defaultValue SPEC_MODELS (the spec's eleven, ./contract.ts) */
  models?: readonly string[];
  /** Credits a sonic persona song costs; the spec gives no price. @defaultValue DEFAULT_PERSONA_SONG_COST (10) */
  personaSongCost?: number;
  /** Base of media links when the simulator is reached by another name. @defaultValue the listening URL */
  publicUrl?: string;
  /** Start in the random-fault mode (see `setRandomFaults`). @defaultValue off */
  randomFaults?: RandomFaults;
  logger?: Logger;
}

export interface RecordedRequest {
  method: string;
  path: string;
  query: string;
  /** All headers except `authorization`. */
  headers: Record<string, string | string[] | undefined>;
  /** Whether the request carried the right bearer token. */
  authorized: boolean;
  /** Parsed JSON, or the raw text when it was not JSON; undefined without a body. */
  body: unknown;
  at: number;
  /** The status answered; undefined while unanswered (or for a hung request). */
  status: number | undefined;
}

export type SimTaskState = 'PENDING' | 'RUNNING' | 'SUCCESS' | 'FAILED';

export interface SimTaskView {
  taskId: string;
  platform: Platform;
  taskType: string;
  state: SimTaskState;
  cost: number;
  refunded: boolean;
  createdAt: number;
  endedAt: number | undefined;
  body: Record<string, unknown>;
  webhookUrl: string | undefined;
}

export interface MusicApiSim {
  /** e.g. `http://127.0.0.1:43817`. */
  readonly url: string;
  readonly port: number;
  /** Every request received, except control calls under /_sim. */
  readonly requests: RecordedRequest[];
  /** Every webhook POST and its answer. */
  readonly webhookAttempts: WebhookAttempt[];
  close(): Promise<void>;
  getCredits(): number;
  setCredits(credits: number): void;
  /** Duration of tasks created from now on. */
  setTaskMs(ms: number): void;
  /** Ends a task now. False when unknown or already ended. */
  completeTask(taskId: string, outcome?: 'success' | 'failure'): boolean;
  getTask(taskId: string): SimTaskView | undefined;
  listTasks(): SimTaskView[];
  /** Adds a fault; `times` (default 1) is how many requests or tasks it affects. */
  injectFault(fault: SimFault): void;
  /** Removes injected faults and marker counts (not the random-fault mode). */
  clearFaults(): void;
  /**
   * The random-fault mode: from now on a share of the API calls fail, each in a way drawn from
   * a weighted mix, from a seeded generator; undefined turns it off. Injected faults come
   * first (a call they fault draws nothing); a drawn answer fault comes before the markers.
   */
  setRandomFaults(settings: RandomFaults | undefined): void;
  /** The random-fault mode's settings, seed and draws so far; undefined when it is off. */
  getRandomFaults(): RandomFaultState | undefined;
  /** Forgets recorded requests and webhook attempts. */
  clearRecords(): void;
  /** Resolves once `count` webhook attempts (matching `filter`) are recorded. */
  waitForWebhookAttempts(count: number, options?: { timeoutMs?: number; taskId?: string }): Promise<WebhookAttempt[]>;
}

interface SimTask {
  view: SimTaskView;
  operation: CreateOperationName;
  behaviour: TaskBehaviour;
  clipIds: string[];
  timers: NodeJS.Timeout[];
  webhookSecret: string | undefined;
}

const RETIRED_ROUTE = new RegExp(`^/api/v1/(${RETIRED_FAMILIES.join('|')})/(create|task/[^/]+)$`);
const MAX_BODY_BYTES = 1_000_000;

/** Starts the simulator; resolves once it listens. */
export async function startMusicApiSim(options: MusicApiSimOptions): Promise<MusicApiSim> {
  const log = options.logger ?? silentLogger;
  const models = [...(options.models ?? SPEC_MODELS)];
  const allowHttpWebhooks = options.allowHttpWebhooks ?? false;
  const scheme = options.signatureScheme ?? 'spec';
  const encoding = options.signatureEncoding ?? 'hex';
  const concurrencyLimit = options.concurrencyLimit ?? DEFAULT_CONCURRENCY_LIMIT;
  const webhookRetry = options.webhookRetry ?? DEFAULT_WEBHOOK_RETRY;
  const personaSongCost = options.personaSongCost ?? DEFAULT_PERSONA_SONG_COST;
  let credits = options.credits;
  let taskMs = options.taskMs ?? DEFAULT_TASK_MS;
  let baseUrl = '';

  const tasks = new Map<string, SimTask>();
  const requests: RecordedRequest[] = [];
  const webhookAttempts: WebhookAttempt[] = [];
  const attemptListeners = new Set<() => void>();
  let faults: Array<{ fault: SimFault; left: number }> = [];
  let randomFaults: RandomFaultSource | undefined = options.randomFaults === undefined ? undefined : createRandomFaults(options.randomFaults);
  const markerUses = new Map<string, number>();
  const hungResponses = new Set<ServerResponse>();
  const deliveries = new Set<Promise<void>>();
  const shutdown = new AbortController();

  // ---- tasks -------------------------------------------------------------------------

  function inFlight(taskType: string): number {
    let count = 0;
    for (const task of tasks.values()) {
      if (task.view.taskType === taskType && (task.view.state === 'PENDING' || task.view.state === 'RUNNING')) count += 1;
    }
    return count;
  }

  function createTask(operation: CreateOperationName, body: Record<string, unknown>, behaviour: TaskBehaviour): SimTask {
    const route = CREATE_OPERATIONS[operation];
    const fields = REQUEST_FIELDS[operation];
    const cost = costOf(operation, personaSongCost);
    credits -= cost;
    const taskId = randomUUID();
    const clipCount = operation === 'personaSong' ? 2 : operation === 'voice' ? 0 : 1;
    const clipIds: string[] = Array.from({ length: clipCount }, () => randomUUID());
    // Video and download tasks work on an existing clip and keep its id.
    const existingClip = 'clipId' in fields ? body[fields.clipId] : undefined;
    if (typeof existingClip === 'string') clipIds[0] = existingClip;
    const webhookUrl = 'webhookUrl' in fields ? body[fields.webhookUrl] : undefined;
    const webhookSecret = 'webhookSecret' in fields ? body[fields.webhookSecret] : undefined;
    const task: SimTask = {
      view: {
        taskId,
        platform: route.platform,
        taskType: route.taskType,
        state: 'PENDING',
        cost,
        refunded: false,
        createdAt: Date.now(),
        endedAt: undefined,
        body,
        webhookUrl: typeof webhookUrl === 'string' ? webhookUrl : undefined,
      },
      operation,
      behaviour,
      clipIds,
      timers: [],
      webhookSecret: typeof webhookSecret === 'string' ? webhookSecret : undefined,
    };
    tasks.set(taskId, task);
    const duration = behaviour.taskMs ?? taskMs;
    task.timers.push(
      setTimeout(() => {
        if (task.view.state === 'PENDING') task.view.state = 'RUNNING';
      }, Math.floor(duration / 4)),
      setTimeout(() => finishTask(task, behaviour.fail ? 'failure' : 'success'), duration),
    );
    log.debug({ taskId, taskType: route.taskType, cost, credits }, 'sim task created');
    return task;
  }

  function finishTask(task: SimTask, outcome: 'success' | 'failure'): boolean {
    if (task.view.state === 'SUCCESS' || task.view.state === 'FAILED') return false;
    for (const timer of task.timers) clearTimeout(timer);
    task.view.state = outcome === 'success' ? 'SUCCESS' : 'FAILED';
    task.view.endedAt = Date.now();
    if (outcome === 'failure') {
      // The spec: a task that fails upstream refunds its credits automatically.
      credits += task.view.cost;
      task.view.refunded = true;
    }
    log.debug({ taskId: task.view.taskId, state: task.view.state, credits }, 'sim task ended');
    if (task.view.webhookUrl !== undefined && task.behaviour.webhook !== 'none') {
      const webhookUrl = task.view.webhookUrl;
      // spec "Events": the payload is the polling body, nothing added. The real service adds
      // `task_id`, `platform` and `event` (notes "Webhooks"): the timestamped scheme does too.
      const payloadOf = (state: SimTaskState, event: string): Record<string, unknown> =>
        scheme === 'timestamped'
          ? { ...pollBody(task, state), task_id: task.view.taskId, platform: task.view.platform, event }
          : pollBody(task, state);
      const finalEvent = outcome === 'success' ? WEBHOOK_EVENTS.completed : WEBHOOK_EVENTS.failed;
      const context = {
        scheme,
        encoding,
        retry: webhookRetry,
        timeoutMs: options.webhookTimeoutMs ?? 5000,
        signal: shutdown.signal,
        log,
        record: (attempt: WebhookAttempt) => {
          webhookAttempts.push(attempt);
          for (const listener of attemptListeners) listener();
        },
      };
      const final = { url: webhookUrl, taskId: task.view.taskId, secret: task.webhookSecret, badSignature: task.behaviour.badSignature };
      let delivery = deliverWebhook(
        {
          ...final,
          payload: payloadOf(task.view.state, finalEvent),
          event: finalEvent,
          copies: task.behaviour.webhook === 'twice' ? 2 : 1,
          lateMs: task.behaviour.webhookLateMs,
        },
        context,
      );
      if (task.behaviour.outOfOrder) {
        // The intermediate callback, overtaken by the final one: it says RUNNING after the end.
        delivery = delivery.then(() =>
          deliverWebhook({ ...final, payload: payloadOf('RUNNING', WEBHOOK_EVENTS.streaming), event: WEBHOOK_EVENTS.streaming, copies: 1, lateMs: 0 }, context),
        );
      }
      deliveries.add(delivery);
      void delivery.finally(() => deliveries.delete(delivery));
    }
    return true;
  }

  // ---- answers -----------------------------------------------------------------------

  function media(clipId: string): Record<string, string> {
    return {
      audio_url: `${baseUrl}/producer/${clipId}.m4a`,
      wav_url: `${baseUrl}/producer/${clipId}-wav.wav`,
      image_url: `${baseUrl}/producer/${clipId}-img.jpg`,
      video_url: `${baseUrl}/producer/${clipId}-video.mp4`,
    };
  }

  /**
   * The body GET .../task/{id} answers for a task, and the payload of its webhook; in `taskState`
   * for an intermediate callback sent late.
   */
  function pollBody(task: SimTask, taskState: SimTaskState = task.view.state): Record<string, unknown> {
    const { view } = task;
    const done = taskState === 'SUCCESS';
    const failure = taskState === 'FAILED' ? { [RESPONSE_FIELDS.failureReason]: 'the generation provider failed (simulated)' } : {};
    if (view.platform === 'producer') {
      // The envelope stays exactly code, message, data, status; the reason rides in the items.
      const data = producerData(task, done).map((item) => ({ ...item, ...failure }));
      return { code: 200, message: 'success', data, status: taskState };
    }
    const state = { PENDING: 'pending', RUNNING: 'running', SUCCESS: 'succeeded', FAILED: 'failed' }[taskState];
    const { clipState, clipTitle, clipTags, clipLyrics, clipDuration } = RESPONSE_FIELDS;
    if (task.operation === 'voice') {
      const data = done
        ? { [clipState]: state, persona_id: `persona-${view.taskId.slice(0, 8)}`, name: `Voice ${view.taskId.slice(0, 4)}` }
        : { [clipState]: state, ...failure };
      return { code: 200, message: 'success', data };
    }
    const fields = REQUEST_FIELDS.personaSong;
    const data = task.clipIds.map((clipId, index) => ({
      clip_id: clipId,
      [clipState]: state,
      [clipTitle]: stringOr(view.body[fields.title], 'Persona song') + (index === 0 ? '' : ' (take 2)'),
      [clipTags]: stringOr(view.body[fields.tags], ''),
      [clipLyrics]: stringOr(view.body[fields.lyrics], ''),
      // notes "Sonic": a sonic clip's duration may be a string.
      ...(done ? { audio_url: media(clipId)['audio_url'], image_url: media(clipId)['image_url'], [clipDuration]: '2.00' } : {}),
      ...failure,
    }));
    return { code: 200, message: 'success', data };
  }

  function producerData(task: SimTask, done: boolean): Record<string, unknown>[] {
    const { body } = task.view;
    const clipId = task.clipIds[0] ?? task.view.taskId;
    const { clipTitle, clipSound, clipLyrics, clipTags, clipDuration, lyricsText, downloadUrl } = RESPONSE_FIELDS;
    switch (task.operation) {
      case 'lyrics': {
        const prompt = stringOr(body[REQUEST_FIELDS.lyrics.prompt], 'a song');
        return [{ [clipTitle]: titleFrom(prompt), ...(done ? { [lyricsText]: lyricsFor(prompt) } : {}) }];
      }
      case 'video':
        return [{ clip_id: clipId, ...(done ? { video_url: media(clipId)['video_url'], image_url: media(clipId)['image_url'] } : {}) }];
      case 'upload':
        return [{ clip_id: clipId, [clipTitle]: 'Uploaded audio', ...(done ? { audio_url: media(clipId)['audio_url'] } : {}) }];
      case 'download': {
        const format = body[REQUEST_FIELDS.download.format] === 'wav' ? 'wav' : 'mp3';
        const url = format === 'wav' ? `${baseUrl}/producer/${clipId}-wav.wav` : `${baseUrl}/producer/${clipId}.mp3`;
        return [{ clip_id: clipId, format, ...(done ? { [downloadUrl]: url } : {}) }];
      }
      default: {
        const fields = REQUEST_FIELDS.song;
        const sound = stringOr(body[fields.sound], '');
        const lyrics = body[fields.makeInstrumental] === true ? '' : stringOr(body[fields.lyrics], lyricsFor(sound));
        return [
          {
            clip_id: clipId,
            [clipTitle]: stringOr(body[fields.title], titleFrom(sound || lyrics)),
            [clipSound]: sound,
            [clipLyrics]: lyrics,
            [clipTags]: sound.slice(0, 60),
            mv: stringOr(body[fields.model], DEFAULT_MODEL),
            ...(done ? { ...media(clipId), [clipDuration]: 2 } : {}),
          },
        ];
      }
    }
  }

  // ---- request handling ---------------------------------------------------------------

  function send(response: ServerResponse, record: RecordedRequest | undefined, status: number, body?: unknown): void {
    if (record !== undefined) record.status = status;
    if (body === undefined) {
      response.writeHead(status).end();
      return;
    }
    const text = JSON.stringify(body);
    response.writeHead(status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text) });
    response.end(text);
  }

  function refuse(response: ServerResponse, record: RecordedRequest | undefined, refusal: Refusal): void {
    send(response, record, refusal.status, { [RESPONSE_FIELDS.errorType]: refusal.type, [RESPONSE_FIELDS.errorMessage]: refusal.message });
  }

  function hang(response: ServerResponse): void {
    hungResponses.add(response);
    response.on('close', () => hungResponses.delete(response));
  }

  /** The first control-API request fault that applies to this path, consumed. */
  function takeRequestFault(path: string): RequestFault | undefined {
    const entry = faults.find(({ fault }) => isRequestFault(fault) && (fault.path === undefined || path.startsWith(fault.path)));
    if (entry === undefined) return undefined;
    entry.left -= 1;
    if (entry.left <= 0) faults = faults.filter((other) => other !== entry);
    return entry.fault as RequestFault;
  }

  /** Marker faults still due for this request (each counted by its marker and field text). */
  function dueMarkers(path: string, body: unknown): Marker[] {
    return parseMarkers(body).filter((marker) => {
      // Request faults hit once unless counted; task faults hit every time unless counted.
      const limit = marker.fault.times ?? (isRequestFault(marker.fault) ? 1 : Number.POSITIVE_INFINITY);
      const key = `${path}|${marker.text}`;
      const used = markerUses.get(key) ?? 0;
      if (used >= limit) return false;
      markerUses.set(key, used + 1);
      return true;
    });
  }

  function behaviourFor(markers: readonly Marker[], drawn: TaskFault | undefined): TaskBehaviour {
    let behaviour: TaskBehaviour = drawn === undefined ? { ...NORMAL_BEHAVIOUR } : applyTaskFault({ ...NORMAL_BEHAVIOUR }, drawn);
    for (const entry of [...faults]) {
      if (isRequestFault(entry.fault)) continue;
      behaviour = applyTaskFault(behaviour, entry.fault);
      entry.left -= 1;
      if (entry.left <= 0) faults = faults.filter((other) => other !== entry);
    }
    for (const { fault } of markers) {
      if (!isRequestFault(fault)) behaviour = applyTaskFault(behaviour, fault as TaskFault);
    }
    return behaviour;
  }

  function answerFault(response: ServerResponse, record: RecordedRequest, fault: RequestFault): void {
    switch (fault.kind) {
      case 'hang':
        hang(response);
        return;
      case 'reset':
        // The body was read; the client learns nothing (status stays undefined in the record).
        response.socket?.destroy();
        return;
      case 'code': {
        const type = fault.type ?? TYPE_BY_STATUS[fault.code] ?? 'internal_error';
        send(response, record, 200, { code: fault.code, type, message: `simulated ${fault.code} ${type}` });
        return;
      }
      case 'status': {
        const type = fault.type ?? TYPE_BY_STATUS[fault.status] ?? 'internal_error';
        send(response, record, fault.status, { type, message: `simulated ${fault.status} ${type}` });
      }
    }
  }

  function handleApi(
    request: IncomingMessage,
    response: ServerResponse,
    record: RecordedRequest,
    path: string,
    validJson: boolean,
  ): void {
    if (RETIRED_ROUTE.test(path)) {
      refuse(response, record, { status: 410, type: 'endpoint_retired', message: 'this endpoint family is retired' });
      return;
    }
    if (!record.authorized) {
      refuse(response, record, { status: 401, type: 'unauthorized', message: 'missing or invalid bearer token' });
      return;
    }
    const operation = createOperationAt(path);
    const isCall = operation !== undefined || path === READ_ROUTES.getCredits || READ_ROUTES.producerTask.test(path) || READ_ROUTES.sonicTask.test(path);
    const chosen = takeRequestFault(path);
    const drawn = chosen === undefined && isCall ? randomFaults?.draw(path, operation !== undefined) : undefined;
    // A drawn task fault waits for the task; a drawn request fault answers this call.
    const injected = chosen ?? (drawn !== undefined && isRequestFault(drawn) ? drawn : undefined);
    const drawnTaskFault = drawn !== undefined && !isRequestFault(drawn) ? drawn : undefined;
    // A fault with `accepted` on a create answers only once the task is made.
    let afterAccepting = injected?.accepted === true && operation !== undefined ? injected : undefined;
    if (injected !== undefined && afterAccepting === undefined) {
      answerFault(response, record, injected);
      return;
    }
    const method = request.method ?? 'GET';

    if (path === READ_ROUTES.getCredits) {
      if (method !== 'GET') return notAllowed(response, record);
      send(response, record, 200, { [RESPONSE_FIELDS.credits]: credits, [RESPONSE_FIELDS.extraCredits]: 0 });
      return;
    }
    const producerPoll = READ_ROUTES.producerTask.exec(path);
    const sonicPoll = READ_ROUTES.sonicTask.exec(path);
    const poll = producerPoll ?? sonicPoll;
    if (poll !== null) {
      if (method !== 'GET') return notAllowed(response, record);
      const task = tasks.get(decodeURIComponent(poll[1] ?? ''));
      if (task === undefined || task.view.platform !== (producerPoll === null ? 'sonic' : 'producer')) {
        refuse(response, record, { status: 404, type: 'not_found', message: 'no such task' });
        return;
      }
      send(response, record, 200, pollBody(task));
      return;
    }
    if (operation === undefined) {
      refuse(response, record, { status: 404, type: 'not_found', message: `no route ${path}` });
      return;
    }
    const route = CREATE_OPERATIONS[operation];
    if (method !== route.method) return notAllowed(response, record);
    if (!validJson) {
      refuse(response, record, { status: 400, type: 'validation_error', message: 'the body is not valid JSON' });
      return;
    }
    const markers = dueMarkers(path, record.body);
    for (const { fault } of markers) {
      if (!isRequestFault(fault)) continue;
      if (fault.accepted === true) {
        afterAccepting ??= fault;
      } else {
        answerFault(response, record, fault);
        return;
      }
    }
    const refusal = checkBody(operation, record.body, { models, allowHttpWebhooks });
    if (refusal !== undefined) {
      refuse(response, record, refusal);
      return;
    }
    if (inFlight(route.taskType) >= concurrencyLimit) {
      refuse(response, record, {
        status: 429,
        type: 'rate_limited',
        message: `too many ${route.taskType} tasks in flight (limit ${concurrencyLimit})`,
      });
      return;
    }
    const cost = costOf(operation, personaSongCost);
    if (credits < cost) {
      refuse(response, record, { status: 402, type: 'insufficient_credits', message: `needs ${cost} credits, ${credits} left` });
      return;
    }
    const task = createTask(operation, record.body as Record<string, unknown>, behaviourFor(markers, drawnTaskFault));
    if (afterAccepting !== undefined) {
      answerFault(response, record, afterAccepting);
      return;
    }
    const accepted =
      route.platform === 'sonic'
        ? { code: 200, message: 'success', task_id: task.view.taskId }
        : { message: 'success', task_id: task.view.taskId };
    send(response, record, 200, accepted);
  }

  function notAllowed(response: ServerResponse, record: RecordedRequest): void {
    refuse(response, record, { status: 405, type: 'method_not_allowed', message: 'method not allowed' });
  }

  // ---- control API (/_sim) ------------------------------------------------------------

  function handleControl(request: IncomingMessage, response: ServerResponse, path: string, body: unknown): void {
    const method = request.method ?? 'GET';
    const input = typeof body === 'object' && body !== null ? (body as Record<string, unknown>) : {};
    const bad = (message: string) => send(response, undefined, 400, { type: 'validation_error', message });
    if (path === '/_sim/state' && method === 'GET') {
      send(response, undefined, 200, {
        credits,
        taskMs,
        tasks: sim.listTasks(),
        faults: faults.map(({ fault, left }) => ({ ...fault, left })),
        randomFaults: sim.getRandomFaults() ?? null,
      });
    } else if (path === '/_sim/credits' && method === 'GET') {
      send(response, undefined, 200, { credits });
    } else if (path === '/_sim/credits' && (method === 'POST' || method === 'PUT')) {
      if (typeof input['credits'] !== 'number') return bad('credits: a number');
      sim.setCredits(input['credits']);
      send(response, undefined, 200, { credits });
    } else if (path === '/_sim/task-ms' && (method === 'POST' || method === 'PUT')) {
      if (typeof input['taskMs'] !== 'number') return bad('taskMs: a number');
      sim.setTaskMs(input['taskMs']);
      send(response, undefined, 200, { taskMs });
    } else if (/^\/_sim\/tasks\/[^/]+\/complete$/.test(path) && method === 'POST') {
      const taskId = decodeURIComponent(path.split('/')[3] ?? '');
      const outcome = input['outcome'] === 'failure' ? 'failure' : 'success';
      if (!tasks.has(taskId)) return send(response, undefined, 404, { type: 'not_found', message: 'no such task' });
      send(response, undefined, 200, { completed: sim.completeTask(taskId, outcome), task: sim.getTask(taskId) });
    } else if (path === '/_sim/faults' && method === 'POST') {
      const fault = parseFault(body);
      if (typeof fault === 'string') return bad(fault);
      sim.injectFault(fault);
      send(response, undefined, 200, { faults: faults.length });
    } else if (path === '/_sim/faults' && method === 'DELETE') {
      sim.clearFaults();
      send(response, undefined, 204);
    } else if (path === '/_sim/random-faults' && method === 'GET') {
      send(response, undefined, 200, { randomFaults: sim.getRandomFaults() ?? null });
    } else if (path === '/_sim/random-faults' && (method === 'POST' || method === 'PUT')) {
      const settings = parseRandomFaults(body);
      if (typeof settings === 'string') return bad(settings);
      sim.setRandomFaults(settings);
      send(response, undefined, 200, { randomFaults: sim.getRandomFaults() });
    } else if (path === '/_sim/random-faults' && method === 'DELETE') {
      sim.setRandomFaults(undefined);
      send(response, undefined, 204);
    } else if (path === '/_sim/requests' && method === 'GET') {
      send(response, undefined, 200, requests);
    } else if (path === '/_sim/requests' && method === 'DELETE') {
      sim.clearRecords();
      send(response, undefined, 204);
    } else if (path === '/_sim/webhooks' && method === 'GET') {
      send(response, undefined, 200, webhookAttempts);
    } else {
      send(response, undefined, 404, { type: 'not_found', message: `no control route ${method} ${path}` });
    }
  }

  // ---- server ------------------------------------------------------------------------

  const server = createServer((request, response) => {
    void handle(request, response).catch((error: unknown) => {
      log.error({ err: error }, 'music-api-sim request crashed');
      if (!response.headersSent) send(response, undefined, 500, { type: 'internal_error', message: 'simulator fault' });
    });
  });

  async function handle(request: IncomingMessage, response: ServerResponse): Promise<void> {
    const url = new URL(request.url ?? '/', 'http://sim.invalid');
    const path = url.pathname;
    const rawBody = await readBody(request);
    const parsed = parseBody(rawBody);
    const body = parsed.ok ? parsed.value : rawBody;

    if (path.startsWith('/_sim/')) {
      handleControl(request, response, path, body);
      return;
    }
    const { authorization, ...headers } = request.headers;
    const record: RecordedRequest = {
      method: request.method ?? 'GET',
      path,
      query: url.search,
      headers,
      authorized: authorization === `Bearer ${options.apiKey}`,
      body,
      at: Date.now(),
      status: undefined,
    };
    requests.push(record);

    const file = request.method === 'GET' || request.method === 'HEAD' ? mediaFor(path) : undefined;
    if (file !== undefined) {
      record.status = sendMedia(request, response, file);
      return;
    }
    if (path.startsWith('/api/')) {
      handleApi(request, response, record, path, parsed.ok);
      return;
    }
    send(response, record, 404, { type: 'not_found', message: `no route ${path}` });
  }

  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port ?? 0, options.host ?? '127.0.0.1', () => {
      server.off('error', reject);
      resolve();
    });
  });
  const address = server.address() as AddressInfo;
  const host = address.family === 'IPv6' ? `[${address.address}]` : address.address;
  const url = `http://${host === '0.0.0.0' || host === '[::]' ? '127.0.0.1' : host}:${address.port}`;
  baseUrl = (options.publicUrl ?? url).replace(/\/+$/, '');

  const sim: MusicApiSim = {
    url,
    port: address.port,
    requests,
    webhookAttempts,
    async close() {
      shutdown.abort();
      for (const task of tasks.values()) for (const timer of task.timers) clearTimeout(timer);
      for (const response of hungResponses) response.destroy();
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
      await Promise.allSettled([...deliveries]);
    },
    getCredits: () => credits,
    setCredits(value) {
      credits = value;
    },
    setTaskMs(ms) {
      taskMs = ms;
    },
    completeTask(taskId, outcome = 'success') {
      const task = tasks.get(taskId);
      return task === undefined ? false : finishTask(task, outcome);
    },
    getTask: (taskId) => {
      const task = tasks.get(taskId);
      return task === undefined ? undefined : { ...task.view };
    },
    listTasks: () => [...tasks.values()].map((task) => ({ ...task.view })),
    injectFault(fault) {
      faults.push({ fault, left: Math.max(1, fault.times ?? 1) });
    },
    clearFaults() {
      faults = [];
      markerUses.clear();
    },
    setRandomFaults(settings) {
      randomFaults = settings === undefined ? undefined : createRandomFaults(settings);
    },
    getRandomFaults: () => randomFaults?.state(),
    clearRecords() {
      requests.length = 0;
      webhookAttempts.length = 0;
    },
    waitForWebhookAttempts(count, waitOptions = {}) {
      const matching = () =>
        webhookAttempts.filter((attempt) => waitOptions.taskId === undefined || attempt.taskId === waitOptions.taskId);
      return new Promise((resolve, reject) => {
        const check = () => {
          const found = matching();
          if (found.length < count) return;
          cleanup();
          resolve(found);
        };
        const timer = setTimeout(() => {
          cleanup();
          reject(new Error(`expected ${count} webhook attempts, saw ${matching().length}`));
        }, waitOptions.timeoutMs ?? 5000);
        const cleanup = () => {
          clearTimeout(timer);
          attemptListeners.delete(check);
        };
        attemptListeners.add(check);
        check();
      });
    },
  };
  log.debug({ url }, 'music-api-sim listening');
  return sim;
}

function parseBody(raw: string): { ok: boolean; value: unknown } {
  if (raw.length === 0) return { ok: true, value: undefined };
  try {
    return { ok: true, value: JSON.parse(raw) as unknown };
  } catch {
    return { ok: false, value: undefined };
  }
}

async function readBody(request: IncomingMessage): Promise<string> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of request) {
    size += (chunk as Buffer).length;
    if (size > MAX_BODY_BYTES) break;
    chunks.push(chunk as Buffer);
  }
  return Buffer.concat(chunks).toString('utf8');
}

function stringOr(value: unknown, fallback: string): string {
  return typeof value === 'string' && value.length > 0 ? value : fallback;
}

function withoutMarkers(text: string): string {
  return text.replace(/\[sim:[^\]]*\]/g, '').replace(/\s+/g, ' ').trim();
}

function titleFrom(text: string): string {
  const words = withoutMarkers(text).split(' ').slice(0, 4).join(' ');
  return words.length > 0 ? words.charAt(0).toUpperCase() + words.slice(1) : 'Untitled';
}

function lyricsFor(prompt: string): string {
  const topic = withoutMarkers(prompt).slice(0, 60) || 'nothing at all';
  return `[Verse]\nSinging about ${topic}\nUnder simulated skies\n\n[Chorus]\nLa la la, ${topic}\nNo credits spent tonight`;
}
