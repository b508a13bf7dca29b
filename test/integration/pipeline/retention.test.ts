/**
 * The retention pass clears what can no longer be used: interaction tokens after Discord's 15
 * minutes, finished jobs' webhook secrets once the poll deadline has passed since they ended,
 * and webhook records after a week. A job still open keeps its secret; results stay.
 */
import { createHmac } from 'node:crypto';
import { eq } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { webhookEvents } from '../../../src/db/schema.js';
import { applyRetention } from '../../../src/pipeline/retention.js';
import type { SubmitResult } from '../../../src/pipeline/requests.js';
import { found } from '../../support/found.js';
import { startHarness, type Harness } from '../../support/pipeline-harness.js';
import { jobRow } from '../../support/ledger.js';

let h: Harness;
beforeAll(async () => {
  h = await startHarness({ webhooks: true, startingCredits: 500 });
});
afterAll(async () => h?.close());

const MINUTE = 60_000;
const at = (offsetMs: number) => applyRetention({ ...h.app.deps, now: () => new Date(Date.now() + offsetMs) });

describe('retention', () => {
  it('clears tokens, then secrets, then webhook records, each once it cannot be used', async () => {
    const { result } = await h.request({ kind: 'song', prompt: 'kept only as long as useful' });
    const { jobId } = result as SubmitResult;
    const done = await vi.waitFor(async () => {
      const row = await jobRow(h.db.db, jobId);
      return found(row?.deliveryState === 'delivered' ? row : undefined);
    }, 20_000);
    // Open while the finished one is cleared: its task takes a minute.
    const open = ((await h.request({ kind: 'song', prompt: 'still running [sim:task-ms=60000]' })).result as SubmitResult).jobId;
    await vi.waitFor(async () => found((await jobRow(h.db.db, open))?.state === 'submitted', 'the open job submitted'), 10_000);
    expect(done).toMatchObject({ interactionToken: expect.any(String), webhookSecret: expect.any(String) });
    expect(await h.db.db.select().from(webhookEvents).where(eq(webhookEvents.jobId, jobId))).toHaveLength(1);

    await at(0);
    expect(await jobRow(h.db.db, jobId)).toMatchObject({ interactionToken: done.interactionToken, webhookSecret: done.webhookSecret });

    await at(16 * MINUTE);
    expect(await jobRow(h.db.db, jobId)).toMatchObject({ interactionToken: null, webhookSecret: done.webhookSecret });

    await at(31 * MINUTE);
    expect(await jobRow(h.db.db, jobId)).toMatchObject({ interactionToken: null, webhookSecret: null, state: 'succeeded', result: done.result });
    expect((await jobRow(h.db.db, open))?.webhookSecret).toEqual(expect.any(String));
    expect(await h.db.db.select().from(webhookEvents).where(eq(webhookEvents.jobId, jobId))).toHaveLength(1);

    await at(8 * 24 * 60 * MINUTE);
    expect(await h.db.db.select().from(webhookEvents).where(eq(webhookEvents.jobId, jobId))).toEqual([]);
    expect((await jobRow(h.db.db, open))?.webhookSecret).toEqual(expect.any(String));

    // A webhook for a job past retention is refused like one for an unknown job, and changes nothing.
    const body = JSON.stringify({ code: 200, message: 'success', status: 'FAILED', data: [] });
    const answer = await fetch(`${h.publicUrl}/webhooks/music/${jobId}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-webhook-signature': createHmac('sha256', done.webhookSecret!).update(body).digest('hex') },
      body,
    });
    expect(answer.status).toBe(404);
    expect((await jobRow(h.db.db, jobId))?.state).toBe('succeeded');
  });
});
