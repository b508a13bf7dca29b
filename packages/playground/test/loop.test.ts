/**
 * The loop a newcomer meets on the playground: a moderator starts a contest, a member makes a
 * song, rerolls it, enters it from its button, a friend likes it and sees it in `/charts`, and the contest's results come
 * within the minute, since the playground shortens a contest's day (`--contest-day-seconds`).
 * A real headless Chromium on `npm run playground`, as in page.test.ts.
 */
import type { Browser, Locator, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { launchChromium, sendCommand } from './browser.js';
import { startPlaygroundProcess, type PlaygroundProcess } from './playground-process.js';

/** A contest day: long enough to make two songs and vote, short enough to wait for its end. */
const DAY_SECONDS = 40;

let playground: PlaygroundProcess;
let browser: Browser;
let page: Page;
const consoleErrors: string[] = [];

beforeAll(async () => {
  browser = await launchChromium();
  playground = await startPlaygroundProcess(['--task-ms', '1000', '--contest-day-seconds', String(DAY_SECONDS)]);
  page = await browser.newPage({ viewport: { width: 1280, height: 800 } });
  page.on('console', (message) => {
    if (message.type() === 'error') consoleErrors.push(message.text());
  });
  page.on('pageerror', (error) => consoleErrors.push(error.message));
  await page.goto(playground.url);
  await page.locator('[data-testid=composer]').waitFor();
}, 120_000);
afterAll(async () => {
  await browser?.close();
  await playground?.stop();
}, 60_000);

const messages = () => page.locator('[data-testid=message]');
const lastMessageWith = (text: string | RegExp): Locator => messages().filter({ hasText: text }).last();
const button = (message: Locator, label: string | RegExp) => message.locator('[data-testid=button]', { hasText: label });

async function actAsName(username: string): Promise<void> {
  const { users } = (await (await fetch(`${playground.url}api/state`)).json()) as { users: Array<{ id: string; username: string }> };
  await page.locator('[data-testid=user-switcher]').selectOption(users.find((user) => user.username === username)!.id);
}

/** A private answer with `text`, once it shows. */
async function privateAnswer(text: string | RegExp): Promise<Locator> {
  const answer = lastMessageWith(text);
  await answer.waitFor({ timeout: 20_000 });
  expect(await answer.getAttribute('data-ephemeral')).toBe('true');
  return answer;
}

describe('the loop on the playground', { timeout: (DAY_SECONDS + 120) * 1000 }, () => {
  it('lets a newcomer reroll, like, see the chart, and run a contest to its results in a minute', async () => {
    await actAsName('mod');
    await sendCommand(page, '/contest start theme:Rainy lofi days:1');
    await lastMessageWith('🏆 Song contest: Rainy lofi').waitFor({ timeout: 20_000 });

    await actAsName('you');
    await sendCommand(page, '/song prompt:rainy night lofi title:Window Rain');
    const made = messages().filter({ hasText: 'Window Rain', has: page.locator('[data-testid=button]', { hasText: 'Enter contest' }) }).last();
    await made.waitFor({ timeout: 30_000 });
    // This message, not the reroll's (which has the same title).
    const song = page.locator(`[data-message-id="${await made.getAttribute('data-message-id')}"]`);
    await expect(button(song, 'Like · 0').count()).resolves.toBe(1);

    // Reroll: the same song asked again, its result linked to the first.
    await button(song, 'Reroll').click();
    await messages().filter({ hasText: 'Reroll of' }).last().waitFor({ timeout: 30_000 });

    // Entered from its button; the friend's like is a vote, and the count follows on the message.
    await button(song, 'Enter contest').click();
    await privateAnswer('is in the contest Rainy lofi');
    await actAsName('friend');
    await button(song, /Like · 0/).click();
    await privateAnswer(/You like/);
    await expect.poll(() => button(song, 'Like · 1').count(), { timeout: 10_000 }).toBe(1);

    // The server's chart shows the song its members like.
    await sendCommand(page, '/charts');
    const chart = lastMessageWith('This week’s top songs');
    await chart.waitFor({ timeout: 20_000 });
    await expect(chart.innerText()).resolves.toMatch(/Window Rain by @you/);

    // Anyone may look at the standings.
    await sendCommand(page, '/contest status');
    await privateAnswer(/1 vote/);

    // The contest's day is over within the minute: the results, with the winner.
    const results = lastMessageWith('🏆 Results: Rainy lofi');
    await results.waitFor({ timeout: (DAY_SECONDS + 60) * 1000 });
    await expect(results.innerText()).resolves.toMatch(/🥇 Window Rain by @you · 1 vote\b/);
    expect(consoleErrors).toEqual([]);
  });
});
