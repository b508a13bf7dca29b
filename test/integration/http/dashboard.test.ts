/**
 * The dashboard's frame on the http server, request by request (the browser flows are
 * test/e2e/dashboard.test.ts): the sign-in redirect (PKCE, state, scopes), its cookies over http
 * and https, the callback's checks (an unknown state, a foreign `next`), the security headers,
 * the rate limit on sign-in, and a change refused without a session. On a real Redis, with the
 * Discord emulator's OAuth2.
 */
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it, onTestFinished } from 'vitest';
import { createGuildReads } from '../../../src/discord-rest/guild-reads.js';
import { RATE_LIMITS } from '../../../src/dashboard/routes.js';
import { buildHttpServer } from '../../../src/http/server.js';
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

  it(`is limited to ${RATE_LIMITS.signInPerIp} a minute from one address`, async () => {
    const app = server();
    const codes: number[] = [];
    for (let i = 0; i <= RATE_LIMITS.signInPerIp; i += 1) codes.push((await app.inject({ method: 'GET', url: '/dashboard/login' })).statusCode);
    expect(codes.slice(0, RATE_LIMITS.signInPerIp).every((code) => code === 302)).toBe(true);
    expect(codes.at(-1)).toBe(429);
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
