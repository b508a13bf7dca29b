/** The simulator's checks of request bodies, as the spec states them (400 `validation_error`). */
import { z } from 'zod';
import { GUESSED_FIELDS } from '../../music-api/guessed-fields.js';
import { DOWNLOAD_FORMATS, MAX_WEBHOOK_URL_LENGTH, RETIRED_TASK_TYPES } from '../../music-api/spec.js';

export interface Refusal {
  status: number;
  type: string;
  message: string;
}

export interface ValidationContext {
  models: readonly string[];
  allowHttpWebhooks: boolean;
}

const webhookFields = {
  webhook_url: z.string().optional(),
  webhook_secret: z.string().optional(),
};

const created = GUESSED_FIELDS.producerCreate;
const persona = GUESSED_FIELDS.personaSong;

const schemas = {
  createMusic: z.object({
    task_type: z.string(),
    sound: z.string().optional(),
    [created.lyrics]: z.string().optional(),
    [created.title]: z.string().max(80).optional(),
    mv: z.string().optional(),
    [created.makeInstrumental]: z.boolean().optional(),
    [created.seed]: z.string().regex(/^\d+$/, 'a number written as a string').optional(),
    ...webhookFields,
  }),
  lyrics: z.object({ [GUESSED_FIELDS.lyricsCreate.prompt]: z.string().min(1), ...webhookFields }),
  video: z.object({ [GUESSED_FIELDS.videoClip.clipId]: z.string().min(1), ...webhookFields }),
  upload: z.object({ [GUESSED_FIELDS.upload.audioUrl]: z.url({ protocol: /^https?$/ }), ...webhookFields }),
  download: z.object({
    [GUESSED_FIELDS.download.clipId]: z.string().min(1),
    [GUESSED_FIELDS.download.format]: z.enum(DOWNLOAD_FORMATS),
    ...webhookFields,
  }),
  createVoice: z.object({ audio_url: z.url({ protocol: /^https?$/ }), ...webhookFields }),
  personaMusic: z.object({
    task_type: z.literal('persona_music'),
    [persona.personaId]: z.string().min(1),
    [persona.customMode]: z.boolean().optional(),
    [persona.lyrics]: z.string().optional(),
    [persona.title]: z.string().optional(),
    [persona.tags]: z.string().optional(),
    [persona.model]: z.string().optional(),
    ...webhookFields,
  }),
} as const;

export type BodyKind = keyof typeof schemas;

const RETIRED: ReadonlySet<string> = new Set(RETIRED_TASK_TYPES);

/** A refusal for the body, or undefined when it is acceptable. */
export function checkBody(kind: BodyKind, body: unknown, context: ValidationContext): Refusal | undefined {
  if (typeof body !== 'object' || body === null || Array.isArray(body)) {
    return invalid('the body must be a JSON object');
  }
  const record = body as Record<string, unknown>;
  if (kind === 'createMusic' && typeof record['task_type'] === 'string') {
    const taskType = record['task_type'];
    if (RETIRED.has(taskType)) {
      return { status: 410, type: 'endpoint_retired', message: `task_type ${taskType} is retired; use create_music` };
    }
    if (taskType !== 'create_music') return invalid('task_type: only create_music is accepted on /create');
  }
  const parsed = schemas[kind].safeParse(record);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    return invalid(`${issue?.path.join('.') || 'body'}: ${issue?.message ?? 'invalid'}`);
  }
  if (kind === 'createMusic') {
    if (!present(record['sound']) && !present(record[created.lyrics])) return invalid('sound or lyrics is required');
    const mv = record['mv'];
    if (typeof mv === 'string' && !context.models.includes(mv)) {
      return invalid(`mv: ${JSON.stringify(mv)} is not an allowed model`);
    }
  }
  return checkWebhookUrl(record['webhook_url'], context.allowHttpWebhooks);
}

function checkWebhookUrl(value: unknown, allowHttp: boolean): Refusal | undefined {
  if (value === undefined) return undefined;
  if (typeof value !== 'string') return invalid('webhook_url: expected a string');
  if (value.length > MAX_WEBHOOK_URL_LENGTH) return invalid(`webhook_url: longer than ${MAX_WEBHOOK_URL_LENGTH} characters`);
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    return invalid('webhook_url: not a URL');
  }
  if (url.protocol === 'https:') return undefined;
  if (url.protocol === 'http:' && allowHttp && isLoopback(url.hostname)) return undefined;
  return invalid('webhook_url: must be HTTPS');
}

function isLoopback(hostname: string): boolean {
  return hostname === 'localhost' || hostname === '[::1]' || hostname === '::1' || /^127\.\d+\.\d+\.\d+$/.test(hostname);
}

function present(value: unknown): boolean {
  return typeof value === 'string' && value.trim().length > 0;
}

function invalid(message: string): Refusal {
  return { status: 400, type: 'validation_error', message };
}
