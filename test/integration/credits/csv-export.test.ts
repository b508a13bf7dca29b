import { mkdtemp, readdir, readFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { desc, eq } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { exportCsv, verifyLedger, writeLedgerCsv, type LedgerCsvExport } from '../../../src/credits/index.js';
import { connectDatabase } from '../../../src/db/client.js';
import { creditLedger } from '../../../src/db/schema.js';
import { parseCsv } from '../../support/csv.js';
import { createTestDatabase } from '../../support/database.js';
import { seedMovements } from '../../support/ledger.js';
import { guildWith } from './support.js';

const db = await createTestDatabase();
const HEADER = 'id,time,kind,amount,balance_after,user,actor,job,reason,entitlement';
const MOVEMENTS = 100_000;
/**
 * The split's history: pages of the export's cursor (1,000 rows) both fit whole into a file and
 * straddle two, over more than ten files. Its length does not matter, only the ratio of the
 * rows to the limit.
 */
const SPLIT_MOVEMENTS = 20_000;

/** The export's files, read back. */
async function contents(exported: LedgerCsvExport): Promise<string[]> {
  return Promise.all(exported.files.map((file) => readFile(file.path, 'utf8')));
}

/** Every movement of the guild (or member) as one CSV, read in one statement: what the export must say. */
async function expected(guildId: string, userId?: string): Promise<{ ids: number[]; csv: string }> {
  const rows = await db.db
    .select()
    .from(creditLedger)
    .where(userId === undefined ? eq(creditLedger.guildId, guildId) : eq(creditLedger.userId, userId))
    .orderBy(desc(creditLedger.id));
  return { ids: rows.map((row) => row.id), csv: exportCsv(rows) };
}

describe('writeLedgerCsv', () => {
  let busy: string;
  let split: string;
  let previousTmp: string | undefined;
  let temporary: string;

  beforeAll(async () => {
    // A temporary folder of this file's own, to see what the export leaves behind.
    previousTmp = process.env.TMPDIR;
    temporary = await mkdtemp(path.join(tmpdir(), 'csv-export-test-'));
    process.env.TMPDIR = temporary;
    busy = await guildWith(db.db, 1_000);
    const neighbour = await guildWith(db.db, 1_000);
    split = await guildWith(db.db, 1_000);
    await seedMovements(db.pool, busy, MOVEMENTS, { userId: 'busy-a', otherUserId: 'busy-b' });
    await seedMovements(db.pool, split, SPLIT_MOVEMENTS, { userId: 'busy-a' });
    await seedMovements(db.pool, neighbour, 1_000, { userId: 'busy-a' });
    expect(await verifyLedger(db.db)).toEqual([]);
  }, 120_000);

  afterAll(() => {
    if (previousTmp === undefined) delete process.env.TMPDIR;
    else process.env.TMPDIR = previousTmp;
  });

  it('writes a guild of 100,000 movements as one valid file with every row exactly once, newest first', async () => {
    const exported = await writeLedgerCsv(db.db, { guildId: busy, maxFileBytes: 10 * 1024 * 1024 });
    try {
      const want = await expected(busy);
      expect(want.ids).toHaveLength(MOVEMENTS + 1);
      expect(exported.rows).toBe(MOVEMENTS + 1);
      expect(exported.files).toHaveLength(1);
      const [text] = await contents(exported);
      expect(text).toBe(want.csv);
      expect(exported.files[0]!.bytes).toBe(Buffer.byteLength(text!));
      const records = parseCsv(text!);
      expect(records[0]!.join(',')).toBe(HEADER);
      expect(records.every((record) => record.length === 10)).toBe(true);
      const ids = records.slice(1).map((record) => Number(record[0]));
      expect(ids).toEqual(want.ids);
      expect(new Set(ids).size).toBe(ids.length);
    } finally {
      await exported.remove();
    }
    expect(await readdir(temporary)).toEqual([]);
  }, 60_000);

  it('splits a history larger than the limit into files under it, each with the header, rows neither lost nor repeated', async () => {
    const limit = 128 * 1024;
    const exported = await writeLedgerCsv(db.db, { guildId: split, maxFileBytes: limit });
    try {
      const texts = await contents(exported);
      expect(texts.length).toBeGreaterThan(10);
      const want = await expected(split);
      let rows = 0;
      for (const [index, text] of texts.entries()) {
        const bytes = Buffer.byteLength(text);
        expect(bytes).toBeLessThanOrEqual(limit);
        expect(bytes).toBe(exported.files[index]!.bytes);
        // Full, not one page short: the next file's first row did not fit.
        if (index < texts.length - 1) expect(bytes).toBeGreaterThan(limit - 1_000);
        const records = parseCsv(text);
        expect(records[0]!.join(',')).toBe(HEADER);
        expect(records.length - 1).toBe(exported.files[index]!.rows);
        rows += records.length - 1;
      }
      expect(rows).toBe(SPLIT_MOVEMENTS + 1);
      // The files one after the other, headers dropped, are the single file's rows.
      const joined = HEADER + '\r\n' + texts.map((text) => text.slice(HEADER.length + 2)).join('');
      expect(joined).toBe(want.csv);
    } finally {
      await exported.remove();
    }
    expect(await readdir(temporary)).toEqual([]);
  }, 60_000);

  it('exports one member’s movements only; an empty history is the header alone; a row longer than the limit gets a file of its own', async () => {
    const member = await writeLedgerCsv(db.db, { guildId: busy, userId: 'busy-b', maxFileBytes: 10 * 1024 * 1024 });
    try {
      const want = await expected(busy, 'busy-b');
      expect(want.ids.length).toBeGreaterThan(100);
      expect((await contents(member))[0]).toBe(want.csv);
    } finally {
      await member.remove();
    }

    const empty = await writeLedgerCsv(db.db, { guildId: busy, userId: 'nobody', maxFileBytes: 1024 });
    try {
      expect(await contents(empty)).toEqual([`${HEADER}\r\n`]);
      expect(empty.rows).toBe(0);
    } finally {
      await empty.remove();
    }

    const small = await guildWith(db.db, 10);
    await seedMovements(db.pool, small, 3);
    const tiny = await writeLedgerCsv(db.db, { guildId: small, maxFileBytes: 10 });
    try {
      const texts = await contents(tiny);
      expect(texts).toHaveLength(4);
      expect(texts.map((text) => parseCsv(text).length)).toEqual([2, 2, 2, 2]);
      expect(texts.map((text) => parseCsv(text)[1]![0]).map(Number)).toEqual((await expected(small)).ids);
    } finally {
      await tiny.remove();
    }
    expect(await readdir(temporary)).toEqual([]);
  });

  it('leaves nothing on disk when the ledger cannot be read', async () => {
    const closed = connectDatabase(db.url, { max: 1 });
    await closed.close();
    await expect(writeLedgerCsv(closed.db, { guildId: busy, maxFileBytes: 1024 })).rejects.toThrow();
    expect(await readdir(temporary)).toEqual([]);
  });
});
