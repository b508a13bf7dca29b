/**
 * What the Discord layer may ask of the generation pipeline. Implemented by `createPipeline`
 * (src/pipeline/create-pipeline.ts); the command handlers receive it through their context and
 * never touch queues, the ledger's job movements or the music API directly.
 */
import type { AccountCheck } from './account.js';
import type { JobRow } from './job-rows.js';
import type { ReplyTarget, SubmitInput, SubmitResult } from './requests.js';

export interface CancelResult {
  readonly cancelled: boolean;
  /** Why not, when not: already submitted, already finished, not yours. */
  readonly reason?: 'not_found' | 'not_allowed' | 'already_submitted' | 'already_final';
  readonly refunded: number;
}

export interface SubmitHooks {
  announce?(accepted: SubmitResult): Promise<void>;
}

/**
 * Posts the acknowledgement of an accepted request, and resolves with the id of its message
 * (`@original` for the interaction's reply); `withCancel`: with the Cancel button.
 */
export type SendAcknowledgement = (withCancel: boolean) => Promise<string | undefined>;

export interface Pipeline {
  /**
   * Checks what the guild and member may spend (the freeze, the daily cap, the balance),
   * reserves the cost, records the job, enqueues it and returns at once. Throws
   * `RequestRefusedError` (nothing reserved) when the request cannot be accepted.
   * `input.request` is the value the edge parsed with the request schemas; it is not parsed again.
   *
   * `announce`, when given, runs once the reservation is committed and before the job is
   * queued: the Discord layer sends its first answer there, so no progress edit of the
   * workers can reach the reply before the reply exists. The job is queued even when
   * `announce` throws (its error is rethrown afterwards): credits reserved are never left
   * without their job.
   */
  submit(input: SubmitInput, hooks?: SubmitHooks): Promise<SubmitResult>;
  /** Cancels a job that was not yet sent to the service and returns its credits. */
  cancel(jobId: string, by: { userId: string; isModerator: boolean }): Promise<CancelResult>;
  /**
   * Sends a job's private acknowledgement through `send` (on `reply`'s interaction), with a
   * Cancel button only while the job waits in the queue; the button is removed once a worker
   * takes the job or it is cancelled. `waiting`: the job is not in the queue yet (inside `announce`).
   */
  offerCancel(jobId: string, reply: ReplyTarget, send: SendAcknowledgement, options?: { waiting?: boolean }): Promise<void>;
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
}
