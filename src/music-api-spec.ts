/**
 * Facts written in the music API's specification (`music-api-spec.md`): plain constants with
 * no imports, at the bottom of the layers, because the configuration takes its default model
 * list from here as well as the client. (The simulator keeps its own reading.)
 */

/** The spec's eleven `mv` values, exactly as written (the service matches spaces and case). */
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

/** The model the service applies when a create request carries no `mv`. */
export const SPEC_DEFAULT_MODEL = 'ModelB-2.0';

/** Task types on POST /api/v1/producer/create that answer 410 `endpoint_retired`. */
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

export const PRODUCER_TASK_TYPES = ['create_music', 'make_lyrics', 'video_clip', 'upload', 'download'] as const;
export type ProducerTaskType = (typeof PRODUCER_TASK_TYPES)[number];

/** Sonic task types this project uses. `create_voice` is our name; the spec gives none. */
export type SonicTaskType = 'create_voice' | 'persona_music';

export const MAX_WEBHOOK_URL_LENGTH = 1024;

export const DOWNLOAD_FORMATS = ['mp3', 'wav'] as const;
export type DownloadFormat = (typeof DOWNLOAD_FORMATS)[number];

/** Producer task `status` values. */
export const PRODUCER_STATES = ['PENDING', 'RUNNING', 'SUCCESS', 'FAILED'] as const;

/** Sonic clip `state` values (and the retired family's status values). */
export const SONIC_STATES = ['pending', 'running', 'succeeded', 'failed'] as const;

export const API_PATHS = {
  producerCreate: '/api/v1/producer/create',
  producerLyrics: '/api/v1/producer/lyrics-create',
  producerVideo: '/api/v1/producer/video-clip',
  producerUpload: '/api/v1/producer/upload',
  producerDownload: '/api/v1/producer/download',
  producerTask: (taskId: string) => `/api/v1/producer/task/${encodeURIComponent(taskId)}`,
  sonicCreateVoice: '/api/v1/sonic/create-voice',
  sonicCreate: '/api/v1/sonic/create',
  sonicTask: (taskId: string) => `/api/v1/sonic/task/${encodeURIComponent(taskId)}`,
  // The path is not in the spec; the notes give it.
  getCredits: '/api/v1/get-credits',
} as const;

/** The spec's credit table, keyed by operation. */
export const OPERATION_COSTS = {
  /** POST /api/v1/producer/create */
  song: 10,
  /** POST /api/v1/producer/lyrics-create */
  lyrics: 1,
  /** POST /api/v1/producer/video-clip */
  video: 5,
  /** POST /api/v1/producer/upload */
  upload: 2,
  /** POST /api/v1/producer/download */
  download: 2,
  /** POST /api/v1/sonic/create-voice */
  voice: 4,
  /** Sonic concat music (the spec gives its price, not its path). No command uses it yet. */
  concat: 2,
  /** GET /api/v1/producer/task/{id} and /api/v1/sonic/task/{id}: free for every task type. */
  poll: 0,
} as const satisfies Record<string, number>;
