/**
 * The bot process's own health and its end, as `npm start` runs it (ROLE=all, interactions
 * over HTTP): every log line names its role and pid; `/livez` fails after the event loop stalled
 * (the process held with SIGSTOP) and recovers; an unhandled promise rejection is logged and
 * counted, and the process runs on; SIGTERM turns `/readyz` to 503 at once while the public
 * server keeps answering for SHUTDOWN_DRAIN_MS, so an interaction sent during the drain is
 * answered, and the process then exits 0.
 */
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sleep } from '@music-bot/test-world';
import { printBotLogsOnFailure, startE2E, type E2E } from './bot-process.js';

const DRAIN_MS = 4_000;
const STALL_MS = 1_000;
/** Makes an unhandled rejection in the bot process at each SIGUSR2. */
const rejectOnSignal = fileURLToPath(new URL('../fixtures/unhandled-rejection-on-signal.mjs', import.meta.url));

let bot: E2E | undefined;
printBotLogsOnFailure(() => bot);

beforeAll(async () => {
  bot = await startE2E({
    webhooks: false,
    // `npm start`'s way, the sources through tsx: the other end-to-end files run the suite's build.
    entry: 'source',
    interactions: 'http',
    env: { SHUTDOWN_DRAIN_MS: String(DRAIN_MS), LIVEZ_STALL_MS: String(STALL_MS) },
    nodeArgs: ['--import', rejectOnSignal],
  });
}, 120_000);
afterAll(() => bot?.close(), 120_000);

const e2e = () => bot!;
const get = (route: string) => fetch(`${e2e().httpUrl}${route}`, { signal: AbortSignal.timeout(5_000) });

function logLines(): Array<Record<string, unknown>> {
  return e2e()
    .output()
    .split('\n')
    .filter((line) => line.startsWith('{'))
    .map((line) => JSON.parse(line) as Record<string, unknown>);
}

async function unhandledRejections(): Promise<number> {
  const text = await (await get('/metrics')).text();
  return Number(/^musicbot_unhandled_rejections_total (\d+)$/m.exec(text)?.[1] ?? Number.NaN);
}

describe('the bot process', () => {
  it('names its role and pid on every log line', async () => {
    await e2e().waitForLog((line) => line.msg === 'bot started', 'its start');
    const lines = logLines();
    expect(lines.length).toBeGreaterThan(3);
    for (const line of lines) expect(line, String(line.msg)).toMatchObject({ role: 'all', pid: e2e().pid });
  });

  it('answers /livez, fails it after the event loop stalled past LIVEZ_STALL_MS, and recovers', async () => {
    const live = await get('/livez');
    expect(live.status).toBe(200);
    expect(await live.json()).toMatchObject({ status: 'live' });

    const pid = e2e().pid!;
    process.kill(pid, 'SIGSTOP');
    // The stall itself: the process does not run at all for this long.
    await sleep(STALL_MS * 1.5);
    process.kill(pid, 'SIGCONT');

    const stalled = await get('/livez');
    expect(stalled.status).toBe(503);
    expect(await stalled.json()).toMatchObject({ status: 'stalled', stallMs: expect.any(Number) });
    // Once the stall is out of the window, live again: a stall that does not recur restarts nothing.
    await expect.poll(async () => (await get('/livez')).status, { timeout: 20_000, interval: 500 }).toBe(200);
  });

  it('logs and counts an unhandled rejection, and keeps running', async () => {
    expect(await unhandledRejections()).toBe(0);
    process.kill(e2e().pid!, 'SIGUSR2');
    const line = await e2e().waitForLog((entry) => entry.msg === 'unhandled rejection', 'the rejection');
    expect(line).toMatchObject({ level: 50, role: 'all', err: { message: 'a rejection nobody handles' } });
    expect(await unhandledRejections()).toBe(1);
    expect((await get('/livez')).status).toBe(200);
    const handle = e2e().run(e2e().members.alice, { name: 'credits' });
    expect(await handle.waitForResponse(10_000)).toBeDefined();
  });

  it('on SIGTERM: /readyz 503 at once, the public server answers an interaction during the drain, then the process exits 0', async () => {
    expect((await get('/readyz')).status).toBe(200);
    const signalled = Date.now();
    process.kill(e2e().pid!, 'SIGTERM');
    await expect.poll(async () => (await get('/readyz')).status, { timeout: 1_000, interval: 50 }).toBe(503);

    // Half the drain: longer than the whole stop took when the server closed at once.
    await sleep(DRAIN_MS / 2);
    expect((await get('/readyz')).status).toBe(503);
    const handle = e2e().run(e2e().members.alice, { name: 'credits' });
    const response = await handle.waitForResponse(5_000);
    expect(response).toBeDefined();
    expect(Date.now() - signalled).toBeLessThan(DRAIN_MS);

    const exit = await e2e().stop();
    expect(exit).toEqual({ code: 0, signal: null });
    expect(Date.now() - signalled).toBeGreaterThanOrEqual(DRAIN_MS);
    expect(logLines().some((line) => line.msg === 'stopped')).toBe(true);
  });
});
