/**
 * What the ledger says the music service account spent: the reading that the account's
 * reconciliation (src/pipeline/account.ts) compares with get-credits.
 */
import { sql, type SQL } from 'drizzle-orm';
import type { Executor } from '../db/client.js';

/**
 * The credits the ledger charged for jobs the service took (a task id, or a result by webhook),
 * net of refunds of tasks the service failed, since the beginning. Jobs the service never took
 * do not count; a job the bot refunded itself (deadline, or a success without its result,
 * `empty_result`) still does. Cumulative, not "since a
 * time", so a late-committing movement is counted by the next reading.
 * What counts and why: docs/decisions/account-checks.md
 */
export async function upstreamSpentTotal(executor: Executor): Promise<number> {
  return upstreamSpent(executor, sql`true`);
}

/**
 * The same reading for the ledger movements written in `[since, until)`: what the service
 * charged in a month, as `/credits-admin account` sets it beside the credits sold.
 */
export async function upstreamSpentBetween(executor: Executor, since: Date, until: Date): Promise<number> {
  return upstreamSpent(executor, sql`l.created_at >= ${since.toISOString()} and l.created_at < ${until.toISOString()}`);
}

async function upstreamSpent(executor: Executor, within: SQL): Promise<number> {
  const { rows } = await executor.execute<{ total: string | number }>(sql`
    select coalesce(sum(-l.amount), 0)::bigint as total
    from credit_ledger l
    join jobs j on j.id = l.job_id
    where (j.upstream_task_id is not null or j.result is not null)
      and (l.kind = 'reserve' or (l.kind = 'refund' and j.state = 'failed' and (j.error->>'kind') is distinct from 'empty_result'))
      and ${within}`);
  return Number(rows[0]?.total ?? 0);
}
