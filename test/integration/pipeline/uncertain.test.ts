/**
 * The submission rule: a create the service may have taken (an answer lost, cut off, or a 5xx
 * but 502) is never sent again. The member gets the credits back at once; with webhooks on, a
 * task the service made after all still reaches the member, free.
 */
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { checkAccount } from '../../../src/pipeline/account.js';
import type { SubmitResult } from '../../../src/pipeline/requests.js';
import { found } from '../../support/found.js';
import { startHarness, type Harness } from '../../support/pipeline-harness.js';
import { balanceOf, jobRow, ledgerOfJob, ledgerSum } from '../../support/ledger.js';
import { parseSamples } from '../../support/metrics.js';
import { createLogger } from '../../../src/logger.js';

const harnesses: Record<'webhooks' | 'polling', Harness | undefined> = { webhooks: undefined, polling: undefined };

/**
 * A bug in the bot's own code after a create was answered: armed, the polling harness's log
 * line for the next answered create throws, once, inside the client's call.
 */
const afterAnswer = { armed: false };
const pollingLog = {
  write(line: string) {
    if (afterAnswer.armed && line.includes('"msg":"music API request"') && line.includes('"operation":"createSong"')) {
      afterAnswer.armed = false;
      throw new TypeError('a bug after the answer');
    }
  },
};

beforeAll(async () => {
  const options = { startingCredits: 200, sim: { taskMs: 1_200 }, env: { MUSIC_API_TIMEOUT_MS: '400' } };
  [harnesses.webhooks, harnesses.polling] = await Promise.all([
    startHarness({ webhooks: true, ...options }),
    startHarness({ webhooks: false, ...options, logger: createLogger({ level: 'debug' }, pollingLog) }),
  ]);
});
afterAll(async () => {
  await harnesses.webhooks?.close();
  await harnesses.polling?.close();
});

function createsOf(h: Harness, prompt: string) {
  return h.sim.requests.filter((r) => r.path === '/api/v1/producer/create' && (r.body as { sound?: string }).sound === prompt);
}

function tasksOf(h: Harness, prompt: string) {
  return h.sim.listTasks().filter((task) => task.body.sound === prompt);
}

async function settled(h: Harness, jobId: string, state?: string) {
  return vi.waitFor(async () => {
    const row = await jobRow(h.db.db, jobId);
    return found(row && row.deliveryState !== 'pending' && (state === undefined || row.state === state) ? row : undefined);
  }, 20_000);
}

const refunded = (jobId: string) => [
  { kind: 'reserve', amount: -10, key: `job:${jobId}:debit` },
  { kind: 'refund', amount: 10, key: `job:${jobId}:credit` },
];

describe('a create the service took, answered as if it had not', () => {
  // proxy-502: a proxy's HTML page, after the origin made the task; proxy-200: the same page with a 200, a body that cannot be read.
  const faults = ['500-accepted', '503-accepted', '504-accepted', 'code-500-accepted', 'reset-accepted', 'hang-accepted', 'proxy-502-accepted', 'proxy-200-accepted'];

  it.each(faults)('[sim:%s]: one task, one refund, nothing sent twice, and the late webhook brings the song free', async (fault) => {
    const h = harnesses.webhooks!;
    const before = await checkAccount(h.app.deps, 'command');
    const prompt = `taken but unanswered [sim:${fault}]`;
    const { handle, result } = await h.request({ kind: 'song', prompt });
    const { jobId } = result as SubmitResult;

    // The member is refunded and told so at once, without waiting for the task.
    const notice = await handle.waitForEdit((m) => JSON.stringify(m.embeds ?? []).includes('could not be made'));
    expect(JSON.stringify(notice.embeds)).toContain('10 credits were returned');
    expect(JSON.stringify(notice.embeds)).toContain('it will still be posted here, free');
    expect((await jobRow(h.db.db, jobId))?.state).toBe('timed_out');

    // The service made the task after all: its webhook finds the job, and the song is posted, free.
    const song = await handle.waitForEdit((m) => JSON.stringify(m.embeds ?? []).includes('Free (credits returned)'));
    expect(JSON.stringify(song.embeds)).toContain('Links');
    const job = await settled(h, jobId, 'succeeded');
    expect(job.submitUncertainAt).not.toBeNull();
    // The spec's webhook body is the polling body alone: its URL names the job, nothing names the task.
    expect(job.upstreamTaskId).toBeNull();
    expect(tasksOf(h, prompt)).toHaveLength(1);
    expect(createsOf(h, prompt)).toHaveLength(1);
    expect(await ledgerOfJob(h.db.db, jobId)).toEqual(refunded(jobId));
    // The service's word on the task's end proves it took (and charged) the job: the account agrees,
    // and no longer names it among the submissions it cannot account for.
    const check = await checkAccount(h.app.deps, 'command');
    expect(check).toMatchObject({ spentSince: 10, drift: 0, balance: before.balance - 10 });
    expect(check.uncertain.jobs.map((j) => j.id)).not.toContain(jobId);
  });

  it('without webhooks: refunded at once, said plainly, and never sent again', async () => {
    const h = harnesses.polling!;
    const prompt = 'never confirmed [sim:504-accepted]';
    const { handle, result } = await h.request({ kind: 'song', prompt });
    const { jobId } = result as SubmitResult;
    const message = await handle.waitForEdit((m) => JSON.stringify(m.embeds ?? []).includes('could not be made'));
    expect(JSON.stringify(message.embeds)).toContain('10 credits were returned');
    expect(JSON.stringify(message.embeds)).not.toContain('still be posted');
    const job = await settled(h, jobId);
    expect(job).toMatchObject({ state: 'timed_out', error: { kind: 'unconfirmed_submission', creditsReturned: 10 } });
    expect(tasksOf(h, prompt)).toHaveLength(1);
    // Once the queues hold nothing of the job, nothing can send it again.
    await expect.poll(() => h.queueEntriesOf(jobId), { timeout: 10_000 }).toEqual({});
    expect(createsOf(h, prompt)).toHaveLength(1);
    expect(await ledgerOfJob(h.db.db, jobId)).toEqual(refunded(jobId));
  });
});

describe('uncertain without a task made: never sent again', () => {
  it("a proxy's 502 page proves nothing: refunded, sent once", async () => {
    const h = harnesses.polling!;
    const prompt = 'proxy in front [sim:proxy-502]';
    const { result } = await h.request({ kind: 'song', prompt });
    const { jobId } = result as SubmitResult;
    const job = await settled(h, jobId);
    expect(job).toMatchObject({ state: 'timed_out', error: { kind: 'unconfirmed_submission', creditsReturned: 10 } });
    await expect.poll(() => h.queueEntriesOf(jobId), { timeout: 10_000 }).toEqual({});
    expect(createsOf(h, prompt).map((r) => r.status)).toEqual([502]);
    expect(await ledgerOfJob(h.db.db, jobId)).toEqual(refunded(jobId));
  });

  it('an error of its own after the create was answered: refunded, the one task kept, never sent again', async () => {
    const h = harnesses.polling!;
    const prompt = 'a bug after the answer';
    afterAnswer.armed = true;
    const { result } = await h.request({ kind: 'song', prompt });
    const { jobId } = result as SubmitResult;
    const job = await settled(h, jobId);
    expect(afterAnswer.armed).toBe(false);
    expect(job).toMatchObject({ state: 'timed_out', error: { kind: 'unconfirmed_submission', creditsReturned: 10 } });
    await expect.poll(() => h.queueEntriesOf(jobId), { timeout: 10_000 }).toEqual({});
    expect(createsOf(h, prompt).map((r) => r.status)).toEqual([200]);
    expect(tasksOf(h, prompt)).toHaveLength(1);
    expect(await ledgerOfJob(h.db.db, jobId)).toEqual(refunded(jobId));
  });
});

describe('answers that prove nothing was made', () => {
  it.each(['429', '502'])('[sim:%s] is sent again and succeeds, charged once', async (status) => {
    const h = harnesses.polling!;
    const prompt = `provider hiccup [sim:${status}]`;
    const { result } = await h.request({ kind: 'song', prompt });
    const job = await settled(h, (result as SubmitResult).jobId);
    expect(job.state).toBe('succeeded');
    expect(createsOf(h, prompt).map((r) => r.status)).toEqual([Number(status), 200]);
    expect(tasksOf(h, prompt)).toHaveLength(1);
  });

  it('a 500 that made nothing is still not sent again: refunded, and the account check names it', async () => {
    const h = harnesses.polling!;
    const first = await h.app.pipeline.checkAccount();
    const prompt = 'internal error [sim:500]';
    const { result } = await h.request({ kind: 'song', prompt });
    const { jobId } = result as SubmitResult;
    const job = await settled(h, jobId);
    expect(job).toMatchObject({ state: 'timed_out', error: { kind: 'unconfirmed_submission', creditsReturned: 10 } });
    expect(createsOf(h, prompt).map((r) => r.status)).toEqual([500]);
    expect(tasksOf(h, prompt)).toHaveLength(0);

    const check = await h.app.pipeline.checkAccount();
    expect(check.previous?.checkedAt).toEqual(first.checkedAt);
    expect(check.uncertain.jobs.map((j) => j.id)).toContain(jobId);
    expect(check.uncertain).toMatchObject({ count: check.uncertain.jobs.length });
    expect(check.uncertain.credits).toBe(10 * check.uncertain.count);
    // The next check starts from this one: the job is named once.
    expect((await h.app.pipeline.checkAccount()).uncertain.jobs.map((j) => j.id)).not.toContain(jobId);

    const samples = parseSamples(await h.app.deps.metrics.registry.metrics());
    expect(samples.get('musicbot_submissions_uncertain_total{kind="song"}')).toBeGreaterThanOrEqual(1);
    expect(await balanceOf(h.db.db, h.guildId)).toBe(await ledgerSum(h.db.db, h.guildId));
  });
});

describe('a persona song whose create times out after the service took it', () => {
  it('with webhooks on, gives up at once as without them: its create took no webhook, so none will come', async () => {
    const h = harnesses.webhooks!;
    const lyrics = 'never confirmed either [sim:hang-accepted]';
    const { result } = await h.request({ kind: 'persona_song', voiceId: '6f1f7a52-3c2b-4d8e-9a0b-1c2d3e4f5a6b', personaId: 'persona-slow', lyrics });
    const { jobId } = result as SubmitResult;
    const job = await settled(h, jobId);
    expect(job.state).toBe('timed_out');
    expect(job.error).toMatchObject({ kind: 'unconfirmed_submission', creditsReturned: 10 });
    const creates = h.sim.requests.filter((r) => r.path === '/api/v1/sonic/create' && (r.body as { prompt?: string }).prompt === lyrics);
    expect(creates).toHaveLength(1);
    expect(creates[0]?.body).not.toHaveProperty('webhook_url');
  });
});
