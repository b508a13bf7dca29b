import type { LedgerEntry } from './ledger.js';

export type CsvLedgerRow = Pick<
  LedgerEntry,
  'id' | 'createdAt' | 'kind' | 'amount' | 'balanceAfter' | 'userId' | 'actorId' | 'jobId' | 'reason'
>;

const HEADER = ['id', 'time', 'kind', 'amount', 'balance_after', 'user', 'actor', 'job', 'reason'];

/** Characters that make a spreadsheet read a cell as a formula (OWASP CSV injection). */
const FORMULA_START = /^[=+\-@\t\r]/;
const NEEDS_QUOTES = /[",\r\n]/;

/**
 * Ledger rows as RFC 4180 CSV: a header, CRLF line ends, fields with quotes, commas or line
 * breaks quoted and their quotes doubled. Text cells (kind, user, actor, job, reason) that
 * start like a formula get a leading `'` so a spreadsheet shows them as text; the numbers we
 * write ourselves (id, amount, balance_after) stay numbers, negative ones included.
 */
export function exportCsv(rows: readonly CsvLedgerRow[]): string {
  const lines = [HEADER.join(',')];
  for (const row of rows) {
    lines.push(
      [
        String(row.id),
        row.createdAt.toISOString(),
        textCell(row.kind),
        String(row.amount),
        String(row.balanceAfter),
        textCell(row.userId),
        textCell(row.actorId),
        textCell(row.jobId),
        textCell(row.reason),
      ].join(','),
    );
  }
  return `${lines.join('\r\n')}\r\n`;
}

function textCell(value: string | null): string {
  if (value === null || value === '') return '';
  const guarded = FORMULA_START.test(value) ? `'${value}` : value;
  return NEEDS_QUOTES.test(guarded) ? `"${guarded.replaceAll('"', '""')}"` : guarded;
}
