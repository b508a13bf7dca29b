/**
 * The short chaos suite: every scenario of `npm run chaos`, with a few jobs each, so
 * that a regression shows in CI. Then the audit itself is put to the test: a charge made twice,
 * a result posted twice, a result gone from Discord while the bot thinks it delivered, and a
 * second upstream task for one job must each show in its figures, or the suite's zeros would
 * prove nothing.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BOT_TOKEN, SIM_KEY, waitFor } from '@music-bot/test-world';
import { auditAllowances, auditSalesReport } from '../chaos/sales-audit.js';
import { runChaos } from '../chaos/suite.js';
import { SCENARIOS } from '../chaos/scenarios/index.js';
import { CHAOS_PACK, startChaosWorld, type ChaosWorld } from '../chaos/world.js';

let world: ChaosWorld;
beforeAll(async () => {
  world = await startChaosWorld();
}, 120_000);
afterAll(async () => world?.close(), 120_000);

describe('the chaos suite, short', () => {
  it('ends every scenario with every figure at 0', async () => {
    const lines: string[] = [];
    const short = SCENARIOS.filter((scenario) => scenario.inShortSuite !== false);
    const report = await runChaos(short, { jobs: 6, quick: true }, { world, log: (line) => lines.push(line) });
    const failed = report.scenarios.filter((scenario) => !scenario.passed);
    expect(failed.map((scenario) => ({ name: scenario.name, zero: scenario.zero, details: scenario.details.slice(0, 10) }))).toEqual([]);
    expect(report.scenarios.map((scenario) => scenario.name)).toEqual([...short.map((scenario) => scenario.name), 'secrets']);
    expect(report.totals.jobs).toBeGreaterThan(0);
    expect(report.line).toMatch(/^chaos: \d+ jobs, lost 0, duplicated 0, duplicated upstream 0, double-charged 0, ledger drift 0, crashes 0, accepted forgeries 0, secrets 0$/);
  }, 240_000);

  it('the audit sees a job charged twice and a result posted twice', async () => {
    const prefix = 'chaos audit-check';
    const place = world.places[0]!;
    const handle = world.song(place, `${prefix} 0`);
    await handle.waitForResponse(30_000);
    const clean = await world.settleAndAudit({ prefix, timeoutMs: 60_000 });
    expect(clean).toMatchObject({ jobs: 1, delivered: 1, lost: 0, duplicated: 0, doubleCharged: 0, ledgerDrift: 0 });

    const { rows } = await world.db.query<{ id: string; guild_id: string; cost: number; channel_id: string }>(
      `select id, guild_id, cost, channel_id from jobs where request->>'prompt' = $1`,
      [`${prefix} 0`],
    );
    const job = rows[0]!;
    // A second charge, written behind the ledger's back, as a bug would.
    await world.db.query(
      `insert into credit_ledger (guild_id, key, kind, amount, balance_after, job_id) values ($1, $2, 'reserve', $3, 0, $4)`,
      [job.guild_id, `audit-check:${job.id}`, -job.cost, job.id],
    );
    // The result posted again in the channel, as Discord would receive a duplicate.
    const final = world.emulator.channelMessages(job.channel_id).find((message) => (message.embeds ?? []).some((embed) => embed.footer?.text?.includes(job.id)));
    expect(final).toBeDefined();
    const response = await fetch(`${world.emulator.apiUrl}/v10/channels/${job.channel_id}/messages`, {
      method: 'POST',
      headers: { authorization: `Bot ${BOT_TOKEN}`, 'content-type': 'application/json' },
      body: JSON.stringify({ embeds: final!.embeds }),
    });
    expect(response.status).toBe(200);

    const audit = await world.settleAndAudit({ prefix, timeoutMs: 5_000 });
    expect(audit).toMatchObject({ jobs: 1, duplicated: 1, doubleCharged: 1 });
    // The extra charge is in the ledger but not in the balance, nor in the service's charges.
    expect(audit.ledgerDrift).toBeGreaterThanOrEqual(2 * job.cost);
  }, 120_000);

  it('counts as lost a result the bot recorded as delivered but Discord no longer holds', async () => {
    const prefix = 'chaos audit-lost';
    const handle = world.song(world.places[1]!, `${prefix} 0`);
    await handle.waitForResponse(30_000);
    const clean = await world.settleAndAudit({ prefix, timeoutMs: 60_000 });
    expect(clean).toMatchObject({ jobs: 1, delivered: 1, lost: 0 });
    const { rows } = await world.db.query<{ id: string }>(`select id from jobs where request->>'prompt' = $1`, [`${prefix} 0`]);
    const jobId = rows[0]!.id;
    expect(handle.original()?.embeds?.some((embed) => embed.footer?.text?.includes(jobId))).toBe(true);

    // The result taken out of Discord's record behind the bot's back: its row still says delivered.
    const response = await fetch(`${world.emulator.apiUrl}/v10/webhooks/${world.emulator.applicationId}/${handle.token}/messages/@original`, { method: 'DELETE' });
    expect(response.status).toBe(204);
    expect(handle.original()).toBeUndefined();

    const audit = await world.settleAndAudit({ prefix, timeoutMs: 5_000 });
    expect(audit).toMatchObject({ jobs: 1, delivered: 1, lost: 1, duplicated: 0 });
    expect(audit.details).toContainEqual(expect.stringContaining(`lost: "${prefix} 0" was accepted`));
  }, 120_000);

  it('counts a second upstream task made for one job', async () => {
    const prefix = 'chaos audit-upstream';
    const prompt = `${prefix} 0`;
    const handle = world.song(world.places[2]!, prompt);
    await handle.waitForResponse(30_000);
    const clean = await world.settleAndAudit({ prefix, timeoutMs: 60_000 });
    expect(clean).toMatchObject({ jobs: 1, delivered: 1, duplicatedUpstream: 0 });
    const { rows } = await world.db.query<{ cost: number }>(`select cost from jobs where request->>'prompt' = $1`, [prompt]);

    // The bot's create sent a second time, webhook URL (and so the job's id) and all, as a retry after an unclear answer would.
    const create = world.sim.requests.find((request) => request.method === 'POST' && (request.body as Record<string, unknown> | undefined)?.['sound'] === prompt);
    expect(create).toBeDefined();
    const again = await fetch(`${world.sim.url}${create!.path}${create!.query}`, {
      method: 'POST',
      headers: { authorization: `Bearer ${SIM_KEY}`, 'content-type': 'application/json' },
      body: JSON.stringify(create!.body),
    });
    expect(again.status).toBe(200);
    expect(world.sim.listTasks().filter((task) => task.body['sound'] === prompt)).toHaveLength(2);

    const audit = await world.settleAndAudit({ prefix, timeoutMs: 5_000 });
    expect(audit).toMatchObject({ jobs: 1, duplicatedUpstream: 1 });
    // The service kept the second task's price, which no guild paid (the test above left a guild's drift of its own).
    expect(audit.ledgerDrift).toBe(clean.ledgerDrift + rows[0]!.cost);
  }, 120_000);

  it('counts a pack Discord sold that reached no server, and a pack credited twice', async () => {
    const prefix = 'chaos audit-purchases';
    const clean = await world.settleAndAudit({ prefix, timeoutMs: 5_000 });
    const credited = world.emulator.entitlements().find((entitlement) => entitlement.sku_id === CHAOS_PACK.skuId && !entitlement.deleted && entitlement.consumed);
    expect(credited, 'a pack the purchases scenario bought and the bot credited').toBeDefined();
    // A second credit for it, written behind the ledger's back (balance and all), as a bug would.
    const { rows } = await world.db.query<{ guild_id: string }>(`select guild_id from credit_ledger where key = $1`, [`entitlement:${credited!.id}`]);
    await world.db.query(
      `with g as (update guilds set balance = balance + 100 where id = $1 returning balance)
       insert into credit_ledger (guild_id, key, kind, amount, balance_after) select $1, $2, 'purchase', 100, balance from g`,
      [rows[0]!.guild_id, `entitlement:${credited!.id}:again`],
    );
    // Bought from the Store page by a member never shown a Buy button (the scenarios' members may
    // have been, and a pack then goes to that server): the bot holds it for its buyer, in no server.
    const buyer = world.emulator.addMember(world.places.at(-1)!.guildId, { username: 'store-page-buyer' });
    const waiting = world.emulator.purchase({ userId: buyer.id, skuId: CHAOS_PACK.skuId });
    const recorded = await waitFor(
      'the bot to record the waiting pack',
      async () => (await world.db.query<{ guild_id: string | null; default_guild_id: string | null }>('select guild_id, default_guild_id from entitlements where id = $1', [waiting.id])).rows[0],
      { timeoutMs: 15_000 },
    );
    // No server to go to: nothing will claim it.
    expect(recorded).toEqual({ guild_id: null, default_guild_id: null });

    const audit = await world.settleAndAudit({ prefix, timeoutMs: 5_000 });
    expect(audit.ledgerDrift - clean.ledgerDrift).toBe(2 * CHAOS_PACK.credits);
    expect(audit.details).toContainEqual(expect.stringContaining(`pack ${credited!.id} was credited 2 times`));
    expect(audit.details).toContainEqual(expect.stringContaining(`pack ${waiting.id} bought for ${CHAOS_PACK.credits} credits: 0 in`));
  }, 120_000);

  it('counts allowance credits above the largest allowance of a month, and a sale the ledger never gave', async () => {
    const [allowances, sales] = [await auditAllowances(world.db), await auditSalesReport(world.db)];
    expect([allowances.over, sales.off]).toEqual([0, 0]);
    const { rows } = await world.db.query<{ id: string }>(
      `select id from guilds g where monthly_allowance = 0 and not exists (select 1 from entitlements e where e.guild_id = g.id and e.kind = 'subscription') limit 1`,
    );
    const guildId = rows[0]!.id;
    const month = new Date().toISOString().slice(0, 7);
    // A floor for a server with no allowance, written behind the ledger's back (balance and all), as a bug would.
    await world.db.query(
      `with g as (update guilds set balance = balance + 50 where id = $1 returning balance)
       insert into credit_ledger (guild_id, key, kind, amount, balance_after) select $1, $2, 'allowance', 50, balance from g`,
      [guildId, `allowance-check:${guildId}:${month}`],
    );
    // A pack recorded as claimed whose credits never went in.
    await world.db.query(`insert into entitlements (id, sku_id, kind, type, user_id, credits, guild_id, claimed_at) values ('1400000000000009901', $1, 'pack', 1, 'buyer', $2, $3, now())`, [
      CHAOS_PACK.skuId,
      CHAOS_PACK.credits,
      guildId,
    ]);

    const after = await auditAllowances(world.db);
    expect(after.over).toBe(50);
    expect(after.details).toContainEqual(expect.stringContaining(`guild ${guildId} got 50 allowance credits in ${month}`));
    const report = await auditSalesReport(world.db);
    // The pack's credits, and the credits sold with them.
    expect(report.off).toBe(2 * CHAOS_PACK.credits);
    expect(report.details).toContainEqual(expect.stringContaining('sales report: pack credits'));
  }, 60_000);
});
