/**
 * The dashboard's frame on the http server, request by request (the browser flows are
 * test/e2e/dashboard.test.ts): the sign-in redirect (PKCE, state, scopes), its cookies over http
 * and https, the callback's checks (an unknown state, a foreign `next`), the security headers,
 * the rate limits on sign-in and on changes (per session and per address: a friendly page in the
 * member's language, and nothing changed), and a change refused without a session. On a real
 * Redis and Postgres, with the Discord emulator's OAuth2.
 */
import { createHash } from 'node:crypto';
import { Locale, PermissionFlagsBits } from 'discord-api-types/v10';
import type { FastifyInstance } from 'fastify';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it, onTestFinished } from 'vitest';
import { createGuildReads } from '../../../src/discord-rest/guild-reads.js';
import { RATE_LIMITS } from '../../../src/dashboard/routes.js';
import { createSessionStore } from '../../../src/dashboard/sessions.js';
import { buildHttpServer } from '../../../src/http/server.js';
import { translator } from '../../../src/i18n/index.js';
import { silentLogger } from '../../../src/logger.js';
import { createMetrics } from '../../../src/metrics.js';
import { createQueues } from '../../../src/queue/queues.js';
import { startStack, type Stack } from '../../support/stack.js';

let stack: Stack;
let redis: Redis;
const PUBLIC_URL = 'http://127.0.0.1:8080';

beforeAll(async () => {
  stack = await startStack({ startingCredits: 10 });
  redis = new Redis(stack.redisUrl);
  stack.emulator.setOAuth2Redirects([`${PUBLIC_URL}/dashboard/callback`, 'https://bot.example.com/dashboard/callback']);
});
afterAll(async () => {
  await redis?.quit();
  await stack?.close();
});

/** The http server with the dashboard, on its own key prefix (so each test's rate limits start afresh). */
function server(publicUrl = PUBLIC_URL) {
  const prefix = `${stack.prefix}-${Math.random().toString(36).slice(2)}`;
  const app = buildHttpServer({
    db: stack.db.db,
    redis,
    queues: createQueues(redis, { prefix }),
    metrics: createMetrics(),
    logger: silentLogger,
    dashboard: {
      options: { publicUrl, clientId: stack.emulator.clientId, clientSecret: stack.emulator.clientSecret, webUrl: stack.emulator.webUrl, apiUrl: stack.emulator.apiUrl, sessionHours: 1 },
      db: stack.db.db,
      redis,
      prefix,
      reads: createGuildReads({ apiUrl: stack.emulator.apiUrl, token: stack.emulator.botToken, maxAgeMs: 0 }),
      ownerIds: [stack.members.owner],
      settings: { musicModels: ['ModelA'], startingCredits: 10 },
      // No page here takes a pipeline decision (the library's Hide has its own tests).
      pipeline: { decideReport: () => Promise.reject(new Error('no pipeline in this test')) },
      logger: silentLogger,
    },
  });
  onTestFinished(() => app.close());
  return app;
}

const cookieOf = (headers: Record<string, unknown>, name: string): string | undefined =>
  ([headers['set-cookie']].flat().filter(Boolean) as string[]).find((cookie) => cookie.startsWith(`${name}=`));

describe('signing in', () => {
  it('sends the browser to the authorize page with PKCE, state and the two scopes, bound to a login cookie', async () => {
    const response = await server().inject({ method: 'GET', url: '/dashboard/login' });
    expect(response.statusCode).toBe(302);
    const location = new URL(response.headers.location as string);
    expect(location.origin + location.pathname).toBe(`${stack.emulator.webUrl}/oauth2/authorize`);
    const query = Object.fromEntries(location.searchParams);
    expect(query).toMatchObject({
      response_type: 'code',
      client_id: stack.emulator.clientId,
      scope: 'identify guilds',
      redirect_uri: `${PUBLIC_URL}/dashboard/callback`,
      code_challenge_method: 'S256',
    });
    expect(query.state).toMatch(/^[\w-]{43}$/);
    expect(query.code_challenge).toMatch(/^[\w-]{43}$/);
    const login = cookieOf(response.headers, 'dash_login');
    expect(login).toMatch(/HttpOnly/);
    expect(login).toMatch(/SameSite=Lax/);
    expect(login).not.toMatch(/Secure/);
  });

  it('marks its cookies Secure, with the __Host- prefix, when PUBLIC_URL is https', async () => {
    const response = await server('https://bot.example.com').inject({ method: 'GET', url: '/dashboard/login' });
    const login = cookieOf(response.headers, '__Host-dash_login');
    expect(login).toMatch(/; Secure/);
    expect(login).toMatch(/Path=\//);
    expect(response.headers['strict-transport-security']).toMatch(/max-age=/);
  });

  it('refuses a callback whose state it did not hand out, and never follows a next outside the dashboard', async () => {
    const app = server();
    const unknown = await app.inject({ method: 'GET', url: '/dashboard/callback?code=abc&state=made-up' });
    expect(unknown.statusCode).toBe(400);
    expect(cookieOf(unknown.headers, 'dash_session')).toBeUndefined();

    const login = await app.inject({ method: 'GET', url: `/dashboard/login?next=${encodeURIComponent('https://evil.example/dashboard')}` });
    const browser = cookieOf(login.headers, 'dash_login')!.split(';')[0]!;
    const back = new URL(stack.emulator.answerOAuth2Consent(login.headers.location as string, stack.members.alice));
    const callback = await app.inject({ method: 'GET', url: `/dashboard/callback${back.search}`, headers: { cookie: browser } });
    expect(callback.statusCode).toBe(303);
    expect(callback.headers.location).toBe('/dashboard');
    expect(cookieOf(callback.headers, 'dash_session')).toMatch(/HttpOnly/);

    // The same callback again (a replayed address): its state was taken once.
    const replay = await app.inject({ method: 'GET', url: `/dashboard/callback${back.search}`, headers: { cookie: browser } });
    expect(replay.statusCode).toBe(400);
  });

  it("keeps Discord's access token and no refresh token, and ends the session no later than the token", async () => {
    const app = server();
    const login = await app.inject({ method: 'GET', url: '/dashboard/login' });
    const browser = cookieOf(login.headers, 'dash_login')!.split(';')[0]!;
    const back = new URL(stack.emulator.answerOAuth2Consent(login.headers.location as string, stack.members.alice));
    const callback = await app.inject({ method: 'GET', url: `/dashboard/callback${back.search}`, headers: { cookie: browser } });
    const id = cookieOf(callback.headers, 'dash_session')!.split(';')[0]!.split('=')[1]!;
    const [key] = await redis.keys(`*:dashboard:session:${createHash('sha256').update(id).digest('hex')}`);
    const stored = JSON.parse((await redis.get(key!))!) as { tokens: Record<string, unknown> };
    expect(Object.keys(stored.tokens).sort()).toEqual(['accessToken', 'expiresAt']);
    // The emulator did hand one out, as Discord does: the session chose not to keep it.
    expect(stack.emulator.oauth2Authorizations(stack.members.alice).length).toBeGreaterThan(0);

    // A token with ten minutes left makes a session of ten minutes, however long sessions are set to last.
    const store = createSessionStore({ redis, prefix: `${stack.prefix}-ttl`, ttlSeconds: 3_600 });
    const now = Date.now();
    const short = await store.create({ userId: stack.members.alice, name: 'alice', locale: undefined, tokens: { accessToken: 'a', expiresAt: now + 600_000 }, guilds: [] }, now);
    expect(short.ttlSeconds).toBe(600);
    const ttl = await redis.ttl(`${stack.prefix}-ttl:dashboard:session:${createHash('sha256').update(short.id).digest('hex')}`);
    expect(ttl).toBeGreaterThan(590);
    expect(ttl).toBeLessThanOrEqual(600);
    const long = await store.create({ userId: stack.members.alice, name: 'alice', locale: undefined, tokens: { accessToken: 'b', expiresAt: now + 86_400_000 }, guilds: [] }, now);
    expect(long.ttlSeconds).toBe(3_600);
  });

  it(`is limited to ${RATE_LIMITS.signInPerIp} a minute from one address, with a page that says so in the browser's language`, async () => {
    const app = server();
    const codes: number[] = [];
    for (let i = 0; i < RATE_LIMITS.signInPerIp; i += 1) codes.push((await app.inject({ method: 'GET', url: '/dashboard/login' })).statusCode);
    expect(codes.every((code) => code === 302)).toBe(true);
    const refused = await app.inject({ method: 'GET', url: '/dashboard/login', headers: { 'accept-language': 'es-ES,es;q=0.9' } });
    expect(refused.statusCode).toBe(429);
    expect(refused.headers['content-type']).toContain('text/html');
    expect(refused.body).toContain('<html lang="es-ES">');
    expect(refused.body).toContain(translator('es-ES')('dashboard.refused.tooMany'));
    expect(refused.headers.location).toBeUndefined();
    expect(cookieOf(refused.headers, 'dash_login')).toBeUndefined();
    // Another address still signs in: the limit is per address.
    expect((await app.inject({ method: 'GET', url: '/dashboard/login', remoteAddress: '10.0.0.2' })).statusCode).toBe(302);
  });
});

/** Signs `userId` in through the emulator's consent; returns the session cookie and the CSRF token of the settings page. */
async function signIn(app: FastifyInstance, userId: string, remoteAddress = '127.0.0.1'): Promise<{ cookie: string; csrf: string }> {
  const login = await app.inject({ method: 'GET', url: '/dashboard/login', remoteAddress });
  const browser = cookieOf(login.headers, 'dash_login')!.split(';')[0]!;
  const back = new URL(stack.emulator.answerOAuth2Consent(login.headers.location as string, userId));
  const callback = await app.inject({ method: 'GET', url: `/dashboard/callback${back.search}`, headers: { cookie: browser }, remoteAddress });
  const cookie = cookieOf(callback.headers, 'dash_session')!.split(';')[0]!;
  const settings = await app.inject({ method: 'GET', url: `/dashboard/g/${stack.guild.id}/settings`, headers: { cookie }, remoteAddress });
  expect(settings.statusCode).toBe(200);
  const csrf = /name="_csrf" value="([^"]+)"/.exec(settings.body)?.[1];
  if (!csrf) throw new Error('no CSRF token on the settings page');
  return { cookie, csrf };
}

describe('changes', () => {
  const changeCooldown = (app: FastifyInstance, session: { cookie: string }, form: string, remoteAddress = '127.0.0.1') =>
    app.inject({
      method: 'POST',
      url: `/dashboard/g/${stack.guild.id}/settings/cooldown`,
      headers: { cookie: session.cookie, 'content-type': 'application/x-www-form-urlencoded', origin: PUBLIC_URL },
      payload: form,
      remoteAddress,
    });
  const cooldown = async () => (await stack.db.pool.query<{ cooldown_seconds: number }>('select cooldown_seconds from guilds where id = $1', [stack.guild.id])).rows[0]!.cooldown_seconds;

  it(`are limited to ${RATE_LIMITS.changesPerSession} a minute per session and ${RATE_LIMITS.changesPerIp} per address: the next one is refused in the member's language and changes nothing`, async () => {
    const app = server();
    // Manage Server through a role, which the dashboard reads over REST as Discord gives it; a German client.
    const admins = stack.emulator.createRole(stack.guild.id, { name: 'Admins', permissions: PermissionFlagsBits.ManageGuild });
    const admin = stack.emulator.addMember(stack.guild.id, { username: 'admin', roles: [admins.id] }).id;
    stack.emulator.setUserLocale(admin, Locale.German);
    const first = await signIn(app, admin);
    expect((await changeCooldown(app, first, `seconds=11&_csrf=${first.csrf}`)).statusCode).toBe(303);
    expect(await cooldown()).toBe(11);

    // A burst from one session: whatever each request is (here forms without their token), the limit counts it.
    const burst = await Promise.all(Array.from({ length: RATE_LIMITS.changesPerSession - 1 }, () => changeCooldown(app, first, 'seconds=12')));
    expect(burst.map((response) => response.statusCode)).toEqual(Array(RATE_LIMITS.changesPerSession - 1).fill(403));
    const refused = await changeCooldown(app, first, `seconds=13&_csrf=${first.csrf}`);
    expect(refused.statusCode).toBe(429);
    expect(refused.body).toContain('<html lang="de">');
    expect(refused.body).toContain(translator('de')('dashboard.refused.tooMany'));
    expect(refused.body).toContain('data-testid="viewer"');
    expect(await cooldown()).toBe(11);

    // A second session from the same address has a limit of its own, but the address's is shared.
    const second = await signIn(app, admin);
    const used = RATE_LIMITS.changesPerSession + 1;
    const rest = await Promise.all(Array.from({ length: RATE_LIMITS.changesPerIp - used }, () => changeCooldown(app, second, 'seconds=14')));
    expect(rest.every((response) => response.statusCode === 403)).toBe(true);
    const overAddress = await changeCooldown(app, second, `seconds=15&_csrf=${second.csrf}`);
    expect(overAddress.statusCode).toBe(429);
    expect(overAddress.body).toContain(translator('de')('dashboard.refused.tooMany'));
    expect(await cooldown()).toBe(11);

    // From another address, a fresh session changes as before: the refusals above were the limits.
    const elsewhere = await signIn(app, admin, '10.0.0.3');
    expect((await changeCooldown(app, elsewhere, `seconds=16&_csrf=${elsewhere.csrf}`, '10.0.0.3')).statusCode).toBe(303);
    expect(await cooldown()).toBe(16);
  });
});

describe('every page', () => {
  it('forbids inline script and framing, and is not cached', async () => {
    const response = await server().inject({ method: 'GET', url: '/dashboard' });
    expect(response.statusCode).toBe(200);
    const csp = response.headers['content-security-policy'] as string;
    expect(csp).toContain("script-src 'self'");
    expect(csp).toContain("frame-ancestors 'none'");
    expect(csp).not.toContain('unsafe-inline');
    expect(response.headers['x-frame-options']).toBe('DENY');
    expect(response.headers['cache-control']).toBe('no-store');
    expect(response.body).toContain('<html lang="en">');
    expect(response.body).not.toMatch(/<script(?![^>]*\ssrc=)/);
  });

  it('answers in the browser\'s language before sign-in', async () => {
    const response = await server().inject({ method: 'GET', url: '/dashboard', headers: { 'accept-language': 'de-DE,de;q=0.9' } });
    expect(response.body).toContain('<html lang="de">');
    expect(response.body).toContain('Mit Discord anmelden');
  });

  it('refuses a change without a session, whatever the form says', async () => {
    const response = await server().inject({
      method: 'POST',
      url: `/dashboard/g/${stack.guild.id}/settings/cooldown`,
      headers: { 'content-type': 'application/x-www-form-urlencoded', origin: PUBLIC_URL },
      payload: 'seconds=5&_csrf=guess',
    });
    expect(response.statusCode).toBe(403);
  });
});
