/**
 * The music service account against the ledger: the hourly check, its drift, the
 * low-account alert to the owners, and the gauges on /metrics. The bot runs as `npm start`
 * builds it (worker and http); the simulator is the service, the emulator is Discord.
 */
import { asc, eq } from 'drizzle-orm';
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { accountChecks } from '../../../src/db/schema.js';
import { createMetrics } from '../../../src/metrics.js';
import { checkAccount, refreshAccountGauges, type AccountCheck } from '../../../src/pipeline/account.js';
import type { AccountSettings } from '../../../src/pipeline/deps.js';
import type { SubmitResult } from '../../../src/pipeline/requests.js';
import { createTestDatabase, type TestDatabase } from '../../support/database.js';
import { found } from '../../support/found.js';
import { jobRow } from '../../support/ledger.js';
import { startHarness, type Harness } from '../../support/pipeline-harness.js';
import { parseSamples } from '../../support/metrics.js';

let h: Harness;
/** The worker's first pass, at start: read before any test runs a check of its own. */
let firstCheck: typeof accountChecks.$inferSelect;

beforeAll(async () => {
  h = await startHarness({ webhooks: false, startingCredits: 1_000 });
  // A new schedule runs its first pass at once: the worker checks the account at start.
  firstCheck = await vi.waitFor(async () => {
    const [row] = await h.db.db.select().from(accountChecks).orderBy(asc(accountChecks.id)).limit(1);
    if (!row) throw new Error('no account check yet');
    return row;
  }, 15_000);
});
afterAll(async () => h?.close());
// Every REST call (the DMs included) fits Discord's published API description.
afterEach(() => expect(h.emulator.findings).toEqual([]));

/** A check as the hourly pass runs it, with the alert's settings of the test. */
function check(account: Partial<AccountSettings> = {}): Promise<AccountCheck> {
  const { deps } = h.app;
  return checkAccount({ ...deps, settings: { ...deps.settings, account: { ...deps.settings.account, ...account } } }, 'hourly');
}

async function finished(request: Parameters<Harness['request']>[0]) {
  const { result } = await h.request(request);
  const { jobId } = result as SubmitResult;
  return vi.waitFor(async () => {
    const job = await jobRow(h.db.db, jobId);
    return found(job && ['succeeded', 'failed', 'timed_out'].includes(job.state) ? job : undefined, `job ${jobId} finished`);
  }, 20_000);
}

/** The bot's /metrics, as `name{labels}` → value. */
async function metrics(): Promise<Map<string, number>> {
  return parseSamples(await (await fetch(`${h.app.httpUrl}/metrics`)).text());
}

const dmsTo = (userId: string) => h.emulator.channelMessages(h.emulator.dmChannel(userId).id);

describe('the hourly check', () => {
  it('is scheduled on the maintenance queue, and its first pass records the baseline', async () => {
    const scheduler = await h.app.deps.queues.maintenance.getJobScheduler('account');
    expect(Number(scheduler?.every)).toBe(60 * 60_000);
    expect(firstCheck).toMatchObject({ source: 'hourly', balance: 100_000, credits: 100_000, extraCredits: 0, upstreamSpentTotal: 0, expected: null, drift: null });
  });
});

describe('reconciliation', () => {
  it('finds no drift in a quiet system: what the service charged is what the ledger recorded', async () => {
    const before = await check();
    const song = await finished({ kind: 'song', prompt: 'reconciled reggae' });
    const lyrics = await finished({ kind: 'lyrics', prompt: 'balanced books' });
    // Charged at submission, refunded by the service and by the bot alike.
    const failed = await finished({ kind: 'song', prompt: 'doomed [sim:fail]' });
    expect([song.state, lyrics.state, failed.state]).toEqual(['succeeded', 'succeeded', 'failed']);

    const after = await check();
    expect(after.spentSince).toBe(11);
    expect(after.expected).toBe(before.balance - 11);
    expect(after.balance).toBe(h.sim.getCredits());
    expect(after.drift).toBe(0);
    expect(after.previous).toEqual({ checkedAt: before.checkedAt, balance: before.balance });
    expect(after.upstreamSpentTotal).toBe(before.upstreamSpentTotal + 11);
  });

  it('shows a charge the ledger does not know as negative drift, and a top-up as positive, each in its own check', async () => {
    await check();
    // Someone else used the key: the service charged 10, the ledger knows nothing of it.
    await h.app.deps.musicApi.createSong({ sound: 'not through the bot' });
    const unknown = await check();
    expect(unknown).toMatchObject({ spentSince: 0, drift: -10 });

    expect((await check()).drift).toBe(0);

    h.sim.setCredits(h.sim.getCredits() + 500);
    expect(await check()).toMatchObject({ spentSince: 0, drift: 500 });

    const rows = await h.db.db.select().from(accountChecks).where(eq(accountChecks.id, unknown.id));
    expect(rows[0]).toMatchObject({ drift: -10, expected: unknown.balance + 10 });
  });

  it('takes turns when two run at once: the second compares with the first', async () => {
    await check();
    const both = (await Promise.all([check(), check()])).sort((a, b) => a.id - b.id);
    const [first, second] = both as [AccountCheck, AccountCheck];
    expect(second.previous?.checkedAt).toEqual(first.checkedAt);
    expect(second).toMatchObject({ spentSince: 0, drift: 0 });
    expect(first.drift).toBe(0);
  });
});

describe('the low-account alert', () => {
  it('sends the owners one DM per fall below the threshold, armed again once the balance has recovered', async () => {
    const owner = h.members.owner;
    expect(h.app.deps.settings.account.ownerIds).toEqual([owner]);
    const alerts = { lowCredits: 1_000 };
    const sent = dmsTo(owner).length;
    h.sim.setCredits(5_000);
    expect(await check(alerts)).toMatchObject({ lowAlertSent: false, lowAlertArmed: true });

    h.sim.setCredits(900);
    expect(await check(alerts)).toMatchObject({ lowAlertSent: true, lowAlertArmed: false });
    const dms = dmsTo(owner);
    expect(dms).toHaveLength(sent + 1);
    const [alert] = dms.slice(sent);
    expect(alert!.content).toContain('**900 credits** left (alert below 1,000)');
    expect(alert!.allowed_mentions).toEqual({ parse: [] });

    // Still low, and a refund lifting it just over the threshold: the same shortage, no new message.
    h.sim.setCredits(800);
    expect(await check(alerts)).toMatchObject({ lowAlertSent: false, lowAlertArmed: false });
    h.sim.setCredits(1_050);
    expect(await check(alerts)).toMatchObject({ lowAlertSent: false, lowAlertArmed: false });
    h.sim.setCredits(990);
    expect(await check(alerts)).toMatchObject({ lowAlertSent: false, lowAlertArmed: false });
    expect(dmsTo(owner)).toHaveLength(sent + 1);

    // Topped up to the threshold and a tenth: armed again, and the next fall is told again.
    h.sim.setCredits(1_100);
    expect(await check(alerts)).toMatchObject({ lowAlertSent: false, lowAlertArmed: true });
    h.sim.setCredits(600);
    expect(await check(alerts)).toMatchObject({ lowAlertSent: true, lowAlertArmed: false });
    expect(dmsTo(owner)).toHaveLength(sent + 2);
    expect(dmsTo(owner).at(-1)!.content).toContain('**600 credits** left');
  });

  it('is sent once when two checks see the fall at the same moment', async () => {
    const owner = h.members.owner;
    const alerts = { lowCredits: 1_000 };
    h.sim.setCredits(5_000);
    await check(alerts);
    const sent = dmsTo(owner).length;

    h.sim.setCredits(700);
    const both = await Promise.all([check(alerts), check(alerts), check(alerts)]);
    expect(both.filter((one) => one.lowAlertSent)).toHaveLength(1);
    // Each check sends inside its transaction: once all have returned, nothing more can come.
    expect(dmsTo(owner)).toHaveLength(sent + 1);
  });

  it('goes to the configured channel instead; one that cannot be posted in keeps it armed for the next check', async () => {
    const alerts = { lowCredits: 1_000 };
    h.sim.setCredits(5_000);
    await check(alerts);
    const owner = h.members.owner;
    const dmsBefore = dmsTo(owner).length;

    const locked = h.emulator.createChannel(h.guildId, { name: 'ops-locked' });
    h.emulator.denyChannel(locked.id);
    h.sim.setCredits(400);
    expect(await check({ ...alerts, alertChannelId: locked.id })).toMatchObject({ lowAlertSent: false, lowAlertArmed: true });

    const ops = h.emulator.createChannel(h.guildId, { name: 'ops' });
    expect(await check({ ...alerts, alertChannelId: ops.id })).toMatchObject({ lowAlertSent: true, lowAlertArmed: false });
    const posted = h.emulator.channelMessages(ops.id);
    expect(posted).toHaveLength(1);
    expect(posted[0]!.content).toContain('**400 credits** left (alert below 1,000)');
    expect(posted[0]!.allowed_mentions).toEqual({ parse: [] });
    expect(dmsTo(owner)).toHaveLength(dmsBefore);

    expect(await check({ ...alerts, alertChannelId: ops.id })).toMatchObject({ lowAlertSent: false });
    expect(h.emulator.channelMessages(ops.id)).toHaveLength(1);
  });
});

describe('the account gauges on /metrics', () => {
  it('show the newest check, read from Postgres by the http process', async () => {
    h.sim.setCredits(3_000);
    await check({ lowCredits: 250 });
    h.sim.setCredits(2_997);
    const last = await check({ lowCredits: 250 });

    const samples = await metrics();
    expect(samples.get('musicbot_account_credits')).toBe(2_997);
    expect(samples.get('musicbot_account_drift_credits')).toBe(-3);
    expect(samples.get('musicbot_account_low_credits_threshold')).toBe(250);
    expect(samples.get('musicbot_account_last_check_timestamp_seconds')).toBeCloseTo(last.checkedAt.getTime() / 1000, 3);
  });

  let empty: TestDatabase;
  beforeAll(async () => {
    empty = await createTestDatabase();
  });

  it('read NaN before the first check, not an empty account that alert rules would fire on', async () => {
    const registry = createMetrics();
    await refreshAccountGauges(empty.db, registry);
    const text = await registry.registry.metrics();
    for (const name of ['credits', 'drift_credits', 'low_credits_threshold', 'last_check_timestamp_seconds']) {
      // prom-client writes `Nan`; Prometheus reads NaN in any case.
      expect(text).toMatch(new RegExp(`^musicbot_account_${name} nan$`, 'im'));
    }
  });

  it('read NaN for the drift of the baseline, which has none', async () => {
    const registry = createMetrics();
    await empty.db.insert(accountChecks).values({
      source: 'hourly',
      credits: 70,
      extraCredits: 5,
      balance: 75,
      upstreamSpentTotal: 0,
      lowThreshold: 0,
      lowAlertArmed: true,
    });
    await refreshAccountGauges(empty.db, registry);
    const text = await registry.registry.metrics();
    expect(text).toMatch(/^musicbot_account_credits 75$/m);
    expect(text).toMatch(/^musicbot_account_drift_credits nan$/im);
  });
});
