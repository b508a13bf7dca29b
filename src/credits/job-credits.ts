/** A job's charge and its return: one debit, at most one credit back, whatever retries. */
import type { SQL } from 'drizzle-orm';
import type { Executor } from '../db/client.js';
import { CreditsError, requireInteger, requireText } from './errors.js';
import { ledgerKeys } from './keys.js';
import { currentBalance, findEntryByKey, moveCredits, type RefusalReason } from './ledger.js';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

export interface ReserveInput {
  readonly guildId: string;
  /** The job's id (a UUID); the charge's key is `job:<jobId>:debit`. */
  readonly jobId: string;
  /** The member who asked for the job: their usage. */
  readonly userId: string;
  readonly amount: number;
  /** Written by the same statement as the charge, only if it is made (the job row): see `Movement.alongside`. */
  readonly alongside?: SQL;
}

export type ReserveResult =
  /**
   * `replayed`: the job was already charged (a retried step); nothing moved this time.
   * `alongside`: the row the write given with the input returned (only when the charge moved).
   */
  | { readonly ok: true; readonly balance: number; readonly replayed: boolean; readonly alongside?: Record<string, unknown> }
  | { readonly ok: false; readonly reason: RefusalReason; readonly balance: number };

/**
 * Charges a job's cost to its guild, once. One conditional UPDATE takes the credits only if
 * the balance covers them and the guild is not frozen, so parallel requests can never
 * overdraw a guild. A retried step with the same job moves nothing and answers ok with the
 * current balance.
 *
 * @throws CreditsError `key_conflict` when the job was charged before in another guild or for another amount.
 */
export async function reserveForJob(executor: Executor, input: ReserveInput): Promise<ReserveResult> {
  requireText(input.guildId, 'guildId');
  requireText(input.userId, 'userId');
  requireJobId(input.jobId);
  requireInteger(input.amount, 'amount', { min: 0 });

  const outcome = await moveCredits(executor, {
    guildId: input.guildId,
    key: ledgerKeys.jobDebit(input.jobId),
    kind: 'reserve',
    amount: -input.amount,
    jobId: input.jobId,
    userId: input.userId,
    refuseWhenFrozen: true,
    ...(input.alongside && { alongside: input.alongside }),
  });
  switch (outcome.status) {
    case 'moved':
      return { ok: true, balance: outcome.entry.balanceAfter, replayed: false, ...(outcome.alongside && { alongside: outcome.alongside }) };
    case 'refused':
      return { ok: false, reason: outcome.reason, balance: outcome.balance };
    case 'replayed': {
      const { entry } = outcome;
      if (entry.guildId !== input.guildId || entry.amount !== -input.amount) {
        throw new CreditsError('key_conflict', 'job was already charged with a different guild or amount', {
          jobId: input.jobId,
          chargedGuildId: entry.guildId,
          chargedAmount: -entry.amount,
        });
      }
      return { ok: true, balance: (await currentBalance(executor, input.guildId)) ?? 0, replayed: true };
    }
  }
}

export interface ReturnInput {
  readonly jobId: string;
  /**
   * `release`: the job failed permanently at submission, so the service charged nothing.
   * `refund`: the task failed upstream or did not finish within its deadline.
   */
  readonly kind: 'release' | 'refund';
  readonly reason: string;
}

export interface ReturnResult {
  /** Credits given back by this call: 0 when the job was never charged or already credited back. */
  readonly returned: number;
  /** The guild's balance afterwards; null when the job was never charged (its guild is unknown here). */
  readonly balance: number | null;
}

/** Whether the job has been charged (a reservation is in the ledger under its key). */
export async function isJobCharged(executor: Executor, jobId: string): Promise<boolean> {
  requireJobId(jobId);
  return (await findEntryByKey(executor, ledgerKeys.jobDebit(jobId))) !== undefined;
}

/**
 * Gives back what a job's charge took, at most once: release and refund share the key
 * `job:<jobId>:credit`, so whichever path comes second (a retry, a late webhook, the deadline
 * sweeper) moves nothing. Works on a frozen guild: freezing stops spending, not refunds.
 */
export async function returnJobCredits(executor: Executor, input: ReturnInput): Promise<ReturnResult> {
  requireJobId(input.jobId);
  const debit = await findEntryByKey(executor, ledgerKeys.jobDebit(input.jobId));
  if (!debit) return { returned: 0, balance: null };

  const outcome = await moveCredits(executor, {
    guildId: debit.guildId,
    key: ledgerKeys.jobCredit(input.jobId),
    kind: input.kind,
    amount: -debit.amount,
    jobId: input.jobId,
    userId: debit.userId,
    reason: input.reason,
  });
  if (outcome.status === 'moved') return { returned: outcome.entry.amount, balance: outcome.entry.balanceAfter };
  if (outcome.status === 'replayed') return { returned: 0, balance: await currentBalance(executor, debit.guildId) };
  // Adding credits cannot be refused unless the guild row vanished under a recorded charge.
  throw new CreditsError('unknown_guild', 'the guild of a charged job has no credit account', {
    jobId: input.jobId,
    guildId: debit.guildId,
  });
}

function requireJobId(jobId: string): void {
  if (!UUID.test(jobId)) throw new CreditsError('invalid_argument', 'jobId must be a UUID');
}
