/** The simulator's public types: its options, its records, and the handle `startMusicApiSim` returns. */
import type { Logger } from 'pino';
import type { Platform, SignatureEncoding, SignatureScheme } from './contract.js';
import type { RandomFaults, RandomFaultState, SimFault } from './faults.js';
import type { ModerationSettings, ModerationState } from './moderation.js';
import type { WebhookAttempt, WebhookRetry } from './webhooks.js';

export interface MusicApiSimOptions {
  apiKey: string;
  /** Starting balance. */
  credits: number;
  /** 0 picks a free port. @defaultValue 0 */
  port?: number;
  /** @defaultValue '127.0.0.1' */
  host?: string;
  /** How long a task takes from submission to its end. @defaultValue 2000 */
  taskMs?: number;
  /** Accept `http://` webhook URLs to loopback addresses (tests, local try-outs). @defaultValue false */
  allowHttpWebhooks?: boolean;
  /** @defaultValue 'spec' */
  signatureScheme?: SignatureScheme;
  /** How the spec scheme writes the digest (the spec leaves it open). @defaultValue 'hex' */
  signatureEncoding?: SignatureEncoding;
  /** Tasks in flight per task type before 429 `rate_limited`. @defaultValue 20 */
  concurrencyLimit?: number;
  /** @defaultValue { attempts: 4, baseMs: 500 } */
  webhookRetry?: WebhookRetry;
  /** Time limit of one webhook POST. @defaultValue 5000 */
  webhookTimeoutMs?: number;
  /** Accepted `mv` values. @defaultValue SPEC_MODELS (the spec's eleven, ./contract.ts) */
  models?: readonly string[];
  /** Credits a sonic persona song costs; the spec gives no price. @defaultValue DEFAULT_PERSONA_SONG_COST (10) */
  personaSongCost?: number;
  /** Every song a melody of this many seconds (encoded by ffmpeg at start-up); unset: the stock 2 s tone. */
  songSeconds?: number;
  /** Base of media links when the simulator is reached by another name. @defaultValue the listening URL */
  publicUrl?: string;
  /** The bearer token the moderation stand-in (`POST /v1/moderations`, ./moderation.ts) accepts. @defaultValue apiKey */
  moderationApiKey?: string;
  /** Start in the random-fault mode (see `setRandomFaults`). @defaultValue off */
  randomFaults?: RandomFaults;
  logger?: Logger;
}

export interface RecordedRequest {
  method: string;
  path: string;
  query: string;
  /** All headers except `authorization`. */
  headers: Record<string, string | string[] | undefined>;
  /** Whether the request carried the right bearer token. */
  authorized: boolean;
  /** Parsed JSON, or the raw text when it was not JSON; undefined without a body. */
  body: unknown;
  at: number;
  /** The status answered; undefined while unanswered (or for a hung request). */
  status: number | undefined;
}

export type SimTaskState = 'PENDING' | 'RUNNING' | 'SUCCESS' | 'FAILED';

export interface SimTaskView {
  taskId: string;
  platform: Platform;
  taskType: string;
  state: SimTaskState;
  cost: number;
  refunded: boolean;
  createdAt: number;
  endedAt: number | undefined;
  body: Record<string, unknown>;
  webhookUrl: string | undefined;
}

export interface MusicApiSim {
  /** e.g. `http://127.0.0.1:43817`. */
  readonly url: string;
  readonly port: number;
  /** Every request received, except control calls under /_sim. */
  readonly requests: RecordedRequest[];
  /** Every webhook POST and its answer. */
  readonly webhookAttempts: WebhookAttempt[];
  close(): Promise<void>;
  getCredits(): number;
  setCredits(credits: number): void;
  /** Duration of tasks created from now on. */
  setTaskMs(ms: number): void;
  /**
   * Holds every task not yet ended (`true`), and those created meanwhile: none advances or ends
   * until released (`false`), when each goes on from where it was. Creates are still answered
   * and charged; `completeTask` still ends a held task.
   */
  holdTasks(held: boolean): void;
  tasksHeld(): boolean;
  /** Ends a task now. False when unknown or already ended. */
  completeTask(taskId: string, outcome?: 'success' | 'failure'): boolean;
  getTask(taskId: string): SimTaskView | undefined;
  listTasks(): SimTaskView[];
  /** Adds a fault; `times` (default 1) is how many requests or tasks it affects. */
  injectFault(fault: SimFault): void;
  /** Removes injected faults and marker counts (not the random-fault mode). */
  clearFaults(): void;
  /**
   * The random-fault mode: from now on a share of the API calls fail, each in a way drawn from
   * a weighted mix, from a seeded generator; undefined turns it off. Injected faults come
   * first (a call they fault draws nothing); a drawn answer fault comes before the markers.
   */
  setRandomFaults(settings: RandomFaults | undefined): void;
  /** The random-fault mode's settings, seed and draws so far; undefined when it is off. */
  getRandomFaults(): RandomFaultState | undefined;
  /** The moderation stand-in (./moderation.ts): words to flag by category, or down, slow or malformed; `reset` puts the rest back to defaults. */
  setModeration(settings: ModerationSettings, options?: { reset?: boolean }): void;
  getModeration(): ModerationState;
  /** Forgets recorded requests and webhook attempts. */
  clearRecords(): void;
  /** Resolves once `count` webhook attempts (matching `filter`) are recorded. */
  waitForWebhookAttempts(count: number, options?: { timeoutMs?: number; taskId?: string }): Promise<WebhookAttempt[]>;
}
