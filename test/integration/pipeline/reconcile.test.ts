/**
 * The reconciler asks Redis about a whole page of jobs at once: a job whose entry is waiting,
 * delayed or active is left alone, one whose entry is gone is enqueued again, and a second
 * pass finds nothing to do.
 */
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { reconcile } from '../../../src/pipeline/reconcile.js';
import type { SubmitResult } from '../../../src/pipeline/requests.js';
import { entryId } from '../../../src/queue/queues.js';
import { found } from '../../support/found.js';
import { jobRow } from '../../support/ledger.js';
import { startHarness, type Harness } from '../../support/pipeline-harness.js';

let h: Harness;

beforeAll(async () => {
  // One song at the service at a time, for a minute: the first job waits for its poll, the
  // others wait in the submit queue (delayed by the cap), so every job has a live entry.
  h = await startHarness({ webhooks: false, startingCredits: 500, sim: { taskMs: 60_000 }, settings: { upstreamMaxInFlight: 1 } });
});
afterAll(async () => h?.close());

describe('the reconciler', () => {
  it('enqueues again exactly the jobs whose entries are gone, and nothing on a second pass', async () => {
    const jobIds: string[] = [];
    for (let i = 0; i < 3; i += 1) {
      const { result } = await h.request({ kind: 'song', prompt: `reconciled ${i}` });
      jobIds.push((result as SubmitResult).jobId);
    }
    const [submitted, waiting] = await vi.waitFor(async () => {
      const rows = await Promise.all(jobIds.map((id) => jobRow(h.db.db, id)));
      const first = rows.find((row) => row?.state === 'submitted');
      const queued = rows.find((row) => row?.state === 'queued');
      return found(first && queued ? [first.id, queued.id] : undefined);
    }, 15_000);
    const { queues } = h.app.deps;
    await vi.waitFor(async () => found(((await queues.poll.getJob(entryId.poll(submitted))) ? true : undefined)), 15_000);

    // Every job has its entry: nothing to do.
    expect(await reconcile(h.app.deps)).toEqual({ submit: 0, poll: 0, deliver: 0 });

    // A waiting job and a submitted one lose their entries, as when Redis loses keys.
    // An entry a worker holds at that moment cannot be removed: again until it is (the waiting
    // job's entry goes active every capWaitMs to find the cap still reached).
    await vi.waitFor(async () => found(((await queues.submit.remove(entryId.submit(waiting))) === 1 ? true : undefined)), 15_000);
    await vi.waitFor(async () => found(((await queues.poll.remove(entryId.poll(submitted))) === 1 ? true : undefined)), 15_000);
    expect(await queues.submit.getJob(entryId.submit(waiting))).toBeUndefined();

    expect(await reconcile(h.app.deps)).toEqual({ submit: 1, poll: 1, deliver: 0 });
    expect(await queues.submit.getJob(entryId.submit(waiting))).toBeDefined();
    expect(await queues.poll.getJob(entryId.poll(submitted))).toBeDefined();
    expect(await reconcile(h.app.deps)).toEqual({ submit: 0, poll: 0, deliver: 0 });
  }, 60_000);
});
