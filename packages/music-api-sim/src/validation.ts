/**
 * The simulator's checks of request bodies (400 `validation_error`), with the field names of
 * its own contract table (./contract.ts).
 */
import { z } from 'zod';
import {
  CREATE_OPERATIONS,
  DOWNLOAD_FORMATS,
  MAX_WEBHOOK_URL_LENGTH,
  REQUEST_FIELDS,
  requestFieldNames,
  RETIRED_TASK_TYPES,
  type CreateOperationName,
} from './contract.js';

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

const song = REQUEST_FIELDS.song;
const persona = REQUEST_FIELDS.personaSong;
const httpUrl = z.url({ protocol: /^https?$/ });

const schemas = {
  song: z.object({
    [song.taskType]: z.string(),
    [song.sound]: z.string().optional(),
    [song.lyrics]: z.string().optional(),
    [song.title]: z.string().max(80).optional(),
    [song.model]: z.string().optional(),
    [song.makeInstrumental]: z.boolean().optional(),
    [song.seed]: z.string().regex(/^\d+$/, 'a number written as a string').optional(),
    ...webhookFields,
  }),
  lyrics: z.object({ [REQUEST_FIELDS.lyrics.prompt]: z.string().min(1), ...webhookFields }),
  video: z.object({ [REQUEST_FIELDS.video.clipId]: z.string().min(1), ...webhookFields }),
  upload: z.object({ [REQUEST_FIELDS.upload.audioUrl]: httpUrl, ...webhookFields }),
  download: z.object({
    [REQUEST_FIELDS.download.clipId]: z.string().min(1),
    [REQUEST_FIELDS.download.format]: z.enum(DOWNLOAD_FORMATS),
    ...webhookFields,
  }),
  voice: z.object({ [REQUEST_FIELDS.voice.audioUrl]: httpUrl, ...webhookFields }),
  personaSong: z.object({
    [persona.taskType]: z.literal('persona_music'),
    [persona.personaId]: z.string().min(1),
    [persona.customMode]: z.boolean().optional(),
    [persona.lyrics]: z.string().optional(),
    [persona.title]: z.string().optional(),
    [persona.tags]: z.string().optional(),
    [persona.model]: z.string().optional(),
    ...webhookFields,
  }),
} as const satisfies Record<CreateOperationName, z.ZodType>;

const RETIRED: ReadonlySet<string> = new Set(RETIRED_TASK_TYPES);

/** A refusal for the body of a create `operation`, or undefined when it is acceptable. */
export function checkBody(operation: CreateOperationName, body: unknown, context: ValidationContext): Refusal | undefined {
  if (typeof body !== 'object' || body === null || Array.isArray(body)) {
    return invalid('the body must be a JSON object');
  }
  const record = body as Record<string, unknown>;
  if (operation === 'song' && typeof record[song.taskType] === 'string') {
    const taskType = record[song.taskType] as string;
    if (RETIRED.has(taskType)) {
      return { status: 410, type: 'endpoint_retired', message: `task_type ${taskType} is retired; use create_music` };
    }
    if (taskType !== 'create_music') return invalid('task_type: only create_music is accepted on /create');
  }
  // Before the schema: a misspelt field is the likeliest reason a required one is missing.
  const known = requestFieldNames(operation);
  const unknown = Object.keys(record).filter((key) => !known.includes(key));
  if (unknown.length > 0) {
    const { method, path } = CREATE_OPERATIONS[operation];
    return invalid(`unknown field ${unknown.map((key) => JSON.stringify(key)).join(', ')}; ${method} ${path} takes ${known.join(', ')}`);
  }
  const parsed = schemas[operation].safeParse(record);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    return invalid(`${issue?.path.join('.') || 'body'}: ${issue?.message ?? 'invalid'}`);
  }
  if (operation === 'song') {
    if (!present(record[song.sound]) && !present(record[song.lyrics])) return invalid('sound or lyrics is required');
    const mv = record[song.model];
    if (typeof mv === 'string' && !context.models.includes(mv)) {
      return invalid(`mv: ${JSON.stringify(mv)} is not an allowed model`);
    }
  }
  const fields = REQUEST_FIELDS[operation];
  return 'webhookUrl' in fields ? checkWebhookUrl(record[fields.webhookUrl], context.allowHttpWebhooks) : undefined;
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
