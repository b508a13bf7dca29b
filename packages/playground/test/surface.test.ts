/**
 * What the playground serves to a browser. Hostile text typed by a member travels the real
 * path (the composer, the emulator, the bot, the simulator and back) and the page shows it as
 * text: no dialog, no injected element, no link to a scheme other than http(s). The server
 * keeps other sites out (foreign Origin, a rebound host name), and `--host` warns before it
 * opens the page beyond this machine.
 */
import { spawn } from 'node:child_process';
import { request as httpRequest } from 'node:http';
import { createServer, type AddressInfo } from 'node:net';
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import type { Browser, Locator, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { launchChromium, sendCommand } from './browser.js';
import { startPlaygroundProcess, type PlaygroundProcess } from './playground-process.js';
import { VOICE_CA_PATH } from '@music-bot/discord-emulator';

const root = path.resolve(import.meta.dirname, '../../..');

/** Each would open a dialog, if the page ever ran it. */
const PROMPT = '<img src=x onerror=alert(1)> [click](javascript:alert(2)) <javascript:alert(3)>';
const TITLE = '<script>alert(4)</script><svg onload=alert(5)>';
const LYRICS =
  '<a href=javascript:alert(6)>sing</a> [data](data:text/html,<script>alert(7)</script>) [vb](vbscript:msgbox(8)) <file:///etc/passwd> [https://ok.example](javascript:alert(9))';

let playground: PlaygroundProcess;
let browser: Browser;
let page: Page;
const dialogs: string[] = [];
const consoleErrors: string[] = [];

beforeAll(async () => {
  browser = await launchChromium();
  playground = await startPlaygroundProcess(['--task-ms', '1500']);
  page = await browser.newPage({ viewport: { width: 1280, height: 800 } });
  page.on('dialog', (dialog) => {
    dialogs.push(dialog.message());
    void dialog.dismiss();
  });
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

const send = (command: string): Promise<void> => sendCommand(page, command);

const messages = () => page.locator('[data-testid=message]');

/** The part of a DOM element the checks read (the test's own types have no DOM). */
interface ElementLike {
  tagName: string;
  attributes: ArrayLike<{ name: string; value: string }>;
  querySelectorAll(selector: string): ArrayLike<ElementLike>;
  getAttribute(name: string): string | null;
}

/** Everything in the message list that would mean markup got through: elements, handlers, links. */
async function injected(): Promise<string[]> {
  return page.locator('#message-list').evaluate((list: ElementLike) => {
    const found: string[] = [];
    for (const element of Array.from(list.querySelectorAll('*'))) {
      const tag = element.tagName.toLowerCase();
      if (['script', 'iframe', 'object', 'embed', 'form', 'base', 'meta', 'link', 'style'].includes(tag)) found.push(`<${tag}>`);
      // The page draws its icons as <svg class="icon">; any other svg came from somewhere else.
      if (tag === 'svg' && !/\bicon\b/.test(element.getAttribute('class') ?? '')) found.push('<svg>');
      if (tag === 'img' && element.getAttribute('src') === 'x') found.push('<img src=x>');
      for (const attribute of Array.from(element.attributes)) {
        if (attribute.name.startsWith('on')) found.push(`${tag}[${attribute.name}]`);
        if (['href', 'src', 'action', 'formaction', 'xlink:href'].includes(attribute.name) && !/^https?:\/\//i.test(attribute.value)) {
          found.push(`${tag}[${attribute.name}=${attribute.value}]`);
        }
      }
    }
    return found;
  });
}

describe('hostile text on the playground page', { timeout: 90_000 }, () => {
  let song: Locator;

  it('shows a song whose prompt, title and lyrics are markup as the text typed', async () => {
    await send(`/song prompt:"${PROMPT}" title:"${TITLE}" lyrics:"${LYRICS}"`);
    const result = messages().filter({ has: page.locator('audio') }).filter({ hasText: 'alert(4)' }).last();
    await result.locator('audio').first().waitFor({ timeout: 30_000 });
    song = page.locator(`[data-message-id="${await result.getAttribute('data-message-id')}"]`);

    const text = await song.innerText();
    expect(text).toContain(TITLE);
    for (const part of ['<img src=x onerror=alert(1)>', '[click](javascript:alert(2))', '<javascript:alert(3)>']) expect(text).toContain(part);
    for (const part of ['<a href=javascript:alert(6)>sing</a>', '[vb](vbscript:msgbox(8))', '<file:///etc/passwd>', '[https://ok.example](javascript:alert(9))']) {
      expect(text).toContain(part);
    }
    // The bot's own markdown still renders: its links to the audio are anchors, the prompt is in italics.
    expect(await song.locator('a.md-link[href^="http://127.0.0.1"]').count()).toBeGreaterThan(0);
    expect(await song.locator('em', { hasText: 'onerror=alert(1)' }).count()).toBe(1);

    expect(await injected()).toEqual([]);
    expect(dialogs).toEqual([]);
  });

  it('keeps them text in /library and in the remix form', async () => {
    await send('/library');
    const library = messages().filter({ hasText: 'alert(4)' }).filter({ has: page.locator('[data-testid=select]') }).last();
    await library.waitFor({ timeout: 10_000 });
    await expect(library.innerText()).resolves.toContain('<script>alert(4)</script>');

    await song.locator('[data-testid=button]', { hasText: 'Remix' }).click();
    const modal = page.locator('[data-testid=modal]');
    await modal.waitFor();
    const values = await modal.locator('input, textarea').evaluateAll((fields) => fields.map((field) => (field as unknown as { value: string }).value));
    expect(values).toEqual(expect.arrayContaining([PROMPT, TITLE, LYRICS]));
    expect(await modal.locator('img, script, a[href^="javascript:" i]').count()).toBe(0);
    await page.keyboard.press('Escape');
    await modal.waitFor({ state: 'hidden' });

    expect(await injected()).toEqual([]);
    expect(dialogs).toEqual([]);
  });

  it('offers the title as plain text in autocomplete', async () => {
    const composer = page.locator('[data-testid=composer]');
    await composer.fill('/jobs show id:');
    const choice = page.locator('[data-testid=suggestion]', { hasText: 'alert(4)' }).first();
    await choice.waitFor({ timeout: 10_000 });
    await expect(choice.innerText()).resolves.toContain('<script>alert(4)</script>');
    expect(await page.locator('[data-testid=suggestions] script, [data-testid=suggestions] svg:not(.icon)').count()).toBe(0);
    await composer.fill('');
    expect(dialogs).toEqual([]);
  });

  it('logs no errors in the browser console (a blocked inline script would be one)', () => {
    expect(consoleErrors).toEqual([]);
  });
});

/** A raw request, so that Host and Origin can be anything. */
function rawRequest(url: string, options: { method: string; headers: Record<string, string>; body?: string }): Promise<{ status: number; headers: Record<string, string | string[] | undefined>; body: string }> {
  const target = new URL(url);
  return new Promise((resolve, reject) => {
    const request = httpRequest({ host: target.hostname, port: target.port, path: target.pathname, method: options.method, headers: options.headers }, (response) => {
      let body = '';
      response.on('data', (chunk: Buffer) => (body += chunk.toString()));
      response.on('end', () => resolve({ status: response.statusCode ?? 0, headers: response.headers, body }));
    });
    request.once('error', reject);
    request.end(options.body);
  });
}

describe('the playground server', () => {
  it('sends the page with a policy that runs no inline script and no other site', async () => {
    const response = await fetch(playground.url);
    expect(response.status).toBe(200);
    const policy = response.headers.get('content-security-policy') ?? '';
    expect(policy).toContain("script-src 'self'");
    expect(policy).toContain("frame-ancestors 'none'");
    expect(policy).not.toContain('unsafe-inline');
    expect(response.headers.get('x-content-type-options')).toBe('nosniff');
  });

  it("refuses another site's POST and a rebound host name, and takes the page's own", async () => {
    const state = (await (await fetch(`${playground.url}api/state`)).json()) as { users: Array<{ id: string }>; channels: Array<{ id: string }> };
    const body = JSON.stringify({ userId: state.users[0]!.id, channelId: state.channels[0]!.id, name: 'credits' });
    const url = `${playground.url}api/interactions/command`;
    const own = new URL(playground.url).host;

    const foreign = await rawRequest(url, { method: 'POST', headers: { host: own, origin: 'http://evil.example', 'content-type': 'text/plain' }, body });
    expect(foreign.status).toBe(403);
    const rebound = await rawRequest(`${playground.url}api/state`, { method: 'GET', headers: { host: `evil.example:${new URL(playground.url).port}` } });
    expect(rebound.status).toBe(403);
    expect(rebound.body).not.toContain(state.users[0]!.id);

    const accepted = await rawRequest(url, { method: 'POST', headers: { host: own, origin: `http://${own}`, 'content-type': 'application/json' }, body });
    expect(accepted.status).toBe(200);
    expect(JSON.parse(accepted.body)).toHaveProperty('interactionId');
  });
});

/** Runs the playground's command line until it exits. */
function runCli(args: readonly string[], dataDir: string): Promise<{ code: number | null; output: string }> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, ['--import', 'tsx', 'packages/playground/src/cli.ts', '--data-dir', dataDir, ...args], {
      cwd: root,
      // As `npm run playground` runs it: trusting the emulated voice server (without, it warns).
      env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '/tmp', NODE_EXTRA_CA_CERTS: VOICE_CA_PATH },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let output = '';
    child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
    child.once('exit', (code) => resolve({ code, output }));
  });
}

// Three runs of the playground's command line as `npm run playground` runs it, each stopping before it loads the bot.
describe('--host', { timeout: 180_000 }, () => {
  it('warns in one line before listening beyond this machine, and refuses a name it cannot listen on', async () => {
    const dataDir = await mkdtemp(path.join(os.tmpdir(), 'musicbot-playground-host-'));
    // A port already taken on the loopback: the page binds first, so the run stops there, before Postgres.
    const holder = createServer();
    await new Promise<void>((resolve) => holder.listen(0, '127.0.0.1', resolve));
    const port = String((holder.address() as AddressInfo).port);
    try {
      const everywhere = await runCli(['--host', '0.0.0.0', '--port', port], dataDir);
      expect(everywhere.code).toBe(1);
      const warnings = everywhere.output.split('\n').filter((line) => line.startsWith('Warning:'));
      expect(warnings).toHaveLength(1);
      expect(warnings[0]).toMatch(/0\.0\.0\.0.*no login.*owner/);
      expect(everywhere.output).toContain(`Port ${port} is taken`);

      const loopback = await runCli(['--host', '127.0.0.1', '--port', port], dataDir);
      expect(loopback.output).toContain(`Port ${port} is taken`);
      expect(loopback.output).not.toContain('Warning:');

      const named = await runCli(['--host', 'example.com'], dataDir);
      expect(named.code).toBe(2);
      expect(named.output).toContain('--host must be an IP address');
    } finally {
      holder.close();
      await rm(dataDir, { recursive: true, force: true });
    }
  });
});
