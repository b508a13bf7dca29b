/**
 * What the ledger says the music service account spent: the reading that the account's
 * reconciliation (src/pipeline/account.ts) compares with get-credits.
 */
import { sql } from 'drizzle-orm';
import type { Executor } from '../db/client.js';

/**
 * The credits the ledger charged for jobs the service took, net of those it gave back, since
 * the beginning. A job counts once the service has answered with its task id (the service
 * charges at submission), or has told of the task's end (a webhook for a submission that timed
 * out: the spec's body names no task, so the job has a result but no task id); a job the
 * service failed counts its charge and its refund, which cancel out, as the service refunds a
 * task that fails upstream.
 *
 * Not counted: jobs still queued or refused at submission (the service charged nothing; their
 * reservations are the guild's, not the account's), and a submission that timed out and was
 * never heard of again. A job refunded to its guild by the bot (deadline) still counts: the service keeps
 * what it charged unless the task fails there.
 *
 * Cumulative, not "since a time": a movement recorded by a transaction that commits after the
 * previous reading is counted by the next one, whatever its timestamp. One aggregate over the
 * charged jobs' ledger rows (by the ledger's job index).
 */
export async function upstreamSpentTotal(executor: Executor): Promise<number> {
  const { rows } = await executor.execute<{ total: string | number }>(sql`
    select coalesce(sum(-l.amount), 0)::bigint as total
    from credit_ledger l
    join jobs j on j.id = l.job_id
    where (j.upstream_task_id is not null or j.result is not null)
      and (l.kind = 'reserve' or (l.kind = 'refund' and j.state = 'failed'))`);
  return Number(rows[0]?.total ?? 0);
}
