/**
 * A headless Chromium for the browser tests, driven by playwright-core. The browser comes
 * from the system (Debian's `chromium` package), never from a download at install time.
 */
import { existsSync } from 'node:fs';
import { findChromium as findBrowser } from '@music-bot/test-world';
import { chromium, type Browser, type Page } from 'playwright-core';
import { expect } from 'vitest';

export const NO_BROWSER_HINT =
  'No Chromium found for the browser tests: install it (Debian/Ubuntu: apt-get install -y chromium; macOS: brew install --cask chromium) or set CHROMIUM_PATH to a Chromium or Chrome executable.';

/** CHROMIUM_PATH, else a Chromium or Chrome on the PATH or in the usual places. */
export function findChromium(): string {
  const found = findBrowser();
  if (found === undefined) throw new Error(NO_BROWSER_HINT);
  if (!existsSync(found)) throw new Error(`CHROMIUM_PATH is ${found}, but there is no file there. ${NO_BROWSER_HINT}`);
  return found;
}

export function launchChromium(): Promise<Browser> {
  return chromium.launch({
    executablePath: findChromium(),
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

/** Types a command in the playground's composer the way a person does, then sends it. */
export async function sendCommand(page: Page, command: string): Promise<void> {
  const composer = page.locator('[data-testid=composer]');
  await composer.fill(command);
  await composer.press('Escape');
  await composer.press('Enter');
  await expect.poll(() => composer.inputValue(), { timeout: 5_000 }).toBe('');
}
