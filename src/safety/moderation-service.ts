/**
 * The optional moderation service: an HTTP classifier of text in the shape of OpenAI's
 * moderation API (`POST {url}` with `{"input": [texts]}`, answered with one result per text).
 * One request per member request, all its texts together, within a deadline. Any answer but
 * a well-formed one in time (a timeout, a refused connection, a non-2xx status, a body that
 * is not the documented shape) is `unavailable`: the caller applies its policy. Why this shape:
 * docs/decisions/moderation-service.md
 */
import { z } from 'zod';

export interface ModerationServiceOptions {
  /** The full address requests are POSTed to, e.g. `https://api.openai.com/v1/moderations`. */
  readonly url: string;
  /** Sent as `Authorization: Bearer <key>`; never logged, never part of a verdict. Absent: no header. */
  readonly apiKey?: string | undefined;
  /** How long one request may take, answer read, before it counts as unavailable. */
  readonly timeoutMs: number;
  /** @defaultValue globalThis.fetch */
  readonly fetch?: typeof fetch;
}

/** What the service said of a set of texts. */
export type ModerationVerdict =
  | { readonly outcome: 'clean' }
  /** `flagged`: the indexes of the texts flagged, and the categories flagged in any of them (for moderators, never the member). */
  | { readonly outcome: 'flagged'; readonly flagged: readonly number[]; readonly categories: readonly string[] }
  /** `why`: what went wrong, for the log (`timeout`, `unreachable`, `status 503`, `malformed`); never the key. */
  | { readonly outcome: 'unavailable'; readonly why: string };

export interface ModerationService {
  classify(texts: readonly string[]): Promise<ModerationVerdict>;
}

/** The part of the documented answer the bot reads; other fields (`id`, `model`, `category_scores`) may be anything. */
const answerSchema = z.object({
  results: z.array(
    z.object({
      flagged: z.boolean(),
      categories: z.record(z.string(), z.boolean().nullable()),
    }),
  ),
});

export function createModerationService(options: ModerationServiceOptions): ModerationService {
  const send = options.fetch ?? globalThis.fetch;
  return {
    async classify(texts) {
      if (texts.length === 0) return { outcome: 'clean' };
      const signal = AbortSignal.timeout(options.timeoutMs);
      let answer: unknown;
      try {
        const response = await send(options.url, {
          method: 'POST',
          headers: { 'content-type': 'application/json', ...(options.apiKey !== undefined && { authorization: `Bearer ${options.apiKey}` }) },
          body: JSON.stringify({ input: texts }),
          signal,
        });
        if (!response.ok) {
          // Read and dropped, so the connection can be reused; its text may echo what was sent.
          await response.body?.cancel().catch(() => undefined);
          return { outcome: 'unavailable', why: `status ${response.status}` };
        }
        answer = await response.json().catch(() => undefined);
        if (signal.aborted) return { outcome: 'unavailable', why: 'timeout' };
      } catch {
        // The error's message is fetch's own (no headers), but it is not needed: the signal says which.
        return { outcome: 'unavailable', why: signal.aborted ? 'timeout' : 'unreachable' };
      }
      const parsed = answerSchema.safeParse(answer);
      if (!parsed.success || parsed.data.results.length !== texts.length) return { outcome: 'unavailable', why: 'malformed' };
      const flagged = parsed.data.results.flatMap((result, index) => (result.flagged ? [index] : []));
      if (flagged.length === 0) return { outcome: 'clean' };
      const categories = new Set<string>();
      for (const index of flagged) {
        for (const [category, set] of Object.entries(parsed.data.results[index]!.categories)) if (set === true) categories.add(category);
      }
      return { outcome: 'flagged', flagged, categories: [...categories].sort() };
    },
  };
}
