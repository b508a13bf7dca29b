/**
 * What the bot remembers. Postgres is the source of truth for credits and job state;
 * Redis only carries work. Enumerations are text columns typed in TypeScript.
 */
import { sql } from 'drizzle-orm';
import {
  bigserial,
  bigint,
  boolean,
  check,
  date,
  doublePrecision,
  index,
  integer,
  jsonb,
  pgTable,
  primaryKey,
  text,
  timestamp,
  uniqueIndex,
  uuid,
  type AnyPgColumn,
} from 'drizzle-orm/pg-core';
import type { TaskState } from '../music-api/task-status.js';

const createdAt = () => timestamp('created_at', { withTimezone: true }).notNull().defaultNow();
const updatedAt = () => timestamp('updated_at', { withTimezone: true }).notNull().defaultNow();

/** A guild, its balance (the running sum of its ledger) and its settings. */
export const guilds = pgTable(
  'guilds',
  {
    id: text('id').primaryKey(),
    balance: integer('balance').notNull().default(0),
    frozen: boolean('frozen').notNull().default(false),
    /** Credits granted at the start of every calendar month (UTC); 0 means none. */
    monthlyAllowance: integer('monthly_allowance').notNull().default(0),
    /** The period (`YYYY-MM`) whose allowance was last applied. */
    allowancePeriod: text('allowance_period'),
    /**
     * The allowance that period was given: the largest live one when it was applied, raised by
     * a larger subscription first seen later in it (which adds only the difference).
     */
    allowanceFloor: integer('allowance_floor').notNull().default(0),
    /** Credits one member may spend per UTC day; null means no cap. */
    userDailyCap: integer('user_daily_cap'),
    allowedChannelIds: text('allowed_channel_ids').array().notNull().default(sql`'{}'::text[]`),
    requiredRoleId: text('required_role_id'),
    moderatorRoleId: text('moderator_role_id'),
    /** Members with this role may skip any song, stop and clear the voice player, as moderators may. */
    djRoleId: text('dj_role_id'),
    /**
     * The largest monthly allowance of the guild's live subscriptions (src/premium), kept with
     * them; the allowance applied is the larger of this and `monthlyAllowance`.
     */
    subscriptionAllowance: integer('subscription_allowance').notNull().default(0),
    defaultModel: text('default_model'),
    cooldownSeconds: integer('cooldown_seconds').notNull().default(0),
    visibility: text('visibility').$type<'public' | 'private'>().notNull().default('public'),
    alertChannelId: text('alert_channel_id'),
    alertBelow: integer('alert_below'),
    /** Set when the low-balance alert was sent; cleared when the balance rises above the threshold. */
    alertSentAt: timestamp('alert_sent_at', { withTimezone: true }),
    /**
     * Raised with every change to the guild's blocked words, in the change's transaction: a
     * process whose compiled list is of another version reads the list again. 0: never had one.
     */
    blocklistVersion: integer('blocklist_version').notNull().default(0),
    /** Where members' reports of results reach the moderators; null: reports are only listed. */
    reviewChannelId: text('review_channel_id'),
    /** Prompts are also judged by the server's own AutoMod keyword rules. */
    useAutomod: boolean('use_automod').notNull().default(false),
    /** Words on the server's explicit list are allowed only in age-restricted channels. */
    explicitInAgeRestrictedOnly: boolean('explicit_in_age_restricted_only').notNull().default(true),
    /**
     * Raised by the gateway on each AutoMod rule event of the guild; the guild's read carries it,
     * and a process whose rules are of another version reads them from Discord again.
     */
    automodVersion: integer('automod_version').notNull().default(0),
    /** The server's default for members who said nothing: a direct message when a long job of theirs ends. */
    notifyWhenDone: boolean('notify_when_done').notNull().default(false),
    createdAt: createdAt(),
    updatedAt: updatedAt(),
  },
  (t) => [check('guilds_balance_non_negative', sql`${t.balance} >= 0`)],
);

/** Per-role overrides of the per-user daily cap. */
export const guildRoleLimits = pgTable(
  'guild_role_limits',
  {
    guildId: text('guild_id')
      .notNull()
      .references(() => guilds.id, { onDelete: 'cascade' }),
    roleId: text('role_id').notNull(),
    dailyCap: integer('daily_cap').notNull(),
  },
  (t) => [primaryKey({ columns: [t.guildId, t.roleId] })],
);

/** The guild word lists: `blocked`, never allowed; `explicit`, allowed only in age-restricted channels (when the guild says so). */
export const WORD_LISTS = ['blocked', 'explicit'] as const;
export type WordList = (typeof WORD_LISTS)[number];

/** A guild's listed words and phrases, as a moderator wrote them (`*` for a prefix or suffix): src/safety/blocklist.ts matches them. */
export const guildBlockedWords = pgTable(
  'guild_blocked_words',
  {
    guildId: text('guild_id')
      .notNull()
      .references(() => guilds.id, { onDelete: 'cascade' }),
    /** Which of the guild's lists the entry is on. */
    list: text('list').$type<WordList>().notNull().default('blocked'),
    entry: text('entry').notNull(),
    addedBy: text('added_by').notNull(),
    createdAt: createdAt(),
  },
  // An entry is on one list at most: a word is blocked, or explicit.
  (t) => [primaryKey({ columns: [t.guildId, t.entry] })],
);

/** Members a guild's moderators keep from using the bot, until `until` (null: until unblocked). */
export const guildMemberBlocks = pgTable(
  'guild_member_blocks',
  {
    guildId: text('guild_id')
      .notNull()
      .references(() => guilds.id, { onDelete: 'cascade' }),
    userId: text('user_id').notNull(),
    until: timestamp('until', { withTimezone: true }),
    reason: text('reason'),
    blockedBy: text('blocked_by').notNull(),
    createdAt: createdAt(),
  },
  (t) => [primaryKey({ columns: [t.guildId, t.userId] })],
);

/** A member's own choices in a server; a null choice follows the server's default. */
export const memberSettings = pgTable(
  'member_settings',
  {
    guildId: text('guild_id')
      .notNull()
      .references(() => guilds.id, { onDelete: 'cascade' }),
    userId: text('user_id').notNull(),
    /** A direct message when a long job of theirs ends; null: the server's `notify_when_done`. */
    notifyWhenDone: boolean('notify_when_done'),
    updatedAt: updatedAt(),
  },
  (t) => [primaryKey({ columns: [t.guildId, t.userId] })],
);

export const LEDGER_KINDS = [
  'grant',
  'take',
  'adjust',
  'allowance',
  'reserve',
  'release',
  'refund',
  /** A credit pack bought through Discord, added to the server it was claimed for. */
  'purchase',
  /** A server subscription's monthly allowance. */
  'subscription',
  /** Credits taken back when Discord refunds a purchase or a subscription. */
  'reversal',
] as const;
export type LedgerKind = (typeof LEDGER_KINDS)[number];

/**
 * Append-only. Every movement of credits is one row with a unique key, so a retried step
 * finds its key taken and moves nothing.
 */
export const creditLedger = pgTable(
  'credit_ledger',
  {
    id: bigserial('id', { mode: 'number' }).primaryKey(),
    guildId: text('guild_id')
      .notNull()
      .references(() => guilds.id),
    key: text('key').notNull(),
    kind: text('kind').$type<LedgerKind>().notNull(),
    /** Signed: negative spends, positive returns or grants. */
    amount: integer('amount').notNull(),
    balanceAfter: integer('balance_after').notNull(),
    jobId: uuid('job_id'),
    /** The member whose usage this is (the requester of a job). */
    userId: text('user_id'),
    /** The moderator or owner who moved credits by hand. */
    actorId: text('actor_id'),
    reason: text('reason'),
    createdAt: createdAt(),
  },
  (t) => [
    uniqueIndex('credit_ledger_key_unique').on(t.key),
    index('credit_ledger_guild_created_idx').on(t.guildId, t.createdAt),
    index('credit_ledger_guild_user_created_idx').on(t.guildId, t.userId, t.createdAt),
    index('credit_ledger_job_idx').on(t.jobId),
    // Also (guild_id, id) and (guild_id, user_id, id), built concurrently: migrations/online.
  ],
);

export const JOB_KINDS = ['song', 'lyrics', 'voice', 'video', 'download', 'upload', 'persona_song'] as const;
export type JobKind = (typeof JOB_KINDS)[number];

/**
 * queued → submitting → submitted → succeeded | failed | timed_out;
 * queued → cancelled; submitting → failed (permanent error at submission).
 */
export const JOB_STATES = ['queued', 'submitting', 'submitted', 'succeeded', 'failed', 'timed_out', 'cancelled'] as const;
export type JobState = (typeof JOB_STATES)[number];

export const DELIVERY_STATES = ['pending', 'delivered', 'failed'] as const;
export type DeliveryState = (typeof DELIVERY_STATES)[number];

/** A clip of a finished task as the bot keeps it; the service's field names are left behind. */
export interface StoredClip {
  readonly clipId?: string;
  readonly title?: string;
  readonly lyrics?: string;
  readonly tags?: string;
  readonly audioUrl?: string;
  readonly wavUrl?: string;
  readonly imageUrl?: string;
  readonly videoUrl?: string;
  readonly downloadUrl?: string;
  readonly durationSeconds?: number;
}

/** What the bot keeps of a finished task (`jobs.result`): everything delivery needs, nothing secret. */
export interface StoredResult {
  readonly state?: TaskState;
  readonly clips?: readonly StoredClip[];
  readonly lyrics?: string;
  readonly lyricsTitle?: string;
  readonly personaId?: string;
  readonly personaName?: string;
  /** The takes (from 1) whose audio the posted result carries as files: they play in the message, so it links them no more. */
  readonly attachedTakes?: readonly number[];
  /** Posted while a contest ran in its server: the result offers its requester Enter contest (src/pipeline/contests.ts). */
  readonly contestOpen?: boolean;
}

/** What a member may read about a failure (`jobs.error`), and the credits it gave back. */
export interface JobError {
  readonly kind: string;
  readonly message: string;
  /** Credits given back to the guild for this job. */
  readonly creditsReturned: number;
  /** An unconfirmed submission whose task, if the service made it, may still arrive by webhook. */
  readonly mayArrive?: boolean;
}

/** How a result left the library: a moderator hid it, or its requester deleted it. */
export const REMOVALS = ['hidden', 'deleted'] as const;
export type Removal = (typeof REMOVALS)[number];

/** One row per user request. */
export const jobs = pgTable(
  'jobs',
  {
    id: uuid('id').primaryKey().defaultRandom(),
    guildId: text('guild_id')
      .notNull()
      .references(() => guilds.id),
    channelId: text('channel_id').notNull(),
    userId: text('user_id').notNull(),
    kind: text('kind').$type<JobKind>().notNull(),
    /**
     * The validated request (prompt, lyrics, model, clip id, …). Its type is the pipeline's
     * request schema, which reads it back before it is sent; here it is only fields.
     */
    request: jsonb('request').$type<Record<string, unknown>>().notNull(),
    state: text('state').$type<JobState>().notNull().default('queued'),
    cost: integer('cost').notNull(),
    upstreamTaskId: text('upstream_task_id'),
    /** Signs this job's webhooks. Never logged, never shown. Cleared once no webhook can matter (src/pipeline/retention.ts). */
    webhookSecret: text('webhook_secret'),
    /** Where the answer goes: the deferred interaction reply while its token lives. */
    applicationId: text('application_id'),
    interactionToken: text('interaction_token'),
    interactionAt: timestamp('interaction_at', { withTimezone: true }),
    /** The member's language (see src/i18n): replies to the interaction. Null (older rows): English. */
    locale: text('locale'),
    /** The guild's language: messages posted to the channel. Null (older rows): English. */
    guildLocale: text('guild_locale'),
    /** Normalised upstream result: clips, lyrics, persona. */
    result: jsonb('result').$type<StoredResult>(),
    /** Sorted error: kind, user-safe message, whether credits came back. */
    error: jsonb('error').$type<JobError>(),
    submitAttempts: integer('submit_attempts').notNull().default(0),
    /** Set when a submit attempt may have reached the service without an answer (see `mayHaveCreatedTask`). */
    submitUncertainAt: timestamp('submit_uncertain_at', { withTimezone: true }),
    deliveryState: text('delivery_state').$type<DeliveryState>().notNull().default('pending'),
    /** A worker posting the result holds this for a short while, so two never post it together. */
    deliveryClaimedAt: timestamp('delivery_claimed_at', { withTimezone: true }),
    messageId: text('message_id'),
    parentJobId: uuid('parent_job_id'),
    /** The song this one remixes (the Remix button); null once that song is deleted. */
    remixOf: uuid('remix_of').references((): AnyPgColumn => jobs.id, { onDelete: 'set null' }),
    /**
     * The song this one rerolls (the Reroll button: the same inputs, made again): always the
     * first of a line of rerolls, never a reroll itself. No foreign key, as for `parent_job_id`:
     * adding one would scan the jobs table under a lock that holds writes back.
     */
    rerollOf: uuid('reroll_of'),
    /** Members who like this song now (`song_likes`), kept in each like's transaction. */
    likeCount: integer('like_count').notNull().default(0),
    createdAt: createdAt(),
    updatedAt: updatedAt(),
    submittedAt: timestamp('submitted_at', { withTimezone: true }),
    completedAt: timestamp('completed_at', { withTimezone: true }),
    deliveredAt: timestamp('delivered_at', { withTimezone: true }),
    deadlineAt: timestamp('deadline_at', { withTimezone: true }),
    /**
     * When the result left the library and every list: hidden by a moderator from a report's
     * review, or deleted by its requester (`removal`), and by whom. Its message says so.
     */
    removedAt: timestamp('removed_at', { withTimezone: true }),
    removal: text('removal').$type<Removal>(),
    removedBy: text('removed_by'),
  },
  (t) => [
    uniqueIndex('jobs_upstream_task_unique').on(t.upstreamTaskId),
    index('jobs_guild_created_idx').on(t.guildId, t.createdAt),
    index('jobs_guild_user_created_idx').on(t.guildId, t.userId, t.createdAt),
    index('jobs_open_idx')
      .on(t.state, t.createdAt)
      .where(sql`${t.state} in ('queued', 'submitting', 'submitted')`),
    index('jobs_undelivered_idx')
      .on(t.completedAt)
      .where(sql`${t.deliveryState} = 'pending' and ${t.state} in ('succeeded', 'failed', 'timed_out')`),
    check('jobs_cost_non_negative', sql`${t.cost} >= 0`),
    // `/library query:`: ILIKE on every word, over a trigram index led by the guild, finished songs only.
    // Why: docs/decisions/library-search.md
    index('jobs_library_search_idx')
      .using('gin', t.guildId, sql`(${librarySearchText(t)}) gin_trgm_ops`)
      .where(libraryRows(t)),
    index('jobs_remix_of_idx')
      .on(t.remixOf)
      .where(sql`${t.remixOf} is not null`),
    // Also the library's rows by (guild_id, created_at, id) and (guild_id, user_id, created_at, id), and the removed rows by
    // removed_at, built concurrently: migrations/online.
    // And a video's or a download's song by (parent_job_id, kind): migrations/online.
  ],
);

/**
 * The rows of the library: finished songs. Written out as literals (not parameters), so that
 * Postgres can see that a query with this condition may use the partial index above.
 */
export function libraryRows(t: { state: AnyPgColumn; kind: AnyPgColumn }) {
  return sql`${t.state} = 'succeeded' and ${t.kind} in ('song', 'persona_song')`;
}

/**
 * What `/library query:` searches, in one expression: the requested title, prompt and lyrics,
 * and the title and lyrics the service returned. The index above is built on exactly this
 * expression, so a query must use this function for Postgres to use the index.
 */
export function librarySearchText(t: { request: AnyPgColumn; result: AnyPgColumn }) {
  return sql`coalesce(${t.request} ->> 'title', '') || ' ' || coalesce(${t.request} ->> 'prompt', '') || ' ' || coalesce(${t.request} ->> 'lyrics', '') || ' ' || coalesce(${t.result} -> 'clips' -> 0 ->> 'title', '') || ' ' || coalesce(${t.result} -> 'clips' -> 0 ->> 'lyrics', '')`;
}

/**
 * How many jobs of each kind are in flight ('submitting' or 'submitted'): what the submission
 * claim reads instead of counting jobs. Triggers on `jobs` keep it (migration 0010), in the
 * transaction of each move, so no code writes it. Why: docs/decisions/in-flight-counter.md
 */
export const jobsInFlight = pgTable(
  'jobs_in_flight',
  {
    kind: text('kind').$type<JobKind>().primaryKey(),
    count: integer('count').notNull(),
  },
  (t) => [check('jobs_in_flight_count_non_negative', sql`${t.count} >= 0`)],
);

/**
 * What each member of a guild was charged per UTC day of the charge: the jobs reserved that day,
 * their charges, and what came back for them (releases and refunds, whenever they came). Kept by
 * triggers on `credit_ledger` (migration 0011), in the transaction of each movement, so no code
 * writes it; `usage` reads it instead of the ledger. Why: docs/decisions/usage-summaries.md
 */
export const creditUsageMember = pgTable(
  'credit_usage_member',
  {
    guildId: text('guild_id').notNull(),
    /** '' for jobs charged to no member. */
    userId: text('user_id').notNull(),
    day: date('day', { mode: 'string' }).notNull(),
    jobs: integer('jobs').notNull(),
    charged: bigint('charged', { mode: 'number' }).notNull(),
    returned: bigint('returned', { mode: 'number' }).notNull(),
  },
  (t) => [primaryKey({ columns: [t.guildId, t.userId, t.day] })],
);

/** The same per guild and UTC day, all members together: a month of a guild is at most 31 rows. */
export const creditUsageGuild = pgTable(
  'credit_usage_guild',
  {
    guildId: text('guild_id').notNull(),
    day: date('day', { mode: 'string' }).notNull(),
    jobs: integer('jobs').notNull(),
    charged: bigint('charged', { mode: 'number' }).notNull(),
    returned: bigint('returned', { mode: 'number' }).notNull(),
  },
  (t) => [primaryKey({ columns: [t.guildId, t.day] })],
);

/**
 * What a guild spent per UTC day and kind of job, and what it was given per day and source, for
 * the dashboard's charts: for a spend kind (song, lyrics, video, download, upload, voice: a
 * persona's songs are voice) the jobs charged that day, their charges and what came back for
 * them whenever it came; for a source (grant, allowance with subscriptions, purchase) the
 * movements and the credits they added, in `charged`. Kept by triggers on `credit_ledger`
 * (migration 0026), like the usage summaries. Why: docs/decisions/dashboard-charts.md
 */
export const creditFlowsDaily = pgTable(
  'credit_flows_daily',
  {
    guildId: text('guild_id').notNull(),
    day: date('day', { mode: 'string' }).notNull(),
    kind: text('kind').notNull(),
    jobs: integer('jobs').notNull(),
    charged: bigint('charged', { mode: 'number' }).notNull(),
    returned: bigint('returned', { mode: 'number' }).notNull(),
  },
  (t) => [primaryKey({ columns: [t.guildId, t.day, t.kind] })],
);

/** A voice persona made by `/voice create`, owned by a member within a guild. */
export const voicePersonas = pgTable(
  'voice_personas',
  {
    id: uuid('id').primaryKey().defaultRandom(),
    guildId: text('guild_id')
      .notNull()
      .references(() => guilds.id),
    ownerId: text('owner_id').notNull(),
    name: text('name').notNull(),
    personaId: text('persona_id').notNull(),
    jobId: uuid('job_id').references(() => jobs.id),
    createdAt: createdAt(),
    deletedAt: timestamp('deleted_at', { withTimezone: true }),
  },
  (t) => [
    uniqueIndex('voice_personas_guild_name_live_unique')
      .on(t.guildId, t.name)
      .where(sql`${t.deletedAt} is null`),
  ],
);

/** Webhook events already taken, for de-duplication of repeated deliveries. */
export const webhookEvents = pgTable(
  'webhook_events',
  {
    id: bigserial('id', { mode: 'number' }).primaryKey(),
    /** The service's event id when it sends one, else `<task>:<final state>`. */
    eventKey: text('event_key').notNull(),
    jobId: uuid('job_id')
      .notNull()
      .references(() => jobs.id),
    receivedAt: timestamp('received_at', { withTimezone: true }).notNull().defaultNow(),
  },
  (t) => [uniqueIndex('webhook_events_key_unique').on(t.eventKey), index('webhook_events_job_idx').on(t.jobId)],
);

/**
 * Members' reports of a posted result: one per member per result, with why. The reason is
 * cleared after MODERATION_RETENTION_DAYS (src/pipeline/retention.ts); who and when stay.
 */
export const resultReports = pgTable(
  'result_reports',
  {
    jobId: uuid('job_id')
      .notNull()
      .references(() => jobs.id),
    reporterId: text('reporter_id').notNull(),
    guildId: text('guild_id').notNull(),
    reason: text('reason'),
    createdAt: createdAt(),
  },
  (t) => [
    primaryKey({ columns: [t.jobId, t.reporterId] }),
    // Retention finds the reasons still kept by their age.
    index('result_reports_reason_kept_idx')
      .on(t.createdAt)
      .where(sql`${t.reason} is not null`),
  ],
);

export const REVIEW_OUTCOMES = ['hidden', 'blocked', 'dismissed'] as const;
export type ReviewOutcome = (typeof REVIEW_OUTCOMES)[number];

/**
 * The review of a reported result, one per result: the message in the guild's review channel
 * (posted once, then edited) and the moderators' decision. Open while `outcome` is null.
 */
export const resultReviews = pgTable(
  'result_reviews',
  {
    jobId: uuid('job_id')
      .primaryKey()
      .references(() => jobs.id),
    guildId: text('guild_id').notNull(),
    /** Where the review message is; null when the guild had no review channel, or it could not be posted. */
    channelId: text('channel_id'),
    messageId: text('message_id'),
    outcome: text('outcome').$type<ReviewOutcome>(),
    decidedBy: text('decided_by'),
    decidedAt: timestamp('decided_at', { withTimezone: true }),
    /** When the latest report came: the list of open reports is newest first. */
    reportedAt: timestamp('reported_at', { withTimezone: true }).notNull().defaultNow(),
    createdAt: createdAt(),
  },
  (t) => [
    index('result_reviews_open_idx')
      .on(t.guildId, t.reportedAt)
      .where(sql`${t.outcome} is null`),
  ],
);

/**
 * Members' likes of songs: one row per member and song, its own key, kept when the like is
 * taken back (`liked_at` null) so that a press is applied once. `last_press` is the id of the
 * last interaction that changed the row: a Discord snowflake, so a press repeated (a second
 * gateway, a retried interaction) or older than it changes nothing.
 */
export const songLikes = pgTable(
  'song_likes',
  {
    jobId: uuid('job_id')
      .notNull()
      .references(() => jobs.id),
    userId: text('user_id').notNull(),
    guildId: text('guild_id').notNull(),
    /** When the member liked the song; null: not liked now (taken back). */
    likedAt: timestamp('liked_at', { withTimezone: true }),
    lastPress: bigint('last_press', { mode: 'bigint' }).notNull(),
    createdAt: createdAt(),
    updatedAt: updatedAt(),
  },
  (t) => [primaryKey({ columns: [t.jobId, t.userId] })],
);

/** A contest's life: `running` until its deadline, then `ended` (results posted) or `cancelled` (none). */
export const CONTEST_STATES = ['running', 'ended', 'cancelled'] as const;
export type ContestState = (typeof CONTEST_STATES)[number];

/** What a contest's end found, kept with it: the top entries and what became of the winner's role. */
export interface ContestResults {
  readonly top: readonly { readonly jobId: string; readonly userId: string; readonly title: string; readonly votes: number }[];
  readonly entries: number;
  /** The winner's role: given, or why not (`missing_permission`, `role_too_high`, `role_gone`, `failed`); absent without a role or a winner. */
  readonly role?: 'given' | 'missing_permission' | 'role_too_high' | 'role_gone' | 'failed';
}

/**
 * A server's song contests (src/pipeline/contests.ts): at most one running per server. Its end
 * is one guarded transition (`running` to `ended`), so one process posts the results.
 */
export const contests = pgTable(
  'contests',
  {
    id: uuid('id').primaryKey(),
    guildId: text('guild_id').notNull(),
    /** Where it was announced and its results go. */
    channelId: text('channel_id').notNull(),
    theme: text('theme').notNull(),
    state: text('state').$type<ContestState>().notNull().default('running'),
    startedBy: text('started_by').notNull(),
    startedAt: timestamp('started_at', { withTimezone: true }).notNull(),
    endsAt: timestamp('ends_at', { withTimezone: true }).notNull(),
    /** Entries one member may make. */
    maxEntries: integer('max_entries').notNull(),
    /** Given to the winner at the end, when the bot may manage it. */
    winnerRoleId: text('winner_role_id'),
    /** The server's language at the start: the results are written in it. */
    locale: text('locale'),
    /** When it ended or was cancelled, early or at its deadline. */
    endedAt: timestamp('ended_at', { withTimezone: true }),
    /** What its end found; set in the transition to `ended`. */
    results: jsonb('results').$type<ContestResults>(),
    /** The message that posted the results, once Discord took it. */
    resultsMessageId: text('results_message_id'),
    /** When a process last took the posting of the results: a post that failed is tried again after a while. */
    postingAt: timestamp('posting_at', { withTimezone: true }),
    createdAt: createdAt(),
  },
  (t) => [
    uniqueIndex('contests_one_running_unique')
      .on(t.guildId)
      .where(sql`${t.state} = 'running'`),
    index('contests_running_ends_idx')
      .on(t.endsAt)
      .where(sql`${t.state} = 'running'`),
  ],
);

export type ContestRow = typeof contests.$inferSelect;

/** Songs entered in a contest: one row per contest and song, its own key, so an entry made twice is one. */
export const contestEntries = pgTable(
  'contest_entries',
  {
    contestId: uuid('contest_id')
      .notNull()
      .references(() => contests.id),
    jobId: uuid('job_id')
      .notNull()
      .references(() => jobs.id),
    userId: text('user_id').notNull(),
    enteredAt: timestamp('entered_at', { withTimezone: true }).notNull(),
  },
  (t) => [primaryKey({ columns: [t.contestId, t.jobId] }), index('contest_entries_member_idx').on(t.contestId, t.userId)],
);

/** Moderator actions that are not credit movements (settings, freezes, limits). */
export const auditLog = pgTable(
  'audit_log',
  {
    id: bigserial('id', { mode: 'number' }).primaryKey(),
    guildId: text('guild_id').notNull(),
    actorId: text('actor_id').notNull(),
    action: text('action').notNull(),
    details: jsonb('details').$type<Record<string, unknown>>().notNull().default({}),
    createdAt: createdAt(),
  },
  // Also (guild_id, action, details->>'key'), built concurrently: migrations/online.
  (t) => [index('audit_log_guild_created_idx').on(t.guildId, t.createdAt)],
);

/**
 * Guilds the bot has greeted: one row per guild, taken with `ON CONFLICT DO NOTHING` before
 * the welcome is posted, so a guild sees it once however often the bot rejoins or restarts.
 */
export const guildWelcomes = pgTable('guild_welcomes', {
  guildId: text('guild_id').primaryKey(),
  /** The channel the welcome went to; null when the guild had none the bot could post in. */
  channelId: text('channel_id'),
  welcomedAt: timestamp('welcomed_at', { withTimezone: true }).notNull().defaultNow(),
});

/**
 * One row per reconciliation of the music service account (src/pipeline/account.ts): the
 * balance get-credits gave, the ledger's cumulative upstream spend at that moment, and what
 * the two say together. Append-only; the newest row is also the state of the low-account
 * alert (armed or not), which each check carries forward under the checks' advisory lock.
 */
export const accountChecks = pgTable('account_checks', {
  id: bigserial('id', { mode: 'number' }).primaryKey(),
  checkedAt: timestamp('checked_at', { withTimezone: true }).notNull().defaultNow(),
  /** What ran it: the hourly pass or an owner's `/credits-admin account`. */
  source: text('source').$type<'hourly' | 'command'>().notNull(),
  /** get-credits: `credits` and `extra_credits`; the balance is their sum. */
  credits: doublePrecision('credits').notNull(),
  extraCredits: doublePrecision('extra_credits').notNull(),
  balance: doublePrecision('balance').notNull(),
  /** The ledger's upstream spend since the beginning (see `upstreamSpentTotal`), read under the same lock. */
  upstreamSpentTotal: bigint('upstream_spent_total', { mode: 'number' }).notNull(),
  /** The previous check's balance less the upstream spend recorded since; null for the first check (the baseline). */
  expected: doublePrecision('expected'),
  /** balance − expected; null for the baseline. */
  drift: doublePrecision('drift'),
  /** ACCOUNT_LOW_CREDITS when checked; 0 means no alert. */
  lowThreshold: integer('low_threshold').notNull(),
  /** After this check: whether the next fall below the threshold sends the alert. */
  lowAlertArmed: boolean('low_alert_armed').notNull(),
  /** This check sent the low-account alert. */
  lowAlertSent: boolean('low_alert_sent').notNull().default(false),
});

export const ENTITLEMENT_KINDS = ['pack', 'subscription'] as const;
export type EntitlementKind = (typeof ENTITLEMENT_KINDS)[number];

/**
 * What members bought through Discord (src/premium): one row per entitlement of a configured
 * SKU, whatever path brought it first (gateway event, webhook event, listing, interaction).
 * A pack's credits go into the ledger under its entitlement id when it is claimed for a server.
 */
export const entitlements = pgTable(
  'entitlements',
  {
    /** Discord's entitlement id. */
    id: text('id').primaryKey(),
    skuId: text('sku_id').notNull(),
    kind: text('kind').$type<EntitlementKind>().notNull(),
    /** Discord's entitlement type (1 purchase, 4 test-mode purchase, 8 subscription, …). */
    type: integer('type').notNull(),
    /** The buyer. */
    userId: text('user_id'),
    /** A pack's credits, or a subscription's monthly allowance, as configured when it was first seen. */
    credits: integer('credits').notNull(),
    /** Packs: the server the credits went to; subscriptions: the server subscribed. */
    guildId: text('guild_id'),
    /** Packs: where the buyer was offered it, which gets it unless they choose another in time. */
    defaultGuildId: text('default_guild_id'),
    startsAt: timestamp('starts_at', { withTimezone: true }),
    endsAt: timestamp('ends_at', { withTimezone: true }),
    claimedAt: timestamp('claimed_at', { withTimezone: true }),
    /** When Discord confirmed the consumption of a pack. */
    consumedAt: timestamp('consumed_at', { withTimezone: true }),
    /** When Discord deleted it (a refund). */
    deletedAt: timestamp('deleted_at', { withTimezone: true }),
    /** Credits taken back at the refund, and what the balance could not give back. */
    reversedCredits: integer('reversed_credits').notNull().default(0),
    unrecoveredCredits: integer('unrecovered_credits').notNull().default(0),
    /** When one process took the telling of the buyer what the purchase added: set once, so the buyer hears of it once. */
    buyerToldAt: timestamp('buyer_told_at', { withTimezone: true }),
    createdAt: createdAt(),
    updatedAt: updatedAt(),
  },
  (t) => [
    index('entitlements_unclaimed_user_idx')
      .on(t.userId)
      .where(sql`${t.kind} = 'pack' and ${t.claimedAt} is null and ${t.deletedAt} is null`),
    index('entitlements_unconsumed_idx')
      .on(t.claimedAt)
      .where(sql`${t.kind} = 'pack' and ${t.claimedAt} is not null and ${t.consumedAt} is null and ${t.deletedAt} is null`),
    index('entitlements_guild_idx').on(t.guildId, t.createdAt),
  ],
);

/**
 * Where a member was last shown a Buy button: a pack they buy soon after goes to that server
 * unless they choose another (Discord's purchase does not say where the button was).
 */
export const premiumOffers = pgTable('premium_offers', {
  userId: text('user_id').primaryKey(),
  guildId: text('guild_id').notNull(),
  shownAt: timestamp('shown_at', { withTimezone: true }).notNull().defaultNow(),
  /** The member's language when shown the buttons: a direct message about what they buy is written in it. */
  locale: text('locale'),
});

/**
 * A song heard in a voice channel for at least half its length: one row per playback, keyed by
 * the playback (the player's state names each one), so a retried write or a second process
 * never counts it twice. Why: docs/decisions/charts.md
 */
export const songPlays = pgTable('song_plays', {
  playKey: text('play_key').primaryKey(),
  jobId: uuid('job_id')
    .notNull()
    .references(() => jobs.id),
  guildId: text('guild_id').notNull(),
  /** How much of it was heard, in ms. */
  heardMs: integer('heard_ms').notNull(),
  playedAt: timestamp('played_at', { withTimezone: true }).notNull(),
});

/**
 * The charts' summaries: a song's likes, plays or remixes in one period (a UTC week from
 * Monday, a UTC month, or all time from 1970-01-01), kept by each event's own transaction.
 * Charts read the top of the index; nothing counts the events themselves.
 */
export const chartCounts = pgTable(
  'chart_counts',
  {
    guildId: text('guild_id').notNull(),
    metric: text('metric').$type<'likes' | 'plays' | 'remixes'>().notNull(),
    period: text('period').$type<'week' | 'month' | 'all'>().notNull(),
    periodStart: date('period_start', { mode: 'string' }).notNull(),
    jobId: uuid('job_id').notNull(),
    count: integer('count').notNull().default(0),
  },
  (t) => [
    primaryKey({ columns: [t.guildId, t.metric, t.period, t.periodStart, t.jobId] }),
    index('chart_counts_top_idx').on(t.guildId, t.metric, t.period, t.periodStart, t.count.desc(), t.jobId),
  ],
);

/** Where and when a server's weekly chart is posted (`/settings charts`); `nextAt` is the next time, in UTC. */
export const chartPostSettings = pgTable(
  'chart_post_settings',
  {
    guildId: text('guild_id').primaryKey(),
    channelId: text('channel_id').notNull(),
    /** 0 Sunday to 6 Saturday, in `timeZone`. */
    weekday: integer('weekday').notNull(),
    hour: integer('hour').notNull(),
    /** An IANA time zone name (Europe/Berlin). */
    timeZone: text('time_zone').notNull(),
    /** The server's language when it was set: the post is written in it. */
    locale: text('locale'),
    nextAt: timestamp('next_at', { withTimezone: true }).notNull(),
    updatedAt: updatedAt(),
  },
  (t) => [index('chart_post_settings_next_idx').on(t.nextAt)],
);

/** One weekly chart post per server and week (`week`: the ISO week in the server's zone), claimed before it is sent. */
export const chartPosts = pgTable(
  'chart_posts',
  {
    guildId: text('guild_id').notNull(),
    week: text('week').notNull(),
    channelId: text('channel_id').notNull(),
    messageId: text('message_id'),
    claimedAt: timestamp('claimed_at', { withTimezone: true }).notNull().defaultNow(),
  },
  (t) => [primaryKey({ columns: [t.guildId, t.week] })],
);
