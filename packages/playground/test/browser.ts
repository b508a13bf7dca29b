/**
 * The playground's browser tests' helpers; the browser itself is the test world's
 * (`@music-bot/test-world/browser.js`), shared with the dashboard's tests.
 */
import type { Page } from 'playwright-core';
import { expect } from 'vitest';

export { launchChromium } from '@music-bot/test-world/browser.js';

/** Types a command in the playground's composer the way a person does, then sends it. */
export async function sendCommand(page: Page, command: string): Promise<void> {
  const composer = page.locator('[data-testid=composer]');
  await composer.fill(command);
  await composer.press('Escape');
  await composer.press('Enter');
  await expect.poll(() => composer.inputValue(), { timeout: 5_000 }).toBe('');
}
