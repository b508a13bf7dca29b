/**
 * Dashboard sessions, kept in Redis: the browser holds only a random id in an HttpOnly cookie,
 * and Redis holds who signed in, their Discord access token (for logout's revocation, never sent
 * to the browser), the CSRF token and one notice to show. Keys are the id's SHA-256, so a dump of
 * Redis gives no cookie. A session ends when it expires or at logout, whatever the cookie says.
 */
import { createHash } from 'node:crypto';
import { z } from 'zod';
import type { RedisClient } from '../queue/connection.js';
import { randomToken, type Tokens, type UserGuild } from './oauth.js';

export interface Session {
  readonly userId: string;
  readonly name: string;
  readonly locale: string | undefined;
  readonly tokens: Tokens;
  /** The servers the member is in, as Discord said at sign-in (the picker's candidates). */
  readonly guilds: readonly UserGuild[];
  readonly csrfToken: string;
  readonly createdAt: number;
  /** A notice for the next page (what a change did); read once. */
  readonly notice?: { readonly kind: 'done' | 'error'; readonly key: string; readonly params?: Record<string, string | number> } | undefined;
}

/** A sign-in under way: what the callback checks and needs. */
export interface PendingLogin {
  readonly verifier: string;
  /** The random value in the browser's login cookie: the callback must come from the browser that started. */
  readonly browser: string;
  /** Where to go once signed in (a dashboard path). */
  readonly next: string;
}

const sessionSchema = z.object({
  userId: z.string(),
  name: z.string(),
  locale: z.string().optional(),
  tokens: z.object({ accessToken: z.string(), expiresAt: z.number() }),
  guilds: z.array(z.object({ id: z.string(), name: z.string() })),
  csrfToken: z.string(),
  createdAt: z.number(),
  notice: z.object({ kind: z.enum(['done', 'error']), key: z.string(), params: z.record(z.string(), z.union([z.string(), z.number()])).optional() }).optional(),
});
const pendingSchema = z.object({ verifier: z.string(), browser: z.string(), next: z.string() });

/** How long a sign-in may take on Discord's page. */
export const LOGIN_TTL_SECONDS = 600;

export interface SessionStore {
  /** Starts a session, for the store's time or until the access token expires if sooner; returns the id and lifetime for the cookie. */
  create(session: Omit<Session, 'csrfToken' | 'createdAt'>, now?: number): Promise<{ id: string; session: Session; ttlSeconds: number }>;
  get(id: string | undefined): Promise<Session | undefined>;
  /** Replaces the notice, keeping the session's expiry. */
  setNotice(id: string, notice: Session['notice']): Promise<void>;
  delete(id: string): Promise<void>;
  startLogin(state: string, login: PendingLogin): Promise<void>;
  /** The sign-in for `state`, taken once: a second callback with the same state finds nothing. */
  takeLogin(state: string): Promise<PendingLogin | undefined>;
}

export function createSessionStore(options: { redis: RedisClient; prefix: string; ttlSeconds: number }): SessionStore {
  const { redis } = options;
  const key = (kind: 'session' | 'login', id: string) => `${options.prefix}:dashboard:${kind}:${createHash('sha256').update(id).digest('hex')}`;
  const read = async (id: string) => {
    const raw = await redis.get(key('session', id));
    if (raw === null) return undefined;
    const parsed = sessionSchema.safeParse(JSON.parse(raw));
    return parsed.success ? (parsed.data as Session) : undefined;
  };
  return {
    async create(fields, now = Date.now()) {
      const id = randomToken();
      const session: Session = { ...fields, csrfToken: randomToken(), createdAt: now };
      // Never past the access token: logout's revocation needs it, and no refresh token is kept.
      const ttlSeconds = Math.max(1, Math.min(options.ttlSeconds, Math.floor((fields.tokens.expiresAt - now) / 1000)));
      await redis.set(key('session', id), JSON.stringify(session), 'EX', ttlSeconds);
      return { id, session, ttlSeconds };
    },
    get: async (id) => (id === undefined || id === '' ? undefined : read(id)),
    async setNotice(id, notice) {
      const session = await read(id);
      if (!session) return;
      await redis.set(key('session', id), JSON.stringify({ ...session, notice }), 'KEEPTTL');
    },
    async delete(id) {
      await redis.del(key('session', id));
    },
    async startLogin(state, login) {
      await redis.set(key('login', state), JSON.stringify(login), 'EX', LOGIN_TTL_SECONDS);
    },
    async takeLogin(state) {
      const raw = await redis.getdel(key('login', state));
      if (raw === null) return undefined;
      const parsed = pendingSchema.safeParse(JSON.parse(raw));
      return parsed.success ? parsed.data : undefined;
    },
  };
}
