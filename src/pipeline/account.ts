/**
 * The operator's view of the music service account: each check compares get-credits with the
 * ledger's upstream spend since the previous check (`drift = balance − expected`), records it,
 * and tells the owners once, inside the check's transaction, when the balance falls below
 * ACCOUNT_LOW_CREDITS. Why: docs/decisions/account-checks.md
 */
import { desc, sql } from 'drizzle-orm';
import { upstreamSpentTotal } from '../credits/index.js';
import type { Executor } from '../db/client.js';
import { accountChecks } from '../db/schema.js';
import { describeDiscordError } from '../discord-rest/discord-delivery.js';
import { english } from '../i18n/index.js';
import type { Metrics } from '../metrics.js';
import type { PipelineDeps } from './deps.js';

export type AccountCheckRow = typeof accountChecks.$inferSelect;

export interface AccountCheck extends AccountCheckRow {
  /** The check this one was compared with; null for the baseline. */
  readonly previous: { readonly checkedAt: Date; readonly balance: number } | null;
  /** The ledger's upstream spend since the previous check; null for the baseline. */
  readonly spentSince: number | null;
  /** Submissions since the previous check that the service may have charged unknown to the ledger. */
  readonly uncertain: UncertainSubmissions;
}

/**
 * Creates the service may have taken without naming a task (refunded, never sent again): each
 * can explain a negative drift of up to its cost. A job whose task turned up later (a task id,
 * or a result by webhook) is counted in the upstream spend instead, so it is not listed.
 */
export interface UncertainSubmissions {
  readonly count: number;
  /** The most the service can have charged for them. */
  readonly credits: number;
  /** The oldest few, for naming them. */
  readonly jobs: ReadonlyArray<{ readonly id: string; readonly guildId: string; readonly kind: string; readonly cost: number; readonly at: Date }>;
}

/** How many uncertain submissions a check names; the count and credits cover them all. */
const UNCERTAIN_NAMED = 10;

export type AccountCheckSource = AccountCheckRow['source'];

/** Held for the length of a check's transaction; any constant that no other lock uses. */
const CHECK_LOCK = sql`select pg_advisory_xact_lock(hashtextextended('music-account-checks', 0))`;

/** The balance at which a sent alert is armed again: the threshold and a tenth of it. */
export function rearmAt(threshold: number): number {
  return threshold + Math.ceil(threshold / 10);
}

/** Reads get-credits and the ledger, records the check, and sends the low-account alert if due. */
export async function checkAccount(
  deps: Pick<PipelineDeps, 'db' | 'musicApi' | 'discord' | 'logger' | 'settings'>,
  source: AccountCheckSource,
): Promise<AccountCheck> {
  const { lowCredits: threshold } = deps.settings.account;
  const check = await deps.db.transaction(async (tx) => {
    await tx.execute(CHECK_LOCK);
    const previous = await latestCheck(tx);
    const account = await deps.musicApi.getCredits();
    // Read after the balance: a charge the service made before get-credits answered is in the
    // ledger by now, unless its submission's answer is still on its way (see the drift note).
    const upstreamSpent = await upstreamSpentTotal(tx);
    const balance = account.credits + account.extraCredits;
    const uncertain = previous ? await uncertainSince(tx, previous.checkedAt) : { count: 0, credits: 0, jobs: [] };
    const spentSince = previous ? upstreamSpent - previous.upstreamSpentTotal : null;
    const expected = previous && spentSince !== null ? exact(previous.balance - spentSince) : null;
    const drift = expected === null ? null : exact(balance - expected);

    const wasArmed = previous?.lowAlertArmed ?? true;
    let armed = wasArmed;
    let sent = false;
    if (threshold <= 0 || balance >= rearmAt(threshold)) armed = true;
    else if (balance < threshold && wasArmed) {
      sent = await sendLowAccountAlert(deps, balance, threshold);
      armed = !sent;
    }

    const [row] = await tx
      .insert(accountChecks)
      .values({
        source,
        credits: account.credits,
        extraCredits: account.extraCredits,
        balance,
        upstreamSpentTotal: upstreamSpent,
        expected,
        drift,
        lowThreshold: threshold,
        lowAlertArmed: armed,
        lowAlertSent: sent,
      })
      .returning();
    return {
      ...row!,
      previous: previous ? { checkedAt: previous.checkedAt, balance: previous.balance } : null,
      spentSince,
      uncertain,
    };
  });
  deps.logger.info(
    { source, balance: check.balance, expected: check.expected, drift: check.drift, spentSince: check.spentSince, alertSent: check.lowAlertSent },
    'music account checked',
  );
  const { count, credits, jobs: named } = check.uncertain;
  if ((check.drift !== null && check.drift !== 0) || count > 0) {
    deps.logger.warn({ source, drift: check.drift, uncertain: { count, credits, jobIds: named.map((job) => job.id) } }, 'music account drift');
  }
  return check;
}

/** Unconfirmed submissions since `since` whose task never turned up. */
export async function uncertainSince(executor: Executor, since: Date): Promise<UncertainSubmissions> {
  const { rows } = await executor.execute<{ id: string; guild_id: string; kind: string; cost: number; at: Date | string; total: string; credits: string }>(sql`
    select id, guild_id, kind, cost, submit_uncertain_at as at,
           count(*) over () as total, sum(cost) over () as credits
    from jobs
    where submit_uncertain_at > ${since.toISOString()} and upstream_task_id is null and result is null
    order by submit_uncertain_at
    limit ${UNCERTAIN_NAMED}`);
  return {
    count: Number(rows[0]?.total ?? 0),
    credits: Number(rows[0]?.credits ?? 0),
    jobs: rows.map((row) => ({ id: row.id, guildId: row.guild_id, kind: row.kind, cost: Number(row.cost), at: new Date(row.at) })),
  };
}

/** The newest check, or undefined before the first. */
export async function latestCheck(executor: Executor): Promise<AccountCheckRow | undefined> {
  const [row] = await executor.select().from(accountChecks).orderBy(desc(accountChecks.id)).limit(1);
  return row;
}

/**
 * The account gauges, from the newest check in Postgres. Unknown values (before the first
 * check; the baseline's drift) read NaN, so alert rules stay quiet rather than see an empty
 * account. Why: docs/decisions/account-checks.md
 */
export async function refreshAccountGauges(executor: Executor, metrics: Metrics): Promise<void> {
  const row = await latestCheck(executor);
  metrics.accountCredits.set(row?.balance ?? Number.NaN);
  metrics.accountDrift.set(row?.drift ?? Number.NaN);
  metrics.accountLowThreshold.set(row?.lowThreshold ?? Number.NaN);
  metrics.accountLastCheck.set(row ? row.checkedAt.getTime() / 1000 : Number.NaN);
}

function sendLowAccountAlert(deps: Pick<PipelineDeps, 'discord' | 'logger' | 'settings'>, balance: number, threshold: number): Promise<boolean> {
  return tellOwners(deps, english('alert.accountLow', { balance, threshold }), { alert: 'music account low', balance, threshold });
}

/** Whether the owners can be told anything: an alert channel, or at least one owner to DM. */
export function ownersReachable(settings: Pick<PipelineDeps['settings'], 'account'>): boolean {
  return settings.account.alertChannelId !== undefined || settings.account.ownerIds.length > 0;
}

/**
 * One message about the music service account to ACCOUNT_ALERT_CHANNEL_ID, or a DM to each of
 * BOT_OWNER_IDS. True when it reached someone: an owner who does not take DMs must not make the
 * others get it again. `context` names the alert in the log lines.
 */
export async function tellOwners(
  deps: Pick<PipelineDeps, 'discord' | 'logger' | 'settings'>,
  content: string,
  context: { readonly alert: string } & Record<string, unknown>,
): Promise<boolean> {
  const { alertChannelId, ownerIds } = deps.settings.account;
  // Nobody is mentioned, so nobody can be pinged by it.
  const message = { content, allowed_mentions: { parse: [] } };
  if (alertChannelId !== undefined) {
    try {
      await deps.discord.postChannelMessage(alertChannelId, message);
      deps.logger.info({ ...context, channelId: alertChannelId }, 'account alert posted');
      return true;
    } catch (err) {
      deps.logger.error({ ...context, channelId: alertChannelId, err: describeDiscordError(err) }, 'account alert not posted');
      return false;
    }
  }
  let reached = 0;
  for (const userId of ownerIds) {
    try {
      await deps.discord.sendDirectMessage(userId, message);
      reached += 1;
    } catch (err) {
      deps.logger.warn({ ...context, userId, err: describeDiscordError(err) }, 'account alert: owner not reached');
    }
  }
  if (reached === 0) deps.logger.error({ ...context, owners: ownerIds.length }, 'account alert reached nobody');
  else deps.logger.info({ ...context, reached }, 'account alert sent');
  return reached > 0;
}

/** Credits may come with decimals from the service: keep sums free of binary fractions' noise. */
function exact(value: number): number {
  return Math.round(value * 1e6) / 1e6;
}
