/**
 * `/credits-admin history`'s CSV export of a long history, through the emulated Discord with a
 * small upload limit: the ledger comes in several files, each under the limit and alone in its
 * message (Discord may count a message's files together), every movement exactly once, and
 * nothing is left in the temporary folder.
 */
import { mkdtemp, readdir } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { desc, eq } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { verifyLedger } from '../../../src/credits/index.js';
import { creditLedger } from '../../../src/db/schema.js';
import { parseCsv } from '../../support/csv.js';
import { seedMovements } from '../../support/ledger.js';
import { buttonsOf, privateAnswer, startBot, type BotHarness } from './harness.js';

const LIMIT = 128 * 1024;
const MOVEMENTS = 10_000;
const HEADER = 'id,time,kind,amount,balance_after,user,actor,job,reason,entitlement';

let h: BotHarness;
let temporary: string;
let previousTmp: string | undefined;

beforeAll(async () => {
  // The bot runs in this process: its temporary files go to a folder of this file's own.
  previousTmp = process.env.TMPDIR;
  temporary = await mkdtemp(path.join(tmpdir(), 'history-export-test-'));
  process.env.TMPDIR = temporary;
  h = await startBot({ startingCredits: 100, attachmentSizeLimit: LIMIT });
}, 120_000);

afterAll(async () => {
  await h?.close();
  if (previousTmp === undefined) delete process.env.TMPDIR;
  else process.env.TMPDIR = previousTmp;
});

describe('the history’s CSV export of a long ledger', () => {
  it('comes in files under Discord’s limit, one to a message, with every movement exactly once', async () => {
    await h.balance();
    await seedMovements(h.db.pool, h.guild.id, MOVEMENTS, { userId: h.members.alice, otherUserId: h.members.bob });
    expect(await verifyLedger(h.db.db, h.guild.id)).toEqual([]);
    const ids = (await h.db.db.select({ id: creditLedger.id }).from(creditLedger).where(eq(creditLedger.guildId, h.guild.id)).orderBy(desc(creditLedger.id))).map(
      (row) => row.id,
    );
    expect(ids.length).toBeGreaterThan(MOVEMENTS);

    const page = await privateAnswer(h.run(h.members.manager, { name: 'credits-admin', subcommand: 'history' }));
    const csv = buttonsOf(page).at(-1);
    expect(csv).toBe('history-csv:all');
    const click = h.emulator.clickButton({ messageId: page.id, customId: csv!, userId: h.members.manager });
    const first = await privateAnswer(click, 60_000);
    expect(first.content).toBe(
      `The ledger as CSV: ${ids.length.toLocaleString('en')} rows, newest first, in several files: Discord limits the size of a file. Each file opens on its own, with the header row.`,
    );
    expect(first.attachments).toHaveLength(1);
    const count = Number(/-of-(\d+)\.csv$/.exec(first.attachments[0]!.filename)?.[1]);
    expect(count).toBeGreaterThan(3);
    // The rest in follow-ups, the last file in the last one.
    await click.waitForFollowUp((message) => message.attachments.some((file) => file.filename.endsWith(`-${count}-of-${count}.csv`)), 60_000);
    const more = click.followUps;
    expect(more.map((message) => message.attachments.length)).toEqual(Array.from({ length: count - 1 }, () => 1));
    for (const message of more) {
      expect(message.ephemeral).toBe(true);
      expect(message.content).toBe('More files of the ledger’s CSV.');
    }

    const files = [...first.attachments, ...more.flatMap((message) => message.attachments)];
    expect(files).toHaveLength(count);
    const exported: number[] = [];
    for (const [index, file] of files.entries()) {
      expect(file.filename).toMatch(new RegExp(`^credits-${h.guild.id}-\\d{4}-\\d{2}-\\d{2}-${index + 1}-of-${count}\\.csv$`));
      expect(file.data.length).toBeLessThanOrEqual(LIMIT);
      const records = parseCsv(file.data.toString('utf8'));
      expect(records[0]!.join(',')).toBe(HEADER);
      expect(records.slice(1).every((record) => record.length === 10)).toBe(true);
      exported.push(...records.slice(1).map((record) => Number(record[0])));
    }
    expect(exported).toEqual(ids);

    // The files were written to disk and sent from there; once sent, they are gone.
    await vi.waitFor(async () => expect((await readdir(temporary)).filter((name) => name.startsWith('ledger-csv-'))).toEqual([]));
  }, 180_000);
});
