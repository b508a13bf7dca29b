/**
 * Credits moved by hand by a moderator or the owner. Each carries the caller's idempotency
 * key (the Discord interaction id), stored as `manual:<key>`: one interaction moves credits
 * at most once, whichever of grant, take or adjust it calls and however often it is retried.
 */
import type { Executor } from '../db/client.js';
import { AUDIT_ACTIONS, writeAudit, type AuditAction, type ChangeSource } from './audit.js';
import type { LedgerKind } from '../db/schema.js';
import { CreditsError, requireInteger, requireText } from './errors.js';
import { localText } from '../i18n/index.js';
import { ledgerKeys } from './keys.js';
import { atomically, currentBalance, moveCredits, type LedgerEntry } from './ledger.js';

export interface ModeratorMovementInput {
  readonly guildId: string;
  readonly amount: number;
  /** The moderator or owner who moves the credits. */
  readonly actorId: string;
  readonly reason?: string | null;
  /** Idempotency key, unique per action: the interaction id, or the dashboard form's. */
  readonly key: string;
  readonly source?: ChangeSource;
}

/** The most credits one grant, take, allowance or limit may name (the commands' and the dashboard's bound). */
export const MAX_MANUAL_AMOUNT = 1_000_000;

export interface ModeratorMovementResult {
  /** The ledger row of this movement (recorded earlier when `replayed`). */
  readonly entry: LedgerEntry;
  /** The guild's balance now. */
  readonly balance: number;
  /** The key was already used: nothing moved this time. */
  readonly replayed: boolean;
}

/** Adds credits (`amount` > 0). */
export async function grant(executor: Executor, input: ModeratorMovementInput): Promise<ModeratorMovementResult> {
  requireInteger(input.amount, 'amount', { min: 1 });
  return moveByHand(executor, input, 'grant', input.amount);
}

/**
 * Removes credits (`amount` > 0). Refuses rather than takes less: a moderator who asks to
 * take 500 from a balance of 200 gets an error saying so, and the ledger records exactly what
 * was asked or nothing.
 *
 * @throws CreditsError `insufficient_credits` (details: balance, requested) when the balance is smaller.
 */
export async function take(executor: Executor, input: ModeratorMovementInput): Promise<ModeratorMovementResult> {
  requireInteger(input.amount, 'amount', { min: 1 });
  return moveByHand(executor, input, 'take', -input.amount);
}

/**
 * Corrects the balance by a signed, non-zero amount. Like `take`, a negative adjustment
 * larger than the balance is refused.
 */
export async function adjust(executor: Executor, input: ModeratorMovementInput): Promise<ModeratorMovementResult> {
  requireInteger(input.amount, 'amount', { nonZero: true });
  return moveByHand(executor, input, 'adjust', input.amount);
}

const MANUAL_AUDIT_ACTIONS: Record<ManualKind, AuditAction> = { grant: AUDIT_ACTIONS.grant, take: AUDIT_ACTIONS.take, adjust: AUDIT_ACTIONS.adjust };
type ManualKind = Extract<LedgerKind, 'grant' | 'take' | 'adjust'>;

async function moveByHand(
  executor: Executor,
  input: ModeratorMovementInput,
  kind: ManualKind,
  amount: number,
): Promise<ModeratorMovementResult> {
  requireText(input.guildId, 'guildId');
  requireText(input.actorId, 'actorId');
  requireText(input.key, 'key');
  if (input.reason != null && input.reason.length > 500) {
    throw new CreditsError('invalid_argument', 'reason must be at most 500 characters', {}, {
      userText: localText('credits.error.reasonTooLong', { max: 500 }),
    });
  }

  const key = ledgerKeys.manual(input.key);
  // The movement and its line in the moderation log together, once: a replay writes neither.
  const outcome = await atomically(executor, async (tx) => {
    const moved = await moveCredits(tx, { guildId: input.guildId, key, kind, amount, actorId: input.actorId, reason: input.reason ?? null });
    if (moved.status === 'moved') {
      await writeAudit(tx, {
        guildId: input.guildId,
        actorId: input.actorId,
        action: MANUAL_AUDIT_ACTIONS[kind],
        details: { amount, reason: input.reason ?? null, ledgerKey: key },
        source: input.source,
      });
    }
    return moved;
  });
  switch (outcome.status) {
    case 'moved':
      return { entry: outcome.entry, balance: outcome.entry.balanceAfter, replayed: false };
    case 'replayed': {
      const { entry } = outcome;
      if (entry.guildId !== input.guildId || entry.kind !== kind || entry.amount !== amount) {
        throw new CreditsError('key_conflict', 'idempotency key already used for a different movement', {
          key: input.key,
          recordedKind: entry.kind,
        });
      }
      return { entry, balance: (await currentBalance(executor, input.guildId)) ?? 0, replayed: true };
    }
    case 'refused':
      if (outcome.reason === 'unknown_guild') {
        throw new CreditsError('unknown_guild', 'no credit account for guild', { guildId: input.guildId });
      }
      throw new CreditsError(
        'insufficient_credits',
        'balance too small for the requested movement',
        { guildId: input.guildId, balance: outcome.balance, requested: -amount },
        { userText: localText('credits.error.cannotTake', { amount: -amount, balance: outcome.balance }) },
      );
  }
}
