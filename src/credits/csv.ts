import { stringify } from 'csv-stringify/sync';
import { purchaseOf } from './keys.js';
import type { LedgerEntry } from './ledger.js';

export type CsvLedgerRow = Pick<
  LedgerEntry,
  'id' | 'createdAt' | 'kind' | 'amount' | 'balanceAfter' | 'userId' | 'actorId' | 'jobId' | 'reason' | 'key'
>;

/** `entitlement`: the Discord entitlement of a purchase, a subscription's month or a refund's take-back (the SKU is in `reason`). */
const HEADER = ['id', 'time', 'kind', 'amount', 'balance_after', 'user', 'actor', 'job', 'reason', 'entitlement'];

const OPTIONS = { record_delimiter: 'windows', quote_record_delimiter: true, escape_formulas: true } as const;

/** The CSV's first line, with its CRLF: what every file of an export starts with. */
export const CSV_HEADER_LINE = `${HEADER.join(',')}\r\n`;

/**
 * Ledger rows as RFC 4180 CSV: a header, CRLF line ends, fields with quotes, commas or line
 * breaks quoted and their quotes doubled. Text cells that start like a spreadsheet formula
 * (`=`, `+`, `-`, `@`, tab, CR: OWASP's CSV injection) get a leading `'` so a spreadsheet shows
 * them as text; the numbers (id, amount, balance_after) stay numbers, negative ones included.
 */
export function exportCsv(rows: readonly CsvLedgerRow[]): string {
  return CSV_HEADER_LINE + csvRecords(rows);
}

/** The rows' CSV lines without the header, each ending in CRLF: a page of a longer export. */
export function csvRecords(rows: readonly CsvLedgerRow[]): string {
  if (rows.length === 0) return '';
  const records = rows.map((row) => [
    row.id,
    row.createdAt.toISOString(),
    row.kind,
    row.amount,
    row.balanceAfter,
    row.userId,
    row.actorId,
    row.jobId,
    row.reason,
    purchaseOf(row)?.entitlementId ?? null,
  ]);
  return stringify(records, OPTIONS);
}
