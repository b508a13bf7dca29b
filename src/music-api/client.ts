/**
 * A typed client for the operations the music API specification details, and only those.
 * Every failure is a `MusicApiError`; every answer is checked with zod, leniently.
 */
import { z } from 'zod';
import { silentLogger, type Logger } from '../logger.js';
import { creditCost, DEFAULT_PERSONA_SONG_COST, type CostedOperation } from './costs.js';
import { undiciTransport, type Transport, type TransportResponse } from './transport.js';
import { errorCode, kindForHttpError, mayHaveCreatedTask, MusicApiError, redact, type MusicApiErrorKind, type MusicApiOperation } from './errors.js';
import { GUESSED_FIELDS } from './guessed-fields.js';
import { API_PATHS, SPEC_MODELS, type DownloadFormat } from '../music-api-spec.js';
import { producerEnvelopeSchema, sonicEnvelopeSchema, toTaskStatus, type TaskStatus } from './task-status.js';
import { localText, type LocalText } from '../i18n/index.js';

export const DEFAULT_TIMEOUT_MS = 30_000;

export interface MusicApiClientOptions {
  /** Base address, e.g. `https://api.example.com` (no `/api/v1`). */
  baseUrl: string;
  /** Sent as `Authorization: Bearer <apiKey>`; never logged, never in an error. */
  apiKey: string;
  /** Per-request time limit, body included. @defaultValue 30000 */
  timeoutMs?: number;
  /** Accepted `mv` values (config MUSIC_MODELS). @defaultValue SPEC_MODELS */
  models?: readonly string[];
  /** Accepted sonic `mv` values for persona songs; when unset, any value is passed on. */
  sonicModels?: readonly string[];
  /** Credits a sonic persona song costs (config PERSONA_SONG_COST). @defaultValue DEFAULT_PERSONA_SONG_COST */
  personaSongCost?: number;
  logger?: Logger;
  /** For tests (`globalThis.fetch` fits). @defaultValue undici's request (see transport.ts) */
  fetch?: Transport;
  /** Told of every request that went out once it ends, answered or not: the bot records the service's health with it. Must not throw. */
  onAnswer?: (answer: MusicApiAnswer) => void;
}

/** One request to the service, ended: `error` is undefined when it was answered as it should be. */
export interface MusicApiAnswer {
  readonly operation: MusicApiOperation;
  /** When it ended (ms since the epoch). */
  readonly at: number;
  readonly durationMs: number;
  readonly error?: MusicApiError;
}

export interface CallOptions {
  /** Cancels the request; the error then has kind `aborted`. */
  signal?: AbortSignal;
  /** Overrides the client's time limit for this call. */
  timeoutMs?: number;
}

/** Where the service should report the end of a task. */
export interface WebhookTarget {
  /** HTTPS, at most 1024 characters. */
  url: string;
  /** Signs the callback; verify it with `verifyWebhookSignature`. */
  secret?: string;
}

export interface CreateSongInput {
  /** Text prompt describing the music. `sound` or `lyrics` (or both) must be given. */
  sound?: string;
  lyrics?: string;
  title?: string;
  /** One of the configured models. Omitted: no `mv` is sent and the service's default applies. */
  model?: string;
  makeInstrumental?: boolean;
  /** A number written as a string. */
  seed?: string;
  webhook?: WebhookTarget;
}

export interface CreateLyricsInput {
  prompt: string;
  webhook?: WebhookTarget;
}

export interface CreateVideoClipInput {
  clipId: string;
  webhook?: WebhookTarget;
}

export interface UploadAudioInput {
  /** A publicly reachable audio file to register as a reference clip. */
  audioUrl: string;
  webhook?: WebhookTarget;
}

export interface RequestDownloadInput {
  clipId: string;
  format: DownloadFormat;
  webhook?: WebhookTarget;
}

export interface CreateVoiceInput {
  /** Public MP3 or WAV, longer than 10 seconds, one clear speaker. */
  audioUrl: string;
  webhook?: WebhookTarget;
}

export interface CreatePersonaSongInput {
  personaId: string;
  lyrics?: string;
  title?: string;
  /** Style description. */
  tags?: string;
  /** A sonic model name; omitted: no `mv` is sent. */
  model?: string;
  // No webhook: the spec registers webhooks on the producer creates and create-voice only.
}

/** A task the service accepted. */
export interface TaskAccepted {
  taskId: string;
  raw: Record<string, unknown>;
}

export interface CreditBalance {
  credits: number;
  extraCredits: number;
  raw: Record<string, unknown>;
}

const acceptedSchema = z.looseObject({
  task_id: z.string().min(1),
  message: z.string().optional().catch(undefined),
  code: z.number().optional().catch(undefined),
});

const numeric = z.union([z.number(), z.string().regex(/^-?\d+(\.\d+)?$/).transform(Number)]);

const creditsSchema = z.looseObject({
  [GUESSED_FIELDS.credits.credits]: numeric,
  [GUESSED_FIELDS.credits.extraCredits]: numeric.optional().catch(undefined),
});

/** Connection errors that prove the request never left this machine. */
const NOT_SENT_CODES = new Set([
  'ECONNREFUSED',
  'ENOTFOUND',
  'EAI_AGAIN',
  'ENETUNREACH',
  'EHOSTUNREACH',
  'UND_ERR_CONNECT_TIMEOUT',
  'ERR_INVALID_URL',
]);

interface RequestSpec<S extends z.ZodType> {
  operation: MusicApiOperation;
  method: 'GET' | 'POST';
  path: string;
  body?: Record<string, unknown>;
  schema: S;
}

export class MusicApiClient {
  readonly models: readonly string[];
  readonly sonicModels: readonly string[] | undefined;
  readonly personaSongCost: number;
  readonly timeoutMs: number;
  readonly #baseUrl: string;
  readonly #apiKey: string;
  readonly #fetch: Transport;
  readonly #log: Logger;
  readonly #onAnswer: ((answer: MusicApiAnswer) => void) | undefined;

  constructor(options: MusicApiClientOptions) {
    const base = new URL(options.baseUrl);
    if (base.protocol !== 'http:' && base.protocol !== 'https:') throw new Error('music API baseUrl must be http(s)');
    if (options.apiKey.length === 0) throw new Error('music API key is empty');
    this.#baseUrl = base.href.replace(/\/+$/, '');
    this.#apiKey = options.apiKey;
    this.#fetch = options.fetch ?? undiciTransport;
    this.#log = options.logger ?? silentLogger;
    this.#onAnswer = options.onAnswer;
    this.timeoutMs = options.timeoutMs ?? DEFAULT_TIMEOUT_MS;
    this.models = Object.freeze([...(options.models ?? SPEC_MODELS)]);
    this.sonicModels = options.sonicModels === undefined ? undefined : Object.freeze([...options.sonicModels]);
    this.personaSongCost = options.personaSongCost ?? DEFAULT_PERSONA_SONG_COST;
  }

  /** Credits one call of `operation` costs, from the one cost table. */
  costOf(operation: CostedOperation): number {
    return creditCost(operation, this.personaSongCost);
  }

  /** POST /api/v1/producer/create with `task_type: create_music`. One clip per task. */
  async createSong(input: CreateSongInput, options?: CallOptions): Promise<TaskAccepted> {
    const operation = 'createSong';
    const path = API_PATHS.producerCreate;
    if (blank(input.sound) && blank(input.lyrics)) {
      throw this.#refuse(operation, path, 'sound or lyrics is required', localText('musicApi.error.promptOrLyrics'));
    }
    this.#checkModel(operation, path, input.model, this.models);
    const fields = GUESSED_FIELDS.producerCreate;
    const body: Record<string, unknown> = { task_type: 'create_music' };
    if (!blank(input.sound)) body['sound'] = input.sound;
    if (!blank(input.lyrics)) body[fields.lyrics] = input.lyrics;
    if (!blank(input.title)) body[fields.title] = input.title;
    if (input.model !== undefined) body['mv'] = input.model;
    if (input.makeInstrumental !== undefined) body[fields.makeInstrumental] = input.makeInstrumental;
    if (input.seed !== undefined) body[fields.seed] = input.seed;
    return this.#accepted(operation, path, withWebhook(body, input.webhook), options);
  }

  /** POST /api/v1/producer/lyrics-create (task_type make_lyrics). */
  async createLyrics(input: CreateLyricsInput, options?: CallOptions): Promise<TaskAccepted> {
    const path = API_PATHS.producerLyrics;
    if (blank(input.prompt)) throw this.#refuse('createLyrics', path, 'prompt is required');
    const body = { [GUESSED_FIELDS.lyricsCreate.prompt]: input.prompt };
    return this.#accepted('createLyrics', path, withWebhook(body, input.webhook), options);
  }

  /** POST /api/v1/producer/video-clip (task_type video_clip). */
  async createVideoClip(input: CreateVideoClipInput, options?: CallOptions): Promise<TaskAccepted> {
    const path = API_PATHS.producerVideo;
    if (blank(input.clipId)) throw this.#refuse('createVideoClip', path, 'clipId is required');
    const body = { [GUESSED_FIELDS.videoClip.clipId]: input.clipId };
    return this.#accepted('createVideoClip', path, withWebhook(body, input.webhook), options);
  }

  /** POST /api/v1/producer/upload (task_type upload): registers an audio URL as a clip. */
  async uploadAudio(input: UploadAudioInput, options?: CallOptions): Promise<TaskAccepted> {
    const path = API_PATHS.producerUpload;
    if (blank(input.audioUrl)) throw this.#refuse('uploadAudio', path, 'audioUrl is required');
    const body = { [GUESSED_FIELDS.upload.audioUrl]: input.audioUrl };
    return this.#accepted('uploadAudio', path, withWebhook(body, input.webhook), options);
  }

  /** POST /api/v1/producer/download (task_type download): an mp3 or wav of a clip. */
  async requestDownload(input: RequestDownloadInput, options?: CallOptions): Promise<TaskAccepted> {
    const path = API_PATHS.producerDownload;
    if (blank(input.clipId)) throw this.#refuse('requestDownload', path, 'clipId is required');
    if (input.format !== 'mp3' && input.format !== 'wav') throw this.#refuse('requestDownload', path, 'format must be mp3 or wav');
    const fields = GUESSED_FIELDS.download;
    const body = { [fields.clipId]: input.clipId, [fields.format]: input.format };
    return this.#accepted('requestDownload', path, withWebhook(body, input.webhook), options);
  }

  /** GET /api/v1/producer/task/{id}: any producer task. Free. */
  async getProducerTask(taskId: string, options?: CallOptions): Promise<TaskStatus> {
    const path = API_PATHS.producerTask(taskId);
    if (blank(taskId)) throw this.#refuse('getProducerTask', path, 'taskId is required');
    const envelope = await this.request(
      { operation: 'getProducerTask', method: 'GET', path, schema: producerEnvelopeSchema },
      options,
    );
    return toTaskStatus(envelope);
  }

  /** POST /api/v1/sonic/create-voice: a voice persona from a recording. */
  async createVoice(input: CreateVoiceInput, options?: CallOptions): Promise<TaskAccepted> {
    const path = API_PATHS.sonicCreateVoice;
    if (blank(input.audioUrl)) throw this.#refuse('createVoice', path, 'audioUrl is required');
    return this.#accepted('createVoice', path, withWebhook({ audio_url: input.audioUrl }, input.webhook), options);
  }

  /** POST /api/v1/sonic/create with `task_type: persona_music`: a song sung by a persona. Polled: it takes no webhook. */
  async createPersonaSong(input: CreatePersonaSongInput, options?: CallOptions): Promise<TaskAccepted> {
    const operation = 'createPersonaSong';
    const path = API_PATHS.sonicCreate;
    if (blank(input.personaId)) throw this.#refuse(operation, path, 'personaId is required');
    if (this.sonicModels !== undefined) this.#checkModel(operation, path, input.model, this.sonicModels);
    const fields = GUESSED_FIELDS.personaSong;
    const body: Record<string, unknown> = {
      task_type: 'persona_music',
      [fields.personaId]: input.personaId,
      [fields.customMode]: true,
    };
    if (!blank(input.lyrics)) body[fields.lyrics] = input.lyrics;
    if (!blank(input.title)) body[fields.title] = input.title;
    if (!blank(input.tags)) body[fields.tags] = input.tags;
    if (input.model !== undefined) body[fields.model] = input.model;
    return this.#accepted(operation, path, body, options);
  }

  /** GET /api/v1/sonic/task/{id}: create-voice and persona_music tasks. Free. */
  async getSonicTask(taskId: string, options?: CallOptions): Promise<TaskStatus> {
    const path = API_PATHS.sonicTask(taskId);
    if (blank(taskId)) throw this.#refuse('getSonicTask', path, 'taskId is required');
    const envelope = await this.request({ operation: 'getSonicTask', method: 'GET', path, schema: sonicEnvelopeSchema }, options);
    return toTaskStatus(envelope);
  }

  /** GET /api/v1/get-credits: the account's balance. */
  async getCredits(options?: CallOptions): Promise<CreditBalance> {
    const result = await this.request(
      { operation: 'getCredits', method: 'GET', path: API_PATHS.getCredits, schema: creditsSchema },
      options,
    );
    const fields = GUESSED_FIELDS.credits;
    return {
      credits: result[fields.credits],
      extraCredits: result[fields.extraCredits] ?? 0,
      raw: result as Record<string, unknown>,
    };
  }

  async #accepted(
    operation: MusicApiOperation,
    path: string,
    body: Record<string, unknown>,
    options: CallOptions | undefined,
  ): Promise<TaskAccepted> {
    const result = await this.request({ operation, method: 'POST', path, body, schema: acceptedSchema }, options);
    return { taskId: result.task_id, raw: result as Record<string, unknown> };
  }

  /**
   * Sends one request and checks its answer. Protected so that tests and the operator check
   * can reach the retired routes through the same error mapping; the pipeline uses the
   * named operations above.
   */
  protected async request<S extends z.ZodType>(spec: RequestSpec<S>, options: CallOptions = {}): Promise<z.infer<S>> {
    const { operation, method, path } = spec;
    const started = Date.now();
    const controller = new AbortController();
    let timedOut = false;
    const timer = setTimeout(() => {
      timedOut = true;
      controller.abort();
    }, options.timeoutMs ?? this.timeoutMs);
    const onCallerAbort = (): void => controller.abort();
    if (options.signal?.aborted === true) controller.abort();
    options.signal?.addEventListener('abort', onCallerAbort, { once: true });

    const fail = (init: Omit<ConstructorParameters<typeof MusicApiError>[0], 'operation' | 'method' | 'path' | 'secrets'>) => {
      const error = new MusicApiError({ ...init, operation, method, path, secrets: [this.#apiKey] });
      this.#log.warn({ err: error, durationMs: Date.now() - started }, 'music API request failed');
      this.#onAnswer?.({ operation, at: Date.now(), durationMs: Date.now() - started, error });
      return error;
    };

    let response: TransportResponse | undefined;
    let text: string;
    try {
      response = await this.#fetch(`${this.#baseUrl}${path}`, {
        method,
        headers: {
          authorization: `Bearer ${this.#apiKey}`,
          accept: 'application/json',
          ...(spec.body === undefined ? {} : { 'content-type': 'application/json' }),
        },
        body: spec.body === undefined ? null : JSON.stringify(spec.body),
        signal: controller.signal,
      });
      text = await response.text();
    } catch (error) {
      const kind: MusicApiErrorKind = timedOut ? 'timeout' : options.signal?.aborted === true ? 'aborted' : 'network';
      if (response !== undefined && !response.ok) {
        // The body, and with it any `type`, was lost on the way: the status alone decides.
        const maybeAccepted = method === 'POST' && mayHaveCreatedTask(response.status, undefined);
        throw fail({ kind: kindForHttpError(response.status, undefined), status: response.status, maybeAccepted, cause: error });
      }
      const code = errorCode(error);
      const maybeAccepted = method === 'POST' && (response !== undefined || code === undefined || !NOT_SENT_CODES.has(code));
      throw fail({ kind, status: response?.status, maybeAccepted, cause: error, detail: code ?? innermostMessage(error) });
    } finally {
      clearTimeout(timer);
      options.signal?.removeEventListener('abort', onCallerAbort);
    }

    const json = parseJson(text);
    if (!response.ok) {
      const type = stringAt(json, 'type') ?? stringAt(json, 'error_type');
      throw fail({
        kind: kindForHttpError(response.status, type, text),
        status: response.status,
        type,
        maybeAccepted: method === 'POST' && mayHaveCreatedTask(response.status, type),
        detail: text,
        retryAfterMs: retryAfter(response.headers.get('retry-after')),
      });
    }
    if (json === undefined) {
      throw fail({ kind: 'bad_response', status: response.status, maybeAccepted: method === 'POST', detail: text });
    }
    const parsed = spec.schema.safeParse(json);
    if (!parsed.success) {
      const code = numberAt(json, 'code');
      if (method === 'POST' && code !== undefined && code >= 400) {
        // Some gateways answer 200 with the error in the body: read as that status would be.
        const type = stringAt(json, 'type');
        throw fail({ kind: kindForHttpError(code, type, text), status: code, type, maybeAccepted: mayHaveCreatedTask(code, type), detail: text });
      }
      throw fail({
        kind: 'bad_response',
        status: response.status,
        maybeAccepted: method === 'POST',
        detail: `${z.prettifyError(parsed.error)} in ${text}`,
      });
    }
    this.#log.debug({ operation, method, path, status: response.status, durationMs: Date.now() - started }, 'music API request');
    this.#onAnswer?.({ operation, at: Date.now(), durationMs: Date.now() - started });
    return parsed.data;
  }

  #checkModel(operation: MusicApiOperation, path: string, model: string | undefined, allowed: readonly string[]): void {
    if (model === undefined || allowed.includes(model)) return;
    throw this.#refuse(
      operation,
      path,
      `model ${JSON.stringify(model)} is not one of: ${allowed.join(', ')}`,
      localText('musicApi.error.unknownModel', { models: allowed.join(', ') }),
    );
  }

  #refuse(operation: MusicApiOperation, path: string, detail: string, userText?: LocalText): MusicApiError {
    return new MusicApiError({
      kind: 'validation',
      operation,
      method: operation.startsWith('get') ? 'GET' : 'POST',
      path,
      detail: redact(detail, [this.#apiKey]),
      userText,
      secrets: [this.#apiKey],
    });
  }
}

function withWebhook(body: Record<string, unknown>, webhook: WebhookTarget | undefined): Record<string, unknown> {
  if (webhook === undefined) return body;
  return {
    ...body,
    webhook_url: webhook.url,
    ...(webhook.secret === undefined ? {} : { webhook_secret: webhook.secret }),
  };
}

function blank(value: string | undefined): boolean {
  return value === undefined || value.trim().length === 0;
}

function parseJson(text: string): unknown {
  if (text.trim() === '') return undefined;
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return undefined;
  }
}

function stringAt(json: unknown, key: string): string | undefined {
  if (typeof json !== 'object' || json === null) return undefined;
  const value = (json as Record<string, unknown>)[key];
  return typeof value === 'string' ? value : undefined;
}

function numberAt(json: unknown, key: string): number | undefined {
  if (typeof json !== 'object' || json === null) return undefined;
  const value = (json as Record<string, unknown>)[key];
  return typeof value === 'number' ? value : undefined;
}

function innermostMessage(error: unknown): string | undefined {
  let current = error;
  while (current instanceof Error && current.cause instanceof Error) current = current.cause;
  return current instanceof Error ? current.message : undefined;
}

function retryAfter(header: string | null): number | undefined {
  if (header === null) return undefined;
  if (/^\d+$/.test(header.trim())) return Number(header.trim()) * 1000;
  const date = Date.parse(header);
  return Number.isNaN(date) ? undefined : Math.max(0, date - Date.now());
}
