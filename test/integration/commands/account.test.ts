/**
 * `/credits-admin account`: an owner checks the music service account now. The check is
 * recorded like the hourly one, and the answer shows the balance, what the ledger expected
 * from the last check, and the drift.
 */
import { asc, desc } from 'drizzle-orm';
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { accountChecks } from '../../../src/db/schema.js';
import { found } from '../../support/found.js';
import { jobIdIn, privateAnswer, startBot, type BotHarness } from './harness.js';

let h: BotHarness;

beforeAll(async () => {
  // The service account and its checks are the whole bot's: a world of the file's own.
  h = await startBot({ startingCredits: 100, ownWorld: true });
  // The worker's first hourly pass runs at start; the owner's checks compare with it.
  await vi.waitFor(async () => found((await h.db.db.select().from(accountChecks).limit(1)).length > 0, 'the first account check'), 15_000);
});
afterAll(async () => h?.close());
afterEach(() => expect(h.emulator.findings).toEqual([]));

/** A figure as English groups it, as every figure of the answer is. */
const grouped = (value: number) => value.toLocaleString('en-US');
const account = async () => (await privateAnswer(h.run(h.members.owner, { name: 'credits-admin', subcommand: 'account' }))).content ?? '';
const newest = async () => (await h.db.db.select().from(accountChecks).orderBy(desc(accountChecks.id)).limit(1))[0]!;

describe('/credits-admin account', () => {
  it('checks the account now: the balance, what the ledger expected since the last check, and the drift', async () => {
    const last = await newest();
    // Spent with the key outside the bot: the ledger knows nothing of it.
    h.sim.setCredits(last.balance - 25);

    const answer = await account();
    expect(answer).toContain(`The music service account has **${grouped(last.balance - 25)} credits**.`);
    expect(answer).toContain(`The ledger expected **${grouped(last.balance)}**: ${grouped(last.balance)} at the last check (<t:${Math.floor(last.checkedAt.getTime() / 1000)}:R>), less 0 spent upstream since.`);
    expect(answer).toContain('Drift: **-25**. The service charged more than the ledger recorded.');
    expect(await newest()).toMatchObject({ source: 'command', balance: last.balance - 25, drift: -25 });

    // The next check compares with this one.
    expect(await account()).toMatch(/Drift: \*\*0\*\*\.$/);
  });

  it('counts what members spent through the bot as expected, not as drift', async () => {
    await account();
    const before = await newest();
    await h.delivered(jobIdIn(await privateAnswer(h.run(h.members.alice, { name: 'lyrics', options: { prompt: 'accounted for' } }))));

    const answer = await account();
    expect(answer).toContain(`The ledger expected **${grouped(before.balance - 1)}**: ${grouped(before.balance)} at the last check`);
    expect(answer).toContain('less 1 spent upstream since.');
    expect(answer).toMatch(/Drift: \*\*0\*\*\.$/);
  });

  it('names the submissions since the last check that the service may have charged unknown to the ledger', async () => {
    await account();
    const jobId = jobIdIn(await privateAnswer(h.run(h.members.alice, { name: 'lyrics', options: { prompt: 'unlucky words [sim:500]' } })));
    await h.delivered(jobId);

    const answer = await account();
    expect(answer).toContain(
      `1 submission since the last check may have been charged by the service without the bot learning its task (refunded, never sent again; credits at stake: 1): \`${jobId.slice(0, 8)}\` (lyrics, 1).`,
    );
    // Named once: the next check starts after it.
    expect(await account()).not.toContain(jobId.slice(0, 8));
  });

  it('shows a top-up as positive drift', async () => {
    await account();
    h.sim.setCredits(h.sim.getCredits() + 1_000);
    expect(await account()).toContain('Drift: **+1,000**. The account gained more than the ledger explains');
  });

  it('stays the owners’: a moderator’s attempt records no check', async () => {
    const checks = (await h.db.db.select().from(accountChecks).orderBy(asc(accountChecks.id))).length;
    const refused = await privateAnswer(h.run(h.members.manager, { name: 'credits-admin', subcommand: 'account' }));
    expect(refused.content).toContain('Only the bot’s owners can do that');
    expect(await h.db.db.select().from(accountChecks)).toHaveLength(checks);
  });
});
