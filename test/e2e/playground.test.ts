/**
 * The playground as a newcomer meets it: `npm run playground` in a child process, then a real
 * headless Chromium acting as a person on the page. Everything behind the page is real: the
 * bot, embedded Postgres, Redis, the simulator and the emulator.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { chmod, mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import type { Browser, Locator, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { launchChromium, sendCommand } from '../support/browser.js';

const root = path.resolve(import.meta.dirname, '../..');
/** Set UPDATE_SCREENSHOT=1 to refresh the README's picture of the playground. */
const SCREENSHOT = process.env.UPDATE_SCREENSHOT ? path.join(root, 'docs/playground.png') : undefined;

let child: ChildProcess;
let output = '';
let url: string;
let dataDir: string;
let browser: Browser;
let page: Page;
const consoleErrors: string[] = [];

async function startPlayground(): Promise<string> {
  child = spawn(path.join(root, 'node_modules/.bin/tsx'), ['src/sandbox/playground/cli.ts', '--port', '0', '--fresh', '--task-ms', '1500', '--data-dir', dataDir], {
    cwd: root,
    env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '/tmp' },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  return new Promise((resolve, reject) => {
    const onData = (chunk: Buffer) => {
      output += chunk.toString();
      const ready = /Playground ready: (http:\/\/127\.0\.0\.1:\d+\/)/.exec(output);
      if (ready) resolve(ready[1]!);
    };
    child.stdout!.on('data', onData);
    child.stderr!.on('data', onData);
    child.once('exit', (code) => reject(new Error(`the playground exited with ${code}: ${output}`)));
  });
}

const send = (command: string): Promise<void> => sendCommand(page, command);

const messages = () => page.locator('[data-testid=message]');
const lastMessageWith = (text: string | RegExp): Locator => messages().filter({ hasText: text }).last();

/** The part of an HTMLMediaElement the test reads (the test's own types have no DOM). */
interface MediaElement {
  readyState: number;
  duration: number;
  currentSrc: string;
  error: { code: number } | null;
  addEventListener(type: string, listener: () => void, options: { once: boolean }): void;
  load(): void;
}

/** Waits for the media element's metadata and returns its duration. */
async function mediaDuration(media: Locator): Promise<number> {
  return media.evaluate(
    (element: MediaElement) =>
      new Promise<number>((resolve, reject) => {
        if (element.readyState >= 1) return resolve(element.duration);
        element.addEventListener('loadedmetadata', () => resolve(element.duration), { once: true });
        element.addEventListener('error', () => reject(new Error(`media error ${element.error?.code} for ${element.currentSrc}`)), { once: true });
        element.load();
      }),
  );
}

beforeAll(async () => {
  dataDir = await mkdtemp(path.join(os.tmpdir(), 'musicbot-playground-'));
  // Run as root, Postgres runs as the postgres user: let it in, so the cluster stays in here.
  await chmod(dataDir, 0o755);
  browser = await launchChromium();
  url = await startPlayground();
  page = await browser.newPage({ viewport: { width: 1280, height: 800 } });
  page.on('console', (message) => {
    if (message.type() === 'error') consoleErrors.push(message.text());
  });
  page.on('pageerror', (error) => consoleErrors.push(error.message));
  await page.goto(url);
  await page.locator('[data-testid=composer]').waitFor();
}, 120_000);

afterAll(async () => {
  await browser?.close();
  if (child && child.exitCode === null) {
    const exited = new Promise((resolve) => child.once('exit', resolve));
    child.removeAllListeners('exit');
    child.kill('SIGINT');
    await Promise.race([exited, new Promise((resolve) => setTimeout(resolve, 15_000))]);
    if (child.exitCode === null) child.kill('SIGKILL');
  }
  if (dataDir) await rm(dataDir, { recursive: true, force: true });
}, 60_000);

describe('the playground in a browser', { timeout: 60_000 }, () => {
  it('makes a song whose audio plays, and an MP3 from its button', async () => {
    await send('/song prompt:"rainy night lofi" instrumental:true');

    const result = lastMessageWith('Rainy night lofi');
    const audio = result.locator('audio');
    await audio.first().waitFor({ timeout: 20_000 });
    expect(await audio.first().getAttribute('src')).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/music-api\/producer\/.+\.(m4a|mp3)$/);
    expect(await mediaDuration(audio.first())).toBeGreaterThan(0.5);
    await expect.poll(() => result.locator('[data-testid=thinking]').count()).toBe(0);
    await expect(result.innerText()).resolves.toContain('used /song');

    // The song links its WAV and its video already: an MP3 is what its button sells.
    await expect(result.locator('[data-testid=button]', { hasText: 'Make a video' }).count()).resolves.toBe(0);
    await result.locator('[data-testid=button]', { hasText: 'MP3 file · 2 credits' }).click();
    await messages().filter({ hasText: 'MP3 download ready' }).last().waitFor({ timeout: 20_000 });

    if (SCREENSHOT) {
      await result.evaluate((element: { scrollIntoView(options: { block: string }): void }) => element.scrollIntoView({ block: 'start' }));
      await page.locator('[data-testid=composer]').fill('/lyrics prompt:"');
      await page.screenshot({ path: SCREENSHOT });
      await page.locator('[data-testid=composer]').fill('');
    }
  });

  it('writes lyrics, then makes a song of them through the modal', async () => {
    await send('/lyrics prompt:"the sea at night"');
    const lyrics = messages().filter({ has: page.locator('[data-testid=button]', { hasText: 'Make a song' }) }).last();
    await lyrics.waitFor({ timeout: 20_000 });

    const songsBefore = await page.locator('[data-testid=message] audio').count();
    await lyrics.locator('[data-testid=button]', { hasText: 'Make a song' }).click();
    const modal = page.locator('[data-testid=modal]');
    await modal.waitFor();
    const lyricsField = modal.locator('textarea').first();
    await expect(lyricsField.inputValue()).resolves.not.toBe('');
    const title = modal.locator('input[type=text], input:not([type])').last();
    await title.fill('Sea song');
    await modal.locator('[data-testid=modal-submit]').click();
    await modal.waitFor({ state: 'hidden' });

    const song = lastMessageWith('Sea song');
    await song.locator('audio').first().waitFor({ timeout: 20_000 });
    expect(await page.locator('[data-testid=message] audio').count()).toBeGreaterThan(songsBefore);
    expect(await mediaDuration(song.locator('audio').first())).toBeGreaterThan(0.5);
  });

  it('shows a refusal only to the person refused', async () => {
    await send('/song prompt:"jazz" model:"Gramophone 1"');
    const refusal = lastMessageWith('not one this bot offers');
    await refusal.waitFor({ timeout: 10_000 });
    expect(await refusal.getAttribute('data-ephemeral')).toBe('true');
    await expect(refusal.locator('[data-testid=ephemeral-note]').innerText()).resolves.toContain('Only you can see this');

    const id = await refusal.getAttribute('data-message-id');
    const state = (await (await fetch(`${url}api/state`)).json()) as { users: Array<{ id: string; role: string }> };
    const moderator = state.users.find((user) => user.role === 'moderator')!;
    await page.locator('[data-testid=user-switcher]').selectOption(moderator.id);
    await expect.poll(() => page.locator(`[data-message-id="${id}"]`).count()).toBe(0);
    await expect.poll(() => lastMessageWith('Rainy night lofi').count()).toBe(1);
    await page.locator('[data-testid=user-switcher]').selectOption({ index: 0 });
    await expect.poll(() => page.locator(`[data-message-id="${id}"]`).count()).toBe(1);
  });

  it('answers /credits with the balance', async () => {
    await send('/credits');
    // 500 to start; a song (10), lyrics (1), an MP3 (2) and a song from the lyrics (10) were spent.
    const answer = lastMessageWith(/477/);
    await answer.waitFor({ timeout: 10_000 });
    expect(await answer.getAttribute('data-ephemeral')).toBe('true');
    await expect(answer.innerText()).resolves.toMatch(/credits/i);
  });

  it('logs no errors in the browser console', () => {
    expect(consoleErrors).toEqual([]);
  });
});
