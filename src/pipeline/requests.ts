/**
 * What a member can ask for, checked with zod before anything is reserved. These schemas are
 * the contract between the Discord layer (which reads options) and the pipeline (which never
 * sees an interaction).
 */
import { z } from 'zod';
import { english, type AppLocale, type LocalText } from '../i18n/index.js';
import { messageKey } from '../i18n/zod-text.js';
import type { JobKind } from '../db/schema.js';
import type { Blocklist } from '../safety/blocklist.js';

/** Limits of the service where it states them, and ours where it does not (docs/members.md lists them). */
export const LIMITS = {
  promptMax: 1000,
  lyricsMax: 3000,
  /** The real service's documented title limit. */
  titleMax: 80,
  voiceNameMax: 50,
} as const;

/** A member's text; its messages are catalogue keys (`request.<field>.empty`, `.tooLong` with `{max}`). */
const text = (field: 'prompt' | 'lyrics' | 'title' | 'voiceName', max: number) =>
  z
    .string()
    // As sent, as Discord's own max_length counts: what only fits once cleaned was never a valid request.
    .max(max, messageKey(`request.${field}.tooLong`))
    // Postgres text and jsonb cannot hold U+0000: kept, it fails the job's insert with a 500-like error.
    .overwrite((value) => value.replaceAll('\u0000', ''))
    .trim()
    .min(1, messageKey(`request.${field}.empty`))
    .max(max, messageKey(`request.${field}.tooLong`));

const clipId = z.string().trim().min(1).max(200);

/**
 * The song a remix is made from (the Remix button): its job, stored as `jobs.remix_of`, and
 * its title as it was shown, so the result can say "remix of …" without another lookup.
 */
const remixOf = z.object({ jobId: z.uuid(), title: z.string().min(1).max(200) });

/**
 * The song a reroll makes again (the Reroll button): the first of its line, stored as
 * `jobs.reroll_of`, with its title as shown, as for {@link remixOf}.
 */
const rerollOf = remixOf;

export const songRequestSchema = z.object({
  kind: z.literal('song'),
  prompt: text('prompt', LIMITS.promptMax).optional(),
  lyrics: text('lyrics', LIMITS.lyricsMax).optional(),
  title: text('title', LIMITS.titleMax).optional(),
  model: z.string().optional(),
  instrumental: z.boolean().optional(),
  remixOf: remixOf.optional(),
  rerollOf: rerollOf.optional(),
}).refine((value) => value.prompt !== undefined || value.lyrics !== undefined, {
  message: messageKey('request.promptOrLyrics'),
});

export const personaSongRequestSchema = z.object({
  kind: z.literal('persona_song'),
  /** Our voice_personas row. */
  voiceId: z.uuid(),
  /** The service's persona id, resolved by the caller from the voice. */
  personaId: z.string().min(1),
  prompt: text('prompt', LIMITS.promptMax).optional(),
  lyrics: text('lyrics', LIMITS.lyricsMax).optional(),
  title: text('title', LIMITS.titleMax).optional(),
  remixOf: remixOf.optional(),
  rerollOf: rerollOf.optional(),
});

export const lyricsRequestSchema = z.object({
  kind: z.literal('lyrics'),
  prompt: text('prompt', LIMITS.promptMax),
});

export const voiceRequestSchema = z.object({
  kind: z.literal('voice'),
  name: text('voiceName', LIMITS.voiceNameMax),
  audioUrl: z.url(),
});

export const videoRequestSchema = z.object({
  kind: z.literal('video'),
  clipId,
  /** The job whose song the video is made for. */
  sourceJobId: z.uuid(),
});

export const downloadRequestSchema = z.object({
  kind: z.literal('download'),
  clipId,
  format: z.enum(['mp3', 'wav']),
  sourceJobId: z.uuid(),
});

export const uploadRequestSchema = z.object({
  kind: z.literal('upload'),
  audioUrl: z.url(),
  title: text('title', LIMITS.titleMax).optional(),
});

export const generationRequestSchema = z.union([
  songRequestSchema,
  personaSongRequestSchema,
  lyricsRequestSchema,
  voiceRequestSchema,
  videoRequestSchema,
  downloadRequestSchema,
  uploadRequestSchema,
]);

export type GenerationRequest = z.infer<typeof generationRequestSchema>;
export type SongRequest = z.infer<typeof songRequestSchema>;
export type PersonaSongRequest = z.infer<typeof personaSongRequestSchema>;

/** Who asks, where, and how to answer them. No discord.js types: the pipeline runs without a gateway. */
export interface Requester {
  readonly guildId: string;
  readonly channelId: string;
  /** The channel's parent: a thread's channel, or a channel's category (AutoMod rules may exempt either). */
  readonly parentChannelId?: string | null;
  readonly userId: string;
  /**
   * The member's roles. When given, the daily spending cap is checked in the same
   * transaction as the reservation, so parallel requests cannot slip past it together.
   */
  readonly roleIds?: readonly string[];
  /** The member's language (see src/i18n): replies to the interaction. Null: English. */
  readonly locale?: AppLocale | null;
  /** The guild's language: messages posted to the channel. Null: English. */
  readonly guildLocale?: AppLocale | null;
  /**
   * Whether the channel asked from is age-restricted (a thread: its parent channel), asked only
   * when a text uses the guild's explicit list. Never throws. Absent: not age-restricted.
   */
  readonly ageRestricted?: () => Promise<boolean>;
}

export interface ReplyTarget {
  readonly applicationId: string;
  /** The interaction token: valid 15 minutes from `createdAt`. Never logged. */
  readonly interactionToken: string;
  readonly createdAt: Date;
}

export interface SubmitInput {
  readonly requester: Requester;
  readonly request: GenerationRequest;
  /**
   * What makes two submissions one request: the interaction's id. The job's id is derived
   * from it, so a second submission of an accepted request (two gateway processes get every
   * interaction of their shard) finds its charge taken and changes nothing: see
   * {@link RequestTakenError}. Absent: every submission is a request of its own.
   */
  readonly requestKey?: string;
  /** Absent when there is no interaction to answer (e.g. a retry by an operator). */
  readonly reply?: ReplyTarget;
  /**
   * The guild as the caller read it a moment ago (`loadGuild` in src/guilds, its first use
   * handled and its allowance applied), passed whole: submit then skips that read. Its queue
   * counts are used when they cover the request's kind. Absent: submit reads it itself.
   */
  readonly guild?: GuildForRequest;
}

/** What submit uses of the guild's read: structurally the `LoadedGuild` of src/guilds/settings.ts. */
export interface GuildForRequest {
  /** The daily cap that holds for this member (null: none): checked under a lock per member. */
  readonly dailyCap: number | null;
  /** Spending is frozen (the reservation checks it again, atomically). */
  readonly frozen: boolean;
  /** The guild's blocked words: a request whose text uses one is refused before anything is reserved. */
  readonly blocklist: Pick<Blocklist, 'match'>;
  /** The guild's explicit words: while `explicitInAgeRestrictedOnly` holds, refused as the blocked ones but in an age-restricted channel. */
  readonly explicitList: Pick<Blocklist, 'match'>;
  readonly explicitInAgeRestrictedOnly: boolean;
  /** The requester is blocked by the guild's moderators, until `until` (null: until unblocked); null: not blocked. */
  readonly memberBlock: { readonly until: Date | null } | null;
  /** The guild's AutoMod keyword rules judge its requests too. */
  readonly useAutomod: boolean;
  /** Raised on each AutoMod rule change: the version of the rules to judge by. */
  readonly automodVersion: number;
  /** The low-balance alert's threshold (null: none configured). */
  readonly alertBelow: number | null;
  /** Jobs of `kinds` waiting in the queue and at the service when the guild was read; null: not counted. */
  readonly queued: { readonly kinds: readonly JobKind[]; readonly count: number; readonly inFlight: number } | null;
}

/** Loads a guild for a request, as src/guilds/settings.ts's `loadGuild` does: the pipeline's port to it. */
export type LoadGuildForRequest = (
  guildId: string,
  options: { now: Date; roleIds?: readonly string[]; queuedKinds: readonly JobKind[]; userId: string },
) => Promise<GuildForRequest>;

export interface SubmitResult {
  readonly jobId: string;
  readonly cost: number;
  /** The guild's balance after the reservation. */
  readonly balance: number;
  /** 1 when nothing waits ahead of this job for the same kind of task. */
  readonly queuePosition: number;
  /** The job waits for its turn (see `waitsForItsTurn`): its acknowledgement offers Cancel. */
  readonly waits: boolean;
}

/**
 * Another submission of the same request (its `requestKey`) was accepted first, in this process
 * or another: nothing was written, and the member has, or will get, that submission's answer.
 * Whoever handles the interaction must stay silent, or two answers would race for it.
 */
export class RequestTakenError extends Error {
  constructor(readonly jobId: string) {
    super(`request already accepted as job ${jobId}`);
    this.name = 'RequestTakenError';
  }
}

export type RefusalReason =
  | 'invalid_request'
  | 'insufficient_credits'
  | 'frozen'
  | 'user_cap'
  | 'blocked_words'
  | 'automod'
  | 'blocked_member'
  | 'explicit_words'
  | 'moderation_flagged'
  | 'moderation_unavailable';

/** The request was not accepted; nothing was reserved. `text` is for the member, `message` (English) for logs. */
export class RequestRefusedError extends Error {
  constructor(
    readonly reason: RefusalReason,
    readonly text: LocalText,
    readonly details: { balance?: number; cost?: number; limit?: number; spent?: number } = {},
  ) {
    super(english.text(text));
    this.name = 'RequestRefusedError';
  }
}
