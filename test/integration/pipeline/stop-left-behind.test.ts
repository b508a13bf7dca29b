/**
 * A stop that gives up on an entry still in hand (a create the service holds open) closes the
 * workers' Redis connection under it. When that entry ends afterwards, this process reports
 * nothing more to BullMQ: it goes on turning its event loop, and the next worker takes the entry
 * over once its lock lapses, refunding the job without sending it again.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startApp, type App } from '../../../src/app.js';
import { loadConfig } from '../../../src/config.js';
import { createLogger, silentLogger } from '../../../src/logger.js';
import type { SubmitResult } from '../../../src/pipeline/requests.js';
import { jobRow, ledgerOfJob } from '../../support/ledger.js';
import { startHarness, workerOnly, type Harness } from '../../support/pipeline-harness.js';

const PROMPT = 'left behind [sim:hang-accepted]';
// The create gives up this long after it was sent: after the stop below has closed every connection.
const CREATE_TIMEOUT_MS = 6_000;

let h: Harness | undefined;
let next: App | undefined;
const log: string[] = [];
const said = (msg: string) => log.some((line) => (JSON.parse(line) as { msg: string }).msg === msg);

beforeAll(async () => {
  h = await startHarness({
    webhooks: false,
    env: { MUSIC_API_TIMEOUT_MS: String(CREATE_TIMEOUT_MS) },
    logger: createLogger({ level: 'info' }, { write: (line: string) => void log.push(line) }),
  });
}, 60_000);
// Run last to first, each bounded: the next worker, then the harness.
afterAll(async () => h?.close(), 60_000);
afterAll(async () => next?.stop(), 30_000);

describe('an entry a bounded stop left in hand', () => {
  it('ends after its connection closed without holding the process, and the next worker settles it', async () => {
    const { result } = await h!.request({ kind: 'song', prompt: PROMPT });
    const { jobId } = result as SubmitResult;
    const creates = () => h!.sim.requests.filter((r) => r.path === '/api/v1/producer/create' && (r.body as { sound?: string }).sound === PROMPT);
    await expect.poll(() => creates().length, { timeout: 15_000, message: 'the service never got the create' }).toBe(1);

    // One second for the workers (the stop keeps five for what closes after them), far less than the create's wait.
    await h!.app.stop({ withinMs: 6_000 });
    expect(said('entries still in hand at the end of the stop; left to the next worker')).toBe(true);
    // The create gives up now, and the entry ends on the closed connection: the loop still turns to see it.
    await expect.poll(() => said('submission unconfirmed; refunded, not sending it again'), { timeout: CREATE_TIMEOUT_MS + 10_000 }).toBe(true);
    // Its job's row could not be written by then (the pool was closed): the next worker's to settle.
    expect((await jobRow(h!.db.db, jobId))?.state).toBe('submitting');

    next = await startApp(loadConfig({ env: { ...h!.env, LOG_LEVEL: 'silent' } }), silentLogger, workerOnly(h!.prefix));
    await expect.poll(async () => (await jobRow(h!.db.db, jobId))?.state, { timeout: 40_000, message: 'the next worker never settled the job' }).toBe('timed_out');
    expect(await ledgerOfJob(h!.db.db, jobId)).toEqual([
      { kind: 'reserve', amount: -10, key: `job:${jobId}:debit` },
      { kind: 'refund', amount: 10, key: `job:${jobId}:credit` },
    ]);
    expect(creates()).toHaveLength(1);
  }, 90_000);
});
