/**
 * The entry point the command handlers call, in two steps: accept (check, reserve, record)
 * returns what the caller answers with; enqueue hands the job to the workers once the caller
 * has answered. No discord.js types here; the pipeline runs without a gateway.
 */
import { createHash, randomBytes, randomUUID } from 'node:crypto';
import {
  checkSpendingLimits,
  allowanceInForce,
  getGuildCredits,
  isJobCharged,
  nextAllowanceTopUp,
  reserveForJob,
  takeLowBalanceAlert,
  type LowBalanceAlert,
} from '../credits/index.js';
import { describeDiscordError } from '../discord-rest/discord-delivery.js';
import type { Executor } from '../db/client.js';
import { auditLog, type JobKind } from '../db/schema.js';
import type { CostedOperation } from '../music-api/index.js';
import type { Catalog } from '../premium/catalog.js';
import type { PipelineDeps } from './deps.js';
import { getJob, newJobRow } from './job-rows.js';
import { kindsSharingTaskType } from './upstream.js';
import { isRemixSource, LIBRARY_KINDS } from './library.js';
import { REFUSAL_TEXTS } from './refusal-texts.js';
import { translator, type AppLocale, type Translator } from '../i18n/index.js';
import { RequestRefusedError, RequestTakenError, type GenerationRequest, type GuildForRequest, type LoadGuildForRequest, type SubmitInput, type SubmitResult } from './requests.js';

const OPERATION_BY_KIND: Record<JobKind, CostedOperation> = {
  song: 'song',
  lyrics: 'lyrics',
  video: 'video',
  upload: 'upload',
  download: 'download',
  voice: 'voice',
  persona_song: 'personaSong',
};

/** How long an accepted request waits for Redis to take its job before the member is answered anyway. */
export const ENQUEUE_WAIT_MS = 1_000;

/**
 * Fewer than this many waiting ahead, and a free slot at the service: the workers take the job
 * at once (a worker process takes 50 at a time), and a Cancel button would only flash by.
 */
export const TAKEN_AT_ONCE_AHEAD = 50;

/**
 * Whether a job waits for its turn long enough for Cancel to be of use: the in-flight cap holds
 * it (`inFlight` at the service and `ahead` in the queue fill the `cap`), or at least
 * {@link TAKEN_AT_ONCE_AHEAD} wait ahead of it. Only such a job's acknowledgement offers Cancel.
 */
export function waitsForItsTurn(counts: { readonly ahead: number; readonly inFlight: number; readonly cap: number }): boolean {
  return counts.inFlight + counts.ahead >= counts.cap || counts.ahead >= TAKEN_AT_ONCE_AHEAD;
}

/**
 * The member and the words of a request, checked as the server's rules say: a block, the blocked
 * and explicit words, AutoMod, then the moderation service. Whatever a member writes that others
 * will read (a request, a new title) goes through here.
 *
 * @throws RequestRefusedError, the refusal recorded in the audit log.
 */
export async function checkRequestText(
  deps: Pick<PipelineDeps, 'db' | 'logger' | 'automod' | 'metrics' | 'moderation'>,
  guild: GuildForRequest,
  input: Pick<SubmitInput, 'requester' | 'request'>,
): Promise<void> {
  const { request } = input;
  if (guild.memberBlock) throw new RequestRefusedError('blocked_member', REFUSAL_TEXTS.blockedMember(guild.memberBlock.until));
  const blocked = blockedTextIn(guild.blocklist, request);
  if (blocked) {
    await recordRefusal(deps, { ...input.requester, kind: request.kind }, 'request_refused_blocked_words', blocked);
    throw new RequestRefusedError('blocked_words', REFUSAL_TEXTS.blockedWords());
  }
  const explicit = guild.explicitInAgeRestrictedOnly ? blockedTextIn(guild.explicitList, request) : undefined;
  if (explicit && !(await (input.requester.ageRestricted?.() ?? false))) {
    await recordRefusal(deps, { ...input.requester, kind: request.kind }, 'request_refused_explicit_words', explicit);
    throw new RequestRefusedError('explicit_words', REFUSAL_TEXTS.explicitWords());
  }
  const automod = await automodHitIn(deps, guild, input);
  if (automod) {
    await recordRefusal(deps, { ...input.requester, kind: request.kind }, 'request_refused_automod', automod);
    throw new RequestRefusedError('automod', REFUSAL_TEXTS.automod());
  }
  // Last of the checks, the only one that asks a service on every request: after the others, before the reservation.
  await checkWithModerationService(deps, { ...input.requester, kind: request.kind }, textsOf(request));
}

export function costOfKind(deps: Pick<PipelineDeps, 'musicApi'>, kind: JobKind): number {
  return deps.musicApi.costOf(OPERATION_BY_KIND[kind]);
}

/**
 * The guild as the caller read it, or when the caller read none (or its queue counts are of
 * other kinds), the same read a command starts with: one round trip, the queue's counts in it.
 */
async function guildFor(input: SubmitInput, loadGuild: LoadGuildForRequest, now: Date): Promise<GuildForRequest & { queued: NonNullable<GuildForRequest['queued']> }> {
  const given = input.guild;
  if (given?.queued?.kinds.includes(input.request.kind)) return { ...given, queued: given.queued };
  const read = await loadGuild(input.requester.guildId, {
    now,
    ...(input.requester.roleIds && { roleIds: input.requester.roleIds }),
    queuedKinds: kindsSharingTaskType(input.request.kind),
    userId: input.requester.userId,
  });
  return { ...read, queued: read.queued! };
}

/**
 * Checks what the guild and member may spend, reserves the cost and records the job, and
 * returns what the member is told. The job is not queued yet: the caller answers first, then
 * calls {@link enqueueAccepted}, so no progress edit can reach a reply that does not exist.
 *
 * @throws RequestRefusedError (nothing reserved), RequestTakenError (accepted by another submission).
 */
export async function acceptRequest(deps: Pick<PipelineDeps, 'db' | 'discord' | 'logger' | 'automod' | 'metrics' | 'moderation' | 'musicApi' | 'now' | 'settings'>, loadGuild: LoadGuildForRequest, input: SubmitInput): Promise<SubmitResult> {
  const { request } = input;
  const remixOf = 'remixOf' in request ? request.remixOf : undefined;
  if (remixOf !== undefined) await checkRemixSource(deps, input.requester.guildId, remixOf.jobId);
  const rerollOf = 'rerollOf' in request ? request.rerollOf : undefined;
  if (rerollOf !== undefined) await checkRerollSource(deps, input.requester.guildId, rerollOf.jobId);

  const { guildId, channelId, userId } = input.requester;
  const cost = costOfKind(deps, request.kind);
  const now = deps.now();
  const guild = await guildFor(input, loadGuild, now);
  await checkRequestText(deps, guild, input);

  const jobId = input.requestKey === undefined ? randomUUID() : jobIdFor(input.requestKey);
  // The job row is written by the reservation's own statement (`alongside`), so the guild's row
  // is locked for that one statement and no round trip more: a busy guild's requests take
  // turns at the speed of Postgres, not of this process's event loop.
  const values = {
    id: jobId,
    guildId,
    channelId,
    userId,
    kind: request.kind,
    request: { ...request },
    remixOf: remixOf?.jobId ?? null,
    rerollOf: rerollOf?.jobId ?? null,
    // A video's or a download's song: a second request for the same file finds this one (jobMakingFile).
    parentJobId: 'sourceJobId' in request ? request.sourceJobId : null,
    cost,
    webhookSecret: randomBytes(32).toString('hex'),
    applicationId: input.reply?.applicationId ?? null,
    interactionToken: input.reply?.interactionToken ?? null,
    interactionAt: input.reply?.createdAt ?? null,
    locale: input.requester.locale ?? null,
    guildLocale: input.requester.guildLocale ?? null,
    createdAt: now,
    updatedAt: now,
  };
  const row = newJobRow(values);
  const reserve = async (executor: Executor): Promise<number> => {
    const reservation = await reserveForJob(executor, { guildId, jobId, userId, amount: cost, alongside: row });
    if (!reservation.ok) {
      // Nothing was written: a refused request leaves no trace.
      if (reservation.reason === 'frozen') throw new RequestRefusedError('frozen', REFUSAL_TEXTS.frozen(), { balance: reservation.balance, cost });
      // The refusal names the allowance when one will add credits: read only on this rare path.
      const credits = await getGuildCredits(deps.db, guildId);
      const allowance = credits ? allowanceInForce(credits) : 0;
      throw new RequestRefusedError('insufficient_credits', REFUSAL_TEXTS.insufficientCredits(reservation.balance ?? 0, cost, allowance, now), {
        balance: reservation.balance ?? 0,
        cost,
      });
    }
    // The charge was already there: this request was accepted by another submission of it.
    if (reservation.replayed) throw new RequestTakenError(jobId);
    if (!reservation.alongside) throw new Error(`job ${jobId} was charged before it was recorded`);
    return reservation.balance;
  };
  const capApplies = input.requester.roleIds !== undefined && guild.dailyCap !== null;
  const { count: ahead, inFlight } = guild.queued;
  const balance = await (capApplies
      ? deps.db.transaction(async (tx) => {
          // Under a lock per member, so that their parallel requests cannot slip past the cap
          // together. The cap is the guild's read's: the spending is read under the lock.
          const read = { frozen: guild.frozen, dailyCap: guild.dailyCap };
          const limits = await checkSpendingLimits(tx, { guildId, userId, roleIds: [...input.requester.roleIds!], amount: cost, now, read });
          if (!limits.ok && limits.reason === 'user_cap') {
            // Over the cap because another submission of this very request was just charged: not a refusal.
            if (input.requestKey !== undefined && (await isJobCharged(tx, jobId))) throw new RequestTakenError(jobId);
            const left = Math.max(0, limits.limit - limits.spent);
            throw new RequestRefusedError('user_cap', REFUSAL_TEXTS.dailyCap(cost, left, limits.limit, now), { cost, limit: limits.limit, spent: limits.spent });
          }
          return reserve(tx);
        })
      : reserve(deps.db));

  deps.metrics.jobsAccepted.inc({ kind: request.kind });
  deps.metrics.credits.inc({ movement: 'reserved' }, cost);

  const waits = waitsForItsTurn({ ahead, inFlight, cap: deps.settings.upstreamMaxInFlight });
  // At or above the threshold there is nothing to alert, and the reservation's statement has re-armed the alert.
  if (guild.alertBelow !== null && balance < guild.alertBelow) void alertIfLow(deps, guildId, input.requester.guildLocale);
  return { jobId, cost, balance, queuePosition: ahead + 1, waits };
}

/**
 * Puts an accepted job in the submit queue, waiting at most {@link ENQUEUE_WAIT_MS}. Never
 * throws: Postgres has the job, and when the enqueue fails the reconciler enqueues it once
 * Redis is back.
 */
export async function enqueueAccepted(deps: Pick<PipelineDeps, 'logger' | 'queues'>, accepted: Pick<SubmitResult, 'jobId' | 'waits'>): Promise<void> {
  const { jobId } = accepted;
  const enqueued = deps.queues.enqueueSubmit(jobId, 0, { cancelOffered: accepted.waits }).then(
    () => true,
    (err: unknown) => {
      deps.logger.warn({ err, jobId }, 'enqueue failed; the reconciler will pick the job up');
      return true;
    },
  );
  // With Redis down the enqueue does not fail, it waits (the connection retries for ever), and
  // the member's acknowledgement would wait with it, for the whole outage.
  // Past a moment the answer goes on; the entry lands when Redis is back, or the reconciler has it.
  let waiting: NodeJS.Timeout | undefined;
  const inTime = await Promise.race([enqueued, new Promise<false>((resolve) => (waiting = setTimeout(() => resolve(false), ENQUEUE_WAIT_MS)))]);
  clearTimeout(waiting);
  if (!inTime) deps.logger.warn({ jobId, waitedMs: ENQUEUE_WAIT_MS }, 'Redis has not taken the job yet; answering without waiting');
}

/**
 * The job id of a request key, the same in every process: a name-based UUID (RFC 9562
 * version 8, from SHA-256), so that two submissions of one request meet on one ledger key.
 * Not `uuid`'s v5 (SHA-1): it gives other ids, and an old and a new process sharing a shard
 * during an upgrade would then charge one interaction twice.
 */
export function jobIdFor(requestKey: string): string {
  const bytes = createHash('sha256').update(`request:${requestKey}`).digest().subarray(0, 16);
  bytes[6] = (bytes[6]! & 0x0f) | 0x80;
  bytes[8] = (bytes[8]! & 0x3f) | 0x80;
  const hex = bytes.toString('hex');
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
}

/** The member's texts a request carries, by the field a moderator reads in the log. */
function textsOf(request: GenerationRequest): Array<[field: string, text: string | undefined]> {
  switch (request.kind) {
    case 'song':
    case 'persona_song':
      return [['prompt', request.prompt], ['lyrics', request.lyrics], ['title', request.title]];
    case 'lyrics':
      return [['prompt', request.prompt]];
    case 'voice':
      return [['voice name', request.name]];
    case 'upload':
      return [['title', request.title]];
    case 'video':
    case 'download':
      return [];
  }
}

/** The first of the request's texts that uses a blocked entry, with the entry; undefined when none does. */
function blockedTextIn(blocklist: GuildForRequest['blocklist'], request: GenerationRequest): { field: string; rule: string } | undefined {
  for (const [field, text] of textsOf(request)) {
    const rule = text === undefined ? undefined : blocklist.match(text);
    if (rule !== undefined) return { field, rule };
  }
  return undefined;
}

/**
 * A request a content check refused, for the guild's moderators: the audit row names what
 * refused it (the entry, the rule, the categories) and in which field, never the member's text.
 */
async function recordRefusal(
  deps: Pick<PipelineDeps, 'db' | 'logger'>,
  requester: { guildId: string; channelId: string; userId: string; kind: JobKind },
  action: 'request_refused_blocked_words' | 'request_refused_explicit_words' | 'request_refused_automod' | 'request_refused_moderation',
  details: { readonly field?: string; readonly fields?: readonly string[] } & Readonly<Record<string, unknown>>,
): Promise<void> {
  const { guildId, channelId, userId, kind } = requester;
  deps.logger.info({ guildId, channelId, userId, kind, action, field: details.field, fields: details.fields }, 'request refused by a content check');
  await deps.db.insert(auditLog).values({ guildId, actorId: userId, action, details: { kind, ...details, channelId } });
}

/**
 * The moderation service's word on the request's texts, when one is set (MODERATION_URL): one
 * call with all of them. Flagged: refused, the categories in the audit log for moderators and
 * never in the member's answer. Unavailable: refused with "try again", or let through with a
 * warning, as MODERATION_WHEN_DOWN says.
 */
async function checkWithModerationService(
  deps: Pick<PipelineDeps, 'db' | 'logger' | 'metrics' | 'moderation'>,
  requester: { guildId: string; channelId: string; userId: string; kind: JobKind },
  texts: ReadonlyArray<[field: string, text: string | undefined]>,
): Promise<void> {
  const { moderation } = deps;
  const present = texts.filter((entry): entry is [string, string] => entry[1] !== undefined);
  if (!moderation || present.length === 0) return;
  const verdict = await moderation.service.classify(present.map(([, text]) => text));
  const { guildId, channelId, userId, kind } = requester;
  switch (verdict.outcome) {
    case 'clean':
      deps.metrics.moderationChecks.inc({ outcome: 'clean' });
      return;
    case 'flagged': {
      deps.metrics.moderationChecks.inc({ outcome: 'flagged' });
      const fields = verdict.flagged.map((index) => present[index]![0]);
      await recordRefusal(deps, requester, 'request_refused_moderation', { fields, categories: verdict.categories });
      throw new RequestRefusedError('moderation_flagged', REFUSAL_TEXTS.moderationFlagged());
    }
    case 'unavailable': {
      const refuse = moderation.whenDown === 'refuse';
      deps.metrics.moderationChecks.inc({ outcome: refuse ? 'down_refused' : 'down_allowed' });
      const context = { guildId, channelId, userId, kind, why: verdict.why };
      if (!refuse) return void deps.logger.warn(context, 'moderation service unavailable: request allowed unchecked (MODERATION_WHEN_DOWN=allow)');
      deps.logger.warn(context, 'moderation service unavailable: request refused (MODERATION_WHEN_DOWN=refuse)');
      throw new RequestRefusedError('moderation_unavailable', REFUSAL_TEXTS.moderationUnavailable());
    }
  }
}

/**
 * The AutoMod keyword rule of the guild that one of the request's texts breaks, for this member
 * in this channel, with the field; undefined when none does, when the guild does not use
 * AutoMod, or when its rules cannot be read (the bot lacks Manage Server, or Discord failed).
 */
async function automodHitIn(
  deps: Pick<PipelineDeps, 'automod'>,
  guild: Pick<GuildForRequest, 'useAutomod' | 'automodVersion'>,
  input: SubmitInput,
): Promise<{ field: string; ruleId: string; ruleName: string } | undefined> {
  if (!guild.useAutomod || !deps.automod) return undefined;
  const state = await deps.automod.rulesFor(input.requester.guildId, guild.automodVersion);
  if (state.status !== 'in_use') return undefined;
  const { roleIds = [], channelId, parentChannelId } = input.requester;
  const hit = state.rules.match(textsOf(input.request), { roleIds, channelId, parentChannelId });
  return hit && { field: hit.label, ruleId: hit.ruleId, ruleName: hit.ruleName };
}

/** A remix is made of a finished song of the same guild, never of another guild's. */
async function checkRemixSource(deps: Pick<PipelineDeps, 'db'>, guildId: string, sourceJobId: string): Promise<void> {
  const source = await getJob(deps.db, sourceJobId);
  if (!isRemixSource(source, guildId)) {
    throw new RequestRefusedError('invalid_request', REFUSAL_TEXTS.remixSourceGone());
  }
}

/**
 * A reroll links the first song of its line: a song of the same guild. It may have been hidden
 * since (the reroll pressed is checked to be shown), so only the guild and the kind are checked.
 */
async function checkRerollSource(deps: Pick<PipelineDeps, 'db'>, guildId: string, firstJobId: string): Promise<void> {
  const first = await getJob(deps.db, firstJobId);
  if (!first || first.guildId !== guildId || !LIBRARY_KINDS.includes(first.kind)) {
    throw new RequestRefusedError('invalid_request', REFUSAL_TEXTS.rerollSourceGone());
  }
}

/** One message in the moderators' chosen channel when the balance falls under their threshold. */
async function alertIfLow(deps: Pick<PipelineDeps, 'db' | 'discord' | 'logger' | 'now' | 'purchases'>, guildId: string, guildLocale: AppLocale | null | undefined): Promise<void> {
  try {
    const alert = await takeLowBalanceAlert(deps.db, guildId);
    if (!alert) return;
    await deps.discord.postChannelMessage(alert.channelId, {
      content: lowBalanceText(translator(guildLocale), alert, deps.now(), deps.purchases?.catalog),
      allowed_mentions: { parse: [] },
    });
  } catch (err) {
    deps.logger.warn({ guildId, error: describeDiscordError(err) }, 'could not send the low-balance alert');
  }
}

/**
 * The alert names who can add credits: the monthly allowance (and when) if it will, and members
 * where they can buy some (a pack, or a plan the server lacks), else the bot's owners.
 */
function lowBalanceText(t: Translator, alert: LowBalanceAlert, now: Date, catalog: Catalog | undefined): string {
  const { balance, below, allowance } = alert;
  const buyable = catalog !== undefined && (catalog.packs.length > 0 || (catalog.subscriptions.length > 0 && !alert.subscribed));
  if (allowance <= balance) return t(buyable ? 'alert.lowBalanceBuy' : 'alert.lowBalance', { balance, below });
  const at = Math.floor(nextAllowanceTopUp(now).getTime() / 1000);
  return t(buyable ? 'alert.lowBalanceAllowanceBuy' : 'alert.lowBalanceAllowance', { balance, below, allowance, at });
}
