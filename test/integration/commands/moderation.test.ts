/**
 * `/credits`, `/credits-admin` and `/settings`: who may use them (checked on the server even
 * when Discord lets the command through), what they change, and the ledger or audit row
 * naming who did it.
 */
import { and, desc, eq } from 'drizzle-orm';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { grant } from '../../../src/credits/index.js';
import { auditLog, creditLedger, guilds } from '../../../src/db/schema.js';
import { awayFromUtcMidnight } from '../../support/utc-day.js';
import { buttonsOf, jobIdIn, privateAnswer, startBot, type BotHarness } from './harness.js';

let h: BotHarness;
/** The bot seen from a guild of the test's own: every test starts with 100 credits and no settings. */
let g: BotHarness;

beforeAll(async () => {
  h = await startBot({ startingCredits: 100 });
});
afterAll(async () => h?.close());
beforeEach(async () => {
  g = h.inNewGuild();
  // A test charges, then reads today's and this month's spending, the allowance's month and its
  // next top-up, through the bot's clock: all of it on one UTC day.
  await awayFromUtcMidnight(30_000);
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
    expect(after.content).toMatch(/Used in [A-Z][a-z]+ \d{4}: 1 credit on 1 job \(you: 1 on 1\)/);
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

  it('sets the monthly allowance that needs no top-up at once, and says when the next one comes', async () => {
    const answer = await admin(g.members.owner, 'allowance', { amount: 80 });
    expect(answer.content).toMatch(/^The monthly allowance is 80 credits \(was 0\)\. On <t:\d+:D> \(<t:\d+:R>\) the balance, now 100, is topped up to 80 credits if it is lower\.$/);
    expect(buttonsOf(answer)).toEqual([]);
    expect(await guildRow()).toMatchObject({ monthlyAllowance: 80, balance: 100 });
    expect(await lastAudit('credits.monthly_allowance')).toMatchObject({ actorId: g.members.owner, details: { amount: 80 } });
    expect((await privateAnswer(g.run(g.members.alice, { name: 'credits' }))).content).toMatch(/Monthly allowance: 80 \(the balance is topped up to it at the start of each month, UTC; next <t:\d+:R>\)/);
  });

  it('asks before an allowance tops the balance up at once, naming the take it would undo', async () => {
    await admin(g.members.owner, 'take', { amount: 60, reason: 'abuse' });
    const handle = g.run(g.members.owner, { name: 'credits-admin', subcommand: 'allowance', options: { amount: 100 } });
    const asked = await privateAnswer(handle);
    expect(asked.content).toContain('tops this server’s balance up from 40 to 100 **right away**');
    expect(asked.content).toMatch(/That undoes the take of 60 credits made <t:\d+:R>\./);
    const [now, next] = buttonsOf(asked);
    expect([now, next]).toEqual(['allowance-set:100:now', 'allowance-set:100:next']);
    // Nothing is set until the owner chooses, whatever the members do meanwhile.
    await privateAnswer(g.run(g.members.alice, { name: 'credits' }));
    expect(await guildRow()).toMatchObject({ monthlyAllowance: 0, balance: 40 });

    // A moderator who is not an owner cannot choose for them.
    const forged = await privateAnswer(g.emulator.clickButton({ messageId: asked.id, customId: next!, userId: g.members.manager }));
    expect(forged.content).toContain('Only the bot’s owners can do that');

    await g.emulator.clickButton({ messageId: asked.id, customId: next!, userId: g.members.owner }).waitForResponse();
    const chosen = await handle.waitForEdit((message) => message.content?.includes('The monthly allowance is 100 credits') ?? false);
    expect(chosen.content).toContain('the balance, now 40, is topped up to 100 credits');
    expect(buttonsOf(chosen)).toEqual([]);
    await privateAnswer(g.run(g.members.alice, { name: 'credits' }));
    expect(await guildRow()).toMatchObject({ monthlyAllowance: 100, balance: 40 });
  });

  it('tops up at once when the owner says so, and says by how much', async () => {
    await admin(g.members.owner, 'take', { amount: 60, reason: 'abuse' });
    const handle = g.run(g.members.owner, { name: 'credits-admin', subcommand: 'allowance', options: { amount: 100 } });
    const asked = await privateAnswer(handle);
    await g.emulator.clickButton({ messageId: asked.id, customId: buttonsOf(asked)[0]!, userId: g.members.owner }).waitForResponse();
    const chosen = await handle.waitForEdit((message) => message.content?.includes('The monthly allowance is 100 credits') ?? false);
    expect(chosen.content).toContain('The balance was topped up from 40 to 100 now.');
    expect(await guildRow()).toMatchObject({ monthlyAllowance: 100, balance: 100 });
  });

  it('warns that a take under a monthly allowance is given back at the next top-up', async () => {
    await admin(g.members.owner, 'allowance', { amount: 100 });
    const taken = await admin(g.members.owner, 'take', { amount: 30, reason: 'correction' });
    expect(taken.content).toMatch(
      /^Removed 30 credits\. The balance is now 70\. This server has a monthly allowance of 100 credits: on <t:\d+:D> \(<t:\d+:R>\) the balance is topped up to it again/,
    );
  });

  it('shows the service account’s balance, and a friendly line when the service fails', async () => {
    g.setSimForThisTest({ credits: 4321 });
    expect((await admin(g.members.owner, 'account')).content).toContain('The music service account has **4,321 credits**.');
    g.setSimForThisTest({ faults: [{ kind: 'status', status: 500, path: '/api/v1/get-credits' }] });
    const failed = await admin(g.members.owner, 'account');
    expect(failed.content).toBe('The music service had an internal error. Please try again later.');
  });
});

describe('who can add credits, as the bot tells it', () => {
  const firstOfNextMonth = () => {
    const now = new Date();
    return Math.floor(Date.UTC(now.getUTCFullYear(), now.getUTCMonth() + 1, 1) / 1000);
  };

  it('names the bot’s owners when a request costs more than the balance, and the allowance when one will top it up', async () => {
    await admin(g.members.owner, 'take', { amount: 95, reason: 'test' });
    const refused = await privateAnswer(g.run(g.members.alice, { name: 'song', options: { prompt: 'too dear' } }));
    expect(refused.content).toBe('This server has 5 credits and this costs 10. Only the bot’s owners can add credits.');

    const handle = g.run(g.members.owner, { name: 'credits-admin', subcommand: 'allowance', options: { amount: 50 } });
    const asked = await privateAnswer(handle);
    await g.emulator.clickButton({ messageId: asked.id, customId: 'allowance-set:50:next', userId: g.members.owner }).waitForResponse();
    await handle.waitForEdit((message) => message.content?.includes('The monthly allowance is 50 credits') ?? false);

    const at = firstOfNextMonth();
    const again = await privateAnswer(g.run(g.members.alice, { name: 'song', options: { prompt: 'still too dear' } }));
    expect(again.content).toBe(
      `This server has 5 credits and this costs 10. Its monthly allowance tops it up to 50 <t:${at}:R> (<t:${at}:D>); before then, only the bot’s owners can add credits.`,
    );
    expect(await g.balance()).toBe(5);

    // The low-balance alert tells the moderators the same.
    const alerts = g.emulator.createChannel(g.guild.id, { name: 'mod-alerts' });
    await admin(g.members.manager, 'alert', { channel: alerts.id, below: 20 });
    await g.delivered(jobIdIn(await privateAnswer(g.run(g.members.alice, { name: 'lyrics', options: { prompt: 'one credit' } }))));
    const alert = await g.emulator.waitForMessage(alerts.id);
    expect(alert.content).toBe(
      `This server’s music credits are low: 4 left (alert below 20). The monthly allowance tops them up to 50 <t:${at}:R> (<t:${at}:D>); before then, only the bot’s owners can add credits.`,
    );
  });

  it('names the allowance that wins, a server plan’s over the owners’ smaller one, in the refusal, the alert, take and /credits alike', async () => {
    await admin(g.members.owner, 'allowance', { amount: 30 });
    // A server plan of 80 credits a month, as the subscription's start records it beside the owners' allowance.
    await g.db.db.update(guilds).set({ subscriptionAllowance: 80 }).where(eq(guilds.id, g.guild.id));
    const at = firstOfNextMonth();
    expect((await admin(g.members.owner, 'take', { amount: 95, reason: 'test' })).content).toMatch(/This server has a monthly allowance of 80 credits:/);
    const refused = await privateAnswer(g.run(g.members.alice, { name: 'song', options: { prompt: 'too dear' } }));
    expect(refused.content).toContain(`Its monthly allowance tops it up to 80 <t:${at}:R>`);
    expect((await privateAnswer(g.run(g.members.alice, { name: 'credits' }))).content).toContain('80');

    const alerts = g.emulator.createChannel(g.guild.id, { name: 'mod-alerts' });
    await admin(g.members.manager, 'alert', { channel: alerts.id, below: 20 });
    await g.delivered(jobIdIn(await privateAnswer(g.run(g.members.alice, { name: 'lyrics', options: { prompt: 'one credit' } }))));
    expect((await g.emulator.waitForMessage(alerts.id)).content).toContain(`The monthly allowance tops them up to 80 <t:${at}:R>`);
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
    expect((await admin(g.members.manager, 'user-limit', { amount: 0 })).content).toBe('Members no longer have a daily limit, except those whose role has one of its own.');
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
    expect(alert.content).toContain(`alert below ${below}). Only the bot’s owners can add credits.`);
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
    expect(all.content).toContain(`<@${g.members.bob}>: 10 credits on 1 job\n`);
    expect(all.content).toContain(`<@${g.members.alice}>: 2 credits on 2 jobs`);
    const one = await admin(g.members.manager, 'usage', { user: g.members.alice });
    expect(one.content).toMatch(new RegExp(`^<@${g.members.alice}> in [A-Z][a-z]+ \\d{4}: 2 credits on 2 jobs`));
  });

  it('pages through the history both ways, stable under new movements, and exports it as CSV, to moderators only', async () => {
    await g.balance();
    for (let i = 0; i < 12; i += 1) {
      await grant(g.db.db, { guildId: g.guild.id, amount: 1, actorId: g.members.owner, key: `paging-${i}`, reason: `gift ${i}` });
    }
    const handle = g.run(g.members.manager, { name: 'credits-admin', subcommand: 'history' });
    const page = await privateAnswer(handle);
    expect(page.content).toContain('**Credit history**');
    expect(page.content).toContain('gift 11');
    expect(page.content).not.toContain('gift 0');
    expect(page.content).not.toContain('(older)');
    // The newest page: nothing newer yet.
    expect(pagingOf(page)).toMatchObject({ newer: { disabled: true }, older: { disabled: false } });
    const csv = buttonsOf(page).at(-1);
    expect(csv).toBe('history-csv:all');

    const click = async (customId: string, shows: string) => {
      await g.emulator.clickButton({ messageId: page.id, customId, userId: g.members.manager }).waitForResponse();
      return handle.waitForEdit((message) => message.content?.includes(shows) ?? false);
    };
    const second = await click(pagingOf(page).older.customId, 'gift 0');
    expect(second.content).toContain('(older)');
    expect(second.content).toContain('**grant** (starting credits) +100 → 100');
    expect(second.content).not.toContain('gift 11');
    expect(pagingOf(second)).toMatchObject({ newer: { disabled: false }, older: { disabled: true } });

    // A movement written meanwhile does not shift the pages: Newer shows the same first page, then the new one.
    await grant(g.db.db, { guildId: g.guild.id, amount: 1, actorId: g.members.owner, key: 'paging-late', reason: 'late gift' });
    const back = await click(pagingOf(second).newer.customId, 'gift 11');
    expect(back.content).toContain('gift 2');
    expect(back.content).not.toContain('gift 1 ');
    expect(back.content).not.toContain('late gift');
    expect(back.content).toContain('(older)');
    expect(pagingOf(back)).toMatchObject({ newer: { disabled: false }, older: { disabled: false } });
    const newest = await click(pagingOf(back).newer.customId, 'late gift');
    expect(newest.content).not.toContain('(older)');
    expect(pagingOf(newest)).toMatchObject({ newer: { disabled: true }, older: { disabled: false } });

    const exported = await privateAnswer(g.emulator.clickButton({ messageId: page.id, customId: csv!, userId: g.members.manager }));
    const file = exported.attachments[0];
    expect(file?.filename).toMatch(/^credits-\d+-\d{4}-\d{2}-\d{2}\.csv$/);
    const lines = file!.data.toString('utf8').trimEnd().split('\r\n');
    expect(lines[0]).toBe('id,time,kind,amount,balance_after,user,actor,job,reason,entitlement');
    expect(lines).toHaveLength(1 + (await g.ledgerCount()));

    // A member who is not a moderator gets nothing from the same button.
    const forged = await privateAnswer(g.emulator.clickButton({ messageId: page.id, customId: csv!, userId: g.members.alice }));
    expect(forged.content).toContain('Only moderators');
    expect(forged.attachments).toEqual([]);
  });

  it('names each movement as members know it: what a job was, its refund, the allowance’s month', async () => {
    await g.delivered(jobIdIn(await privateAnswer(g.run(g.members.alice, { name: 'song', options: { prompt: 'spent on a song' } }))));
    await g.delivered(jobIdIn(await privateAnswer(g.run(g.members.bob, { name: 'lyrics', options: { prompt: 'this one fails [sim:fail]' } }))));
    const asked = g.run(g.members.owner, { name: 'credits-admin', subcommand: 'allowance', options: { amount: 500 } });
    await g.emulator.clickButton({ messageId: (await privateAnswer(asked)).id, customId: 'allowance-set:500:now', userId: g.members.owner }).waitForResponse();
    await asked.waitForEdit((message) => message.content?.includes('topped up') ?? false);

    const page = await admin(g.members.manager, 'history');
    expect(page.content).toContain(`**spent** (song) -10 → 90 · for <@${g.members.alice}>`);
    expect(page.content).toContain(`**spent** (lyrics) -1 → 89 · for <@${g.members.bob}>`);
    expect(page.content).toContain(`**refund** (lyrics) +1 → 90 · for <@${g.members.bob}>`);
    const month = new Intl.DateTimeFormat('en', { month: 'long', year: 'numeric', timeZone: 'UTC' }).format(new Date());
    expect(page.content).toContain(`**monthly allowance** (${month}) +`);
    expect(page.content).not.toContain('reserve');
    expect(page.content).not.toMatch(/\d{4}-\d{2}(?!-)/);
  });
});

/** The Newer and Older buttons of a history page. */
function pagingOf(message: { components?: unknown }) {
  const buttons = ((message.components ?? []) as Array<{ components?: Array<{ custom_id?: string; disabled?: boolean }> }>)
    .flatMap((row) => row.components ?? [])
    .filter((button) => button.custom_id?.startsWith('history-page:'));
  const [newer, older] = buttons.map((button) => ({ customId: button.custom_id!, disabled: button.disabled === true }));
  if (!newer || !older) throw new Error('no Newer and Older buttons');
  return { newer, older };
}

describe('/settings', () => {
  it('shows the settings', async () => {
    const shown = await settings(g.members.manager, 'show');
    expect(shown.content).toContain('**Settings of this server**');
    expect(shown.content).toContain('Channels: all');
    expect(shown.content.split('\n').at(-1)).toBe('Weekly chart: not posted.');
  });

  it('shows the weekly chart post as /settings charts set it, and off again', async () => {
    const set = await settings(g.members.manager, 'charts', { channel: g.otherChannelId, day: 'friday', hour: 7, timezone: 'America/New_York' });
    const line = /^Weekly chart: in <#(\d+)> every Friday at 07:00 \(America\/New_York\); the next one <t:(\d+):R>\.$/;
    expect(set.content.split('\n')).toEqual(['Saved.', expect.stringMatching(line)]);
    const shown = (await settings(g.members.manager, 'show')).content.split('\n');
    expect(shown.filter((text) => line.test(text))).toEqual([set.content.split('\n')[1]]);
    expect(line.exec(shown.at(-1)!)?.[1]).toBe(g.otherChannelId);
    // Friday 07:00 in New York, within the coming week.
    const next = new Date(Number(line.exec(shown.at(-1)!)![2]) * 1000);
    expect(new Intl.DateTimeFormat('en-US', { timeZone: 'America/New_York', weekday: 'long', hour: '2-digit', minute: '2-digit', hourCycle: 'h23' }).format(next)).toBe('Friday 07:00');
    expect(next.getTime() - Date.now()).toBeGreaterThan(0);
    expect(next.getTime() - Date.now()).toBeLessThanOrEqual(7 * 86_400_000);
    expect((await settings(g.members.manager, 'charts', { off: true })).content).toBe('Saved.\nWeekly chart: not posted.');
    expect((await settings(g.members.manager, 'show')).content.split('\n').at(-1)).toBe('Weekly chart: not posted.');
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

  it('sets the safety settings one at a time, keeps those left out, and refuses a change that names none', async () => {
    const before = await settings(g.members.manager, 'show');
    expect(before.content).toContain('Review channel: none (reports are only listed)');
    expect(before.content).toContain('AutoMod rules: not used');
    expect(before.content).toContain('Explicit words: only in age-restricted channels');

    const set = await settings(g.members.manager, 'safety', { 'review-channel': g.otherChannelId, 'use-automod': true });
    expect(set.content).toContain(`Review channel: <#${g.otherChannelId}>`);
    expect(set.content).toContain('AutoMod rules: on, but not in use: the bot lacks the Manage Server permission');
    expect(await lastAudit('settings.safety')).toMatchObject({
      actorId: g.members.manager,
      details: {
        before: { reviewChannelId: null, useAutomod: false, explicitInAgeRestrictedOnly: true },
        after: { reviewChannelId: g.otherChannelId, useAutomod: true, explicitInAgeRestrictedOnly: true },
      },
    });

    const cleared = await settings(g.members.manager, 'safety', { 'clear-review-channel': true, 'explicit-in-age-restricted-only': false });
    expect(cleared.content).toContain('Review channel: none');
    expect(cleared.content).toContain('AutoMod rules: on, but not in use');
    expect(cleared.content).toContain('Explicit words: allowed in every channel');
    expect(await guildRow()).toMatchObject({ reviewChannelId: null, useAutomod: true, explicitInAgeRestrictedOnly: false });

    expect((await settings(g.members.manager, 'safety')).content).toContain('Name at least one safety setting to change.');
    expect((await settings(g.members.alice, 'safety', { 'use-automod': false })).content).toContain('Only moderators can do that');
    expect((await guildRow()).useAutomod).toBe(true);
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
