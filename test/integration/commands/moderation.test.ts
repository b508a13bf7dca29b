/**
 * `/credits`, `/credits-admin` and `/settings`: who may use them (checked on the server even
 * when Discord lets the command through), what they change, and the ledger or audit row
 * naming who did it.
 */
import { and, desc, eq } from 'drizzle-orm';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { grant } from '../../../src/credits/index.js';
import { auditLog, creditLedger, guilds } from '../../../src/db/schema.js';
import { buttonsOf, jobIdIn, privateAnswer, startBot, type BotHarness } from './harness.js';

let h: BotHarness;
/** The bot seen from a guild of the test's own: every test starts with 100 credits and no settings. */
let g: BotHarness;

beforeAll(async () => {
  h = await startBot({ startingCredits: 100 });
});
afterAll(async () => h?.close());
beforeEach(() => {
  g = h.inNewGuild();
});
afterEach(() => expect(h.emulator.findings).toEqual([]));

async function guildRow() {
  const [row] = await g.db.db.select().from(guilds).where(eq(guilds.id, g.guild.id));
  return row!;
}

async function lastAudit(action: string) {
  const [row] = await g.db.db
    .select()
    .from(auditLog)
    .where(and(eq(auditLog.guildId, g.guild.id), eq(auditLog.action, action)))
    .orderBy(desc(auditLog.id))
    .limit(1);
  return row;
}

const admin = (userId: string, subcommand: string, options: Record<string, string | number | boolean> = {}) =>
  privateAnswer(g.run(userId, { name: 'credits-admin', subcommand, options }));
const settings = (userId: string, subcommand: string, options: Record<string, string | number | boolean> = {}) =>
  privateAnswer(g.run(userId, { name: 'settings', subcommand, options }));

describe('/credits', () => {
  it('shows the balance, the allowance, this month’s usage and what the caller may still spend today', async () => {
    const answer = await privateAnswer(g.run(g.members.alice, { name: 'credits' }));
    expect(answer.ephemeral).toBe(true);
    expect(answer.content).toContain('**Credits of this server**: 100');
    expect(answer.content).toContain('Monthly allowance: none');
    expect(answer.content).toContain('You can still spend today: 100 (no daily limit)');

    await g.delivered(jobIdIn(await privateAnswer(g.run(g.members.alice, { name: 'lyrics', options: { prompt: 'one credit' } }))));
    const after = await privateAnswer(g.run(g.members.alice, { name: 'credits' }));
    expect(after.content).toContain('**Credits of this server**: 99');
    expect(after.content).toMatch(/Used in \d{4}-\d{2}: 1 credits on 1 job \(you: 1 on 1\)/);
  });
});

describe('permissions', () => {
  it('refuses /credits-admin and /settings to a member without Manage Server, though Discord let the command through', async () => {
    expect((await admin(g.members.alice, 'freeze')).content).toContain('Only moderators can do that');
    expect((await guildRow()).frozen).toBe(false);
    expect(await lastAudit('credits.frozen')).toBeUndefined();
    expect((await settings(g.members.alice, 'cooldown', { seconds: 5 })).content).toContain('Only moderators can do that');
    expect((await guildRow()).cooldownSeconds).toBe(0);
    expect((await admin(g.members.roleModerator, 'usage')).content).toContain('Only moderators');
  });

  it('makes the moderator role a moderator, but only Manage Server may change that role', async () => {
    const saved = await settings(g.members.manager, 'moderator-role', { role: g.moderatorRole.id });
    expect(saved.content).toContain(`Moderator role: <@&${g.moderatorRole.id}>`);
    expect(await lastAudit('settings.moderator_role')).toMatchObject({
      actorId: g.members.manager,
      details: { before: null, after: g.moderatorRole.id },
    });
    expect((await admin(g.members.roleModerator, 'usage')).content).toContain('Usage in');
    expect((await settings(g.members.roleModerator, 'moderator-role')).content).toContain(
      'Only members with Manage Server can change the moderator role',
    );
    expect((await guildRow()).moderatorRoleId).toBe(g.moderatorRole.id);
  });

  it('keeps grant, take, allowance and account to the bot’s owners', async () => {
    const balance = await g.balance();
    for (const [subcommand, options] of [
      ['grant', { amount: 10, reason: 'x' }],
      ['take', { amount: 10, reason: 'x' }],
      ['allowance', { amount: 10 }],
      ['account', {}],
    ] as const) {
      expect((await admin(g.members.manager, subcommand, options)).content, subcommand).toContain('Only the bot’s owners can do that');
    }
    expect(await g.balance()).toBe(balance);
  });
});

describe('/credits-admin, by the bot’s owner', () => {
  it('grants and takes credits, each in the ledger with who and why', async () => {
    const granted = await admin(g.members.owner, 'grant', { amount: 50, reason: 'launch party' });
    expect(granted.content).toBe('Added 50 credits. The balance is now 150.');
    const [row] = await g.db.db
      .select()
      .from(creditLedger)
      .where(and(eq(creditLedger.guildId, g.guild.id), eq(creditLedger.kind, 'grant'), eq(creditLedger.reason, 'launch party')));
    expect(row).toMatchObject({ amount: 50, actorId: g.members.owner, balanceAfter: 150 });

    expect((await admin(g.members.owner, 'take', { amount: 500, reason: 'too much' })).content).toBe(
      'Cannot take 500 credits: the balance is 150.',
    );
    expect((await admin(g.members.owner, 'take', { amount: 50, reason: 'correction' })).content).toBe(
      'Removed 50 credits. The balance is now 100.',
    );
    expect(await g.balance()).toBe(100);
  });

  it('sets the monthly allowance', async () => {
    const answer = await admin(g.members.owner, 'allowance', { amount: 300 });
    expect(answer.content).toContain('The monthly allowance is 300 credits (was 0)');
    expect((await guildRow()).monthlyAllowance).toBe(300);
    expect(await lastAudit('credits.monthly_allowance')).toMatchObject({ actorId: g.members.owner, details: { amount: 300 } });
    expect((await privateAnswer(g.run(g.members.alice, { name: 'credits' }))).content).toContain('Monthly allowance: 300');
  });

  it('shows the service account’s balance, and a friendly line when the service fails', async () => {
    g.setSimForThisTest({ credits: 4321 });
    expect((await admin(g.members.owner, 'account')).content).toContain('The music service account has **4321** credits');
    g.setSimForThisTest({ faults: [{ kind: 'status', status: 500, path: '/api/v1/get-credits' }] });
    const failed = await admin(g.members.owner, 'account');
    expect(failed.content).toBe('The music service had an internal error. Please try again later.');
  });
});

describe('/credits-admin, by moderators', () => {
  it('sets a daily limit per member, and a role’s own limit', async () => {
    await g.delivered(jobIdIn(await privateAnswer(g.run(g.members.alice, { name: 'lyrics', options: { prompt: 'one credit today' } }))));
    expect((await admin(g.members.manager, 'user-limit', { amount: 30 })).content).toBe('Each member may now spend 30 credits per day (UTC).');
    expect((await guildRow()).userDailyCap).toBe(30);
    expect((await admin(g.members.manager, 'user-limit', { amount: 80, role: g.djRole.id })).content).toBe(
      `Members with <@&${g.djRole.id}> may now spend 80 credits per day (UTC).`,
    );
    expect(await lastAudit('credits.daily_cap')).toMatchObject({
      actorId: g.members.manager,
      details: { roleId: g.djRole.id, amount: 80 },
    });
    expect((await privateAnswer(g.run(g.members.alice, { name: 'credits' }))).content).toMatch(
      /You can still spend today: 29 \(daily limit 30, 1 used/,
    );
    expect((await admin(g.members.manager, 'user-limit', { amount: 0 })).content).toBe('Each member: no daily limit any more.');
    expect((await guildRow()).userDailyCap).toBeNull();
  });

  it('freezes and unfreezes spending, with who did it', async () => {
    await settings(g.members.manager, 'moderator-role', { role: g.moderatorRole.id });
    expect((await admin(g.members.manager, 'freeze')).content).toContain('paused');
    expect((await guildRow()).frozen).toBe(true);
    expect(await lastAudit('credits.frozen')).toMatchObject({ actorId: g.members.manager, details: { frozen: true } });
    const refused = await privateAnswer(g.run(g.members.alice, { name: 'lyrics', options: { prompt: 'frozen?' } }));
    expect(refused.content).toContain('paused');
    expect((await admin(g.members.roleModerator, 'unfreeze')).content).toBe('Spending on this server is allowed again.');
    expect(await lastAudit('credits.frozen')).toMatchObject({ actorId: g.members.roleModerator, details: { frozen: false } });
  });

  it('posts one low-balance alert when the balance falls under the threshold', async () => {
    const alerts = g.emulator.createChannel(g.guild.id, { name: 'mod-alerts' });
    const below = (await g.balance()) - 5;
    const answer = await admin(g.members.manager, 'alert', { channel: alerts.id, below });
    expect(answer.content).toBe(`One message will be posted in <#${alerts.id}> when the balance falls below ${below} credits.`);
    expect(await guildRow()).toMatchObject({ alertChannelId: alerts.id, alertBelow: below });
    expect(await lastAudit('credits.low_balance_alert')).toMatchObject({ actorId: g.members.manager });

    const first = jobIdIn(await privateAnswer(g.run(g.members.bob, { name: 'song', options: { prompt: 'below the line' } })));
    await g.delivered(first);
    const alert = await g.emulator.waitForMessage(alerts.id);
    expect(alert.content).toContain(`alert below ${below}`);
    const second = jobIdIn(await privateAnswer(g.run(g.members.alice, { name: 'lyrics', options: { prompt: 'still below' } })));
    await g.delivered(second);
    expect(g.emulator.channelMessages(alerts.id)).toHaveLength(1);

    expect((await admin(g.members.manager, 'alert', { channel: alerts.id, below: 0 })).content).toBe('The low-balance alert is off.');
    expect(await guildRow()).toMatchObject({ alertChannelId: null, alertBelow: null });
  });

  it('shows this month’s usage by member, or of one member', async () => {
    const jobs = await Promise.all([
      privateAnswer(g.run(g.members.bob, { name: 'song', options: { prompt: 'counted' } })),
      privateAnswer(g.run(g.members.alice, { name: 'lyrics', options: { prompt: 'counted once' } })),
      privateAnswer(g.run(g.members.alice, { name: 'lyrics', options: { prompt: 'counted twice' } })),
    ]);
    for (const ack of jobs) await g.delivered(jobIdIn(ack));
    const all = await admin(g.members.manager, 'usage');
    expect(all.content).toContain(`<@${g.members.bob}>: 10 credits on 1 jobs`);
    expect(all.content).toContain(`<@${g.members.alice}>: 2 credits on 2 jobs`);
    const one = await admin(g.members.manager, 'usage', { user: g.members.alice });
    expect(one.content).toMatch(new RegExp(`^<@${g.members.alice}> in \\d{4}-\\d{2}: 2 credits on 2 jobs`));
  });

  it('pages through the history and exports it as CSV, to moderators only', async () => {
    await g.balance();
    for (let i = 0; i < 12; i += 1) {
      await grant(g.db.db, { guildId: g.guild.id, amount: 1, actorId: g.members.owner, key: `paging-${i}`, reason: `gift ${i}` });
    }
    const handle = g.run(g.members.manager, { name: 'credits-admin', subcommand: 'history' });
    const page = await privateAnswer(handle);
    expect(page.content).toContain('**Credit history**');
    expect(page.content).toContain('gift 11');
    expect(page.content).not.toContain('gift 0');
    const [older, csv] = buttonsOf(page);
    expect(older).toMatch(/^history-page:all:\d+$/);
    expect(csv).toBe('history-csv:all');

    const next = g.emulator.clickButton({ messageId: page.id, customId: older!, userId: g.members.manager });
    await next.waitForResponse();
    const second = await handle.waitForEdit((message) => message.content?.includes('(older)') ?? false);
    expect(second.content).toContain('gift 0');
    expect(second.content).not.toContain('gift 11');

    const exported = await privateAnswer(g.emulator.clickButton({ messageId: page.id, customId: csv!, userId: g.members.manager }));
    const file = exported.attachments[0];
    expect(file?.filename).toMatch(/^credits-\d+-\d{4}-\d{2}-\d{2}\.csv$/);
    const lines = file!.data.toString('utf8').trimEnd().split('\r\n');
    expect(lines[0]).toBe('id,time,kind,amount,balance_after,user,actor,job,reason');
    expect(lines).toHaveLength(1 + (await g.ledgerCount()));

    // A member who is not a moderator gets nothing from the same button.
    const forged = await privateAnswer(g.emulator.clickButton({ messageId: page.id, customId: csv!, userId: g.members.alice }));
    expect(forged.content).toContain('Only moderators');
    expect(forged.attachments).toEqual([]);
  });
});

describe('/settings', () => {
  it('shows the settings', async () => {
    const shown = await settings(g.members.manager, 'show');
    expect(shown.content).toContain('**Settings of this server**');
    expect(shown.content).toContain('Channels: all');
  });

  it('allows channels one by one, removes them, and resets to all', async () => {
    expect((await settings(g.members.manager, 'channels', { add: g.channelId })).content).toContain(`Channels: <#${g.channelId}>`);
    expect((await settings(g.members.manager, 'channels', { add: g.otherChannelId })).content).toContain(
      `Channels: <#${g.channelId}>, <#${g.otherChannelId}>`,
    );
    expect((await settings(g.members.manager, 'channels', { remove: g.channelId })).content).toContain(`Channels: <#${g.otherChannelId}>`);
    expect(await lastAudit('settings.allowed_channels')).toMatchObject({
      actorId: g.members.manager,
      details: { before: [g.channelId, g.otherChannelId], after: [g.otherChannelId] },
    });
    expect((await settings(g.members.manager, 'channels', { reset: true })).content).toContain('Channels: all');
  });

  it('sets and clears the required role', async () => {
    expect((await settings(g.members.manager, 'role', { role: g.djRole.id })).content).toContain(`Required role: <@&${g.djRole.id}>`);
    expect((await guildRow()).requiredRoleId).toBe(g.djRole.id);
    expect((await settings(g.members.manager, 'role')).content).toContain('Required role: none');
    expect(await lastAudit('settings.required_role')).toMatchObject({ details: { before: g.djRole.id, after: null } });
  });

  it('sets the default model from the list, which songs then use', async () => {
    const choices = await g.autocomplete(g.members.manager, {
      name: 'settings',
      subcommand: 'default-model',
      focused: { name: 'model', value: 'raw' },
    });
    expect(choices).toEqual([{ name: 'ModelB-2.0 Raw', value: 'ModelB-2.0 Raw' }]);
    expect((await settings(g.members.manager, 'default-model', { model: 'Nope 1' })).content).toContain('not one this bot offers');
    expect((await settings(g.members.manager, 'default-model', { model: 'ModelB-2.0 Raw' })).content).toContain('Default model: ModelB-2.0 Raw');

    await g.delivered(jobIdIn(await privateAnswer(g.run(g.members.alice, { name: 'song', options: { prompt: 'default model' } }))));
    const create = g.sim.requests.filter((request) => request.path === '/api/v1/producer/create').at(-1);
    expect((create?.body as Record<string, unknown>).mv).toBe('ModelB-2.0 Raw');
  });

  it('sets the cooldown', async () => {
    expect((await settings(g.members.manager, 'cooldown', { seconds: 30 })).content).toContain('Cooldown: 30 s');
    expect(await lastAudit('settings.cooldown')).toMatchObject({ details: { before: 0, after: 30 } });
    expect((await settings(g.members.manager, 'cooldown', { seconds: 0 })).content).toContain('Cooldown: none');
  });

  it('makes acknowledgements private when visibility is private', async () => {
    expect((await settings(g.members.manager, 'visibility', { mode: 'private' })).content).toContain('Visibility: private');
    expect(await lastAudit('settings.visibility')).toMatchObject({ details: { before: 'public', after: 'private' } });
    const handle = g.run(g.members.bob, { name: 'lyrics', options: { prompt: 'just for me' } });
    const ack = await privateAnswer(handle);
    expect(ack.content).toContain('Your lyrics are on their way');
    // The public "thinking…" reply was deleted before the request went to the pipeline.
    expect(g.emulator.channelMessages(g.channelId).filter((message) => message.interactionId === handle.id)).toEqual([]);
  });
});
