/**
 * The moderators' dashboard in a real Chromium (playwright-core), against the bot as `npm start`
 * runs it, the Discord emulator (its OAuth2 authorize page, tokens and REST) and the simulator:
 * signing in, the picker, a setting changed with the form and seen by `/help`, who may open
 * what (a role taken away included), CSRF and origin checks, hostile names, the owners' grant,
 * and logout.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { PermissionFlagsBits } from 'discord-api-types/v10';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { launchChromium, signInToDashboard } from '@music-bot/test-world/browser.js';
import { printBotLogsOnFailure, startE2E, type E2E } from './bot-process.js';

let bot: E2E;
let browser: Browser;
/** A member with a role that grants Manage Server (Discord computes it from roles; OAuth carries none). */
let admin: string;
let origin: string;
printBotLogsOnFailure(() => bot);

beforeAll(async () => {
  bot = await startE2E({ webhooks: true, dashboard: true, startingCredits: 50, env: { DASHBOARD_ACCESS_MAX_AGE_SECONDS: '1' } });
  origin = new URL(bot.httpUrl).origin;
  const admins = bot.emulator.createRole(bot.guild.id, { name: 'Admins', permissions: PermissionFlagsBits.ManageGuild });
  admin = bot.emulator.addMember(bot.guild.id, { username: 'admin', globalName: 'Ada Admin', roles: [admins.id] }).id;
  browser = await launchChromium();
}, 120_000);

afterAll(async () => {
  await browser?.close();
  await bot?.close();
}, 60_000);

const settingsUrl = (guildId = bot.guild.id) => `${bot.httpUrl}/dashboard/g/${guildId}/settings`;

/** A fresh phone-sized browser signed in as `userId` through the emulator's authorize page, with no page error on the way. */
async function signIn(userId: string): Promise<{ context: BrowserContext; page: Page }> {
  const { context, page, problems } = await signInToDashboard(browser, `${bot.httpUrl}/dashboard`, userId, { width: 420, height: 900 });
  expect(problems).toEqual([]);
  return { context, page };
}

async function cooldownOf(guildId = bot.guild.id): Promise<number> {
  const { rows } = await bot.db.pool.query<{ cooldown_seconds: number }>('select cooldown_seconds from guilds where id = $1', [guildId]);
  return rows[0]!.cooldown_seconds;
}

/** What `/help` tells `userId` about the cooldown. */
async function helpText(userId: string): Promise<string> {
  const handle = bot.run(userId, { name: 'help' });
  await bot.settled(handle);
  const data = (await handle.waitForResponse()).data as { content?: string; embeds?: Array<{ description?: string; fields?: Array<{ value: string }> }> } | undefined;
  const message = handle.original();
  return JSON.stringify([data, message]);
}

describe('a moderator', () => {
  it('signs in, picks the server, changes the cooldown with the form, and /help shows it', async () => {
    const { context, page } = await signIn(admin);
    await expect.poll(() => page.getByTestId('viewer').textContent()).toBe('Signed in as Ada Admin');
    const server = page.getByTestId('server').filter({ hasText: 'Music makers' });
    await server.click();
    // The server's first page, then its settings through the navigation.
    await page.locator('nav.pages a', { hasText: 'Settings' }).click();
    await page.getByTestId('form-cooldown').waitFor();
    expect(await page.locator('html').getAttribute('lang')).toBe('en');

    const form = page.getByTestId('form-cooldown');
    await form.locator('input[name=seconds]').fill('45');
    await form.locator('button[type=submit]').click();
    await expect.poll(() => page.getByTestId('notice').textContent()).toBe('Saved.');
    expect(await form.locator('input[name=seconds]').inputValue()).toBe('45');
    expect(await cooldownOf()).toBe(45);
    expect(await helpText(bot.members.alice)).toContain('a cooldown of 45 s between requests');

    const { rows } = await bot.db.pool.query('select actor_id, details from audit_log where guild_id = $1 and action = $2', [bot.guild.id, 'settings.cooldown']);
    expect(rows).toEqual([{ actor_id: admin, details: { before: 0, after: 45, source: 'dashboard' } }]);

    // The pickers show the server's names: a role picked by name, a channel ticked by name.
    const dj = page.getByTestId('form-role-dj');
    await dj.locator('select[name=role]').selectOption({ label: 'DJ' });
    await dj.locator('button[type=submit]').click();
    await expect.poll(() => page.getByTestId('notice').textContent()).toBe('Saved.');
    const channels = page.getByTestId('form-channels');
    await channels.getByLabel('#music').check();
    await channels.locator('button[type=submit]').click();
    await expect.poll(() => page.getByTestId('notice').textContent()).toBe('Saved.');
    const guild = await bot.db.pool.query('select dj_role_id, allowed_channel_ids from guilds where id = $1', [bot.guild.id]);
    expect(guild.rows).toEqual([{ dj_role_id: bot.djRole.id, allowed_channel_ids: [bot.channelId] }]);
    expect(await page.getByTestId('form-channels').getByLabel('#music').isChecked()).toBe(true);
    await context.close();
  });

  it('blocks words on the blocklist page and removes one by ticking it', async () => {
    const { context, page } = await signIn(admin);
    await page.goto(`${bot.httpUrl}/dashboard/g/${bot.guild.id}/blocklist`);
    const add = page.getByTestId('form-blocklist-add');
    await add.locator('textarea[name=words]').fill('moonbeam, stardust');
    await add.locator('button[type=submit]').click();
    await expect.poll(() => page.getByTestId('notice').textContent()).toMatch(/^Blocked: moonbeam, stardust\./);
    const remove = page.getByTestId('form-blocklist-remove');
    await remove.getByLabel('moonbeam').check();
    await remove.locator('button[type=submit]').click();
    await expect.poll(() => page.getByTestId('notice').textContent()).toBe('Removed from the blocklist: moonbeam. 1 left.');
    const words = await bot.db.pool.query('select entry from guild_blocked_words where guild_id = $1', [bot.guild.id]);
    expect(words.rows).toEqual([{ entry: 'stardust' }]);
    const audit = await bot.db.pool.query(`select action, details->>'source' as source from audit_log where guild_id = $1 and action like 'blocklist_%' order by id`, [bot.guild.id]);
    expect(audit.rows).toEqual([
      { action: 'blocklist_add', source: 'dashboard' },
      { action: 'blocklist_remove', source: 'dashboard' },
    ]);
    await context.close();
  });

  it('whose moderator role is taken away loses access within the cache age', async () => {
    await bot.db.pool.query('update guilds set moderator_role_id = $2 where id = $1', [bot.guild.id, bot.moderatorRole.id]);
    const { context, page } = await signIn(bot.members.roleModerator);
    const response = await page.goto(settingsUrl());
    expect(response?.status()).toBe(200);
    await page.getByTestId('form-cooldown').waitFor();

    bot.emulator.removeMemberRole(bot.guild.id, bot.members.roleModerator, bot.moderatorRole.id);
    await expect.poll(async () => (await page.goto(settingsUrl()))?.status(), { timeout: 15_000 }).toBe(403);
    expect(await page.getByTestId('form-cooldown').count()).toBe(0);
    bot.emulator.addMemberRole(bot.guild.id, bot.members.roleModerator, bot.moderatorRole.id);
    await context.close();
  });
});

describe('a member without Manage Server or the moderator role', () => {
  it('sees no server in the picker and no manage page, even by typing its address', async () => {
    const { context, page } = await signIn(bot.members.alice);
    await page.getByTestId('no-servers').waitFor();
    for (const path of [settingsUrl(), `${bot.httpUrl}/dashboard/g/${bot.guild.id}`, `${bot.httpUrl}/dashboard/g/${bot.guild.id}/owners`]) {
      const response = await page.goto(path);
      expect(response?.status()).toBe(403);
      await expect.poll(() => page.locator('h1').textContent()).toBe('Not available');
      expect(await page.locator('form[data-testid^=form-]').count()).toBe(0);
    }
    await context.close();
  });
});

describe('a change', () => {
  it('without the CSRF token, or from another origin, is refused and changes nothing', async () => {
    const { context, page } = await signIn(admin);
    await page.goto(settingsUrl());
    const before = await cooldownOf();
    const token = await page.locator('form[data-testid=form-cooldown] input[name=_csrf]').inputValue();
    const action = `${settingsUrl()}/cooldown`;

    const noToken = await page.request.post(action, { form: { seconds: '7' }, headers: { origin }, maxRedirects: 0 });
    expect(noToken.status()).toBe(403);
    const otherOrigin = await page.request.post(action, { form: { seconds: '7', _csrf: token }, headers: { origin: 'https://evil.example' }, maxRedirects: 0 });
    expect(otherOrigin.status()).toBe(403);

    // A page on another origin (another port: the same site, so Lax cookies go along) posts the form with the token.
    const evil = await serveOnce(`<!doctype html><form method="post" action="${action}"><input name="seconds" value="7"><input name="_csrf" value="${token}"><button id="go">go</button></form>`);
    try {
      await page.goto(evil.url);
      await page.locator('#go').click();
      await expect.poll(() => page.locator('h1').textContent()).toBe('Refused');
    } finally {
      await new Promise((resolve) => evil.server.close(resolve));
    }
    expect(await cooldownOf()).toBe(before);

    // The same token from the dashboard's own page is taken: the refusals above were the checks, not a broken form.
    const own = await page.request.post(action, { form: { seconds: String(before + 1), _csrf: token }, headers: { origin }, maxRedirects: 0 });
    expect(own.status()).toBe(303);
    expect(await cooldownOf()).toBe(before + 1);
    await context.close();
  });
});

describe('a hostile server, role or member name', () => {
  it('is shown as text and runs no script', async () => {
    const hostile = '<img src=x onerror="window.__pwned=1"><script>window.__pwned=2</script>';
    const guild = bot.emulator.createGuild({ name: `Evil ${hostile}` });
    bot.emulator.createChannel(guild.id, { name: 'songs' });
    const role = bot.emulator.createRole(guild.id, { name: `Mods ${hostile}`, permissions: PermissionFlagsBits.ManageGuild });
    const user = bot.emulator.addMember(guild.id, { username: 'mallory', globalName: `Mallory ${hostile}`, roles: [role.id] }).id;
    const { context, page } = await signIn(user);
    expect(await page.getByTestId('viewer').textContent()).toBe(`Signed in as Mallory ${hostile}`);
    await page.getByTestId('server').filter({ hasText: 'Evil' }).click();
    await page.locator('nav.pages a', { hasText: 'Settings' }).click();
    await page.getByTestId('form-cooldown').waitFor();
    expect(await page.getByTestId('guild-name').textContent()).toBe(`Evil ${hostile}`);
    expect(await page.locator('select[name=role] option', { hasText: 'Mods' }).first().textContent()).toBe(`Mods ${hostile}`);
    expect(await page.evaluate(() => (globalThis as { __pwned?: number }).__pwned)).toBeUndefined();
    expect(await page.locator('main img, main script').count()).toBe(0);
    await context.close();
  });
});

describe('the owner', () => {
  it('grants credits with a reason, once, and the ledger and the moderation log show it', async () => {
    const { context, page } = await signIn(bot.members.owner);
    await page.goto(`${bot.httpUrl}/dashboard/g/${bot.guild.id}/owners`);
    const before = await bot.balance();
    const form = page.getByTestId('form-move');
    await form.locator('select[name=direction]').selectOption('grant');
    await form.locator('input[name=amount]').fill('25');
    await form.locator('input[name=reason]').fill('dashboard launch');
    const fields = Object.fromEntries(await form.locator('input[type=hidden]').evaluateAll((inputs) => inputs.map((input) => [input.getAttribute('name') ?? '', (input as unknown as { value: string }).value])));
    await form.locator('button[type=submit]').click();
    await expect.poll(() => page.getByTestId('notice').textContent()).toBe(`Added 25 credits. The balance is now ${before + 25}.`);

    // The same form sent again (a double click, a reload) moves nothing more.
    const again = await page.request.post(`${bot.httpUrl}/dashboard/g/${bot.guild.id}/owners/move`, {
      form: { ...fields, direction: 'grant', amount: '25', reason: 'dashboard launch' },
      headers: { origin },
      maxRedirects: 0,
    });
    expect(again.status()).toBe(303);
    expect(await bot.balance()).toBe(before + 25);
    const ledger = await bot.db.pool.query('select kind, amount, actor_id, reason from credit_ledger where guild_id = $1 and reason = $2', [bot.guild.id, 'dashboard launch']);
    expect(ledger.rows).toEqual([{ kind: 'grant', amount: 25, actor_id: bot.members.owner, reason: 'dashboard launch' }]);
    const audit = await bot.db.pool.query(`select actor_id, details->>'source' as source, details->>'amount' as amount from audit_log where guild_id = $1 and action = 'credits.grant' and details->>'reason' = $2`, [
      bot.guild.id,
      'dashboard launch',
    ]);
    expect(audit.rows).toEqual([{ actor_id: bot.members.owner, source: 'dashboard', amount: '25' }]);
    await context.close();
  });
});

describe('logout', () => {
  it('ends the session: the old cookie no longer works', async () => {
    const { context, page } = await signIn(admin);
    const cookies = await context.cookies(bot.httpUrl);
    const session = cookies.find((cookie) => cookie.name === 'dash_session');
    expect(session?.httpOnly).toBe(true);
    expect(session?.sameSite).toBe('Lax');
    await page.getByTestId('logout').click();
    await expect.poll(() => page.getByTestId('notice').textContent()).toBe('You are signed out.');

    const replay = await browser.newContext();
    await replay.addCookies([{ ...session!, sameSite: 'Lax' }]);
    const response = await replay.request.get(settingsUrl(), { maxRedirects: 0 });
    expect(response.status()).toBe(303);
    expect(response.headers().location).toMatch(/^\/dashboard\/login\?next=/);
    await replay.close();
    await context.close();
  });
});

/** A page served once from another port of this machine. */
async function serveOnce(body: string): Promise<{ server: Server; url: string }> {
  const server = createServer((_request, response) => response.writeHead(200, { 'content-type': 'text/html' }).end(body));
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { server, url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/` };
}
