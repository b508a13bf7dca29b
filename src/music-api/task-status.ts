/**
 * One task status for the pipeline, whichever way the service reports it: the producer
 * polling envelope (top-level `status`), sonic polling (`data[].state`), or a webhook body.
 */
import { z } from 'zod';
import { GUESSED_FIELDS } from './guessed-fields.js';
import { headerValue, type HeaderBag } from './webhook-signature.js';

const taskStateSchema = z.enum(['pending', 'running', 'succeeded', 'failed']);
export type TaskState = z.infer<typeof taskStateSchema>;

const clipSchema = z.object({
  /** `clip_id`, or `id` when a sonic clip names it so. */
  clipId: z.string().optional(),
  /** The clip's own state (sonic clips); undefined when it has none. */
  state: taskStateSchema.optional(),
  title: z.string().optional(),
  lyrics: z.string().optional(),
  tags: z.string().optional(),
  audioUrl: z.string().optional(),
  wavUrl: z.string().optional(),
  imageUrl: z.string().optional(),
  videoUrl: z.string().optional(),
  /** A download task's link, under one of the guessed names. */
  downloadUrl: z.string().optional(),
  /** Seconds; the service sometimes writes it as a string ("104.88"). */
  durationSeconds: z.number().optional(),
  raw: z.record(z.string(), z.unknown()),
});
export type Clip = z.infer<typeof clipSchema>;

/**
 * The status as the pipeline sees it. The schema checks one that travelled through a queue
 * (JSON in Redis) before it finishes a job.
 */
export const taskStatusSchema = z.object({
  state: taskStateSchema,
  /** The state word as the service wrote it, for logs. */
  upstreamState: z.string().optional(),
  clips: z.array(clipSchema),
  /** Text of a make_lyrics task. */
  lyrics: z.string().optional(),
  lyricsTitle: z.string().optional(),
  /** Result of a sonic create-voice task. */
  personaId: z.string().optional(),
  personaName: z.string().optional(),
  failureReason: z.string().optional(),
  /** The whole envelope as received, unknown fields included. */
  raw: z.record(z.string(), z.unknown()),
});
export type TaskStatus = z.infer<typeof taskStatusSchema>;

const optionalString = z.string().optional().catch(undefined);
const dataField = z.union([z.array(z.unknown()), z.record(z.string(), z.unknown()), z.null()]).optional();

/** GET /api/v1/producer/task/{id}: `code`, `message`, `data`, `status`; only `status` is required. */
export const producerEnvelopeSchema = z.looseObject({
  code: z.number().optional().catch(undefined),
  message: optionalString,
  status: z.string(),
  data: dataField,
});

/** GET /api/v1/sonic/task/{id}: the state sits in `data[].state`, or `data` is the persona. */
export const sonicEnvelopeSchema = z
  .looseObject({
    code: z.number().optional().catch(undefined),
    message: optionalString,
    status: optionalString,
    data: dataField,
  })
  .refine((envelope) => envelope.status !== undefined || (envelope.data !== undefined && envelope.data !== null), {
    message: 'neither status nor data',
  });

type Envelope = z.infer<typeof sonicEnvelopeSchema>;

const STATE_WORDS: Record<string, TaskState> = {
  pending: 'pending',
  queued: 'pending',
  submitted: 'pending',
  waiting: 'pending',
  created: 'pending',
  running: 'running',
  processing: 'running',
  in_progress: 'running',
  streaming: 'running',
  generating: 'running',
  success: 'succeeded',
  succeeded: 'succeeded',
  complete: 'succeeded',
  completed: 'succeeded',
  done: 'succeeded',
  failed: 'failed',
  failure: 'failed',
  error: 'failed',
  cancelled: 'failed',
  canceled: 'failed',
};

/**
 * Maps a state word, in either case. An unknown word counts as running: polling goes on and
 * the pipeline's deadline decides, rather than a new word from the service failing a song.
 */
export function toTaskState(word: string): TaskState {
  return STATE_WORDS[word.trim().toLowerCase()] ?? 'running';
}

/** Normalises a polling envelope (producer or sonic) already checked by one of the schemas. */
export function toTaskStatus(envelope: Envelope | z.infer<typeof producerEnvelopeSchema>): TaskStatus {
  const raw: Record<string, unknown> = envelope;
  const items = dataItems(envelope.data);
  const clips: Clip[] = [];
  let lyrics: { text: string; title: string | undefined } | undefined;
  let persona: { id: string; name: string | undefined } | undefined;

  const itemStates: string[] = [];
  // Each item is read for every result it may carry, since the envelope does not say which task
  // it ends: a create-voice result may carry an `id` or media beside its `persona_id`, a lyrics
  // item an `id` beside its text, and a persona song's clips may name their persona. The job's
  // kind then picks the result it asked for (a voice its persona, lyrics their text).
  for (const item of items) {
    const stateWord = stringField(item, GUESSED_FIELDS.results.clipState);
    if (stateWord !== undefined) itemStates.push(stateWord);
    const personaId = stringField(item, 'persona_id');
    if (personaId !== undefined) persona ??= { id: personaId, name: stringField(item, 'name') };
    const text = firstString(item, GUESSED_FIELDS.results.lyricsText);
    if (text !== undefined) lyrics ??= { text, title: stringField(item, 'title') };
    const clip = toClip(item);
    if (clip.clipId !== undefined || hasMedia(clip)) clips.push(clip);
  }

  const state = decideState(envelope.status, itemStates.map(toTaskState), clips, persona !== undefined);
  const upstreamState = envelope.status ?? (itemStates.length > 0 ? itemStates.join(',') : undefined);
  const status: TaskStatus = { state, upstreamState, clips, raw };
  if (lyrics !== undefined) {
    status.lyrics = lyrics.text;
    if (lyrics.title !== undefined) status.lyricsTitle = lyrics.title;
  }
  if (persona !== undefined) {
    status.personaId = persona.id;
    if (persona.name !== undefined) status.personaName = persona.name;
  }
  const reason = firstString(raw, GUESSED_FIELDS.results.failureReason) ?? firstReasonOf(items);
  if (state === 'failed' && reason !== undefined) status.failureReason = reason.slice(0, 300);
  return status;
}

function decideState(
  topLevel: string | undefined,
  states: readonly TaskState[],
  clips: readonly Clip[],
  hasPersona: boolean,
): TaskState {
  if (topLevel !== undefined) return toTaskState(topLevel);
  if (states.length > 0) {
    if (states.every((state) => state === 'pending')) return 'pending';
    if (states.some((state) => state === 'pending' || state === 'running')) return 'running';
    // All ended: one usable clip of two is a success; the failed one is left out by the caller.
    return states.includes('succeeded') ? 'succeeded' : 'failed';
  }
  if (hasPersona) return 'succeeded';
  if (clips.length > 0 && clips.every((clip) => clip.audioUrl !== undefined)) return 'succeeded';
  return 'pending';
}

function dataItems(data: unknown): Record<string, unknown>[] {
  if (Array.isArray(data)) return data.filter(isRecord);
  if (isRecord(data)) return [data];
  return [];
}

function toClip(item: Record<string, unknown>): Clip {
  const stateWord = stringField(item, GUESSED_FIELDS.results.clipState);
  return {
    clipId: stringField(item, 'clip_id') ?? stringField(item, 'id'),
    state: stateWord === undefined ? undefined : toTaskState(stateWord),
    title: stringField(item, 'title'),
    lyrics: stringField(item, 'lyrics'),
    tags: stringField(item, 'tags'),
    audioUrl: stringField(item, 'audio_url'),
    wavUrl: stringField(item, 'wav_url'),
    imageUrl: stringField(item, 'image_url'),
    videoUrl: stringField(item, 'video_url'),
    downloadUrl: firstString(item, GUESSED_FIELDS.results.downloadUrl),
    durationSeconds: seconds(item['duration']),
    raw: item,
  };
}

function hasMedia(clip: Clip): boolean {
  return [clip.audioUrl, clip.wavUrl, clip.imageUrl, clip.videoUrl, clip.downloadUrl].some((url) => url !== undefined);
}

function firstReasonOf(items: readonly Record<string, unknown>[]): string | undefined {
  for (const item of items) {
    const reason = firstString(item, GUESSED_FIELDS.results.failureReason);
    if (reason !== undefined) return reason;
  }
  return undefined;
}

function seconds(value: unknown): number | undefined {
  const number = typeof value === 'string' && value.trim() !== '' ? Number(value) : value;
  return typeof number === 'number' && Number.isFinite(number) && number >= 0 ? number : undefined;
}

function stringField(record: Record<string, unknown>, key: string): string | undefined {
  const value = record[key];
  return typeof value === 'string' && value.length > 0 ? value : undefined;
}

function firstString(record: Record<string, unknown>, keys: readonly string[]): string | undefined {
  for (const key of keys) {
    const value = stringField(record, key);
    if (value !== undefined) return value;
  }
  return undefined;
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

export interface WebhookEvent {
  /** `task_id` in the body; absent from bodies that are a bare polling envelope. */
  taskId: string | undefined;
  /** `producer` or `sonic` when the service says so. */
  platform: string | undefined;
  /** `song.completed`, `song.failed`, `song.streaming`: the body's `event`, which the signature covers. */
  event: string | undefined;
  /**
   * X-Webhook-Event as sent. Outside the signature, so anyone replaying a signed body can change
   * it: for logs only, never for the state.
   */
  headerEvent: string | undefined;
  /**
   * X-Webhook-Id (or Idempotency-Key): the real service's id of this event. Outside the signature,
   * so anyone can change it: the HTTP server does not deduplicate by it.
   */
  eventId: string | undefined;
  status: TaskStatus;
}

const webhookBodySchema = z.looseObject({
  task_id: optionalString,
  platform: optionalString,
  event: optionalString,
  status: optionalString,
  data: dataField,
});

/**
 * Reads a webhook body (the polling envelope, sometimes with `task_id`, `platform` and `event`
 * added) into the same status the poll gives. Verify the signature over the raw body first.
 * Throws `SyntaxError` for a body that is not JSON, `z.ZodError` for one that is no envelope.
 */
export function normaliseWebhookPayload(payload: unknown, headers?: HeaderBag): WebhookEvent {
  const parsed: unknown =
    typeof payload === 'string' || Buffer.isBuffer(payload) ? JSON.parse(payload.toString()) : payload;
  const body = webhookBodySchema.parse(parsed);
  const event = body.event;
  const status = toTaskStatus(body);
  // A bare envelope may say nothing about the state; the real service's event names, in the signed body, do.
  if (body.status === undefined && status.upstreamState === undefined && event !== undefined) {
    if (event.endsWith('.failed')) status.state = 'failed';
    else if (event.endsWith('.completed') && status.state === 'pending') status.state = 'succeeded';
  }
  const headerEvent = headers === undefined ? undefined : headerValue(headers, 'x-webhook-event');
  const eventId =
    headers === undefined ? undefined : (headerValue(headers, 'x-webhook-id') ?? headerValue(headers, 'idempotency-key'));
  return { taskId: body.task_id, platform: body.platform, event, headerEvent, eventId, status };
}
