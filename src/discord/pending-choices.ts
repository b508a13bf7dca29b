/**
 * What a command keeps while it asks the member which one they meant: the options too long for
 * a select menu's custom id (a prompt, lyrics), in Redis under the asking interaction's id, so a
 * pick works after a restart and on another process while the menu can still answer.
 */
import type { RedisClient } from '../queue/connection.js';

export interface PendingChoices {
  /** Keeps `value` (JSON) under `id` for {@link PENDING_CHOICE_SECONDS}. */
  keep(id: string, value: unknown): Promise<void>;
  /** What was kept under `id`, once: a second pick of the same menu finds nothing. */
  take(id: string): Promise<unknown>;
  /** True for the first pick from the menu `id` (its message id), false for any later one. */
  claim(id: string): Promise<boolean>;
  /** Frees the menu `id` again: its pick was refused, and nothing was spent. */
  release(id: string): Promise<void>;
}

/** Discord's interaction tokens last 15 minutes; the menu answers no longer. */
export const PENDING_CHOICE_SECONDS = 15 * 60;

export function createPendingChoices(redis: RedisClient, prefix: string): PendingChoices {
  const key = (id: string) => `${prefix}:pending-choice:${id}`;
  return {
    async keep(id, value) {
      await redis.set(key(id), JSON.stringify(value), 'EX', PENDING_CHOICE_SECONDS);
    },
    async take(id) {
      // GET and DEL in one transaction (GETDEL needs Redis 6.2).
      const results = await redis.multi().get(key(id)).del(key(id)).exec();
      const raw = results?.[0]?.[1];
      return typeof raw === 'string' ? (JSON.parse(raw) as unknown) : undefined;
    },
    async claim(id) {
      return (await redis.set(key(`picked:${id}`), '1', 'EX', PENDING_CHOICE_SECONDS, 'NX')) === 'OK';
    },
    async release(id) {
      await redis.del(key(`picked:${id}`));
    },
  };
}
