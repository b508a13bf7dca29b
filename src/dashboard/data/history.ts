/**
 * The ledger as the dashboard's history shows it: filtered by kind, member and dates, a keyset
 * page at a time (credits' `history`), and the same CSV as `/credits-admin history`, streamed.
 */
import { createReadStream } from 'node:fs';
import { Readable } from 'node:stream';
import { z } from 'zod';
import { history, writeLedgerCsv, type HistoryPage } from '../../credits/index.js';
import type { Executor } from '../../db/client.js';
import { LEDGER_KINDS, type LedgerKind } from '../../db/schema.js';

export const HISTORY_PAGE_SIZE = 25;

const day = z.string().regex(/^\d{4}-\d{2}-\d{2}$/).refine((text) => !Number.isNaN(Date.parse(`${text}T00:00:00Z`)));
const snowflake = z.string().regex(/^\d{1,20}$/);
const pageId = z.coerce.number().int().positive();
const blankIsAbsent = (value: unknown) => (value === '' ? undefined : value);

/** The history's filters as the page's form and links carry them (query parameters); blanks mean no filter. */
export const historyFilterSchema = z.object({
  kind: z.preprocess(blankIsAbsent, z.enum(LEDGER_KINDS).optional()),
  member: z.preprocess(blankIsAbsent, snowflake.optional()),
  /** The first day shown, inclusive (UTC). */
  from: z.preprocess(blankIsAbsent, day.optional()),
  /** The last day shown, inclusive (UTC). */
  to: z.preprocess(blankIsAbsent, day.optional()),
  before: z.preprocess(blankIsAbsent, pageId.optional()),
  after: z.preprocess(blankIsAbsent, pageId.optional()),
});
export type HistoryFilter = z.infer<typeof historyFilterSchema>;

/** The filters with paging left out: what the next and previous links carry on. */
export type HistoryScope = Pick<HistoryFilter, 'kind' | 'member' | 'from' | 'to'>;

/**
 * Reads query parameters as filters. A value that does not parse is left out (its name in
 * `badFields`, for the page to say so) and the others still apply.
 */
export function parseHistoryFilter(query: Readonly<Record<string, unknown>>): { filter: HistoryFilter; badFields: string[] } {
  const parsed = historyFilterSchema.safeParse(query);
  if (parsed.success) return { filter: parsed.data, badFields: [] };
  const badFields = [...new Set(parsed.error.issues.map((issue) => String(issue.path[0] ?? '')))];
  const kept = Object.fromEntries(Object.entries(query).filter(([name]) => !badFields.includes(name)));
  const again = historyFilterSchema.safeParse(kept);
  return { filter: again.success ? again.data : {}, badFields };
}

export async function loadHistory(db: Executor, guildId: string, filter: HistoryFilter): Promise<HistoryPage> {
  const kinds: LedgerKind[] | undefined = filter.kind ? [filter.kind] : undefined;
  return history(db, {
    guildId,
    limit: HISTORY_PAGE_SIZE,
    ...(filter.member !== undefined && { userId: filter.member }),
    ...(kinds && { kinds }),
    ...(filter.from !== undefined && { since: new Date(`${filter.from}T00:00:00Z`) }),
    ...(filter.to !== undefined && { until: new Date(Date.parse(`${filter.to}T00:00:00Z`) + 86_400_000) }),
    ...(filter.before !== undefined ? { beforeId: filter.before } : filter.after !== undefined ? { afterId: filter.after } : {}),
  });
}

/**
 * The guild's (or one member's) ledger as one CSV stream, written by the export `/credits-admin
 * history` sends (one server-side cursor, files on disk) and read back as it is sent; the files
 * are removed when the stream ends or fails.
 */
export async function ledgerCsvStream(db: Executor, guildId: string, member: string | undefined): Promise<Readable> {
  const exported = await writeLedgerCsv(db, { guildId, ...(member !== undefined && { userId: member }), maxFileBytes: Number.MAX_SAFE_INTEGER });
  const [file] = exported.files;
  if (!file) {
    await exported.remove();
    return Readable.from([]);
  }
  const stream = createReadStream(file.path);
  const remove = () => void exported.remove();
  stream.once('close', remove);
  return stream;
}
