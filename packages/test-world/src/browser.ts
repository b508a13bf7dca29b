/**
 * The browser tests' Chromium (playwright-core, headless) and their way into the bot's
 * dashboard: the dashboard's sign-in, then the Discord emulator's authorize page, as a person
 * clicks through them. The browser comes from the system (CHROMIUM_PATH, else the usual
 * places), never from a download at install time. Import it as `@music-bot/test-world/browser.js`:
 * the package's index stays free of playwright, which the playground does not ship.
 */
import { existsSync } from 'node:fs';
import { chromium, type Browser, type BrowserContext, type Page } from 'playwright-core';
import { findChromium } from './tools.js';

export const NO_BROWSER_HINT =
  'No Chromium found for the browser tests: install it (Debian/Ubuntu: apt-get install -y chromium; macOS: brew install --cask chromium) or set CHROMIUM_PATH to a Chromium or Chrome executable.';

/** CHROMIUM_PATH, else a Chromium or Chrome on the PATH or in the usual places; throws with how to get one. */
export function chromiumPath(): string {
  const found = findChromium();
  if (found === undefined) throw new Error(NO_BROWSER_HINT);
  if (!existsSync(found)) throw new Error(`CHROMIUM_PATH is ${found}, but there is no file there. ${NO_BROWSER_HINT}`);
  return found;
}

export function launchChromium(): Promise<Browser> {
  return chromium.launch({
    executablePath: chromiumPath(),
    // As root Chromium needs --no-sandbox; the others keep it from reaching for the network.
    args: [
      '--no-sandbox',
      '--disable-gpu',
      '--disable-quic',
      '--no-first-run',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
      '--autoplay-policy=no-user-gesture-required',
    ],
  });
}

/** What went wrong in a page: uncaught errors and console errors (the browser's own /favicon.ico requests aside). */
export function collectProblems(page: Page): string[] {
  const problems: string[] = [];
  page.on('pageerror', (error) => problems.push(error.message));
  page.on('console', (message) => {
    if (message.type() === 'error' && !message.location().url.endsWith('/favicon.ico')) problems.push(message.text());
  });
  return problems;
}

/**
 * On the emulator's authorize page: picks `userId` where the page offers a choice (without one,
 * the host signed someone in with `signInWeb`), presses Authorize, and waits to be back on the dashboard.
 */
export async function approveOnAuthorizePage(page: Page, userId?: string): Promise<void> {
  await page.locator('button[value=approve]').waitFor();
  if (userId !== undefined) await page.locator('select#user_id').selectOption(userId);
  await page.locator('button[value=approve]').click();
  await page.getByTestId('viewer').waitFor();
}

export interface DashboardSignIn {
  readonly context: BrowserContext;
  readonly page: Page;
  /** The page's problems so far and from now on (collectProblems). */
  readonly problems: string[];
}

/** A fresh browser context signed in to the dashboard at `dashboardUrl` (`…/dashboard`) as `userId`, through its Sign in button. */
export async function signInToDashboard(browser: Browser, dashboardUrl: string, userId: string, viewport = { width: 1280, height: 900 }): Promise<DashboardSignIn> {
  const context = await browser.newContext({ viewport });
  const page = await context.newPage();
  const problems = collectProblems(page);
  await page.goto(dashboardUrl);
  await page.getByTestId('sign-in').click();
  await approveOnAuthorizePage(page, userId);
  return { context, page, problems };
}
