/**
 * The dashboard's overview, history and library in a real Chromium (playwright-core), against
 * the bot as `npm start` runs it, the Discord emulator and the simulator: a moderator sees the
 * same balance and month's use as `/credits`, the last 30 days' spend drawn by Chart.js (served
 * from the bot, under its CSP) and its table, the history and its CSV; a hostile member name in
 * the top members and the history stays text and runs no script.
 */
import path from 'node:path';
import { PermissionFlagsBits } from 'discord-api-types/v10';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ROOT } from '@music-bot/test-world';
import { launchChromium, signInToDashboard } from '@music-bot/test-world/browser.js';
import { seedHistory } from '../bench/history-seed.js';
import { printBotLogsOnFailure, startE2E, type E2E } from './bot-process.js';

let bot: E2E;
let browser: Browser;
let admin: string;
printBotLogsOnFailure(() => bot);

beforeAll(async () => {
  bot = await startE2E({ webhooks: true, dashboard: true, startingCredits: 500 });
  const admins = bot.emulator.createRole(bot.guild.id, { name: 'Admins', permissions: PermissionFlagsBits.ManageGuild });
  admin = bot.emulator.addMember(bot.guild.id, { username: 'admin', globalName: 'Ada Admin', roles: [admins.id] }).id;
  browser = await launchChromium();
}, 120_000);

afterAll(async () => {
  await browser?.close();
  await bot?.close();
}, 60_000);

const pageUrl = (path: string) => `${bot.httpUrl}/dashboard/g/${bot.guild.id}/${path}`;

/** A fresh browser signed in as `userId` through the emulator's authorize page; page errors and CSP refusals collected. */
function signIn(userId: string, viewport = { width: 1280, height: 900 }): Promise<{ context: BrowserContext; page: Page; problems: string[] }> {
  return signInToDashboard(browser, `${bot.httpUrl}/dashboard`, userId, viewport);
}

/** `userId` asks for a song; resolves once the bot has charged and answered it. */
async function song(userId: string, prompt: string): Promise<void> {
  const handle = bot.run(userId, { name: 'song', options: { prompt } });
  await bot.jobIdOf(handle);
}

/** What `/credits` tells `userId`: the server's balance and this month's use, as numbers. */
async function creditsCommand(userId: string): Promise<{ balance: number; spent: number }> {
  const handle = bot.run(userId, { name: 'credits' });
  await bot.settled(handle);
  const text = handle.original()?.content ?? '';
  const balance = /\*\*Credits of this server\*\*: ([\d,]+)/.exec(text)?.[1];
  const spent = /Used in [^:]+: ([\d,]+) credits? on \d+ jobs?/.exec(text)?.[1];
  if (balance === undefined || spent === undefined) throw new Error(`no balance or use in /credits: ${text}`);
  return { balance: Number(balance.replaceAll(',', '')), spent: Number(spent.replaceAll(',', '')) };
}

const number = (text: string | null) => Number((text ?? '').replaceAll(',', '').trim());

describe('a moderator on the dashboard', () => {
  it('sees the same balance and month as /credits, the last 30 days drawn by Chart.js with its table, and the history with its CSV', async () => {
    await song(bot.members.alice, 'a sea shanty for the dashboard');
    await song(bot.members.bob, 'a lullaby for the dashboard');
    const credits = await creditsCommand(bot.members.alice);
    expect(credits.spent).toBeGreaterThan(0);

    const { context, page, problems } = await signIn(admin);
    await page.goto(pageUrl('overview'));
    expect(number(await page.getByTestId('figure-balance').textContent())).toBe(credits.balance);
    expect(number(await page.getByTestId('figure-month').textContent())).toBe(credits.spent);

    // Chart.js, loaded from the bot under the CSP, drew the nine series (six kinds, three sources).
    const canvas = page.locator('#chart-spend-canvas');
    await expect.poll(() => canvas.getAttribute('data-drawn'), { timeout: 15_000 }).toBe('9');
    expect(await canvas.getAttribute('role')).toBe('img');
    expect(await canvas.getAttribute('aria-label')).toContain('last 30 days');
    expect(await page.locator('[data-testid=chart-spend-table] tbody tr').count()).toBe(30);
    await page.getByTestId('chart-spend').locator('summary').click();
    const today = page.locator('[data-testid=chart-spend-table] tbody tr').first();
    expect(number(await today.locator('td').nth(6).textContent())).toBe(credits.spent);
    await expect.poll(() => page.locator('#chart-members-canvas').getAttribute('data-drawn')).toBe('1');
    await expect.poll(() => page.locator('#chart-songs-canvas').getAttribute('data-drawn')).toBe('1');
    await page.getByTestId('range').getByRole('link', { name: '90 days' }).click();
    await expect.poll(() => page.locator('[data-testid=chart-spend-table] tbody tr').count()).toBe(90);

    await page.goto(pageUrl('history'));
    const rows = page.getByTestId('history-row');
    await expect.poll(() => rows.count()).toBeGreaterThanOrEqual(3);
    expect(await rows.first().textContent()).toContain('spent (song)');
    await page.locator('select#history-kind').selectOption('grant');
    await page.getByTestId('history-filters').locator('button[type=submit]').click();
    await expect.poll(() => rows.count()).toBe(1);
    expect(await rows.first().textContent()).toContain('starting credits');
    const csvHref = await page.getByTestId('history-csv').getAttribute('href');
    const csv = await page.request.get(new URL(csvHref!, bot.httpUrl).href);
    expect(csv.status()).toBe(200);
    expect(csv.headers()['content-type']).toContain('text/csv');
    const lines = (await csv.text()).trim().split(/\r?\n/);
    expect(lines.length).toBe(4);
    expect(problems).toEqual([]);
    await context.close();
  });
});

describe('a hostile member name', () => {
  it('is text in the top members, their chart and the history, and runs no script', async () => {
    const hostile = '<img src=x onerror="window.__pwned=1"><script>window.__pwned=2</script>';
    const mallory = bot.emulator.addMember(bot.guild.id, { username: 'mallory', globalName: `Mallory ${hostile}` }).id;
    await song(mallory, 'a song from mallory');
    const { context, page, problems } = await signIn(admin);
    await page.goto(pageUrl('overview'));
    await page.getByTestId('chart-members').locator('summary').click();
    await expect.poll(() => page.getByTestId('chart-members-table').textContent()).toContain(`Mallory ${hostile}`);
    await expect.poll(() => page.locator('#chart-members-canvas').getAttribute('data-drawn')).toBe('1');
    await page.goto(`${pageUrl('history')}?member=${mallory}`);
    await expect.poll(() => page.getByTestId('history-row').first().textContent()).toContain(`Mallory ${hostile}`);
    expect(await page.evaluate(() => (globalThis as { __pwned?: number }).__pwned)).toBeUndefined();
    expect(await page.locator('main img, main script').count()).toBe(0);
    expect(problems).toEqual([]);
    await context.close();
  });
});

/**
 * UPDATE_SCREENSHOT=1: the overview of a seeded server (90 days of history written by the
 * history benchmark's seed, members with names) at desktop and phone width, into docs/.
 */
describe.runIf(process.env.UPDATE_SCREENSHOT)('the screenshots in docs/', () => {
  it('shows the overview of a server with 90 days of history', async () => {
    const guild = bot.emulator.createGuild({ name: 'Lo-fi Lounge' });
    bot.emulator.createChannel(guild.id, { name: 'songs' });
    const mods = bot.emulator.createRole(guild.id, { name: 'Mods', permissions: PermissionFlagsBits.ManageGuild });
    const moderator = bot.emulator.addMember(guild.id, { username: 'june', globalName: 'June', roles: [mods.id] }).id;
    const names = ['Mika', 'Ravi', 'Lena', 'Tomás', 'Aiko', 'Noor', 'Sam', 'Ines'];
    const members = names.map((name) => bot.emulator.addMember(guild.id, { username: name.toLowerCase(), globalName: name }).id);
    const size = { guilds: 2, jobs: 1_200, ledger: 1_800, songs: 600, busyMovements: 900, busySongs: 300, busyLikes: 600, busyPlays: 300, busyContests: 0, contestEntries: 0, days: 90 };
    await seedHistory(bot.db.pool, size, [{ guildId: guild.id, members }], 'shot');
    // A month's allowance on the first of each month rather than the seed's every few days, and a
    // balance a moderator would see rather than the seed's million.
    await bot.db.pool.query(`delete from credit_ledger where guild_id = $1 and kind = 'allowance'`, [guild.id]);
    await bot.db.pool.query(
      `insert into credit_ledger (guild_id, key, kind, amount, balance_after, created_at)
       select $1, 'shot-allowance-' || m, 'allowance', 1500, 0, date_trunc('month', now() at time zone 'UTC') at time zone 'UTC' - interval '1 month' * m + interval '3 hours'
         from generate_series(0, 2) m`,
      [guild.id],
    );
    await bot.db.pool.query(`update guilds set balance = 3480, monthly_allowance = 1500, alert_channel_id = '1', alert_below = 500 where id = $1`, [guild.id]);
    const { context, page } = await signIn(moderator);
    for (const [file, viewport] of [['dashboard-overview.png', { width: 1280, height: 900 }], ['dashboard-overview-phone.png', { width: 390, height: 844 }]] as const) {
      await page.setViewportSize(viewport);
      await page.goto(`${bot.httpUrl}/dashboard/g/${guild.id}/overview`);
      await expect.poll(() => page.locator('#chart-spend-canvas').getAttribute('data-drawn'), { timeout: 15_000 }).toBe('9');
      await page.screenshot({ path: path.join(ROOT, 'docs', file), fullPage: true });
    }
    await context.close();
  });
});
