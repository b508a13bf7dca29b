import { stringify } from 'csv-stringify/sync';
import { purchaseOf } from './keys.js';
import type { LedgerEntry } from './ledger.js';

export type CsvLedgerRow = Pick<
  LedgerEntry,
  'id' | 'createdAt' | 'kind' | 'amount' | 'balanceAfter' | 'userId' | 'actorId' | 'jobId' | 'reason' | 'key'
>;

/** `entitlement`: the Discord entitlement of a purchase, a subscription's month or a refund's take-back (the SKU is in `reason`). */
const HEADER = ['id', 'time', 'kind', 'amount', 'balance_after', 'user', 'actor', 'job', 'reason', 'entitlement'];

/**
 * Ledger rows as RFC 4180 CSV: a header, CRLF line ends, fields with quotes, commas or line
 * breaks quoted and their quotes doubled. Text cells that start like a spreadsheet formula
 * (`=`, `+`, `-`, `@`, tab, CR: OWASP's CSV injection) get a leading `'` so a spreadsheet shows
 * them as text; the numbers (id, amount, balance_after) stay numbers, negative ones included.
 */
export function exportCsv(rows: readonly CsvLedgerRow[]): string {
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
  return stringify(records, { header: true, columns: HEADER, record_delimiter: 'windows', quote_record_delimiter: true, escape_formulas: true });
}
