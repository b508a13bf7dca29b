/**
 * A stand-in for a text moderation service, in the shape of OpenAI's moderation API:
 * `POST /v1/moderations` with `Authorization: Bearer <key>` and `{"input": "…" | ["…", …]}`,
 * answered with `{id, model, results: [{flagged, categories, category_scores}]}`, one result per
 * text in order. A text is flagged in a category when it contains one of the words a test gave
 * that category (case aside). A test can also make it down (503), slow, or answer a body that
 * is not JSON, through `setModeration` or `POST /_sim/moderation`.
 */
import type { Exchange } from './exchange.js';

export const MODERATION_PATH = '/v1/moderations';

/** The categories OpenAI's current moderation model answers with. */
export const MODERATION_CATEGORIES = [
  'harassment',
  'harassment/threatening',
  'hate',
  'hate/threatening',
  'illicit',
  'illicit/violent',
  'self-harm',
  'self-harm/intent',
  'self-harm/instructions',
  'sexual',
  'sexual/minors',
  'violence',
  'violence/graphic',
] as const;

export type ModerationMode = 'up' | 'down' | 'slow' | 'malformed';

export interface ModerationSettings {
  /** Words by category: a text containing one is flagged in that category. @defaultValue {} */
  readonly flag?: Readonly<Record<string, readonly string[]>>;
  /** `down`: 503; `slow`: a correct answer after `slowMs`; `malformed`: 200 with a body that is not JSON. @defaultValue 'up' */
  readonly mode?: ModerationMode;
  /** How late a `slow` answer comes. @defaultValue 10000 */
  readonly slowMs?: number;
}

export interface ModerationState {
  readonly flag: Readonly<Record<string, readonly string[]>>;
  readonly mode: ModerationMode;
  readonly slowMs: number;
  /** Requests answered with a verdict (any mode), since the start or the last reset. */
  readonly checked: number;
}

export interface ModerationStandIn {
  state(): ModerationState;
  /** Changes the fields given; `reset` first puts every setting back to its default. */
  set(settings: ModerationSettings, options?: { reset?: boolean }): void;
  handle(exchange: Exchange, request: { authorized: boolean; body: unknown }): void;
  /** Drops the slow answers still waiting (the simulator closes). */
  stop(): void;
}

const DEFAULTS = { flag: {}, mode: 'up', slowMs: 10_000 } as const;

/** An OpenAI-style error answer. */
const error = (exchange: Exchange, status: number, code: string, message: string) =>
  exchange.send(status, { error: { message, type: status === 401 ? 'invalid_request_error' : 'server_error', param: null, code } });

export function createModerationStandIn(): ModerationStandIn {
  let settings: { flag: Readonly<Record<string, readonly string[]>>; mode: ModerationMode; slowMs: number } = { ...DEFAULTS };
  let checked = 0;
  let answered = 0;
  const waiting = new Set<NodeJS.Timeout>();

  function verdict(text: string) {
    const lower = text.toLowerCase();
    const categories: Record<string, boolean> = {};
    const scores: Record<string, number> = {};
    for (const category of new Set([...MODERATION_CATEGORIES, ...Object.keys(settings.flag)])) {
      const hit = (settings.flag[category] ?? []).some((word) => word !== '' && lower.includes(word.toLowerCase()));
      categories[category] = hit;
      scores[category] = hit ? 0.97 : 0.0001;
    }
    return { flagged: Object.values(categories).some(Boolean), categories, category_scores: scores };
  }

  return {
    state: () => ({ ...settings, checked }),
    set(change, options = {}) {
      const base = options.reset === true ? { ...DEFAULTS } : settings;
      settings = {
        flag: change.flag ?? base.flag,
        mode: change.mode ?? base.mode,
        slowMs: change.slowMs ?? base.slowMs,
      };
      if (options.reset === true) checked = 0;
    },
    handle(exchange, { authorized, body }) {
      if (!authorized) return error(exchange, 401, 'invalid_api_key', 'Incorrect API key provided.');
      const input = typeof body === 'object' && body !== null ? (body as Record<string, unknown>)['input'] : undefined;
      const texts = typeof input === 'string' ? [input] : Array.isArray(input) && input.every((item) => typeof item === 'string') ? (input as string[]) : undefined;
      if (texts === undefined || texts.length === 0) {
        return exchange.send(400, { error: { message: "'input' must be a string or a non-empty array of strings", type: 'invalid_request_error', param: 'input', code: null } });
      }
      checked += 1;
      if (settings.mode === 'down') return error(exchange, 503, 'service_unavailable', 'The server is overloaded or not ready yet.');
      if (settings.mode === 'malformed') return exchange.sendText(200, 'application/json', '{"id": "modr-cut", "results": [');
      const answer = { id: `modr-${++answered}`, model: 'omni-moderation-latest', results: texts.map(verdict) };
      if (settings.mode !== 'slow') return exchange.send(200, answer);
      const timer = setTimeout(() => {
        waiting.delete(timer);
        exchange.send(200, answer);
      }, settings.slowMs);
      waiting.add(timer);
    },
    stop() {
      for (const timer of waiting) clearTimeout(timer);
      waiting.clear();
    },
  };
}

/** A body for `POST /_sim/moderation`, checked; a string says what is wrong. */
export function parseModerationSettings(body: unknown): ModerationSettings | string {
  if (typeof body !== 'object' || body === null) return 'a JSON object: { flag?, mode?, slowMs? }';
  const { flag, mode, slowMs } = body as Record<string, unknown>;
  if (flag !== undefined) {
    if (typeof flag !== 'object' || flag === null || Array.isArray(flag)) return 'flag: an object of categories, each a list of words';
    if (!Object.values(flag).every((words) => Array.isArray(words) && words.every((word) => typeof word === 'string'))) return 'flag: each category a list of words';
  }
  if (mode !== undefined && !['up', 'down', 'slow', 'malformed'].includes(mode as string)) return 'mode: up, down, slow or malformed';
  if (slowMs !== undefined && (typeof slowMs !== 'number' || !Number.isFinite(slowMs) || slowMs < 0)) return 'slowMs: a number of 0 or more';
  return {
    ...(flag !== undefined && { flag: flag as Record<string, string[]> }),
    ...(mode !== undefined && { mode: mode as ModerationMode }),
    ...(slowMs !== undefined && { slowMs }),
  };
}
