/**
 * Likes of songs: one per member and song (its own key in `song_likes`), a press toggles it,
 * and the song's count (`jobs.like_count`) moves in the same transaction. A press is applied
 * once however often it arrives: a second gateway on the shard, or a retried interaction, find
 * the row already changed by it. The count shown on a message is edited at most once per
 * {@link LIKE_EDIT_WINDOW_MS}: many likes in that time are one edit. The charts' counts move
 * in the like's transaction too (charts.ts).
 * Why: docs/decisions/likes-and-rerolls.md
 */
import { sql } from 'drizzle-orm';
import type { Executor } from '../db/client.js';
import { describeDiscordError } from '../discord-rest/discord-delivery.js';
import { translator, type AppLocale } from '../i18n/index.js';
import type { PipelineDeps } from './deps.js';
import { getJob, isShownResult, type JobRow } from './job-rows.js';
import { countChartEvent } from './charts.js';
import { LIBRARY_KINDS } from './library.js';
import { costOfKind } from './accept-request.js';
import { renderResult } from './render.js';

/** Likes on one message within this long are shown by one edit of it. */
export const LIKE_EDIT_WINDOW_MS = 1_000;

export interface LikePress {
  readonly guildId: string;
  readonly jobId: string;
  readonly userId: string;
  /** The interaction's id (a snowflake): what makes a press one. */
  readonly pressId: string;
}

export type LikeOutcome =
  /** The press was applied: the member now likes the song or not, and it has `likes`. */
  | { readonly outcome: 'toggled'; readonly liked: boolean; readonly likes: number; readonly job: JobRow }
  /** This very press was applied already (by another process, or before a retry): nothing changed. */
  | { readonly outcome: 'repeated' }
  /** An older press than the last one applied: nothing changed; where the member stands now. */
  | { readonly outcome: 'outdated'; readonly liked: boolean; readonly likes: number; readonly job: JobRow }
  /** Not a shown song of this guild: another guild's, hidden, deleted, or no song at all. */
  | { readonly outcome: 'not_likeable' };

/** Whether members of `guildId` may like (and reroll) this job: a shown song of that guild. */
export function isLikeable(job: JobRow | undefined, guildId: string): job is JobRow {
  return job !== undefined && job.guildId === guildId && LIBRARY_KINDS.includes(job.kind) && isShownResult(job);
}

/**
 * Toggles the member's like of a song, once per press. The song's row is locked for the
 * transaction, so its count and its likes move together, and a song hidden meanwhile is not liked.
 */
export async function toggleLike(db: Executor, press: LikePress, now: Date): Promise<LikeOutcome> {
  if (!/^\d{1,20}$/.test(press.pressId)) throw new RangeError('a press is named by its interaction id, a snowflake');
  return db.transaction(async (tx) => {
    const { rows: locked } = await tx.execute<{ id: string }>(sql`select id from jobs where id = ${press.jobId} for no key update`);
    if (locked.length === 0) return { outcome: 'not_likeable' } as const;
    const job = await getJob(tx, press.jobId);
    if (!isLikeable(job, press.guildId)) return { outcome: 'not_likeable' } as const;
    // Under the song's lock no other press of it moves: the like as it was, for the charts.
    const { rows: before } = await tx.execute<{ liked_at: Date | string | null }>(sql`
      select liked_at from song_likes where job_id = ${job.id} and user_id = ${press.userId}`);
    const { rows: pressed } = await tx.execute<{ liked: boolean }>(sql`
      insert into song_likes (job_id, user_id, guild_id, liked_at, last_press, created_at, updated_at)
      values (${job.id}, ${press.userId}, ${job.guildId}, ${now.toISOString()}, ${press.pressId}::bigint, ${now.toISOString()}, ${now.toISOString()})
      on conflict (job_id, user_id) do update
        set liked_at = case when song_likes.liked_at is null then excluded.liked_at else null end,
            last_press = excluded.last_press,
            updated_at = excluded.updated_at
        where song_likes.last_press < excluded.last_press
      returning liked_at is not null as liked`);
    const applied = pressed[0];
    if (!applied) {
      const { rows } = await tx.execute<{ liked: boolean; repeated: boolean }>(sql`
        select liked_at is not null as liked, last_press = ${press.pressId}::bigint as repeated
        from song_likes where job_id = ${job.id} and user_id = ${press.userId}`);
      const row = rows[0];
      if (!row || row.repeated) return { outcome: 'repeated' } as const;
      return { outcome: 'outdated', liked: row.liked, likes: job.likeCount, job } as const;
    }
    const { rows: counted } = await tx.execute<{ like_count: number }>(sql`
      update jobs set like_count = like_count + ${applied.liked ? 1 : -1} where id = ${job.id} returning like_count`);
    const likes = counted[0]?.like_count ?? job.likeCount;
    // A like counts in the week and month it was made; taking it back takes it from those.
    const madeAt = applied.liked ? now : before[0]?.liked_at ? new Date(before[0].liked_at) : undefined;
    if (madeAt) await countChartEvent(tx, { guildId: job.guildId, jobId: job.id, metric: 'likes', at: madeAt, delta: applied.liked ? 1 : -1 });
    return { outcome: 'toggled', liked: applied.liked, likes, job: { ...job, likeCount: likes } } as const;
  });
}

/** How many members like the song now, counted from its likes (what `jobs.like_count` must equal). */
export async function countLikes(db: Executor, jobId: string): Promise<number> {
  const { rows } = await db.execute<{ n: number }>(sql`select count(*)::int as n from song_likes where job_id = ${jobId} and liked_at is not null`);
  return rows[0]?.n ?? 0;
}

/** The message a like was pressed on, and the language it is written in (its buttons are rendered again in it). */
export interface LikedMessage {
  readonly channelId: string;
  readonly messageId: string;
  readonly locale: AppLocale | null;
}

type EditDeps = Pick<PipelineDeps, 'db' | 'discord' | 'logger' | 'musicApi' | 'queues' | 'redis'>;

/**
 * Shows the song's count on the message soon: the first like of a window (a Redis key with a
 * time to live, shared by every process) edits the message when the window ends, with the
 * count read then, so the likes of the whole window are one edit. A like whose key check
 * finds the window open was committed before the window's edit reads the count. Never throws.
 */
export async function showLikesSoon(deps: EditDeps, jobId: string, message: LikedMessage): Promise<void> {
  try {
    const key = `${deps.queues.prefix}:likes-edit:${message.messageId}`;
    if ((await deps.redis.set(key, jobId, 'PX', LIKE_EDIT_WINDOW_MS, 'NX')) !== 'OK') return;
    // A little after the key's end, which Redis counts from before this process heard of it.
    setTimeout(() => void showLikes(deps, jobId, message), LIKE_EDIT_WINDOW_MS + 50);
  } catch (err) {
    deps.logger.warn({ jobId, err }, 'could not plan the edit of the like count');
  }
}

/** Edits the message's buttons to show the song's count now (a removed song's message shows none). */
async function showLikes(deps: EditDeps, jobId: string, message: LikedMessage): Promise<void> {
  try {
    const job = await getJob(deps.db, jobId);
    if (!job) return;
    const rendered = renderResult(job, translator(message.locale), (kind) => costOfKind(deps, kind));
    await deps.discord.editChannelMessage(message.channelId, message.messageId, { components: rendered.components ?? [] });
  } catch (err) {
    deps.logger.warn({ jobId, messageId: message.messageId, error: describeDiscordError(err) }, 'could not show the like count');
  }
}
