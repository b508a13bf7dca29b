/**
 * The playground as a newcomer meets it: `npm run playground` in a child process, then a real
 * headless Chromium acting as a person on the page. Everything behind the page is real: the
 * bot, embedded Postgres, Redis, the simulator and the emulator. The main flow runs twice: in
 * a desktop window, and at a phone's width through a forwarded port (another address than the
 * one printed), as a person reaching the playground from elsewhere would.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import type { Browser, Locator, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { approveOnAuthorizePage } from '@music-bot/test-world/browser.js';
import { launchChromium, sendCommand } from './browser.js';
import { startPlaygroundProcess, type PlaygroundProcess } from './playground-process.js';
import { startWebServer, type WebServer } from '../src/web.js';
import { seedWorld, type PlaygroundWorld } from '../src/world.js';
import { silentLogger } from '../../../src/logger.js';
import { startDiscordEmulator, type DiscordEmulator } from '@music-bot/discord-emulator';
import { tcpProxy, type TcpProxy } from '@music-bot/test-world';

const root = path.resolve(import.meta.dirname, '../../..');
/** Set UPDATE_SCREENSHOT=1 to refresh the README's picture of the playground. */
const SCREENSHOT = process.env.UPDATE_SCREENSHOT ? path.join(root, 'docs/playground.png') : undefined;
const DESKTOP = { width: 1280, height: 800 };
const PHONE = { width: 420, height: 800 };

let playground: PlaygroundProcess;
let browser: Browser;
let forwarded: TcpProxy;
let url: string;
let page: Page;
const consoleErrors: string[] = [];

interface StateUser {
  id: string;
  username: string;
  role: string;
}

/** A new page on `address`, its console errors collected. */
async function openPage(address: string, viewport: { width: number; height: number }): Promise<Page> {
  const opened = await browser.newPage({ viewport });
  opened.on('console', (message) => {
    if (message.type() === 'error') consoleErrors.push(message.text());
  });
  opened.on('pageerror', (error) => consoleErrors.push(error.message));
  await opened.goto(address);
  await opened.locator('[data-testid=composer]').waitFor();
  return opened;
}

beforeAll(async () => {
  browser = await launchChromium();
  playground = await startPlaygroundProcess(['--task-ms', '1500']);
  url = playground.url;
  page = await openPage(url, DESKTOP);
}, 120_000);

afterAll(async () => {
  await browser?.close();
  await forwarded?.close();
  await playground?.stop();
}, 60_000);

const send = (command: string): Promise<void> => sendCommand(page, command);
const composer = () => page.locator('[data-testid=composer]');
const messages = () => page.locator('[data-testid=message]');
const lastMessageWith = (text: string | RegExp): Locator => messages().filter({ hasText: text }).last();

async function messageIds(): Promise<Set<string>> {
  return new Set((await messages().evaluateAll((nodes) => nodes.map((node) => node.getAttribute('data-message-id')))).filter((id): id is string => id !== null));
}

/** The first message not in `before` that `filter` keeps, once it is there. */
async function newMessage(before: Set<string>, filter: (candidate: Locator) => Locator = (candidate) => candidate): Promise<Locator> {
  let id: string | undefined;
  await expect
    .poll(
      async () => {
        const ids = await filter(messages()).evaluateAll((nodes) => nodes.map((node) => node.getAttribute('data-message-id')));
        id = ids.find((candidate): candidate is string => candidate !== null && !before.has(candidate));
        return id;
      },
      { timeout: 20_000 },
    )
    .toBeDefined();
  return page.locator(`[data-message-id="${id}"]`);
}

async function users(): Promise<StateUser[]> {
  return ((await (await fetch(`${url}api/state`)).json()) as { users: StateUser[] }).users;
}

async function actAs(role: string): Promise<void> {
  const user = (await users()).find((candidate) => candidate.role === role)!;
  await page.locator('[data-testid=user-switcher]').selectOption(user.id);
}

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

/**
 * A song typed as a Discord user types it, with spaces in the prompt and no quotes (key by key
 * with `keys`: Tab picks the command and opens its prompt); returns its result.
 */
async function makeSong(prompt: string, title: RegExp, keys = false): Promise<Locator> {
  const before = await messageIds();
  if (keys) {
    await composer().fill('/so');
    await composer().press('Tab');
    await expect.poll(() => composer().inputValue()).toBe('/song prompt:');
    await composer().pressSequentially(`${prompt} instrumental:true`);
    await composer().press('Enter');
    await expect.poll(() => composer().inputValue()).toBe('');
  } else {
    await send(`/song prompt:${prompt} instrumental:true`);
  }
  const result = await newMessage(before, (all) => all.filter({ hasText: title, has: page.locator('audio') }));
  // The song's own audio: its link, or once attached, the file that plays in the message instead.
  const audio = result.locator('audio[src$=".m4a"], audio[src$=".mp3"]').first();
  expect(await audio.getAttribute('src')).toMatch(new RegExp(`^${new URL(page.url()).origin}/.+\\.(m4a|mp3)$`));
  expect(await mediaDuration(audio)).toBeGreaterThan(0.5);
  await expect.poll(() => result.locator('[data-testid=thinking]').count()).toBe(0);
  await expect(result.innerText()).resolves.toContain('used /song');
  return result;
}

/** Lyrics, then a song of them through the bot's modal. */
async function lyricsThenSong(title: string): Promise<void> {
  await send('/lyrics prompt:the sea at night');
  const lyrics = messages().filter({ has: page.locator('[data-testid=button]', { hasText: 'Make a song' }) }).last();
  await lyrics.waitFor({ timeout: 20_000 });

  const before = await messageIds();
  await lyrics.locator('[data-testid=button]', { hasText: 'Make a song' }).click();
  const modal = page.locator('[data-testid=modal]');
  await modal.waitFor();
  const lyricsField = modal.locator('textarea').first();
  await expect(lyricsField.inputValue()).resolves.not.toBe('');
  await modal.locator('input[type=text], input:not([type])').last().fill(title);
  await modal.locator('[data-testid=modal-submit]').click();
  await modal.waitFor({ state: 'hidden' });

  const song = await newMessage(before, (all) => all.filter({ hasText: title, has: page.locator('audio') }));
  expect(await mediaDuration(song.locator('audio').first())).toBeGreaterThan(0.5);
}

describe('the playground in a browser', { timeout: 60_000 }, () => {
  it('makes a song typed with spaces and no quotes, whose audio plays, and an MP3 from its button', async () => {
    const result = await makeSong('rainy night lofi', /Rainy night lofi/, true);

    // The song links its WAV and its video already: an MP3 is what its button sells.
    await expect(result.locator('[data-testid=button]', { hasText: 'Make a video' }).count()).resolves.toBe(0);
    await result.locator('[data-testid=button]', { hasText: 'MP3 file · 2 credits' }).click();
    await messages().filter({ hasText: 'MP3 download ready' }).last().waitFor({ timeout: 20_000 });

    if (SCREENSHOT) {
      await result.evaluate((element: { scrollIntoView(options: { block: string }): void }) => element.scrollIntoView({ block: 'start' }));
      await composer().fill('/lyrics prompt:');
      await page.screenshot({ path: SCREENSHOT });
      await composer().fill('');
    }
  });

  it('plays a song in the voice channel, heard live on the page', async () => {
    await page.locator('[data-testid=voice-channel]').click();
    const audio = page.locator('[data-testid=voice-audio]');
    await expect.poll(() => audio.getAttribute('src'), { timeout: 10_000 }).toMatch(/^\/api\/voice\/audio/);
    const song = await makeSong('evening radio', /Evening radio/);
    await song.locator('[data-testid=button]', { hasText: 'Play in voice' }).click();
    // The bot joins the channel the person is in, and its now-playing message comes.
    await expect.poll(() => page.locator('[data-testid=voice-members]').innerText(), { timeout: 20_000 }).toContain('music-bot');
    await messages().filter({ hasText: 'Evening radio' }).filter({ has: page.locator('[data-testid=button]', { hasText: 'Skip' }) }).last().waitFor({ timeout: 20_000 });
    // "Now playing … in <#id>" names the voice channel, as Discord shows it.
    const nowPlaying = lastMessageWith(/Now playing/);
    await expect.poll(() => nowPlaying.locator('[data-testid=voice-mention]').innerText(), { timeout: 10_000 }).toBe('Lounge');
    expect(await page.locator('#message-list').innerText()).not.toContain('#unknown');
    // What reaches the page is the song: what the stream carries is not silence (read by the page
    // itself, 16-bit samples after the WAV header, from when the card shows, while the song of 20 s
    // still plays: up to 5 s of it), and the player's clock runs on the stream.
    const peak = page.evaluate(async () => {
      const reader = (await fetch('/api/voice/audio')).body!.getReader();
      let header = 44;
      let odd: number | undefined;
      let most = 0;
      for (let read = 0; read < 48_000 * 4 * 5 && most <= 0.05; ) {
        const { value, done } = await reader.read();
        if (done) break;
        read += value.length;
        let at = Math.min(header, value.length);
        header -= at;
        if (odd !== undefined && at < value.length) {
          most = Math.max(most, Math.abs(new Int16Array(new Uint8Array([odd, value[at]!]).buffer)[0]!) / 32_768);
          odd = undefined;
          at += 1;
        }
        const whole = Math.floor((value.length - at) / 2) * 2;
        const samples = new Int16Array(value.slice(at, at + whole).buffer);
        for (const sample of samples) most = Math.max(most, Math.abs(sample) / 32_768);
        if (at + whole < value.length) odd = value[at + whole];
      }
      await reader.cancel();
      return most;
    });
    const playerClock = () => audio.evaluate((element: MediaElement & { currentTime: number; paused: boolean }) => ({ at: element.currentTime, paused: element.paused }));
    const start = (await playerClock()).at;
    await expect.poll(async () => (await playerClock()).at - start, { timeout: 20_000 }).toBeGreaterThan(1);
    expect((await playerClock()).paused).toBe(false);
    expect(await peak).toBeGreaterThan(0.05);
    await page.locator('[data-testid=voice-channel]').click();
    await expect.poll(() => audio.getAttribute('src'), { timeout: 10_000 }).toBeNull();
  });

  it('writes lyrics, then makes a song of them through the modal', async () => {
    await lyricsThenSong('Sea song');
  });

  it('shows a refusal only to the person refused', async () => {
    await send('/song prompt:jazz model:Gramophone 1');
    const refusal = lastMessageWith('not one this bot offers');
    await refusal.waitFor({ timeout: 10_000 });
    expect(await refusal.getAttribute('data-ephemeral')).toBe('true');
    await expect(refusal.locator('[data-testid=ephemeral-note]').innerText()).resolves.toContain('Only you can see this');

    const id = await refusal.getAttribute('data-message-id');
    await actAs('moderator');
    await expect.poll(() => page.locator(`[data-message-id="${id}"]`).count()).toBe(0);
    await expect.poll(() => lastMessageWith('Rainy night lofi').count()).toBe(1);
    await actAs('member');
    await expect.poll(() => page.locator(`[data-message-id="${id}"]`).count()).toBe(1);
  });

  it('answers /credits with the balance', async () => {
    await send('/credits');
    // 500 to start; two songs (10 each), lyrics (1), an MP3 (2) and a song from the lyrics (10)
    // were spent. Playing in the voice channel is free.
    const answer = lastMessageWith(/467/);
    await answer.waitFor({ timeout: 10_000 });
    expect(await answer.getAttribute('data-ephemeral')).toBe('true');
    await expect(answer.innerText()).resolves.toMatch(/credits/i);
  });
});

describe('the playground as Discord behaves', { timeout: 60_000 }, () => {
  it("shows a picked choice's name in the message box and sends its value", async () => {
    await composer().fill('/jobs show id:rainy');
    const choice = page.locator('[data-testid=suggestion]', { hasText: 'Rainy night lofi' }).first();
    await choice.waitFor({ timeout: 10_000 });
    const name = await choice.locator('.suggestion-label').innerText();
    await composer().press('ArrowDown');
    await composer().press('Enter');
    const typed = await composer().inputValue();
    expect(typed).toBe(`/jobs show id:${name} `);
    expect(typed).not.toMatch(/[0-9a-f]{8}-[0-9a-f]{4}-/);

    const before = await messageIds();
    await composer().press('Enter');
    await expect.poll(() => composer().inputValue()).toBe('');
    const shown = await newMessage(before, (all) => all.filter({ hasText: 'Rainy night lofi', has: page.locator('audio') }));
    await expect(shown.innerText()).resolves.toContain('used /jobs show');
  });

  it('sends what is typed when Enter comes before the choices for it', async () => {
    await composer().fill('/jobs show id:');
    await page.locator('[data-testid=suggestion]', { hasText: 'Rainy night lofi' }).first().waitFor({ timeout: 10_000 });
    const before = await messageIds();
    // Faster than the bot's choices for the new text can come back.
    await composer().fill('/jobs show id:deadbeef');
    await composer().press('Enter');
    await expect.poll(() => composer().inputValue()).toBe('');
    const answer = await newMessage(before);
    await expect.poll(() => answer.locator('[data-testid=thinking]').count()).toBe(0);
    expect(await answer.getAttribute('data-ephemeral')).toBe('true');
    expect(await answer.locator('audio').count()).toBe(0);
    await expect(answer.innerText()).resolves.not.toContain('Rainy night lofi');
  });

  it('lists only the commands the person may use', async () => {
    const listed = async (): Promise<string[]> => {
      await composer().fill('/');
      await page.locator('[data-testid=suggestion]', { hasText: '/song' }).first().waitFor();
      return page.locator('[data-testid=suggestion] .suggestion-label').allInnerTexts();
    };
    const asMember = await listed();
    expect(asMember).toContain('/credits');
    expect(asMember).not.toContain('/settings');
    expect(asMember).not.toContain('/credits-admin');
    await composer().fill('/settings show');
    await composer().press('Escape');
    await composer().press('Enter');
    await expect(page.locator('[data-testid=composer-error]').innerText()).resolves.toMatch(/Manage Server/);

    await actAs('moderator');
    expect(await listed()).toEqual(expect.arrayContaining(['/settings', '/credits-admin']));
    await actAs('member');
    await composer().fill('');
  });

  it('shows a "new messages" bar when a reply lands below an older message, which jumps to the present', async () => {
    await send('/library');
    const library = messages().filter({ has: page.locator('[data-testid=select]') }).last();
    await library.waitFor({ timeout: 10_000 });
    // Enough below the library for it to be an older message once scrolled to.
    const beforeHelp = await messageIds();
    await send('/help');
    await newMessage(beforeHelp);
    await makeSong('a second rainy night', /second rainy night/i);

    await library.evaluate((element: { scrollIntoView(options: { block: string }): void }) => element.scrollIntoView({ block: 'start' }));
    const bar = page.locator('#jump-bar');
    // Well above the present: the bar says so before anything arrives.
    await expect.poll(() => page.locator('#jump-bar-text').innerText()).toMatch(/older messages/);
    const before = await messageIds();
    const select = library.locator('[data-testid=select]').first();
    const value = await select.locator('option:not([disabled])').first().getAttribute('value');
    await select.selectOption(value!);
    // The song shown again, below the fold: the bar says so.
    const reply = await newMessage(before, (all) => all.filter({ has: page.locator('audio') }));
    await expect.poll(() => page.locator('#jump-bar-text').innerText()).toMatch(/new message/);
    const scroller = page.locator('#scroller');
    // Read once the page has laid the reply out (a re-render in between measures a node not yet placed).
    const belowTheFold = async () => {
      const top = await reply.evaluate((node: { getBoundingClientRect(): { top: number; height: number } }) => {
        const box = node.getBoundingClientRect();
        return box.height > 0 ? box.top : Number.NaN;
      });
      const scrollerBottom = await scroller.evaluate((node: { getBoundingClientRect(): { bottom: number } }) => node.getBoundingClientRect().bottom);
      return Number.isNaN(top) ? 'not laid out' : top > scrollerBottom ? 'below' : `in view (${top} <= ${scrollerBottom})`;
    };
    await expect.poll(belowTheFold).toBe('below');

    await page.locator('[data-testid=jump-to-present]').click();
    await expect.poll(() => bar.isVisible()).toBe(false);
    // At the present, the reply in sight.
    const inSight = () =>
      reply.evaluate((node: { getBoundingClientRect(): { top: number; bottom: number }; closest(selector: string): { scrollTop: number; scrollHeight: number; clientHeight: number; getBoundingClientRect(): { top: number; bottom: number } } }) => {
        const scroller = node.closest('#scroller');
        const box = node.getBoundingClientRect();
        const view = scroller.getBoundingClientRect();
        const atBottom = scroller.scrollHeight - scroller.scrollTop - scroller.clientHeight < 2;
        return `${atBottom ? 'at the bottom' : 'above'}, ${box.bottom > view.top && box.top < view.bottom ? 'in sight' : `out of sight (${box.top}..${box.bottom} in ${view.top}..${view.bottom})`}`;
      });
    await expect.poll(inSight).toBe('at the bottom, in sight');
  });

  it('forgets private messages at a reload, a dismissed one included', async () => {
    await send('/credits');
    const privateAnswers = page.locator('[data-testid=message][data-ephemeral=true]');
    await expect.poll(() => privateAnswers.count()).toBeGreaterThan(1);
    await privateAnswers.last().locator('button', { hasText: 'Dismiss message' }).click();

    await page.reload();
    await composer().waitFor();
    await lastMessageWith('Rainy night lofi').waitFor();
    expect(await privateAnswers.count()).toBe(0);
    // New ones still show.
    await send('/credits');
    await expect.poll(() => privateAnswers.count()).toBe(1);
  });

  it('serves attachments, the CSV export among them, from the address it printed', async () => {
    await actAs('owner');
    await send('/credits-admin history');
    const history = messages().filter({ has: page.locator('[data-testid=button]', { hasText: 'Export CSV' }) }).last();
    await history.waitFor({ timeout: 10_000 });
    const before = await messageIds();
    await history.locator('[data-testid=button]', { hasText: 'Export CSV' }).click();
    const exported = await newMessage(before, (all) => all.filter({ has: page.locator('a[href*=".csv"]') }));
    const href = (await exported.locator('a[href*=".csv"]').first().getAttribute('href'))!;
    expect(href.startsWith(url)).toBe(true);
    const csv = await fetch(href);
    expect(csv.status).toBe(200);
    expect((await csv.text()).split('\n')[0]).toMatch(/,/);
    await actAs('member');
  });

  it('gives the four personas and the bot avatars of their own', async () => {
    const avatars = page.locator('#members .avatar');
    await expect.poll(() => avatars.count()).toBe(5);
    const looks = await avatars.evaluateAll((nodes) => {
      const { getComputedStyle } = globalThis as unknown as { getComputedStyle(node: unknown): { backgroundColor: string } };
      return nodes.map((node) => ({ colour: getComputedStyle(node).backgroundColor, glyph: node.querySelector('svg') ? 'picture' : node.textContent }));
    });
    // Neither two colours alike nor two letters: "mod" and "music-bot" would both be an M.
    expect(new Set(looks.map((look) => look.colour)).size).toBe(5);
    expect(new Set(looks.map((look) => look.glyph)).size).toBe(5);
  });
});

async function actAsName(username: string): Promise<void> {
  const user = (await users()).find((candidate) => candidate.username === username)!;
  await page.locator('[data-testid=user-switcher]').selectOption(user.id);
  await expect.poll(() => page.locator('.user-panel-names select').inputValue()).toBe(user.id);
}

/** Where `message`'s top is below the top of the message scroller, in pixels, once it is laid out. */
async function topInView(message: Locator): Promise<number> {
  return message.evaluate((node: { getBoundingClientRect(): { top: number; height: number }; closest(selector: string): { getBoundingClientRect(): { top: number } } }) => {
    const box = node.getBoundingClientRect();
    return box.height > 0 ? box.top - node.closest('#scroller').getBoundingClientRect().top : Number.NaN;
  });
}

describe('the playground as a place to try the bot', { timeout: 90_000 }, () => {
  it('acts as a second member, and gives a persona a role from the member list, which the bot heeds', async () => {
    const options = await page.locator('[data-testid=user-switcher] option').allInnerTexts();
    expect(options).toEqual(['you (member)', 'friend (member)', 'mod (moderator)', 'owner (bot owner)']);

    // A moderator makes Listener the role the bot requires to make anything; friend has no role yet and is refused.
    await actAs('moderator');
    let before = await messageIds();
    await send('/settings role role:Listener');
    await newMessage(before, (all) => all.filter({ hasText: 'Listener' }));
    try {
      await actAsName('friend');
      before = await messageIds();
      await send('/lyrics prompt:a friend at the door');
      await expect((await newMessage(before)).innerText()).resolves.toContain('You need the @Listener role');

      // Given the role in the member list, as a moderator gives it: the next /credits is answered.
      const friend = page.locator('[data-testid=member]', { hasText: 'friend' });
      await friend.click();
      const menu = page.locator('[data-testid=role-menu]');
      await menu.locator('[data-testid=role-toggle][data-role-name=Listener]').check();
      await expect.poll(() => friend.innerText()).toContain('@Listener');
      expect(await menu.locator('[data-testid=role-toggle][data-role-name=Listener]').isChecked()).toBe(true);
      before = await messageIds();
      await send('/lyrics prompt:a friend at the door');
      await newMessage(before, (all) => all.filter({ hasText: 'Your lyrics are on their way' }));

      // Escape closes the menu; the role stays.
      await page.keyboard.press('Escape');
      await expect.poll(() => menu.count()).toBe(0);
      const state = (await (await fetch(`${url}api/state`)).json()) as { users: Array<{ username: string; roles: string[] }>; roles: Array<{ id: string; name: string }> };
      const listener = state.roles.find((role) => role.name === 'Listener')!.id;
      expect(state.users.find((user) => user.username === 'friend')!.roles).toContain(listener);
    } finally {
      await actAs('moderator');
      before = await messageIds();
      await send('/settings role');
      await newMessage(before, (all) => all.filter({ hasText: /role/i }));
      await actAs('member');
    }
  });

  it('holds the music service, so a request waits its turn with Cancel, and lets it go on', async () => {
    const hold = page.locator('[data-testid=hold-service]');
    await hold.check();
    await expect.poll(() => page.locator('[data-testid=hold-hint]').innerText()).toMatch(/waits in the bot’s queue/);
    try {
      // The first goes to the service, which keeps it; the second of its kind waits in the bot's queue.
      let before = await messageIds();
      await send('/lyrics prompt:a held harbour');
      const held = await newMessage(before);
      before = await messageIds();
      await send('/lyrics prompt:a waiting harbour');
      const waiting = await newMessage(before, (all) => all.filter({ has: page.locator('[data-testid=button]', { hasText: 'Cancel' }) }));
      // The acknowledgement itself becomes the answer.
      await waiting.locator('[data-testid=button]', { hasText: 'Cancel' }).click();
      await expect.poll(() => waiting.innerText(), { timeout: 10_000 }).toMatch(/Cancelled your \w+ request: 1 credit back/);
      expect(await waiting.locator('[data-testid=button]', { hasText: 'Cancel' }).count()).toBe(0);

      // Let go, the service finishes the held one: one more set of lyrics to make a song of.
      const lyricsResults = messages().filter({ has: page.locator('[data-testid=button]', { hasText: 'Make a song' }) });
      const made = await lyricsResults.count();
      expect(await held.locator('[data-testid=button]', { hasText: 'Make a song' }).count()).toBe(0);
      await hold.uncheck();
      await expect.poll(() => page.locator('[data-testid=hold-hint]').innerText()).toMatch(/finish as usual/);
      await expect.poll(() => lyricsResults.count(), { timeout: 30_000 }).toBe(made + 1);
    } finally {
      await fetch(`${url}api/simulator/hold`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ held: false }) });
    }
  });

  it('keeps the channel and the messages in sight when the persona changes', async () => {
    // Private answers above and below a song: only the member sees them.
    await send('/credits');
    await lastMessageWith('Credits of this server').waitFor({ timeout: 10_000 });
    const song = await makeSong('a song to keep in sight', /song to keep in sight/i);
    let before = await messageIds();
    await send('/help');
    await newMessage(before);
    before = await messageIds();
    await send('/credits');
    await newMessage(before);

    // Read from a little above the song, away from the present. A message drawn before the page has
    // seen the scroll still follows the present, so scroll again until the page has seen it.
    const scroller = page.locator('#scroller');
    const readAboveTheSong = async () => {
      await song.evaluate((node: { scrollIntoView(options: { block: string }): void }) => node.scrollIntoView({ block: 'start' }));
      return scroller.evaluate(async (node: { scrollTop: number; scrollHeight: number; clientHeight: number }) => {
        node.scrollTop -= 40;
        const frame = globalThis as unknown as { requestAnimationFrame(next: () => void): void };
        await new Promise<void>((seen) => frame.requestAnimationFrame(() => frame.requestAnimationFrame(() => seen())));
        return node.scrollHeight - node.scrollTop - node.clientHeight;
      });
    };
    await expect.poll(readAboveTheSong, { timeout: 10_000 }).toBeGreaterThan(100);
    const where = await topInView(song);
    expect(where).toBeGreaterThan(0);

    const membersOwn = await page.locator('[data-testid=message][data-ephemeral=true]').evaluateAll((nodes) => nodes.map((node) => node.getAttribute('data-message-id')));
    expect(membersOwn.length).toBeGreaterThan(1);
    const shown = () => messages().evaluateAll((nodes, own) => nodes.filter((node) => own.includes(node.getAttribute('data-message-id'))).length, membersOwn);
    await actAs('moderator');
    // The member's private answers are gone from the moderator's view; the song stays where it was.
    await expect.poll(shown).toBe(0);
    await expect.poll(() => topInView(song)).toBeCloseTo(where, 0);
    await expect(page.locator('.chat-title').innerText()).resolves.toBe('music');
    await actAs('member');
    await expect.poll(() => topInView(song)).toBeCloseTo(where, 0);
    await page.locator('[data-testid=jump-to-present]').click();
  });

  it('fits the whole hint in the message box of a wide window', async () => {
    await expect.poll(() => composer().getAttribute('placeholder')).toBe("Message #music as @you — type / for the bot's commands");
    expect(await placeholderOverflow(page)).toBeLessThanOrEqual(0);
  });
});

/**
 * How far the message box's placeholder runs past the box's text area, in pixels (0 or less:
 * it fits), drawn on one line in the box's own font.
 */
async function placeholderOverflow(on: Page): Promise<number> {
  return on.locator('[data-testid=composer]').evaluate((box: unknown) => {
    interface Styled {
      style: Record<string, string>;
      textContent: string;
      scrollWidth: number;
      clientWidth: number;
      remove(): void;
    }
    const view = globalThis as unknown as { getComputedStyle(node: unknown): Record<string, string> & { getPropertyValue(name: string): string } };
    const element = box as { placeholder: string; clientWidth: number; ownerDocument: { createElement(tag: string): Styled; body: { append(node: Styled): void } } };
    const style = view.getComputedStyle(element);
    const room = element.clientWidth - parseFloat(style.paddingLeft!) - parseFloat(style.paddingRight!);
    const probe = element.ownerDocument.createElement('div');
    Object.assign(probe.style, { position: 'absolute', visibility: 'hidden', whiteSpace: 'pre', overflow: 'hidden', width: `${room}px`, font: style.font, letterSpacing: style.letterSpacing });
    probe.textContent = element.placeholder;
    element.ownerDocument.body.append(probe);
    const overflow = probe.scrollWidth - probe.clientWidth;
    probe.remove();
    return overflow;
  });
}

/** Words (of up to 16 letters) of `root`'s text that the layout broke across lines. */
async function brokenWords(root: Locator): Promise<string[]> {
  return root.evaluate((element: unknown) => {
    interface TextNode {
      textContent: string | null;
    }
    interface RangeLike {
      setStart(node: TextNode, offset: number): void;
      setEnd(node: TextNode, offset: number): void;
      getClientRects(): { length: number };
    }
    const doc = (element as { ownerDocument: { createTreeWalker(root: unknown, what: number): { nextNode(): TextNode | null }; createRange(): RangeLike } }).ownerDocument;
    const walker = doc.createTreeWalker(element, 4);
    const broken: string[] = [];
    for (let node = walker.nextNode(); node; node = walker.nextNode()) {
      const text = node.textContent ?? '';
      for (const match of text.matchAll(/[\p{L}\p{N}]{2,16}/gu)) {
        const range = doc.createRange();
        range.setStart(node, match.index);
        range.setEnd(node, match.index + match[0].length);
        if (range.getClientRects().length > 1) broken.push(match[0]);
      }
    }
    return broken;
  });
}

describe('the playground sells credits', { timeout: 90_000 }, () => {
  it('sells "100 credits" from /credits: Buy in the dialog, and the server has 100 more', async () => {
    const balanceIn = async (message: Locator): Promise<number> => {
      await expect.poll(() => message.locator('[data-testid=thinking]').count()).toBe(0);
      const text = await message.innerText();
      return Number(/Credits of this server\W*([\d,]+)/.exec(text)?.[1]?.replaceAll(',', '') ?? Number.NaN);
    };
    let before = await messageIds();
    await sendCommand(page, '/credits');
    const offer = await newMessage(before, (all) => all.filter({ has: page.locator('[data-testid=premium-button]') }));
    const balance = await balanceIn(offer);
    expect(balance).toBeGreaterThanOrEqual(0);

    const dialog = page.locator('[data-testid=purchase-dialog]');
    await offer.locator('[data-testid=premium-button]', { hasText: '100 credits' }).click();
    await dialog.locator('[data-testid=purchase-buy]').click();
    await dialog.waitFor({ state: 'detached' });

    // The bot takes the purchase (the button was shown in this server), adds it, and Discord's record says consumed.
    await expect
      .poll(
        async () => {
          before = await messageIds();
          await sendCommand(page, '/credits');
          return balanceIn(await newMessage(before, (all) => all.filter({ hasText: 'Credits of this server' })));
        },
        { timeout: 30_000, interval: 1_000 },
      )
      .toBe(balance + 100);
  });
});

describe("the playground opens the bot's dashboard", { timeout: 90_000 }, () => {
  /** Opens the Dashboard link (by keyboard or by click) as the persona acting now; approves on the emulated Discord's authorize page. */
  async function openDashboard(by: 'keyboard' | 'click'): Promise<Page> {
    const link = page.locator('[data-testid=dashboard-link]');
    const opened = page.waitForEvent('popup');
    if (by === 'keyboard') {
      await link.focus();
      await link.press('Enter');
    } else {
      await link.click();
    }
    const tab = await opened;
    // Discord's page shows the account signed in, with Authorize: the persona, with no choice of user.
    await tab.locator('button[value=approve]').waitFor();
    expect(await tab.locator('select#user_id').count()).toBe(0);
    await approveOnAuthorizePage(tab);
    return tab;
  }

  it('signs the moderator in to the server overview, the member to no manage page, the owner to the owners page', async () => {
    const acting = await page.locator('[data-testid=user-switcher]').inputValue();
    try {
      await actAs('moderator');
      const moderator = await openDashboard('keyboard');
      expect(await moderator.getByTestId('viewer').textContent()).toBe('Signed in as mod');
      expect(new URL(moderator.url()).pathname).toMatch(/^\/dashboard\/g\/\d+\/overview$/);
      expect(await moderator.getByTestId('guild-name').textContent()).toBe('Music Makers');
      await moderator.getByTestId('figure-balance').waitFor();
      expect(await moderator.locator('nav.pages a', { hasText: 'Owners' }).count()).toBe(0);
      await moderator.close();

      await actAs('member');
      const member = await openDashboard('click');
      expect(await member.getByTestId('viewer').textContent()).toBe('Signed in as you');
      await expect.poll(() => member.locator('h1').textContent()).toBe('Not available');
      expect(await member.locator('form[data-testid^=form-], [data-testid=figure-balance]').count()).toBe(0);
      await member.goto(new URL('/dashboard', member.url()).href);
      await member.getByTestId('no-servers').waitFor();
      await member.close();

      await actAs('owner');
      const owner = await openDashboard('click');
      expect(await owner.getByTestId('viewer').textContent()).toBe('Signed in as owner');
      await owner.locator('nav.pages a', { hasText: 'Owners' }).click();
      await owner.getByTestId('form-move').waitFor();
      await owner.close();
    } finally {
      await page.locator('[data-testid=user-switcher]').selectOption(acting);
    }
  });
});

describe('the playground on a phone, through a forwarded port', { timeout: 60_000 }, () => {
  beforeAll(async () => {
    // Another port in front of the playground, as an SSH or editor port forward gives.
    forwarded = await tcpProxy(url);
    page = await openPage(forwarded.url, PHONE);
  }, 30_000);

  it('keeps the channels behind a menu, and fits the window', async () => {
    const general = page.locator('[data-testid=channel]', { hasText: 'general' });
    expect(await general.isVisible()).toBe(false);
    await page.locator('[data-testid=menu-button]').click();
    await expect.poll(() => general.isVisible()).toBe(true);
    await general.click();
    await expect.poll(() => general.isVisible()).toBe(false);
    await expect(page.locator('.chat-title').innerText()).resolves.toBe('general');
    await page.locator('[data-testid=menu-button]').click();
    await page.locator('[data-testid=channel]', { hasText: 'music' }).click();
    await expect(page.locator('.chat-title').innerText()).resolves.toBe('music');

    const widths = await page.evaluate(() => {
      const doc = (globalThis as unknown as { document: { documentElement: { scrollWidth: number }; querySelector(s: string): { getBoundingClientRect(): { right: number } } } }).document;
      return { page: doc.documentElement.scrollWidth, composer: doc.querySelector('.composer-box').getBoundingClientRect().right };
    });
    expect(widths.page).toBeLessThanOrEqual(PHONE.width);
    expect(widths.composer).toBeLessThanOrEqual(PHONE.width);

    // A phone's keyboard may have no Enter that sends: the send button does.
    const before = await messageIds();
    await composer().fill('/credits');
    await page.locator('[data-testid=send-button]').click();
    await expect.poll(() => composer().inputValue()).toBe('');
    await expect((await newMessage(before)).innerText()).resolves.toMatch(/credits/i);
  });

  it('fits the message box’s hint, keeps the drawer open across a persona change, and closes it on Escape', async () => {
    const placeholder = await composer().getAttribute('placeholder');
    expect(placeholder).toMatch(/^Message #music/);
    expect(await placeholderOverflow(page)).toBeLessThanOrEqual(0);

    const sidebar = page.locator('.sidebar');
    await page.locator('[data-testid=menu-button]').click();
    await expect.poll(() => sidebar.isVisible()).toBe(true);
    await actAs('moderator');
    await expect.poll(() => composer().getAttribute('placeholder')).toMatch(/^Message #music/);
    expect(await placeholderOverflow(page)).toBeLessThanOrEqual(0);
    // Still open, on the same channel.
    expect(await page.locator('.app').evaluate((node: { classList: { contains(name: string): boolean } }) => node.classList.contains('nav-open'))).toBe(true);
    await expect(page.locator('.chat-title').innerText()).resolves.toBe('music');
    await actAs('member');

    await page.keyboard.press('Escape');
    await expect.poll(() => sidebar.isVisible()).toBe(false);
  });

  it('makes a song whose media come through the same address, with no word broken in its embed', async () => {
    const result = await makeSong('rainy night lofi on a phone', /on a phone/i);
    expect(await brokenWords(result.locator('.embed').first())).toEqual([]);
  });

  it('writes lyrics, then makes a song of them through the modal', async () => {
    await lyricsThenSong('Phone song');
  });
});

describe('premium buttons on the page', { timeout: 60_000 }, () => {
  // A world of its own in this process (emulator and page, no bot): what the test needs is a
  // message with premium buttons, sent here as the bot would send it, and the emulator to look into.
  let emulator: DiscordEmulator;
  let web: WebServer;
  let shop: Page;
  let world: PlaygroundWorld;
  let dataDir: string;

  beforeAll(async () => {
    dataDir = await mkdtemp(path.join(os.tmpdir(), 'musicbot-playground-shop-'));
    emulator = await startDiscordEmulator();
    world = await seedWorld(emulator, path.join(dataDir, 'world.json'));
    web = await startWebServer({ port: 0, logger: silentLogger });
    web.attach({ emulator, sim: { holdTasks: () => undefined, tasksHeld: () => false }, world, taskMs: 1000, origins: new Map() });
    shop = await browser.newPage({ viewport: DESKTOP });
    shop.on('console', (message) => {
      if (message.type() === 'error') consoleErrors.push(message.text());
    });
    shop.on('pageerror', (error) => consoleErrors.push(error.message));
  }, 30_000);

  afterAll(async () => {
    await shop?.close();
    await web?.close();
    await emulator?.close();
    await rm(dataDir, { recursive: true, force: true });
  });

  it('sells "100 credits" through a purchase dialog: Cancel buys nothing, Buy makes the entitlement', async () => {
    const credits = world.skus.find((sku) => sku.name === '100 credits')!;
    const plan = world.skus.find((sku) => sku.name === 'Server plan')!;
    expect(credits.type).toBe('consumable');
    expect(emulator.skus().map((sku) => [sku.id, sku.type]).filter(([id]) => id === credits.id || id === plan.id)).toEqual([
      [credits.id, 3],
      [plan.id, 5],
    ]);
    const buttons = [credits, plan].map((sku) => ({ type: 2, style: 6, sku_id: sku.id }));
    const response = await fetch(`${emulator.apiUrl}/v10/channels/${world.channels[0]!.id}/messages`, {
      method: 'POST',
      headers: { authorization: `Bot ${emulator.botToken}`, 'content-type': 'application/json' },
      body: JSON.stringify({ content: 'Out of credits? Top up:', components: [{ type: 1, components: buttons }] }),
    });
    expect(response.status).toBe(200);
    const { id: messageId } = (await response.json()) as { id: string };

    await shop.goto(`${web.origin}/`);
    await shop.locator('[data-testid=composer]').waitFor();
    const message = shop.locator(`[data-message-id="${messageId}"]`);
    const button = message.locator('[data-testid=premium-button]', { hasText: '100 credits' });
    await button.waitFor();
    await expect(button.innerText()).resolves.toContain(credits.price);
    await expect(message.locator('[data-testid=premium-button]', { hasText: 'Server plan' }).count()).resolves.toBe(1);

    const dialog = shop.locator('[data-testid=purchase-dialog]');
    await button.click();
    await dialog.waitFor();
    await expect(dialog.locator('[data-testid=purchase-buy]').innerText()).resolves.toBe('Buy 100 credits');
    await dialog.locator('[data-testid=purchase-cancel]').click();
    await dialog.waitFor({ state: 'detached' });

    await button.click();
    await dialog.locator('[data-testid=purchase-buy]').click();
    await dialog.waitFor({ state: 'detached' });
    const buyer = world.users[0]!;
    // The purchase happened once (the cancelled dialog bought nothing), as the person acting.
    expect(emulator.entitlements()).toEqual([expect.objectContaining({ sku_id: credits.id, user_id: buyer.id, type: 1, consumed: false })]);

    // Discord refuses a second pack while the first is unconsumed: the dialog says why and stays open.
    await button.click();
    await dialog.locator('[data-testid=purchase-buy]').click();
    await expect.poll(() => dialog.locator('.modal-footer-error').innerText()).toMatch(/unconsumed/);
    await dialog.locator('[data-testid=purchase-cancel]').click();
    expect(emulator.entitlements()).toHaveLength(1);
  });
});

describe('the bot\'s markdown on the page', { timeout: 60_000 }, () => {
  // As the premium buttons above: a world in this process, the bot's messages sent through the emulator's REST API.
  let emulator: DiscordEmulator;
  let web: WebServer;
  let view: Page;
  let world: PlaygroundWorld;
  let dataDir: string;

  beforeAll(async () => {
    dataDir = await mkdtemp(path.join(os.tmpdir(), 'musicbot-playground-markdown-'));
    emulator = await startDiscordEmulator();
    world = await seedWorld(emulator, path.join(dataDir, 'world.json'));
    web = await startWebServer({ port: 0, logger: silentLogger });
    web.attach({ emulator, sim: { holdTasks: () => undefined, tasksHeld: () => false }, world, taskMs: 1000, origins: new Map() });
    view = await browser.newPage({ viewport: DESKTOP });
    view.on('pageerror', (error) => consoleErrors.push(error.message));
  }, 30_000);

  afterAll(async () => {
    await view?.close();
    await web?.close();
    await emulator?.close();
    await rm(dataDir, { recursive: true, force: true });
  });

  it('shows escaped signs as typed, as Discord does, and a voice channel by its name', async () => {
    const lines = [
      String.raw`\_it\_ \*not italic\* \*\*not bold\*\* \~\~not struck\~\~ \`not code\` \|\|not hidden\|\| back\\slash \<@1>`,
      String.raw`\> not a quote`,
      String.raw`\# not a heading`,
      String.raw`\- not an item`,
      String.raw`_snake\_case_ in <#${world.voiceChannel.id}>`,
    ];
    const response = await fetch(`${emulator.apiUrl}/v10/channels/${world.channels[0]!.id}/messages`, {
      method: 'POST',
      headers: { authorization: `Bot ${emulator.botToken}`, 'content-type': 'application/json' },
      body: JSON.stringify({ content: lines.join('\n') }),
    });
    expect(response.status).toBe(200);
    const { id } = (await response.json()) as { id: string };

    await view.goto(`${web.origin}/`);
    const content = view.locator(`[data-message-id="${id}"] .message-content`);
    await content.waitFor();
    expect((await content.innerText()).split('\n')).toEqual([
      '_it_ *not italic* **not bold** ~~not struck~~ `not code` ||not hidden|| back\\slash <@1>',
      '> not a quote',
      '# not a heading',
      '- not an item',
      'snake_case in Lounge',
    ]);
    expect(await content.locator('strong, s, code, blockquote, h1, li, .mention-channel').count()).toBe(0);
    await expect(content.locator('em').allInnerTexts()).resolves.toEqual(['snake_case']);
    await expect(content.locator('[data-testid=voice-mention]').innerText()).resolves.toBe('Lounge');
  });
});

describe('the browser console', () => {
  it('logged no errors', () => {
    expect(consoleErrors).toEqual([]);
  });
});
