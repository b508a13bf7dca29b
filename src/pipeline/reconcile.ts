/**
 * Postgres is the truth, Redis only carries work: every open (or finished, unposted) job with
 * no live queue entry is enqueued again, at a worker's start and as the `reconcile` maintenance
 * pass. Entry ids derived from job ids make a second pass a no-op.
 */
import type { Queue } from 'bullmq';
import type { RedisClient } from '../queue/connection.js';
import { entryId } from '../queue/queues.js';
import type { PipelineDeps } from './deps.js';
import { listOpenJobs, listUndelivered } from './job-rows.js';

/**
 * Which of `ids` have a live entry in `queue`, one that will still run (waiting, delayed,
 * active or prioritised), asked of Redis in one round trip for the whole page: an entry's
 * hash exists until it completes (entries are removed on completion), and a finished one that
 * was kept sits in the completed or failed set; those are removed, so that the job can be
 * enqueued again under the same id. Why one round trip: docs/decisions/first-answer-path.md
 */
async function liveEntries(redis: RedisClient, queue: Queue, ids: readonly string[]): Promise<Set<string>> {
  const live = new Set<string>();
  if (ids.length === 0) return live;
  const pipeline = redis.pipeline();
  for (const id of ids) {
    pipeline.exists(queue.toKey(id));
    pipeline.zscore(queue.toKey('completed'), id);
    pipeline.zscore(queue.toKey('failed'), id);
  }
  const replies = (await pipeline.exec()) ?? [];
  const failure = replies.find(([error]) => error !== null);
  if (failure) throw failure[0];
  const finished: string[] = [];
  ids.forEach((id, i) => {
    const [exists, completed, failed] = [replies[3 * i]?.[1], replies[3 * i + 1]?.[1], replies[3 * i + 2]?.[1]];
    if (Number(exists) !== 1) return;
    if (completed !== null || failed !== null) finished.push(id);
    else live.add(id);
  });
  for (const id of finished) await queue.remove(id).catch(() => {});
  return live;
}

export interface ReconcileReport {
  readonly submit: number;
  readonly poll: number;
  readonly deliver: number;
}

export async function reconcile(deps: Pick<PipelineDeps, 'db' | 'logger' | 'queues' | 'redis'>): Promise<ReconcileReport> {
  const report = { submit: 0, poll: 0, deliver: 0 };
  const { queues } = deps;
  let afterId: string | undefined;
  for (;;) {
    const page = await listOpenJobs(deps.db, 500, afterId);
    if (page.length === 0) break;
    afterId = page.at(-1)?.id;
    // A task that may exist upstream is found by polling; any other open job is (re)submitted.
    const mayExistUpstream = (job: (typeof page)[number]) => job.state === 'submitted' || (job.state === 'submitting' && job.submitUncertainAt !== null);
    const polled = page.filter(mayExistUpstream);
    const submitted = page.filter((job) => !mayExistUpstream(job));
    const [livePolls, liveSubmits] = await Promise.all([
      liveEntries(deps.redis, queues.poll, polled.map((job) => entryId.poll(job.id))),
      liveEntries(deps.redis, queues.submit, submitted.map((job) => entryId.submit(job.id))),
    ]);
    for (const job of polled) {
      if (livePolls.has(entryId.poll(job.id))) continue;
      await queues.enqueuePoll(job.id, 0);
      report.poll += 1;
    }
    for (const job of submitted) {
      if (liveSubmits.has(entryId.submit(job.id))) continue;
      // A 'submitting' job without a live entry lost its worker mid-call; the submit
      // processor treats it as possibly accepted and never sends it twice.
      await queues.enqueueSubmit(job.id);
      report.submit += 1;
    }
  }
  const undelivered = await listUndelivered(deps.db);
  const liveDeliveries = await liveEntries(deps.redis, queues.deliver, undelivered.map((job) => entryId.deliver(job.id)));
  for (const job of undelivered) {
    if (liveDeliveries.has(entryId.deliver(job.id))) continue;
    await queues.enqueueDeliver(job.id);
    report.deliver += 1;
  }
  if (report.submit + report.poll + report.deliver > 0) deps.logger.info(report, 'reconciled jobs with the queues');
  return report;
}
