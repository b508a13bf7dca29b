/**
 * The submission rule: a create that timed out may have started a task upstream, so the bot
 * never sends that job again. With webhooks on it waits for the webhook its URL names; without
 * webhooks it gives up at once and refunds the guild.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { checkAccount } from '../../../src/pipeline/account.js';
import type { SubmitResult } from '../../../src/pipeline/requests.js';
import { eventually } from '../../support/eventually.js';
import { startHarness, type Harness } from '../../support/pipeline-harness.js';
import { jobRow, ledgerOfJob } from '../../support/ledger.js';

const harnesses: Record<'webhooks' | 'polling', Harness | undefined> = { webhooks: undefined, polling: undefined };

beforeAll(async () => {
  const options = { startingCredits: 100, sim: { taskMs: 1_200 }, env: { MUSIC_API_TIMEOUT_MS: '400' } };
  [harnesses.webhooks, harnesses.polling] = await Promise.all([
    startHarness({ webhooks: true, ...options }),
    startHarness({ webhooks: false, ...options }),
  ]);
});
afterAll(async () => {
  await harnesses.webhooks?.close();
  await harnesses.polling?.close();
});

function createsOf(h: Harness, prompt: string) {
  return h.sim.requests.filter((r) => r.path === '/api/v1/producer/create' && (r.body as { sound?: string }).sound === prompt);
}

async function settled(h: Harness, jobId: string) {
  return eventually(async () => {
    const row = await jobRow(h.db.db, jobId);
    return row && row.deliveryState !== 'pending' ? row : undefined;
  }, 20_000);
}

describe('a create that times out after the service took it', () => {
  it('with webhooks: is never sent again, and the late webhook still finishes it', async () => {
    const h = harnesses.webhooks!;
    const before = await checkAccount(h.app.deps, 'command');
    const prompt = 'slow to confirm [sim:hang-accepted]';
    const { handle, result } = await h.request({ kind: 'song', prompt });
    const { jobId } = result as SubmitResult;
    const job = await settled(h, jobId);
    expect(job.state).toBe('succeeded');
    expect(job.submitUncertainAt).not.toBeNull();
    // The spec's webhook body is the polling body alone: its URL names the job, nothing names the task.
    expect(job.upstreamTaskId).toBeNull();
    expect(h.sim.listTasks().filter((task) => task.body.sound === prompt)).toHaveLength(1);
    expect(createsOf(h, prompt)).toHaveLength(1);
    // The service's word on the task's end proves it took (and charged) the job: the account agrees.
    expect(await checkAccount(h.app.deps, 'command')).toMatchObject({ spentSince: 10, drift: 0, balance: before.balance - 10 });
    expect(await ledgerOfJob(h.db.db, jobId)).toEqual([{ kind: 'reserve', amount: -10, key: `job:${jobId}:debit` }]);
    const message = await handle.waitForEdit((m) => JSON.stringify(m.embeds ?? []).includes('Links'));
    expect(JSON.stringify(message.embeds)).toContain(`Job ${jobId}`);
  });

  it('without webhooks: gives up at once, refunds the guild and says why, without a second create', async () => {
    const h = harnesses.polling!;
    const prompt = 'never confirmed [sim:hang-accepted]';
    const { handle, result } = await h.request({ kind: 'song', prompt });
    const { jobId } = result as SubmitResult;
    const job = await settled(h, jobId);
    expect(job.state).toBe('timed_out');
    expect(job.error).toMatchObject({ kind: 'unconfirmed_submission', creditsReturned: 10 });
    expect(createsOf(h, prompt)).toHaveLength(1);
    expect(await ledgerOfJob(h.db.db, jobId)).toEqual([
      { kind: 'reserve', amount: -10, key: `job:${jobId}:debit` },
      { kind: 'refund', amount: 10, key: `job:${jobId}:credit` },
    ]);
    const message = await handle.waitForEdit((m) => JSON.stringify(m.embeds ?? []).includes('could not be made'));
    expect(JSON.stringify(message.embeds)).toContain('10 credits were returned');
    // Nothing more goes upstream for this job: once the queues hold nothing of it, nothing can send it again.
    await expect.poll(() => h.queueEntriesOf(jobId), { timeout: 10_000 }).toEqual({});
    expect(createsOf(h, prompt)).toHaveLength(1);
  });

  it('an error the service answered (500) proves no task was made, so it is retried', async () => {
    const h = harnesses.polling!;
    const prompt = 'provider hiccup [sim:500]';
    const { result } = await h.request({ kind: 'song', prompt });
    const job = await settled(h, (result as SubmitResult).jobId);
    expect(job.state).toBe('succeeded');
    expect(createsOf(h, prompt).map((r) => r.status)).toEqual([500, 200]);
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
