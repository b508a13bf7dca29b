import { and, eq, gte, isNotNull, isNull, lt, or, sql } from 'drizzle-orm';
import type { Executor } from '../db/client.js';
import { guilds } from '../db/schema.js';
import { AUDIT_ACTIONS, lockGuild, writeAudit, type ChangeSource } from './audit.js';
import { CreditsError, requireInteger, requireText } from './errors.js';
import { allowanceInForce } from './allowance.js';
import { atomically } from './ledger.js';

export interface LowBalanceAlert {
  readonly channelId: string;
  readonly balance: number;
  readonly below: number;
  /** The allowance in force (0: none; see allowanceInForce), so the alert can say whether it will top the balance up. */
  readonly allowance: number;
  /** The guild has a server plan (a live subscription's allowance). */
  readonly subscribed: boolean;
}

/**
 * The low-balance alert to post, or null. It is handed out once: the conditional update that
 * sets `alertSentAt` lets only one caller win, however many workers ask at the same moment.
 * It is armed again once the balance is back at or above the threshold (any movement that
 * lifts it there clears `alertSentAt`, and so does this call).
 */
export async function takeLowBalanceAlert(executor: Executor, guildId: string): Promise<LowBalanceAlert | null> {
  const [taken] = await executor
    .update(guilds)
    .set({ alertSentAt: sql`now()` })
    .where(
      and(
        eq(guilds.id, guildId),
        isNotNull(guilds.alertChannelId),
        isNotNull(guilds.alertBelow),
        lt(guilds.balance, guilds.alertBelow),
        isNull(guilds.alertSentAt),
      ),
    )
    .returning({ channelId: guilds.alertChannelId, balance: guilds.balance, below: guilds.alertBelow, monthlyAllowance: guilds.monthlyAllowance, subscriptionAllowance: guilds.subscriptionAllowance });
  if (taken && taken.channelId !== null && taken.below !== null) {
    return { channelId: taken.channelId, balance: taken.balance, below: taken.below, allowance: allowanceInForce(taken), subscribed: taken.subscriptionAllowance > 0 };
  }
  await executor
    .update(guilds)
    .set({ alertSentAt: null })
    .where(
      and(
        eq(guilds.id, guildId),
        isNotNull(guilds.alertSentAt),
        or(isNull(guilds.alertBelow), gte(guilds.balance, guilds.alertBelow)),
      ),
    );
  return null;
}

export interface SetLowBalanceAlertInput {
  readonly guildId: string;
  /** Where to post; null (with `below` null) turns the alert off. */
  readonly channelId: string | null;
  /** Alert when the balance is strictly below this. */
  readonly below: number | null;
  readonly actorId: string;
  readonly source?: ChangeSource;
}

/** Sets or turns off the low-balance alert. A new setting re-arms it. */
export async function setLowBalanceAlert(executor: Executor, input: SetLowBalanceAlertInput): Promise<void> {
  requireText(input.actorId, 'actorId');
  if ((input.channelId === null) !== (input.below === null)) {
    throw new CreditsError('invalid_argument', 'channelId and below are set or cleared together');
  }
  if (input.channelId !== null) requireText(input.channelId, 'channelId');
  if (input.below !== null) requireInteger(input.below, 'below', { min: 1 });
  await atomically(executor, async (tx) => {
    const guild = await lockGuild(tx, input.guildId);
    await tx
      .update(guilds)
      .set({ alertChannelId: input.channelId, alertBelow: input.below, alertSentAt: null, updatedAt: sql`now()` })
      .where(eq(guilds.id, input.guildId));
    await writeAudit(tx, {
      guildId: input.guildId,
      actorId: input.actorId,
      action: AUDIT_ACTIONS.lowBalanceAlert,
      details: {
        channelId: input.channelId,
        below: input.below,
        previous: { channelId: guild.alertChannelId, below: guild.alertBelow },
      },
      source: input.source,
    });
  });
}
