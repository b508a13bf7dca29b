/**
 * What a finished task must carry for its job to be a success: the one thing each kind is for.
 * A success without it is a failure (see `completeJob`), and its body's shape, never its values,
 * is what the operator reads to find a field the service renamed.
 */
import type { JobKind, StoredClip, StoredResult } from '../db/schema.js';
import { GUESSED_FIELDS } from '../music-api/guessed-fields.js';

/**
 * The field a successful result of `kind` lacks, as the service names it (or the names tried),
 * or undefined when it carries what the kind needs. An upload's result has no such field.
 */
export function lackingResult(kind: JobKind, request: Readonly<Record<string, unknown>>, result: StoredResult): string | undefined {
  const clips = result.clips ?? [];
  const clip = clips[0];
  switch (kind) {
    case 'song':
    case 'persona_song':
      return clips.some((each) => httpUrl(each.audioUrl) !== undefined) ? undefined : 'audio_url';
    case 'lyrics':
      return lyricsTextOf(result) === undefined ? GUESSED_FIELDS.results.lyricsText.join(' or ') : undefined;
    case 'video':
      return httpUrl(clip?.videoUrl) === undefined ? 'video_url' : undefined;
    case 'download':
      return downloadLinkOf(clip, request['format']) === undefined ? GUESSED_FIELDS.results.downloadUrl.join(' or ') : undefined;
    case 'voice':
      return result.personaId?.trim() ? undefined : 'persona_id';
    case 'upload':
      return undefined;
  }
}

/** The text of a lyrics result, if it holds any that is not blank. */
export function lyricsTextOf(result: StoredResult): string | undefined {
  const text = result.lyrics ?? result.clips?.[0]?.lyrics;
  return text?.trim() ? text : undefined;
}

/**
 * A download's link: the service's own (`download_url`, …), or else the clip's file in the
 * format asked for (`wav_url` for WAV, `audio_url` otherwise), as the spec's clip media allow.
 */
export function downloadLinkOf(clip: StoredClip | undefined, format: unknown): string | undefined {
  const inFormat = typeof format === 'string' && format.toLowerCase() === 'wav' ? clip?.wavUrl : clip?.audioUrl;
  return httpUrl(clip?.downloadUrl) ?? httpUrl(inFormat);
}

/** An http(s) link, normalised; anything else is no link (only these are ever rendered as links). */
export function httpUrl(url: string | null | undefined): string | undefined {
  if (!url) return undefined;
  try {
    const parsed = new URL(url);
    return parsed.protocol === 'https:' || parsed.protocol === 'http:' ? parsed.toString() : undefined;
  } catch {
    return undefined;
  }
}

const SHAPE_DEPTH = 4;
const SHAPE_KEYS = 30;
const SHAPE_ITEMS = 3;
const SHAPE_LENGTH = 1_500;

/**
 * A body's shape for a log line: its field names and their types, never a value, e.g.
 * `{code: number, data: [{clip_id: string, title: string}], status: string}`. An empty string
 * says `empty string`, so that a field present but blank is told from a missing one.
 */
export function describeShape(value: unknown, depth = 0): string {
  const shape = shapeOf(value, depth);
  return shape.length > SHAPE_LENGTH ? `${shape.slice(0, SHAPE_LENGTH - 1)}…` : shape;
}

function shapeOf(value: unknown, depth: number): string {
  if (value === null) return 'null';
  if (typeof value === 'string') return value === '' ? 'empty string' : 'string';
  if (Array.isArray(value)) {
    if (value.length === 0) return '[]';
    if (depth >= SHAPE_DEPTH) return '[…]';
    const items = value.slice(0, SHAPE_ITEMS).map((item) => shapeOf(item, depth + 1));
    return `[${items.join(', ')}${value.length > SHAPE_ITEMS ? `, … ${value.length} items` : ''}]`;
  }
  if (typeof value === 'object') {
    const entries = Object.entries(value as Record<string, unknown>);
    if (entries.length === 0) return '{}';
    if (depth >= SHAPE_DEPTH) return '{…}';
    const fields = entries.slice(0, SHAPE_KEYS).map(([key, field]) => `${fieldName(key)}: ${shapeOf(field, depth + 1)}`);
    return `{${fields.join(', ')}${entries.length > SHAPE_KEYS ? `, … ${entries.length} fields` : ''}}`;
  }
  return typeof value;
}

/** A field name as sent, cut short and kept to printable characters. */
function fieldName(key: string): string {
  const printable = key.replace(/[^\x20-\x7e]/g, '?');
  return printable.length > 40 ? `${printable.slice(0, 39)}…` : printable;
}
