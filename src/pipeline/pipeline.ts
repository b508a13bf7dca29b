/**
 * What the Discord layer may ask of the generation pipeline. Implemented by `createPipeline`
 * (src/pipeline/create-pipeline.ts); the command handlers receive it through their context and
 * never touch queues, the ledger's job movements or the music API directly.
 */
import type { AccountCheck } from './account.js';
import type { DecisionInput, DecisionOutcome, DeleteOutcome, OpenReport, ReportOutcome } from './reports.js';
import type { RenameInput, RenameOutcome } from './rename-result.js';
import type { JobRow } from './job-rows.js';
import type { LikedMessage, LikeOutcome, LikePress } from './likes.js';
import type { ContestRow, ContestStart, EndOutcome, EntryInput, EntryOutcome, Standing, StartOutcome } from './contests.js';
import type { ReplyTarget, SubmitInput, SubmitResult } from './requests.js';

export interface CancelResult {
  readonly cancelled: boolean;
  /** Why not, when not: already submitted, already finished, not yours. */
  readonly reason?: 'not_found' | 'not_allowed' | 'already_submitted' | 'already_final';
  readonly refunded: number;
}

export interface Pipeline {
  /**
   * Checks what the guild and member may spend (the freeze, the daily cap, the balance),
   * reserves the cost and records the job, and returns what the member is told. The job is
   * not queued yet: the caller answers, then calls `enqueue`, so no progress edit of the
   * workers can reach the reply before the reply exists. A caller that has taken credits
   * calls `enqueue` even when its answer failed (a job the caller never enqueues is found by
   * the reconciler). Throws `RequestRefusedError` (nothing reserved) when the request cannot
   * be accepted. `input.request` is the value the edge parsed with the request schemas.
   */
  accept(input: SubmitInput): Promise<SubmitResult>;
  /** Queues an accepted job for the workers; waits a moment at most, and never throws. */
  enqueue(accepted: SubmitResult): Promise<void>;
  /** `accept` then `enqueue`, for a caller that answers nobody (an operator's retry, a benchmark). */
  submit(input: SubmitInput): Promise<SubmitResult>;
  /** Cancels a job that was not yet sent to the service and returns its credits. */
  cancel(jobId: string, by: { userId: string; isModerator: boolean }): Promise<CancelResult>;
  /**
   * Records that the acknowledgement `messageId` (on `reply`'s interaction) shows the job's
   * Cancel button, so that the worker that takes the job removes it; when a worker took it
   * meanwhile, removes it now. Never throws; the caller need not wait for it.
   */
  cancelShown(jobId: string, reply: ReplyTarget, messageId: string): Promise<void>;
  /** Posts a finished job's result again (for `/jobs show`), answering through `reply` when given. */
  redeliver(jobId: string, reply?: ReplyTarget): Promise<void>;
  /** One job of a guild, or undefined. */
  findJob(guildId: string, jobId: string): Promise<JobRow | undefined>;
  /** Recent jobs of a guild, newest first; optionally one member's, one kind's. */
  listJobs(guildId: string, filter?: { userId?: string; kind?: JobRow['kind']; succeededOnly?: boolean; limit?: number }): Promise<JobRow[]>;
  /** Position of a queued job among those waiting for the same kind of task (1 = next). */
  queuePosition(jobId: string): Promise<number | undefined>;
  /** What a request of this kind costs, from the one cost table. */
  costOf(kind: JobRow['kind']): number;
  /**
   * Checks the music service account now (`/credits-admin account`): get-credits against the
   * ledger's upstream spend since the last check, recorded, with the low-account alert if due.
   * Throws the music API's error when get-credits fails (nothing is recorded).
   */
  checkAccount(): Promise<AccountCheck>;
  /**
   * Records a member's report of a result (one per member per result) and posts or edits its
   * review message in `reviewChannelId` (src/pipeline/reports.ts). Never fails for Discord.
   */
  reportResult(input: { guildId: string; jobId: string; reporterId: string; reason: string; reviewChannelId: string | null }): Promise<ReportOutcome>;
  /** A moderator's decision on a reported result: hide it, record the requester's block, or dismiss. */
  decideReport(input: DecisionInput): Promise<DecisionOutcome>;
  /** The requester deletes their result: its message goes, it leaves the library; no credits return. */
  deleteOwnResult(input: { guildId: string; jobId: string; userId: string }): Promise<DeleteOutcome>;
  /** The requester renames their song, the title checked as a request's words (src/pipeline/rename-result.ts). */
  renameOwnResult(input: RenameInput): Promise<RenameOutcome>;
  /** The guild's open reports, the most recently reported first. */
  openReports(guildId: string, limit: number, offset?: number): Promise<{ total: number; shown: OpenReport[] }>;
  /**
   * Toggles a member's like of a song, once per press (src/pipeline/likes.ts); when it changed,
   * the count on `message` (where it was pressed) is shown by an edit soon, one per moment.
   */
  likeSong(press: LikePress, message?: LikedMessage): Promise<LikeOutcome>;
  /**
   * Holds `what` for the press `pressId` (an interaction id) for `ms`, in every process: true
   * when this press holds it (again, for the same press), false while another press does. For
   * a button that must not act twice on a double click.
   */
  holdPress(what: string, pressId: string, ms: number): Promise<boolean>;
  /** Lets go of what `pressId` holds (a press refused after all), so that the next press may act. Never throws. */
  releasePress(what: string, pressId: string): Promise<void>;
  /** Starts the server's contest, announces it in its channel and plans its end (src/pipeline/contests.ts). */
  startContest(input: ContestStart): Promise<StartOutcome>;
  /** Enters a member's own song in the running contest, once per song. */
  enterContest(input: EntryInput): Promise<EntryOutcome>;
  /** The member's songs that may enter the running contest, newest first. */
  enterableSongs(guildId: string, userId: string): Promise<JobRow[]>;
  /** The running contest with its entries and leaders so far, or undefined. */
  contestStatus(guildId: string): Promise<{ contest: ContestRow; entries: number; top: Standing[] } | undefined>;
  /** Ends the running contest now with its results, or cancels it without. */
  endContest(guildId: string, options: { cancel: boolean }): Promise<EndOutcome>;
}
