/** Every failure of a music API call, sorted into a small set of kinds the pipeline acts on. */
import { LOG_FORM } from '../logger.js';
import { truncate } from '../text.js';
import { localText, type LocalText } from '../i18n/index.js';

export type MusicApiErrorKind =
  | 'validation'
  | 'unauthorized'
  | 'insufficient_credits'
  | 'endpoint_retired'
  | 'not_found'
  | 'rate_limited'
  | 'internal'
  | 'upstream'
  | 'network'
  | 'timeout'
  | 'aborted'
  | 'bad_response';

export type MusicApiOperation =
  | 'createSong'
  | 'createLyrics'
  | 'createVideoClip'
  | 'uploadAudio'
  | 'requestDownload'
  | 'getProducerTask'
  | 'createVoice'
  | 'createPersonaSong'
  | 'getSonicTask'
  | 'getCredits'
  | 'webhook'
  | 'request';

/**
 * Kinds worth trying again later, provided no task may already exist upstream: on a creating
 * POST only a 429, a 502 `upstream_error` or a request that never left are sent again (see
 * `mayHaveCreatedTask`).
 */
export const TRANSIENT_KINDS: ReadonlySet<MusicApiErrorKind> = new Set([
  'rate_limited',
  'internal',
  'upstream',
  'network',
  'timeout',
  'bad_response',
]);

/** Fixed texts a Discord user may see (catalogue messages). Never built from upstream text. */
export const MUSIC_API_ERROR_TEXTS: Record<MusicApiErrorKind, LocalText> = {
  validation: localText('musicApi.error.validation'),
  unauthorized: localText('musicApi.error.unauthorized'),
  insufficient_credits: localText('musicApi.error.insufficientCredits'),
  endpoint_retired: localText('musicApi.error.endpointRetired'),
  not_found: localText('musicApi.error.notFound'),
  rate_limited: localText('musicApi.error.rateLimited'),
  internal: localText('musicApi.error.internal'),
  upstream: localText('musicApi.error.upstream'),
  network: localText('musicApi.error.network'),
  timeout: localText('musicApi.error.timeout'),
  aborted: localText('musicApi.error.aborted'),
  bad_response: localText('musicApi.error.badResponse'),
};

const MAYBE_ACCEPTED_TEXT = localText('musicApi.error.maybeAccepted');

/** Upstream error `type` values and the kind each names. */
const KIND_BY_TYPE: Record<string, MusicApiErrorKind> = {
  validation_error: 'validation',
  unauthorized: 'unauthorized',
  insufficient_credits: 'insufficient_credits',
  endpoint_retired: 'endpoint_retired',
  rate_limited: 'rate_limited',
  internal_error: 'internal',
  upstream_error: 'upstream',
  not_found: 'not_found',
};

/** The longest piece of an upstream body kept in `detail`. */
export const MAX_DETAIL_LENGTH = 300;

export interface MusicApiErrorInit {
  kind: MusicApiErrorKind;
  operation: MusicApiOperation;
  method: string;
  path: string;
  status?: number | undefined;
  type?: string | undefined;
  maybeAccepted?: boolean | undefined;
  detail?: string | undefined;
  retryAfterMs?: number | undefined;
  /** Replaces the kind's fixed text; only for text written in this codebase, never upstream text. */
  userText?: LocalText | undefined;
  /** A low-level cause; only its name, code and message are kept, with secrets removed. */
  cause?: unknown;
  /** Strings to blank out of every text the error carries (the API key). */
  secrets?: readonly string[];
}

/**
 * A failed music API call. `message` and `detail` are for logs; `userText` is the only
 * text meant for a Discord user (a catalogue message, written in the reader's language). Never carries the API key, nor the full upstream body.
 */
export class MusicApiError extends Error {
  override readonly name = 'MusicApiError';
  readonly kind: MusicApiErrorKind;
  readonly operation: MusicApiOperation;
  readonly method: string;
  readonly path: string;
  /** HTTP status of the answer; undefined when none arrived (network failure, timeout). */
  readonly status: number | undefined;
  /** The upstream error `type`, as sent. */
  readonly type: string | undefined;
  /**
   * True when a task may exist upstream despite this error: a POST that timed out, was cut
   * off after it left, was answered a 5xx other than the spec's 502 `upstream_error` (in the
   * status or in a 200's `code`), or was answered 2xx with a body we could not read. Never sent again: the pipeline refunds
   * the job and waits for a webhook that may still bring the task.
   */
  readonly maybeAccepted: boolean;
  /** Whether sending the same request again may succeed. Always false when `maybeAccepted`. */
  readonly retryable: boolean;
  /** Hint from a Retry-After header, when the service sent one. */
  readonly retryAfterMs: number | undefined;
  /** Text safe to show a Discord user. */
  readonly userText: LocalText;
  /** A truncated, secret-free excerpt of the upstream answer, for logs only. */
  readonly detail: string | undefined;

  constructor(init: MusicApiErrorInit) {
    const secrets = init.secrets ?? [];
    const answer = [init.status, init.type === undefined ? undefined : redact(init.type, secrets).slice(0, 60)]
      .filter((part) => part !== undefined)
      .join(' ');
    super(`music API ${init.method} ${init.path} failed (${init.kind})${answer === '' ? '' : `: ${answer}`}`);
    if (init.cause !== undefined) {
      Object.defineProperty(this, 'cause', { value: sanitiseCause(init.cause, secrets), enumerable: false });
    }
    this.kind = init.kind;
    this.operation = init.operation;
    this.method = init.method;
    this.path = init.path;
    this.status = init.status;
    this.type = init.type === undefined ? undefined : redact(init.type, secrets).slice(0, 60);
    this.maybeAccepted = init.maybeAccepted ?? false;
    this.retryable = TRANSIENT_KINDS.has(init.kind) && !this.maybeAccepted;
    this.retryAfterMs = init.retryAfterMs;
    this.detail = init.detail === undefined ? undefined : truncate(redact(init.detail, secrets), MAX_DETAIL_LENGTH);
    this.userText = init.userText ?? (this.maybeAccepted ? MAYBE_ACCEPTED_TEXT : MUSIC_API_ERROR_TEXTS[init.kind]);
  }

  /** What a log line holds: the key and the service's secrets were cut out when the error was made. */
  [LOG_FORM](): Record<string, unknown> {
    return this.toJSON();
  }

  /** What a structured log line should hold. */
  toJSON(): Record<string, unknown> {
    return {
      name: this.name,
      message: this.message,
      kind: this.kind,
      operation: this.operation,
      method: this.method,
      path: this.path,
      status: this.status,
      type: this.type,
      retryable: this.retryable,
      maybeAccepted: this.maybeAccepted,
      retryAfterMs: this.retryAfterMs,
      detail: this.detail,
    };
  }
}

export function isMusicApiError(value: unknown): value is MusicApiError {
  return value instanceof MusicApiError;
}

/**
 * The kind of an HTTP error answer, from its status and upstream `type` together. A known
 * `type` is the more precise of the two; the status decides when the type is missing or new.
 * 403 is the real service's older answer to insufficient credits; other 403s are refusals.
 */
export function kindForHttpError(status: number, type: string | undefined, bodyText = ''): MusicApiErrorKind {
  const byType = type === undefined ? undefined : KIND_BY_TYPE[type];
  if (byType !== undefined) return byType;
  switch (status) {
    case 400:
    case 422:
      return 'validation';
    case 401:
      return 'unauthorized';
    case 402:
      return 'insufficient_credits';
    case 403:
      return /credit|balance|quota|tier|subscription/i.test(`${type ?? ''} ${bodyText}`)
        ? 'insufficient_credits'
        : 'unauthorized';
    case 404:
      return 'not_found';
    case 410:
      return 'endpoint_retired';
    case 429:
      return 'rate_limited';
    case 500:
      return 'internal';
    case 502:
    case 503:
    case 504:
      return 'upstream';
    default:
      if (status >= 500) return 'internal';
      // Any other refusal (405, 409, 413, ...): sending the same request again will not help.
      return status >= 400 ? 'validation' : 'bad_response';
  }
}

/**
 * Whether an error answer to a creating POST leaves a task possibly made upstream. The spec asks
 * for a retry of 429 ("wait and retry") and of 502 with `type: upstream_error` ("retry after a
 * short backoff") only. Any other 5xx may come after the service took the request: a 500, a 503,
 * a 504, and a 502 without that `type` (a proxy's page, a body lost on the way). 4xx are refusals.
 */
export function mayHaveCreatedTask(status: number, type: string | undefined): boolean {
  return status >= 500 && !(status === 502 && type === 'upstream_error');
}

export function redact(text: string, secrets: readonly string[]): string {
  let result = text;
  for (const secret of secrets) {
    if (secret.length > 0) result = result.split(secret).join('[redacted]');
  }
  return result;
}

/** A copy of a low-level error with nothing but its name, code and a redacted message. */
function sanitiseCause(cause: unknown, secrets: readonly string[]): Error {
  const original = cause instanceof Error ? cause : new Error(String(cause));
  const copy = new Error(truncate(redact(original.message, secrets), MAX_DETAIL_LENGTH));
  copy.name = original.name;
  const code = errorCode(cause);
  if (code !== undefined) Object.assign(copy, { code });
  copy.stack = `${copy.name}: ${copy.message}`;
  return copy;
}

/** The system error code of a fetch failure (`ECONNREFUSED`, ...), looked up through causes. */
export function errorCode(error: unknown): string | undefined {
  let current: unknown = error;
  for (let depth = 0; depth < 5 && typeof current === 'object' && current !== null; depth += 1) {
    const record = current as { code?: unknown; cause?: unknown; errors?: unknown };
    if (typeof record.code === 'string') return record.code;
    if (Array.isArray(record.errors) && record.errors.length > 0) {
      current = record.errors[0];
      continue;
    }
    current = record.cause;
  }
  return undefined;
}
