import { mkdtemp, open, rm, type FileHandle } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { sql } from 'drizzle-orm';
import type { Executor } from '../db/client.js';
import { CSV_HEADER_LINE, csvRecords, type CsvLedgerRow } from './csv.js';

/** Rows fetched from the ledger's cursor at a time: the only rows held in memory. */
const PAGE_ROWS = 1_000;

export interface LedgerCsvQuery {
  readonly guildId: string;
  /** Only this member's movements; the guild's all when absent. */
  readonly userId?: string;
  /** The largest file, in bytes: a longer history is split into several files, each with the header. */
  readonly maxFileBytes: number;
}

export interface LedgerCsvFile {
  /** Where the file is on disk, until `remove()`. */
  readonly path: string;
  readonly bytes: number;
  readonly rows: number;
}

export interface LedgerCsvExport {
  /** The files in order: newest movements first, as in the history. */
  readonly files: readonly LedgerCsvFile[];
  readonly rows: number;
  /** Deletes the files and their folder; the caller must call it whatever happened. */
  remove(): Promise<void>;
}

/**
 * Writes the guild's (or one member's) ledger as CSV files in a new folder under the system's
 * temporary folder, newest first, reading it through a server-side cursor `PAGE_ROWS` rows at a
 * time, in one read-only transaction (one snapshot, one scan): memory stays the same whatever
 * the history's length. Each file starts with the header and ends on a whole row,
 * and is at most `maxFileBytes` (a single row longer than that gets a file of its own).
 * On failure nothing is left on disk.
 */
export async function writeLedgerCsv(executor: Executor, query: LedgerCsvQuery): Promise<LedgerCsvExport> {
  const folder = await mkdtemp(path.join(tmpdir(), 'ledger-csv-'));
  const remove = () => rm(folder, { recursive: true, force: true });
  const files: LedgerCsvFile[] = [];
  let current: { handle: FileHandle; path: string; bytes: number; rows: number } | undefined;
  const header = Buffer.byteLength(CSV_HEADER_LINE);

  const close = async () => {
    if (!current) return;
    await current.handle.close();
    files.push({ path: current.path, bytes: current.bytes, rows: current.rows });
    current = undefined;
  };
  const start = async () => {
    const file = path.join(folder, `${files.length + 1}.csv`);
    current = { handle: await open(file, 'wx'), path: file, bytes: 0, rows: 0 };
    await append(CSV_HEADER_LINE, header, 0);
  };
  const append = async (text: string, bytes: number, rows: number) => {
    await current!.handle.write(text);
    current!.bytes += bytes;
    current!.rows += rows;
  };
  /** Rows go into the current file while they fit, else into a new one; a page that does not fit whole goes row by row. */
  const write = async (rows: readonly CsvLedgerRow[]): Promise<void> => {
    const text = csvRecords(rows);
    const bytes = Buffer.byteLength(text);
    if (!current) await start();
    if (current!.bytes + bytes > query.maxFileBytes) {
      if (rows.length > 1) {
        for (const row of rows) await write([row]);
        return;
      }
      if (current!.rows > 0) {
        await close();
        await start();
      }
    }
    await append(text, bytes, rows.length);
  };

  try {
    const total = await executor.transaction(
      async (tx) => {
        await tx.execute(sql`declare ledger_csv no scroll cursor for
          select id, created_at, kind, amount, balance_after, user_id, actor_id, job_id, reason, key
            from credit_ledger
           where guild_id = ${query.guildId} ${query.userId === undefined ? sql`` : sql`and user_id = ${query.userId}`}
           order by id desc`);
        let rows = 0;
        for (;;) {
          const page = (await tx.execute<LedgerRow>(sql.raw(`fetch ${PAGE_ROWS} from ledger_csv`))).rows.map(csvRow);
          if (page.length === 0) break;
          await write(page);
          rows += page.length;
        }
        await tx.execute(sql`close ledger_csv`);
        return rows;
      },
      { accessMode: 'read only' },
    );
    // An empty history is still a file: the header alone.
    if (!current) await start();
    await close();
    return { files, rows: total, remove };
  } catch (error) {
    await current?.handle.close().catch(() => undefined);
    await remove();
    throw error;
  }
}

/** A ledger row as the driver gives it: `id` is a bigint, as text; the time is text through drizzle's `execute`. */
interface LedgerRow extends Record<string, unknown> {
  id: string | number;
  created_at: Date | string;
  kind: CsvLedgerRow['kind'];
  amount: number;
  balance_after: number;
  user_id: string | null;
  actor_id: string | null;
  job_id: string | null;
  reason: string | null;
  key: string;
}

function csvRow(row: LedgerRow): CsvLedgerRow {
  return {
    id: Number(row.id),
    createdAt: row.created_at instanceof Date ? row.created_at : new Date(row.created_at),
    kind: row.kind,
    amount: row.amount,
    balanceAfter: row.balance_after,
    userId: row.user_id,
    actorId: row.actor_id,
    jobId: row.job_id,
    reason: row.reason,
    key: row.key,
  };
}
