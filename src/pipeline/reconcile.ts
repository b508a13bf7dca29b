/**
 * Postgres is the truth, Redis only carries work. Every job that Postgres says is open, or
 * finished but not yet posted, and that has no live queue entry, is enqueued again: a Redis
 * that lost its data (or a process that died) loses no work. Runs at a worker's start and as
 * the `reconcile` maintenance pass (src/queue/maintenance.ts); entry ids derived from job ids
 * make a second pass a no-op.
 */
import type { Queue } from 'bullmq';
import { entryId } from '../queue/queues.js';
import type { PipelineDeps } from './deps.js';
import { listOpenJobs, listUndelivered } from './job-rows.js';

/** A live entry is one that will still run: waiting, delayed, active or prioritised. */
async function hasLiveEntry(queue: Queue, id: string): Promise<boolean> {
  const entry = await queue.getJob(id);
  if (!entry) return false;
  const state = await entry.getState();
  if (state === 'completed' || state === 'failed' || state === 'unknown') {
    await entry.remove().catch(() => {});
    return false;
  }
  return true;
}

export interface ReconcileReport {
  readonly submit: number;
  readonly poll: number;
  readonly deliver: number;
}

export async function reconcile(deps: PipelineDeps): Promise<ReconcileReport> {
  const report = { submit: 0, poll: 0, deliver: 0 };
  const { queues } = deps;
  let afterId: string | undefined;
  for (;;) {
    const page = await listOpenJobs(deps.db, 500, afterId);
    if (page.length === 0) break;
    afterId = page.at(-1)?.id;
    for (const job of page) {
      if (job.state === 'submitted' || (job.state === 'submitting' && job.submitUncertainAt)) {
        if (!(await hasLiveEntry(queues.poll, entryId.poll(job.id)))) {
          await queues.enqueuePoll(job.id, 0);
          report.poll += 1;
        }
      } else if (!(await hasLiveEntry(queues.submit, entryId.submit(job.id)))) {
        // A 'submitting' job without a live entry lost its worker mid-call; the submit
        // processor treats it as possibly accepted and never sends it twice.
        await queues.enqueueSubmit(job.id);
        report.submit += 1;
      }
    }
  }
  for (const job of await listUndelivered(deps.db)) {
    if (!(await hasLiveEntry(queues.deliver, entryId.deliver(job.id)))) {
      await queues.enqueueDeliver(job.id);
      report.deliver += 1;
    }
  }
  if (report.submit + report.poll + report.deliver > 0) deps.logger.info(report, 'reconciled jobs with the queues');
  return report;
}
