/** A job's charge and its return: one debit, at most one credit back, whatever retries. */
import { is } from 'drizzle-orm';
import { PgTransaction } from 'drizzle-orm/pg-core';
import type { Executor } from '../db/client.js';
import type { RowFor } from '../db/insert-from.js';
import { CreditsError, requireInteger, requireText } from './errors.js';
import { ledgerKeys } from './keys.js';
import { currentBalance, findEntryByKey, moveCredits, spendTogether, type MovedSpends, type RefusalReason, type Spend } from './ledger.js';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

export interface ReserveInput {
  readonly guildId: string;
  /** The job's id (a UUID); the charge's key is `job:<jobId>:debit`. */
  readonly jobId: string;
  /** The member who asked for the job: their usage. */
  readonly userId: string;
  readonly amount: number;
  /** Written by the same statement as the charge, only if it is made (the job row): see `Movement.alongside`. */
  readonly alongside?: RowFor;
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
 * Given the database (not a caller's transaction), the charges on one guild go in groups: one
 * goes at once, and those that arrive while its statement holds the guild's row wait for it,
 * then go together in one statement (see {@link spendTogether}).
 * Why: docs/decisions/first-answer-path.md
 *
 * @throws CreditsError `key_conflict` when the job was charged before in another guild or for another amount.
 */
export async function reserveForJob(executor: Executor, input: ReserveInput): Promise<ReserveResult> {
  requireText(input.guildId, 'guildId');
  requireText(input.userId, 'userId');
  requireJobId(input.jobId);
  requireInteger(input.amount, 'amount', { min: 0 });
  if (is(executor, PgTransaction)) return reserveAlone(executor, input);

  let guildLanes = lanes.get(executor);
  if (!guildLanes) {
    guildLanes = new Map();
    lanes.set(executor, guildLanes);
  }
  const busy = guildLanes.get(input.guildId);
  if (busy) return new Promise((resolve, reject) => busy.push({ input, resolve, reject }));
  const lane: Waiting[] = [];
  guildLanes.set(input.guildId, lane);
  try {
    return await reserveAlone(executor, input);
  } finally {
    void drain(executor, guildLanes, input.guildId, lane);
  }
}

/** A charge waiting for its guild's statement in flight; see reserveForJob. */
interface Waiting {
  readonly input: ReserveInput;
  resolve(result: ReserveResult): void;
  reject(error: unknown): void;
}

/** Per database, per guild: the charges waiting while one of the guild's statements runs. */
const lanes = new WeakMap<Executor, Map<string, Waiting[]>>();
/** Charges per statement: one statement text per group size, each prepared once per connection. */
const MOST_TOGETHER = 32;

async function drain(db: Executor, guildLanes: Map<string, Waiting[]>, guildId: string, lane: Waiting[]): Promise<void> {
  while (lane.length > 0) await reserveGroup(db, guildId, lane.splice(0, MOST_TOGETHER));
  guildLanes.delete(guildId);
}

/** Settles every charge of the group; never throws (a charge's own failure goes to its caller). */
async function reserveGroup(db: Executor, guildId: string, group: readonly Waiting[]): Promise<void> {
  // Should the group's statement fail, each charge is made alone and meets its own error.
  const moved: MovedSpends =
    group.length > 1 ? await spendTogether(db, guildId, group.map((waiting) => spendOf(waiting.input))).catch(() => new Map()) : new Map();
  await Promise.all(
    group.map(async (waiting) => {
      const done = moved.get(ledgerKeys.jobDebit(waiting.input.jobId));
      try {
        // Not in the group's statement (refused, replayed, or the group failed): alone, which says why.
        waiting.resolve(
          done
            ? { ok: true, balance: done.entry.balanceAfter, replayed: false, ...(done.alongside && { alongside: done.alongside }) }
            : await reserveAlone(db, waiting.input),
        );
      } catch (error) {
        waiting.reject(error);
      }
    }),
  );
}

function spendOf(input: ReserveInput): Spend {
  return {
    key: ledgerKeys.jobDebit(input.jobId),
    kind: 'reserve',
    amount: -input.amount,
    jobId: input.jobId,
    userId: input.userId,
    ...(input.alongside && { alongside: input.alongside }),
  };
}

async function reserveAlone(executor: Executor, input: ReserveInput): Promise<ReserveResult> {
  const outcome = await moveCredits(executor, {
    guildId: input.guildId,
    refuseWhenFrozen: true,
    ...spendOf(input),
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
