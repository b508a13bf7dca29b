/**
 * No task the service accepted is dropped: a task that ends at its deadline, after it, or
 * after its job was refunded while the worker that sent it was away still reaches the member
 * (free when it was refunded). The poll deadline is a few seconds here, so the deadline, its
 * grace and the polls between them happen within a test.
 */
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import type { SubmitResult } from '../../../src/pipeline/requests.js';
import { applyRetention } from '../../../src/pipeline/retention.js';
import { found } from '../../support/found.js';
import { startHarness, type Harness } from '../../support/pipeline-harness.js';
import { jobRow, ledgerOfJob } from '../../support/ledger.js';

/** The deadline, and the grace after it (as long again). */
const DEADLINE_MS = 4_000;

let polling: Harness;
let webhooks: Harness;

beforeAll(async () => {
  webhooks = await startHarness({ webhooks: true, startingCredits: 500, settings: { pollDeadlineMs: DEADLINE_MS }, env: { MUSIC_API_TIMEOUT_MS: '400' } });
  // Two polls before the deadline: one halfway, and the last one at the deadline itself.
  polling = await startHarness({
    webhooks: false,
    startingCredits: 500,
    settings: { pollDeadlineMs: DEADLINE_MS, pollIntervalMs: { min: DEADLINE_MS / 2, max: DEADLINE_MS / 2 } },
  });
});
afterAll(async () => {
  await polling?.close();
  await webhooks?.close();
});

const refunded = (jobId: string) => [
  { kind: 'reserve', amount: -10, key: `job:${jobId}:debit` },
  { kind: 'refund', amount: 10, key: `job:${jobId}:credit` },
];

async function submittedJob(h: Harness, prompt: string) {
  const { handle, result } = await h.request({ kind: 'song', prompt });
  const { jobId } = result as SubmitResult;
  const job = await vi.waitFor(async () => found((await jobRow(h.db.db, jobId))?.upstreamTaskId ? await jobRow(h.db.db, jobId) : undefined, 'the task id'), 15_000);
  return { handle, job };
}

function pollsOf(h: Harness, taskId: string) {
  return h.sim.requests.filter((r) => r.path === `/api/v1/producer/task/${taskId}`);
}

describe('a task that ends between the last poll and the deadline', () => {
  it('is found by one last poll at the deadline and delivered, charged, not refunded', async () => {
    polling.setSimForThisTest({ taskMs: 60_000 });
    const { handle, job } = await submittedJob(polling, 'finished in the last minute');
    // Ends right after the poll halfway to the deadline: only a poll at the deadline can see it.
    await vi.waitFor(() => found(pollsOf(polling, job.upstreamTaskId!).some((r) => r.status === 200), 'the first poll answered'), DEADLINE_MS * 2);
    expect(polling.sim.completeTask(job.upstreamTaskId!)).toBe(true);

    const done = await vi.waitFor(async () => {
      const row = await jobRow(polling.db.db, job.id);
      return found(row && row.deliveryState !== 'pending' ? row : undefined, 'the job delivered');
    }, 15_000);
    expect(done).toMatchObject({ state: 'succeeded', error: null });
    expect(await ledgerOfJob(polling.db.db, job.id)).toEqual([{ kind: 'reserve', amount: -10, key: `job:${job.id}:debit` }]);
    const song = await handle.waitForEdit((m) => JSON.stringify(m.embeds ?? []).includes('Links'));
    expect(JSON.stringify(song.embeds)).not.toContain('Free (credits returned)');
  });
});

describe('a task still running at its deadline', () => {
  it('is refunded at the deadline, still polled through the grace, and its late song posted free', async () => {
    polling.setSimForThisTest({ taskMs: 60_000 });
    const { handle, job } = await submittedJob(polling, 'slower than the deadline');
    const notice = await handle.waitForEdit((m) => JSON.stringify(m.embeds ?? []).includes('did not finish in time'), DEADLINE_MS * 3);
    expect(JSON.stringify(notice.embeds)).toContain('10 credits were returned');
    expect((await jobRow(polling.db.db, job.id))?.state).toBe('timed_out');

    // A poll after the refund: the job is still followed.
    const polled = pollsOf(polling, job.upstreamTaskId!).filter((r) => r.status === 200).length;
    await vi.waitFor(() => found(pollsOf(polling, job.upstreamTaskId!).filter((r) => r.status === 200).length > polled, 'a poll after the refund'), DEADLINE_MS);
    expect(polling.sim.completeTask(job.upstreamTaskId!)).toBe(true);

    const song = await handle.waitForEdit((m) => JSON.stringify(m.embeds ?? []).includes('Free (credits returned)'), DEADLINE_MS * 2);
    expect(JSON.stringify(song.embeds)).toContain('Links');
    expect(await jobRow(polling.db.db, job.id)).toMatchObject({ state: 'succeeded', error: { kind: 'deadline', creditsReturned: 10 } });
    expect(await ledgerOfJob(polling.db.db, job.id)).toEqual(refunded(job.id));
  });

  it('is polled no more once the grace has ended', async () => {
    polling.setSimForThisTest({ taskMs: 60_000 });
    const { job } = await submittedJob(polling, 'never done in time');
    await vi.waitFor(async () => found((await jobRow(polling.db.db, job.id))?.state === 'timed_out', 'the refund at the deadline'), DEADLINE_MS * 3);
    // The poll entry runs out at the grace's end, a deadline's length after the deadline.
    await expect.poll(() => polling.queueEntriesOf(job.id), { timeout: DEADLINE_MS * 3, interval: 250 }).toEqual({});
    const last = pollsOf(polling, job.upstreamTaskId!).at(-1)!;
    expect(last.at - job.deadlineAt!.getTime()).toBeLessThanOrEqual(DEADLINE_MS + 1_000);
    expect(last.at - job.deadlineAt!.getTime()).toBeGreaterThanOrEqual(DEADLINE_MS / 2);
    expect(await jobRow(polling.db.db, job.id)).toMatchObject({ state: 'timed_out', error: { kind: 'deadline', creditsReturned: 10 } });
  });
});

describe('a job refunded as uncertain', () => {
  const retentionAt = (offsetMs: number) => applyRetention({ ...webhooks.app.deps, now: () => new Date(Date.now() + offsetMs) });

  it('keeps its webhook secret while its task may still end, so that the late webhook is matched and the song posted free', async () => {
    const prompt = 'taken, unanswered, and slow [sim:504-accepted] [sim:task-ms=60000]';
    const { handle, result } = await webhooks.request({ kind: 'song', prompt });
    const { jobId } = result as SubmitResult;
    await handle.waitForEdit((m) => JSON.stringify(m.embeds ?? []).includes('could not be made'));
    const refundedJob = await jobRow(webhooks.db.db, jobId);
    expect(refundedJob).toMatchObject({ state: 'timed_out', error: { kind: 'unconfirmed_submission', mayArrive: true } });

    // Past the deadline since it was refunded: the task it may have made can still be running.
    await retentionAt(DEADLINE_MS + 1_000);
    expect((await jobRow(webhooks.db.db, jobId))?.webhookSecret).toBe(refundedJob!.webhookSecret);

    const [task] = webhooks.sim.listTasks().filter((t) => t.body.sound === prompt);
    expect(webhooks.sim.completeTask(task!.taskId)).toBe(true);
    const song = await handle.waitForEdit((m) => JSON.stringify(m.embeds ?? []).includes('Free (credits returned)'));
    expect(JSON.stringify(song.embeds)).toContain('Links');
    expect(await jobRow(webhooks.db.db, jobId)).toMatchObject({ state: 'succeeded', error: { kind: 'unconfirmed_submission', creditsReturned: 10 } });
    expect(await ledgerOfJob(webhooks.db.db, jobId)).toEqual(refunded(jobId));
  });

  it('lets its secret go once no result can come: past the deadline and its grace', async () => {
    const { handle, result } = await webhooks.request({ kind: 'song', prompt: 'taken, unanswered, never heard of again [sim:504-accepted] [sim:no-webhook]' });
    const { jobId } = result as SubmitResult;
    await handle.waitForEdit((m) => JSON.stringify(m.embeds ?? []).includes('could not be made'));
    await retentionAt(DEADLINE_MS * 2 - 1_000);
    expect((await jobRow(webhooks.db.db, jobId))?.webhookSecret).toEqual(expect.any(String));
    await retentionAt(DEADLINE_MS * 2 + 1_000);
    expect(await jobRow(webhooks.db.db, jobId)).toMatchObject({ state: 'timed_out', webhookSecret: null });
  });
});
