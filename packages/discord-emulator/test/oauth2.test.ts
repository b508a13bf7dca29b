/**
 * OAuth2 as a website signs people in with Discord, against the emulator over real HTTP: the
 * authorize page (redirects followed by hand, as a browser would), the token routes with PKCE,
 * refresh and revocation, and what an access token may read (`/users/@me`, `/users/@me/guilds`).
 */
import { createHash, randomBytes } from 'node:crypto';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { Locale, PermissionFlagsBits } from 'discord-api-types/v10';
import type { APIUser, RESTAPIPartialCurrentUserGuild } from 'discord-api-types/v10';
import { ACCESS_TOKEN_LIFETIME_SECONDS, AUTHORIZATION_CODE_LIFETIME_MS, OpenApiSpec, startDiscordEmulator } from '@music-bot/discord-emulator';
import type { DiscordEmulator, EmulatorGuild, EmulatorMember } from '@music-bot/discord-emulator';

const REDIRECT = 'http://127.0.0.1:9/dashboard/callback';

let emu: DiscordEmulator;
let guild: EmulatorGuild;
let alice: EmulatorMember;
let bob: EmulatorMember;

beforeAll(async () => {
  // Rate limits are rate-limits.test.ts's subject; here they would only make the count of sign-ins per second matter.
  emu = await startDiscordEmulator({ botUsername: 'Music Bot', rateLimits: false, oauth2: { clientSecret: 'test-secret', redirectUris: [REDIRECT] } });
  guild = emu.createGuild({ name: 'Moderated guild' });
  const manager = emu.createRole(guild.id, { name: 'Managers', permissions: PermissionFlagsBits.ManageGuild });
  alice = emu.addMember(guild.id, { username: 'alice' });
  bob = emu.addMember(guild.id, { username: 'bob', roles: [manager.id] });
});

afterAll(async () => {
  await emu?.close();
});

beforeEach(() => {
  emu.clearRecords();
});

interface Pkce {
  verifier: string;
  challenge: string;
}

function pkce(): Pkce {
  const verifier = randomBytes(32).toString('base64url');
  return { verifier, challenge: createHash('sha256').update(verifier).digest('base64url') };
}

function authorizeUrl(params: Record<string, string | undefined>): string {
  const url = new URL('/oauth2/authorize', emu.webUrl);
  for (const [name, value] of Object.entries(params)) if (value !== undefined) url.searchParams.set(name, value);
  return url.toString();
}

function codeRequest(challenge: string, overrides: Record<string, string | undefined> = {}): string {
  return authorizeUrl({
    response_type: 'code',
    client_id: emu.clientId,
    redirect_uri: REDIRECT,
    scope: 'identify guilds',
    state: 'state-123',
    code_challenge: challenge,
    code_challenge_method: 'S256',
    prompt: 'consent',
    ...overrides,
  });
}

/** The consent form's fields, as a browser would post them back. */
function formFields(html: string): Record<string, string> {
  const fields: Record<string, string> = {};
  for (const match of html.matchAll(/<input type="hidden" name="([^"]+)" value="([^"]*)">/g)) {
    fields[match[1] as string] = (match[2] as string).replace(/&#(\d+);/g, (_all, code: string) => String.fromCharCode(Number(code)));
  }
  return fields;
}

/** Opens the authorize page, signs in as `userId` and approves (or cancels); returns where the browser is sent. */
async function consent(url: string, userId: string, decision: 'approve' | 'cancel' = 'approve'): Promise<URL> {
  const page = await fetch(url, { redirect: 'manual' });
  expect(page.status).toBe(200);
  const form = formFields(await page.text());
  const answer = await fetch(new URL('/oauth2/authorize', emu.webUrl), {
    method: 'POST',
    redirect: 'manual',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({ ...form, user_id: userId, decision }),
  });
  expect(answer.status).toBe(302);
  return new URL(answer.headers.get('location') ?? '');
}

function basic(id = emu.clientId, secret = emu.clientSecret): string {
  return `Basic ${Buffer.from(`${id}:${secret}`).toString('base64')}`;
}

async function tokenRequest(fields: Record<string, string>, authorization: string | null = basic(), path = '/oauth2/token'): Promise<{ status: number; body: Record<string, unknown>; headers: Headers }> {
  const headers: Record<string, string> = { 'content-type': 'application/x-www-form-urlencoded' };
  if (authorization !== null) headers.authorization = authorization;
  const answer = await fetch(`${emu.apiUrl}/v10${path}`, { method: 'POST', headers, body: new URLSearchParams(fields) });
  return { status: answer.status, body: (await answer.json()) as Record<string, unknown>, headers: answer.headers };
}

async function exchange(code: string, verifier: string, redirectUri = REDIRECT): Promise<{ status: number; body: Record<string, unknown>; headers: Headers }> {
  return tokenRequest({ grant_type: 'authorization_code', code, redirect_uri: redirectUri, code_verifier: verifier });
}

async function signIn(userId: string, scope = 'identify guilds'): Promise<{ access: string; refresh: string }> {
  const { verifier, challenge } = pkce();
  const back = await consent(codeRequest(challenge, { scope }), userId);
  const { status, body } = await exchange(back.searchParams.get('code') ?? '', verifier);
  expect(status).toBe(200);
  return { access: String(body.access_token), refresh: String(body.refresh_token) };
}

async function asUser(path: string, accessToken: string): Promise<{ status: number; body: unknown }> {
  const answer = await fetch(`${emu.apiUrl}/v10${path}`, { headers: { authorization: `Bearer ${accessToken}` } });
  return { status: answer.status, body: await answer.json() };
}

describe('the authorization code flow with PKCE', () => {
  it('signs a member in: consent page, redirect with code and state, token exchange, then the user and their guilds', async () => {
    const { verifier, challenge } = pkce();
    const page = await fetch(codeRequest(challenge), { redirect: 'manual' });
    const html = await page.text();
    expect(page.headers.get('content-type')).toContain('text/html');
    expect(html).toContain('Music Bot wants to access your account');
    expect(html).toContain('@alice');
    expect(html).not.toContain('@Music Bot');

    const back = await consent(codeRequest(challenge), alice.id);
    expect(`${back.origin}${back.pathname}`).toBe(REDIRECT);
    expect(back.searchParams.get('state')).toBe('state-123');
    expect(back.searchParams.get('iss')).toBe(emu.webUrl);
    const code = back.searchParams.get('code') ?? '';
    expect(code).not.toBe('');

    const { status, body, headers } = await exchange(code, verifier);
    expect(status).toBe(200);
    expect(headers.get('cache-control')).toBe('no-store');
    expect(body).toMatchObject({ token_type: 'Bearer', expires_in: ACCESS_TOKEN_LIFETIME_SECONDS, scope: 'identify guilds' });
    expect(body.access_token).toEqual(expect.any(String));
    expect(body.refresh_token).toEqual(expect.any(String));

    const me = await asUser('/users/@me', String(body.access_token));
    expect(me.status).toBe(200);
    expect(me.body).toMatchObject({ id: alice.id, username: 'alice', locale: 'en-US' });
    expect(me.body).not.toHaveProperty('email');
    const guilds = await asUser('/users/@me/guilds', String(body.access_token));
    expect(guilds.status).toBe(200);
    expect((guilds.body as RESTAPIPartialCurrentUserGuild[]).map((entry) => entry.id)).toEqual([guild.id]);
    expect(emu.oauth2Authorizations(alice.id)).toEqual([expect.objectContaining({ scopes: ['identify', 'guilds'], grantType: 'authorization_code', revoked: false })]);
    expect(emu.findings).toEqual([]);
  });

  it('escapes what it shows and carries: a hostile user name and state run no script, and the state comes back intact', async () => {
    const hostile = emu.addMember(guild.id, { username: '<script>alert(1)</script>', globalName: '"><img src=x onerror=alert(2)>' });
    const { challenge } = pkce();
    const state = '"><script>alert(3)</script>&x=1';
    const html = await (await fetch(codeRequest(challenge, { state }), { redirect: 'manual' })).text();
    expect(html).not.toMatch(/<script|<img/i);
    expect(html).toContain('&#60;script&#62;alert(1)');
    const back = await consent(codeRequest(challenge, { state }), hostile.id);
    expect(back.searchParams.get('state')).toBe(state);
  });

  it('refuses a wrong code_verifier, and the code is spent by it', async () => {
    const { verifier, challenge } = pkce();
    const back = await consent(codeRequest(challenge), alice.id);
    const code = back.searchParams.get('code') ?? '';
    const wrong = await exchange(code, pkce().verifier);
    expect(wrong.status).toBe(400);
    expect(wrong.body).toEqual({ error: 'invalid_grant', error_description: 'Invalid "code_verifier" in request.' });
    const retried = await exchange(code, verifier);
    expect(retried.body).toMatchObject({ error: 'invalid_grant' });
  });

  it('takes a code once: a second exchange fails and revokes the tokens the first one bought', async () => {
    const { verifier, challenge } = pkce();
    const back = await consent(codeRequest(challenge), alice.id);
    const code = back.searchParams.get('code') ?? '';
    const first = await exchange(code, verifier);
    expect(first.status).toBe(200);
    expect((await asUser('/users/@me', String(first.body.access_token))).status).toBe(200);

    const second = await exchange(code, verifier);
    expect(second.status).toBe(400);
    expect(second.body).toEqual({ error: 'invalid_grant', error_description: 'Invalid "code" in request.' });
    expect(await asUser('/users/@me', String(first.body.access_token))).toEqual({ status: 401, body: { message: '401: Unauthorized', code: 0 } });
  });

  it('lets a code live 100 seconds', async () => {
    const { verifier, challenge } = pkce();
    const back = await consent(codeRequest(challenge), alice.id);
    emu.clock.advance(AUTHORIZATION_CODE_LIFETIME_MS);
    const late = await exchange(back.searchParams.get('code') ?? '', verifier);
    expect(late.body).toMatchObject({ error: 'invalid_grant' });
  });

  it('shows an error page, and sends nobody anywhere, for a redirect_uri that is not registered', async () => {
    const { challenge } = pkce();
    const page = await fetch(codeRequest(challenge, { redirect_uri: 'https://attacker.example/steal' }), { redirect: 'manual' });
    expect(page.status).toBe(400);
    expect(page.headers.get('location')).toBeNull();
    expect(await page.text()).toContain('Invalid OAuth2 redirect_uri');
    const unknownClient = await fetch(codeRequest(challenge, { client_id: '1234' }), { redirect: 'manual' });
    expect(unknownClient.status).toBe(400);
    expect(unknownClient.headers.get('location')).toBeNull();
  });

  it('refuses a token exchange whose redirect_uri differs from the authorize request', async () => {
    emu.setOAuth2Redirects([REDIRECT, 'http://127.0.0.1:9/other']);
    try {
      const { verifier, challenge } = pkce();
      const back = await consent(codeRequest(challenge), alice.id);
      const answer = await exchange(back.searchParams.get('code') ?? '', verifier, 'http://127.0.0.1:9/other');
      expect(answer.body).toEqual({ error: 'invalid_grant', error_description: 'Invalid "redirect_uri" in request.' });
    } finally {
      emu.setOAuth2Redirects([REDIRECT]);
    }
  });

  it('sends a cancelled approval back with error=access_denied and the state, and no code', async () => {
    const { challenge } = pkce();
    const back = await consent(codeRequest(challenge), alice.id, 'cancel');
    expect(`${back.origin}${back.pathname}`).toBe(REDIRECT);
    expect(back.searchParams.get('error')).toBe('access_denied');
    expect(back.searchParams.get('state')).toBe('state-123');
    expect(back.searchParams.has('code')).toBe(false);
  });

  it('skips the page with prompt=none for a signed-in user who already granted the scopes, and only then', async () => {
    const { challenge } = pkce();
    const page = await fetch(codeRequest(challenge), { redirect: 'manual' });
    const approved = await fetch(new URL('/oauth2/authorize', emu.webUrl), {
      method: 'POST',
      redirect: 'manual',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ ...formFields(await page.text()), user_id: bob.id, decision: 'approve' }),
    });
    const cookie = (approved.headers.get('set-cookie') ?? '').split(';')[0] ?? '';
    expect(cookie).toBe(`emulator_user=${bob.id}`);

    const silent = await fetch(codeRequest(challenge, { prompt: 'none' }), { redirect: 'manual', headers: { cookie } });
    expect(silent.status).toBe(302);
    expect(new URL(silent.headers.get('location') ?? '').searchParams.get('code')).toEqual(expect.any(String));
    const wider = await fetch(codeRequest(challenge, { prompt: 'none', scope: 'identify guilds email' }), { redirect: 'manual', headers: { cookie } });
    expect(wider.status).toBe(200);
    const signedOut = await fetch(codeRequest(challenge, { prompt: 'none' }), { redirect: 'manual' });
    expect(signedOut.status).toBe(200);
  });

  it('offers only the user the host signed in to the web, whatever the cookie says, and refuses a form drawn for another', async () => {
    const { verifier, challenge } = pkce();
    const post = (fields: Record<string, string>) =>
      fetch(new URL('/oauth2/authorize', emu.webUrl), { method: 'POST', redirect: 'manual', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: new URLSearchParams(fields) });
    try {
      emu.signInWeb(alice.id);
      const page = await fetch(codeRequest(challenge), { redirect: 'manual', headers: { cookie: `emulator_user=${bob.id}` } });
      const html = await page.text();
      expect(html).toContain('data-testid="signed-in-as">Signed in as <strong>@alice</strong>');
      expect(html).not.toContain('<select');
      const fields = formFields(html);
      expect(fields.user_id).toBe(alice.id);

      // The persona changed while the page was open: the form drawn for alice signs nobody in.
      emu.signInWeb(bob.id);
      const stale = await post({ ...fields, decision: 'approve' });
      expect(stale.status).toBe(400);
      expect(await stale.text()).toContain('Signed in as @bob now');
      const approved = await post({ ...formFields(await (await fetch(codeRequest(challenge), { redirect: 'manual' })).text()), decision: 'approve' });
      expect(approved.status).toBe(302);
      const tokens = await exchange(new URL(approved.headers.get('location') ?? '').searchParams.get('code') ?? '', verifier);
      expect(await asUser('/users/@me', String(tokens.body.access_token))).toMatchObject({ status: 200, body: { id: bob.id } });
      expect(() => emu.signInWeb(emu.botUser.id)).toThrow(/bots cannot sign in/);
    } finally {
      emu.signInWeb(undefined);
    }
    expect(await (await fetch(codeRequest(challenge), { redirect: 'manual' })).text()).toContain('<select id="user_id"');
  });

  it('sends errors after a valid redirect_uri back to it: an unknown scope, a plain PKCE challenge', async () => {
    const { challenge } = pkce();
    const scope = await fetch(codeRequest(challenge, { scope: 'identify everything' }), { redirect: 'manual' });
    expect(scope.status).toBe(302);
    expect(new URL(scope.headers.get('location') ?? '').searchParams.get('error')).toBe('invalid_scope');
    const plain = await fetch(codeRequest(challenge, { code_challenge_method: 'plain' }), { redirect: 'manual' });
    expect(new URL(plain.headers.get('location') ?? '').searchParams.get('error')).toBe('invalid_request');
  });
});

describe('tokens', () => {
  it('refreshes: new tokens, and the old ones stop working', async () => {
    const first = await signIn(alice.id);
    const refreshed = await tokenRequest({ grant_type: 'refresh_token', refresh_token: first.refresh });
    expect(refreshed.status).toBe(200);
    expect(refreshed.body).toMatchObject({ token_type: 'Bearer', scope: 'identify guilds' });
    expect(refreshed.body.access_token).not.toBe(first.access);
    expect((await asUser('/users/@me', String(refreshed.body.access_token))).status).toBe(200);
    expect((await asUser('/users/@me', first.access)).status).toBe(401);
    const again = await tokenRequest({ grant_type: 'refresh_token', refresh_token: first.refresh });
    expect(again.body).toMatchObject({ error: 'invalid_grant' });
  });

  it('revokes: the access token then answers 401 and the refresh token is refused', async () => {
    const tokens = await signIn(alice.id);
    const revoked = await tokenRequest({ token: tokens.access, token_type_hint: 'access_token' }, basic(), '/oauth2/token/revoke');
    expect(revoked.status).toBe(200);
    expect(await asUser('/users/@me', tokens.access)).toEqual({ status: 401, body: { message: '401: Unauthorized', code: 0 } });
    expect((await tokenRequest({ grant_type: 'refresh_token', refresh_token: tokens.refresh })).body).toMatchObject({ error: 'invalid_grant' });
    expect(emu.findings).toEqual([]);
  });

  it('lets an access token expire after expires_in', async () => {
    const tokens = await signIn(alice.id);
    emu.clock.advance(ACCESS_TOKEN_LIFETIME_SECONDS * 1000);
    expect((await asUser('/users/@me', tokens.access)).status).toBe(401);
  });

  it('refuses a wrong client secret with 401 invalid_client, and a JSON body as Discord does', async () => {
    const tokens = await signIn(alice.id);
    const wrong = await tokenRequest({ grant_type: 'refresh_token', refresh_token: tokens.refresh }, basic(emu.clientId, 'not-the-secret'));
    expect(wrong.status).toBe(401);
    expect(wrong.body).toMatchObject({ error: 'invalid_client' });
    expect(wrong.headers.get('www-authenticate')).toMatch(/^Basic/);

    const json = await fetch(`${emu.apiUrl}/v10/oauth2/token`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: basic() },
      body: JSON.stringify({ grant_type: 'refresh_token', refresh_token: tokens.refresh }),
    });
    expect(json.status).toBe(400);
    expect(await json.json()).toMatchObject({ error: 'unsupported_grant_type' });
    expect(emu.findings).toEqual([expect.objectContaining({ kind: 'unsupported-content-type', operationId: 'oauth2_token' })]);
  });

  it('takes the client id and secret as form fields too, and gives client credentials to the application owner, without a refresh token', async () => {
    const answer = await tokenRequest({ grant_type: 'client_credentials', scope: 'identify', client_id: emu.clientId, client_secret: emu.clientSecret }, null);
    expect(answer.status).toBe(200);
    expect(answer.body).toMatchObject({ token_type: 'Bearer', scope: 'identify' });
    expect(answer.body).not.toHaveProperty('refresh_token');
    const me = await asUser('/users/@me', String(answer.body.access_token));
    expect(me.status).toBe(200);
    expect((me.body as APIUser).username).toBe('music-bot-owner');
    expect(emu.findings).toEqual([]);
  });
});

describe('what an access token may read', () => {
  it('needs the guilds scope for /users/@me/guilds: 401 without it', async () => {
    const tokens = await signIn(alice.id, 'identify');
    expect((await asUser('/users/@me', tokens.access)).status).toBe(200);
    expect(await asUser('/users/@me/guilds', tokens.access)).toEqual({ status: 401, body: { message: '401: Unauthorized', code: 0 } });
  });

  it("lists each guild with the member's permissions as a string: Manage Server for bob, not for alice; everything for the owner", async () => {
    const forAlice = (await asUser('/users/@me/guilds', (await signIn(alice.id)).access)).body as RESTAPIPartialCurrentUserGuild[];
    const forBob = (await asUser('/users/@me/guilds?with_counts=true', (await signIn(bob.id)).access)).body as RESTAPIPartialCurrentUserGuild[];
    const forOwner = (await asUser('/users/@me/guilds', (await signIn(guild.ownerId)).access)).body as RESTAPIPartialCurrentUserGuild[];
    for (const list of [forAlice, forBob, forOwner]) {
      expect(list).toHaveLength(1);
      expect(list[0]).toMatchObject({ id: guild.id, name: 'Moderated guild', icon: null, banner: null, features: [], permissions: expect.stringMatching(/^\d+$/) });
    }
    expect(BigInt(forAlice[0]?.permissions ?? '0') & PermissionFlagsBits.ManageGuild).toBe(0n);
    expect(forAlice[0]?.owner).toBe(false);
    expect(BigInt(forBob[0]?.permissions ?? '0') & PermissionFlagsBits.ManageGuild).toBe(PermissionFlagsBits.ManageGuild);
    const asBot = await fetch(`${emu.apiUrl}/v10/guilds/${guild.id}?with_counts=true`, { headers: { authorization: `Bot ${emu.botToken}` } });
    const { approximate_member_count: members } = (await asBot.json()) as { approximate_member_count: number };
    expect(forBob[0]).toMatchObject({ owner: false, approximate_member_count: members });
    expect(BigInt(forOwner[0]?.permissions ?? '0') & PermissionFlagsBits.Administrator).toBe(PermissionFlagsBits.Administrator);
    expect(forOwner[0]?.owner).toBe(true);
    expect(emu.findings).toEqual([]);
  });

  it('is refused on bot-only routes (401), which the OpenAPI check reports', async () => {
    const tokens = await signIn(alice.id);
    expect((await asUser(`/guilds/${guild.id}`, tokens.access)).status).toBe(401);
    expect(emu.findings).toEqual([expect.objectContaining({ kind: 'invalid-auth', operationId: 'get_guild' })]);
  });
});

describe('scripting a sign-in', () => {
  it('answers the consent page for a user without a browser, with the same checks', async () => {
    const { verifier, challenge } = pkce();
    const back = new URL(emu.answerOAuth2Consent(codeRequest(challenge), bob.id));
    expect(back.searchParams.get('state')).toBe('state-123');
    expect((await exchange(back.searchParams.get('code') ?? '', verifier)).status).toBe(200);
    const cancelled = new URL(emu.answerOAuth2Consent(codeRequest(challenge), bob.id, 'cancel'));
    expect(cancelled.searchParams.get('error')).toBe('access_denied');
    expect(() => emu.answerOAuth2Consent(codeRequest(challenge, { redirect_uri: 'https://attacker.example/' }), bob.id)).toThrow(/redirect_uri/);
    expect(() => emu.answerOAuth2Consent(codeRequest(challenge), emu.botUser.id)).toThrow(/bots cannot sign in/);
  });

  it("gives /users/@me the user's locale, the same one their interactions carry", async () => {
    emu.setUserLocale(alice.id, Locale.French);
    try {
      const tokens = await signIn(alice.id);
      expect((await asUser('/users/@me', tokens.access)).body).toMatchObject({ id: alice.id, locale: 'fr' });
      emu.createChannel(guild.id, { name: 'general' });
      expect(emu.runCommand({ guildId: guild.id, userId: alice.id, name: 'help' }).payload).toMatchObject({ locale: 'fr' });
    } finally {
      emu.setUserLocale(alice.id, Locale.EnglishUS);
    }
  });
});

describe("the OpenAPI check on OAuth2's routes", () => {
  it('checks form bodies of the token routes against their documented shape', async () => {
    const { verifier, challenge } = pkce();
    const back = await consent(codeRequest(challenge), alice.id);
    const missing = await tokenRequest({ grant_type: 'authorization_code', code: back.searchParams.get('code') ?? '', code_verifier: verifier });
    expect(missing.body).toMatchObject({ error: 'invalid_request' });
    expect(emu.findings).toEqual([expect.objectContaining({ kind: 'invalid-body', operationId: 'oauth2_token' })]);
  });

  it("demands the scopes Discord's description names for the routes a Bearer token may call", () => {
    const spec = OpenApiSpec.load();
    expect(spec.oauth2Scopes('GET', '/users/@me')).toContain('identify');
    expect(spec.oauth2Scopes('GET', '/users/@me/guilds')).toContain('guilds');
    expect(spec.oauth2Scopes('GET', `/guilds/${guild.id}`)).toBeNull();
  });
});

describe('a public client', () => {
  it('needs PKCE at the authorize page and exchanges the code without a secret', async () => {
    const publicEmu = await startDiscordEmulator({ oauth2: { publicClient: true, redirectUris: [REDIRECT] } });
    try {
      const member = publicEmu.addMember(publicEmu.createGuild({ name: 'Public' }).id, { username: 'dana' });
      const noPkce = await fetch(`${publicEmu.webUrl}/oauth2/authorize?response_type=code&client_id=${publicEmu.clientId}&scope=identify&redirect_uri=${encodeURIComponent(REDIRECT)}`, { redirect: 'manual' });
      expect(new URL(noPkce.headers.get('location') ?? '').searchParams.get('error')).toBe('invalid_request');

      const { verifier, challenge } = pkce();
      const query = new URLSearchParams({ response_type: 'code', client_id: publicEmu.clientId, scope: 'identify', redirect_uri: REDIRECT, code_challenge: challenge, code_challenge_method: 'S256' });
      const approved = await fetch(`${publicEmu.webUrl}/oauth2/authorize`, {
        method: 'POST',
        redirect: 'manual',
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
        body: new URLSearchParams({ ...Object.fromEntries(query), user_id: member.id, decision: 'approve' }),
      });
      const code = new URL(approved.headers.get('location') ?? '').searchParams.get('code') ?? '';
      const answer = await fetch(`${publicEmu.apiUrl}/v10/oauth2/token`, {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
        body: new URLSearchParams({ grant_type: 'authorization_code', code, redirect_uri: REDIRECT, code_verifier: verifier, client_id: publicEmu.clientId }),
      });
      expect(answer.status).toBe(200);
      expect(publicEmu.findings).toEqual([]);
    } finally {
      await publicEmu.close();
    }
  });
});
