/**
 * The simulator's own reading of the music API contract: routes, fields, prices, models and
 * webhook signing. It imports nothing from the bot's client; see
 * docs/decisions/music-api-sim-own-contract.md. Each entry cites its source: "spec <section>"
 * (the specification), "notes <section>" (the real service's documentation), or "sim" (the
 * simulator's own choice where neither says).
 */
import { createHmac } from 'node:crypto';

/** The two operation groups whose tasks the simulator runs. */
export type Platform = 'producer' | 'sonic';

/** One operation that creates a task. */
export interface CreateOperation {
  method: 'POST';
  path: string;
  platform: Platform;
  /** The task type it creates (for concurrency limits and the control API). */
  taskType: string;
}

/**
 * The operations that create a task, by the simulator's name for each. Paths and task types:
 * spec "Endpoints" (and "Resources and their fields: Task"), except where noted.
 */
export const CREATE_OPERATIONS = {
  /** spec "POST {base_url}/api/v1/producer/create". */
  song: { method: 'POST', path: '/api/v1/producer/create', platform: 'producer', taskType: 'create_music' },
  /** spec "Other producer operations". */
  lyrics: { method: 'POST', path: '/api/v1/producer/lyrics-create', platform: 'producer', taskType: 'make_lyrics' },
  /** spec "Other producer operations". */
  video: { method: 'POST', path: '/api/v1/producer/video-clip', platform: 'producer', taskType: 'video_clip' },
  /** spec "Other producer operations". */
  upload: { method: 'POST', path: '/api/v1/producer/upload', platform: 'producer', taskType: 'upload' },
  /** spec "Other producer operations". */
  download: { method: 'POST', path: '/api/v1/producer/download', platform: 'producer', taskType: 'download' },
  /**
   * Path: spec "POST {base_url}/api/v1/sonic/create-voice". Task type: sim; the spec names
   * none and it never goes over the wire (the client happens to call it the same).
   */
  voice: { method: 'POST', path: '/api/v1/sonic/create-voice', platform: 'sonic', taskType: 'create_voice' },
  /** spec "Voice persona (sonic)": POST /api/v1/sonic/create with task_type persona_music. */
  personaSong: { method: 'POST', path: '/api/v1/sonic/create', platform: 'sonic', taskType: 'persona_music' },
} as const satisfies Record<string, CreateOperation>;

export type CreateOperationName = keyof typeof CREATE_OPERATIONS;

/** The create operation served on `path`, if any. */
export function createOperationAt(path: string): CreateOperationName | undefined {
  const names = Object.keys(CREATE_OPERATIONS) as CreateOperationName[];
  return names.find((name) => CREATE_OPERATIONS[name].path === path);
}

/** Read-only routes, all GET. */
export const READ_ROUTES = {
  /** spec "GET {base_url}/api/v1/producer/task/{task_id}". */
  producerTask: /^\/api\/v1\/producer\/task\/([^/]+)$/,
  /** spec "POST .../sonic/create-voice", workflow step 3: GET /api/v1/sonic/task/{task_id}. */
  sonicTask: /^\/api\/v1\/sonic\/task\/([^/]+)$/,
  /** Method: spec "What the service does" (get-credits, GET). Path: notes "get-credits". */
  getCredits: '/api/v1/get-credits',
} as const;

/**
 * The spec's `{retired_family}` (spec "Retired family"): its real path name is not given, so
 * the simulator answers 410 under each of these plausible names (sim).
 */
export const RETIRED_FAMILIES = ['music', 'vocal', 'bgm', 'vocal-music', 'background-music'] as const;

/** spec "Events" (Registration): every producer create and sonic create-voice take these. */
const WEBHOOK_FIELDS = { webhookUrl: 'webhook_url', webhookSecret: 'webhook_secret' } as const;

/**
 * Every body field each create operation takes, by role, one name per role. Any other field
 * is refused (sim: the spec is silent on unlisted fields), so a misspelling fails loudly.
 */
export const REQUEST_FIELDS = {
  song: {
    /** spec "POST .../producer/create". */
    taskType: 'task_type',
    /** spec "POST .../producer/create". */
    sound: 'sound',
    /** spec "POST .../producer/create". */
    model: 'mv',
    /** notes "Producer create" (the spec: "not shown"). */
    lyrics: 'lyrics',
    /** notes "Producer create": up to 80 characters. */
    title: 'title',
    /** notes "Producer create": a boolean. */
    makeInstrumental: 'make_instrumental',
    /** notes "Producer create": a number written as a string. */
    seed: 'seed',
    ...WEBHOOK_FIELDS,
  },
  /** notes "Other producer operations": "a prompt field" (public client code). */
  lyrics: { prompt: 'prompt', ...WEBHOOK_FIELDS },
  /** notes "Other producer operations": `{ clip_id }` (public client code). */
  video: { clipId: 'clip_id', ...WEBHOOK_FIELDS },
  /**
   * notes "Other producer operations": an audio URL field, "name unconfirmed; the sonic
   * group's upload calls it `url`". The simulator takes that name.
   */
  upload: { audioUrl: 'url', ...WEBHOOK_FIELDS },
  /** notes "Other producer operations": `{ clip_id, format }` (public client code). */
  download: { clipId: 'clip_id', format: 'format', ...WEBHOOK_FIELDS },
  /** spec "POST .../sonic/create-voice". */
  voice: { audioUrl: 'audio_url', ...WEBHOOK_FIELDS },
  /**
   * spec "Voice persona (sonic)": `task_type`, `persona_id`. The rest: notes "Sonic". No
   * webhook fields: spec "Events" registers them on the producer creates and create-voice
   * only, and the notes do not show the sonic create taking them, so a persona song is polled.
   */
  personaSong: {
    taskType: 'task_type',
    personaId: 'persona_id',
    customMode: 'custom_mode',
    /** notes "Sonic": the lyrics travel in `prompt` here. */
    lyrics: 'prompt',
    title: 'title',
    tags: 'tags',
    /** notes "Sonic": sonic model names such as `sonic-v4-5`; any string is accepted. */
    model: 'mv',
  },
} as const satisfies Record<CreateOperationName, Record<string, string>>;

/** Every field name `operation` takes. */
export function requestFieldNames(operation: CreateOperationName): string[] {
  return Object.values(REQUEST_FIELDS[operation]);
}

/**
 * Names in answers that are not plain spec fields. Spec fields (`task_id`, `code`, `message`,
 * `data`, `status`, `clip_id`, `audio_url`, `wav_url`, `image_url`, `video_url`, `persona_id`,
 * `name`) are written where the answers are built.
 */
export const RESPONSE_FIELDS = {
  /** notes "Sonic": a sonic clip's state (`pending`, `running`, `succeeded`, `failed`). */
  clipState: 'state',
  /** notes "Producer create": a clip also carries these. */
  clipTitle: 'title',
  clipSound: 'sound',
  clipLyrics: 'lyrics',
  clipTags: 'tags',
  clipDuration: 'duration',
  /** sim: where a make_lyrics task's text sits (spec and notes: "not shown"); a name the client reads. */
  lyricsText: 'text',
  /** sim: a download task's link (spec: "not shown"); like lyricsText, one the client reads. */
  downloadUrl: 'download_url',
  /** sim: why a task failed (not shown anywhere); like lyricsText, one the client reads. */
  failureReason: 'error',
  /** notes "get-credits": `{ credits, extra_credits }`. */
  credits: 'credits',
  extraCredits: 'extra_credits',
  /** Error bodies: `type` is spec "Errors"; `message` next to it is notes "Errors". */
  errorType: 'type',
  errorMessage: 'message',
} as const;

/**
 * Credits per call: spec "What the service does", credit table. Polling is free for every
 * task type. Sonic concat music is priced there but its route is not shown, so the simulator
 * lists its price and serves no route for it. The sonic persona song is not in the table: see
 * DEFAULT_PERSONA_SONG_COST.
 */
export const COSTS = {
  song: 10,
  lyrics: 1,
  video: 5,
  upload: 2,
  download: 2,
  voice: 4,
  concat: 2,
  poll: 0,
} as const satisfies Record<Exclude<CreateOperationName, 'personaSong'> | 'concat' | 'poll', number>;

/**
 * sim: the spec gives no price for a persona song and the notes say "make it configuration"
 * (option `personaSongCost`). The default must equal the client's, or balances disagree.
 */
export const DEFAULT_PERSONA_SONG_COST = 10;

/** Credits one create of `operation` costs. */
export function costOf(operation: CreateOperationName, personaSongCost: number): number {
  return operation === 'personaSong' ? personaSongCost : COSTS[operation];
}

/**
 * spec "POST .../producer/create": the eleven `mv` values, matched exactly (spaces and case).
 * The real service spells them differently (notes "Models": `FUZZ-2.0`, `Lyria 3 Pro`), so
 * the accepted list is the `models` option; these are its default.
 */
export const SPEC_MODELS = [
  'ModelA 3 Pro',
  'ModelA 3 preview',
  'ModelB-3-Demo',
  'ModelB-2.0',
  'ModelB-2.0 Pro',
  'ModelB-2.0 Raw',
  'ModelB-1.1 Pro',
  'ModelB-1.1',
  'ModelB-1.0 Pro',
  'ModelB-1.0',
  'ModelB-0.8',
] as const;

/** spec "POST .../producer/create" and "Versioning" 2: the model used when `mv` is omitted. */
export const DEFAULT_MODEL = 'ModelB-2.0';

/** spec "Other producer operations" (download: "mp3 or wav"); field name above. */
export const DOWNLOAD_FORMATS = ['mp3', 'wav'] as const;

/** spec "Versioning" 3: task types on producer create that answer 410 `endpoint_retired`. */
export const RETIRED_TASK_TYPES = [
  'cover_music',
  'cover_upload_music',
  'extend_music',
  'extend_upload_music',
  'replace_music',
  'replace_upload_music',
  'swap_music_vocals',
  'swap_upload_music_vocals',
  'swap_music_sound',
  'swap_upload_music_sound',
  'music_variation',
] as const;

/** spec "Events" and "Limits": `webhook_url` is HTTPS and at most this long. */
export const MAX_WEBHOOK_URL_LENGTH = 1024;

/**
 * How webhooks are signed:
 * - `spec` (spec "Events"): `X-Webhook-Signature` is the HMAC-SHA256 of the body keyed with
 *   the task's `webhook_secret`. The spec does not show the encoding; hex by default (sim), as
 *   the real service writes its digests (notes "Webhooks"), or base64 / base64url
 *   (`SignatureEncoding`), which a receiver must accept too (notes "Webhooks").
 * - `timestamped` (notes "Webhooks", the real service today): `sha256=<hex>` of the HMAC over
 *   `"<X-Webhook-Timestamp>.<raw body>"`, the timestamp in Unix seconds.
 */
export type SignatureScheme = 'spec' | 'timestamped';

/** How the `spec` scheme writes its 32 bytes. */
export type SignatureEncoding = 'hex' | 'base64' | 'base64url';

/** notes "Webhooks" (the signature header alone is spec "Events"). */
export const WEBHOOK_HEADERS = {
  signature: 'X-Webhook-Signature',
  timestamp: 'X-Webhook-Timestamp',
  id: 'X-Webhook-Id',
  idempotencyKey: 'Idempotency-Key',
  event: 'X-Webhook-Event',
} as const;

/**
 * notes "Webhooks": `X-Webhook-Event` values the simulator sends. It sends `song.streaming` (an
 * intermediate callback, the RUNNING polling body) only for the `webhook-out-of-order` fault,
 * after the final one: the spec triggers callbacks on completion alone.
 */
export const WEBHOOK_EVENTS = { completed: 'song.completed', failed: 'song.failed', streaming: 'song.streaming' } as const;

/**
 * The signature headers for a webhook body, in `scheme`. `timestamp` in Unix seconds, default
 * now; `encoding` for the spec scheme, default hex.
 */
export function signWebhookBody(
  body: string,
  secret: string,
  scheme: SignatureScheme,
  timestamp: number = Math.floor(Date.now() / 1000),
  encoding: SignatureEncoding = 'hex',
): Record<string, string> {
  const mac = createHmac('sha256', secret);
  if (scheme === 'spec') {
    return { [WEBHOOK_HEADERS.signature]: mac.update(body, 'utf8').digest(encoding) };
  }
  const signed = mac.update(`${timestamp}.${body}`, 'utf8').digest('hex');
  return { [WEBHOOK_HEADERS.signature]: `sha256=${signed}`, [WEBHOOK_HEADERS.timestamp]: String(timestamp) };
}
