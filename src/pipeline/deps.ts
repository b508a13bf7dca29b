import type { AutomodRulesSource } from '../safety/automod.js';
import type { Purchases } from '../premium/purchases.js';
import type { RedisClient } from '../queue/connection.js';
import type { Database } from '../db/client.js';
import type { JobKind } from '../db/schema.js';
import type { DiscordDelivery } from '../discord-rest/discord-delivery.js';
import type { Logger } from '../logger.js';
import type { Metrics } from '../metrics.js';
import type { MusicApiClient } from '../music-api/index.js';
import type { Queues } from '../queue/queues.js';
import type { FrontFirst } from './front-first.js';
import type { ModerationService } from '../safety/moderation-service.js';

export interface PipelineSettings {
  /** HTTPS base of the bot's webhook route; undefined: polling only. */
  readonly publicUrl: string | undefined;
  /** Tasks in flight at the service per task type before new ones wait in the queue. */
  readonly upstreamMaxInFlight: number;
  /** A task not finished this long after submission is refunded and marked timed out. */
  readonly pollDeadlineMs: number;
  /** Typical duration per kind: the first poll comes at about half of it, or at it when webhooks are on (processors/poll.ts); also the expected time shown to users. */
  readonly expectedSeconds: Record<JobKind, number>;
  /** A job at least this long from request to end tells its requester by direct message, where they asked. */
  readonly notifyAfterMs: number;
  /** Bounds of the wait between two polls of one task, which is otherwise a share of the time since submission (processors/poll.ts). */
  readonly pollIntervalMs: { readonly min: number; readonly max: number };
  /** Base of the exponential backoff between submission attempts. */
  readonly submitBackoffMs: number;
  /** How long a full cap makes a submission wait before it looks again. */
  readonly capWaitMs: number;
  readonly startingCredits: number;
  readonly attachAudio: boolean;
  /** Upload limit assumed for attachments when Discord did not say (bytes). */
  readonly attachmentLimitBytes: number;
  /** Minimum time between two progress edits of one reply. */
  readonly progressEditIntervalMs: number;
  /** The music service account's low-credits alert (src/pipeline/account.ts). */
  readonly account: AccountSettings;
  /** How long webhook de-duplication records are kept (src/pipeline/retention.ts). */
  readonly webhookEventsRetentionDays: number;
  /** How long the texts of hidden or deleted results and the reasons of reports are kept (src/pipeline/retention.ts). */
  readonly moderationRetentionDays: number;
  /** How long a worker keeps trying to write down a task the service accepted before it tries again later (record-outside-effect.ts). */
  readonly recordPatienceMs: number;
  /** How long a contest's day lasts (CONTEST_DAY_SECONDS): a day, or less for a playground or a test. */
  readonly contestDayMs: number;
}

export interface AccountSettings {
  /** ACCOUNT_LOW_CREDITS: tell the owners when the balance falls below this; 0: never. */
  readonly lowCredits: number;
  /** ACCOUNT_ALERT_CHANNEL_ID: where to tell them; undefined: a DM to each owner. */
  readonly alertChannelId: string | undefined;
  /** BOT_OWNER_IDS. */
  readonly ownerIds: readonly string[];
}

export const DEFAULT_SETTINGS: Omit<PipelineSettings, 'publicUrl'> = {
  upstreamMaxInFlight: 10,
  pollDeadlineMs: 30 * 60_000,
  notifyAfterMs: 60_000,
  expectedSeconds: { song: 60, lyrics: 15, video: 60, upload: 20, download: 20, voice: 120, persona_song: 120 },
  pollIntervalMs: { min: 5_000, max: 60_000 },
  submitBackoffMs: 2_000,
  capWaitMs: 3_000,
  startingCredits: 0,
  attachAudio: true,
  attachmentLimitBytes: 10 * 1024 * 1024,
  progressEditIntervalMs: 5_000,
  account: { lowCredits: 0, alertChannelId: undefined, ownerIds: [] },
  webhookEventsRetentionDays: 7,
  moderationRetentionDays: 90,
  recordPatienceMs: 5 * 60_000,
  contestDayMs: 86_400_000,
};

/** Everything the pipeline's functions and processors need, passed in by the composition root. */
export interface PipelineDeps {
  readonly db: Database;
  readonly queues: Queues;
  readonly redis: RedisClient;
  readonly musicApi: MusicApiClient;
  readonly discord: DiscordDelivery;
  readonly logger: Logger;
  readonly metrics: Metrics;
  readonly settings: PipelineSettings;
  /** The time; tests move it. */
  readonly now: () => Date;
  /** Purchases through Discord, when the bot sells any: the maintenance passes list and sweep them. */
  readonly purchases?: Purchases;
  /** The servers' Discord AutoMod rules, read where a guild turned them on (absent: no request is judged by them). */
  readonly automod?: AutomodRulesSource;
  /** Beside a front in one process: background entries make way for members' commands (front-first.ts). */
  readonly frontFirst?: FrontFirst;
  /** The moderation service (MODERATION_URL), when one is set: it sees a request's texts before anything is reserved. */
  readonly moderation?: ModerationCheck;
}

/** The moderation service and what a request meets when it cannot answer (MODERATION_WHEN_DOWN). */
export interface ModerationCheck {
  readonly service: ModerationService;
  /** `refuse`: the member is told to try again, nothing spent; `allow`: the request goes on, and a warning is logged. */
  readonly whenDown: 'refuse' | 'allow';
}
