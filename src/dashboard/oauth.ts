/**
 * Sign in with Discord: the authorization code grant with PKCE (S256) and `state`, scopes
 * `identify guilds`. The authorize page is on DISCORD_WEB_URL; the token, revocation and user
 * routes on DISCORD_API_URL, like every other call. Tokens are returned to the caller only: an
 * error here never carries one (nor the client secret) in its message.
 * Why hand-written rather than a library: docs/decisions/dashboard-sign-in.md
 */
import { createHash, randomBytes } from 'node:crypto';
import { z } from 'zod';

export const SCOPES = ['identify', 'guilds'] as const;

export interface OAuthClientOptions {
  readonly clientId: string;
  readonly clientSecret: string;
  /** `https://discord.com`: where the authorize page is. */
  readonly webUrl: string;
  /** `https://discord.com/api`: where the token and user routes are. */
  readonly apiUrl: string;
  /** `PUBLIC_URL/dashboard/callback`, as registered in the developer portal. */
  readonly redirectUri: string;
  readonly timeoutMs?: number;
}

/**
 * What a sign-in keeps of Discord's answer. The refresh token is dropped: a session ends no later
 * than its access token, so it would be a longer-lived secret kept for nothing.
 */
export interface Tokens {
  readonly accessToken: string;
  /** When the access token stops working (ms since the epoch); the session ends by then. */
  readonly expiresAt: number;
}

export interface DiscordUser {
  readonly id: string;
  readonly name: string;
  /** The member's Discord client language (`locale`), for the page's language. */
  readonly locale: string | undefined;
}

export interface UserGuild {
  readonly id: string;
  readonly name: string;
}

/** Discord refused or failed: `status` and Discord's `error` code only, never the request. */
export class OAuthError extends Error {
  constructor(
    readonly reason: string,
    readonly status?: number,
  ) {
    super(`Discord OAuth2: ${reason}${status === undefined ? '' : ` (HTTP ${status})`}`);
    this.name = 'OAuthError';
  }
}

/** A random, URL-safe string of `bytes` bytes: states, verifiers, session ids. */
export function randomToken(bytes = 32): string {
  return randomBytes(bytes).toString('base64url');
}

/** RFC 7636's S256 challenge of a verifier. */
export function challengeOf(verifier: string): string {
  return createHash('sha256').update(verifier).digest('base64url');
}

const tokenAnswer = z.object({
  access_token: z.string().min(1),
  refresh_token: z.string().min(1).optional(),
  expires_in: z.number().positive(),
  scope: z.string(),
  token_type: z.string(),
});
const userAnswer = z.object({ id: z.string(), username: z.string(), global_name: z.string().nullish(), locale: z.string().optional() });
const guildsAnswer = z.array(z.object({ id: z.string(), name: z.string() }));

export class DiscordOAuth {
  readonly #options: OAuthClientOptions;

  constructor(options: OAuthClientOptions) {
    this.#options = options;
  }

  /** Where to send the browser to sign in. `prompt=none` skips the consent page for a member who already allowed the app. */
  authorizeUrl(input: { state: string; verifier: string }): string {
    const url = new URL('/oauth2/authorize', this.#options.webUrl);
    url.search = new URLSearchParams({
      response_type: 'code',
      client_id: this.#options.clientId,
      scope: SCOPES.join(' '),
      state: input.state,
      redirect_uri: this.#options.redirectUri,
      code_challenge: challengeOf(input.verifier),
      code_challenge_method: 'S256',
      prompt: 'none',
    }).toString();
    return url.toString();
  }

  /** Exchanges the code from the callback, with the verifier kept since the authorize redirect. */
  async exchangeCode(code: string, verifier: string, now = Date.now()): Promise<Tokens> {
    const answer = await this.#post('/oauth2/token', {
      grant_type: 'authorization_code',
      code,
      redirect_uri: this.#options.redirectUri,
      code_verifier: verifier,
    });
    const parsed = tokenAnswer.safeParse(answer);
    if (!parsed.success) throw new OAuthError('unexpected token answer');
    const granted = parsed.data.scope.split(/\s+/);
    if (!SCOPES.every((scope) => granted.includes(scope))) throw new OAuthError('scopes not granted');
    return { accessToken: parsed.data.access_token, expiresAt: now + parsed.data.expires_in * 1000 };
  }

  /** Revokes a token (RFC 7009): revoking the access token ends the whole grant on Discord. */
  async revoke(token: string, hint: 'access_token' | 'refresh_token' = 'access_token'): Promise<void> {
    await this.#post('/oauth2/token/revoke', { token, token_type_hint: hint });
  }

  async user(accessToken: string): Promise<DiscordUser> {
    const parsed = userAnswer.safeParse(await this.#get('/users/@me', accessToken));
    if (!parsed.success) throw new OAuthError('unexpected user answer');
    return { id: parsed.data.id, name: parsed.data.global_name ?? parsed.data.username, locale: parsed.data.locale };
  }

  /** The servers the member is in (the first 200, Discord's page). */
  async guilds(accessToken: string): Promise<UserGuild[]> {
    const parsed = guildsAnswer.safeParse(await this.#get('/users/@me/guilds?limit=200', accessToken));
    if (!parsed.success) throw new OAuthError('unexpected guilds answer');
    return parsed.data.map((guild) => ({ id: guild.id, name: guild.name }));
  }

  #url(path: string): string {
    return `${this.#options.apiUrl.replace(/\/$/, '')}/v10${path}`;
  }

  async #post(path: string, form: Record<string, string>): Promise<unknown> {
    const basic = Buffer.from(`${encodeURIComponent(this.#options.clientId)}:${encodeURIComponent(this.#options.clientSecret)}`).toString('base64');
    return this.#send(this.#url(path), {
      method: 'POST',
      headers: { authorization: `Basic ${basic}`, 'content-type': 'application/x-www-form-urlencoded', accept: 'application/json' },
      body: new URLSearchParams(form).toString(),
    });
  }

  async #get(path: string, accessToken: string): Promise<unknown> {
    return this.#send(this.#url(path), { method: 'GET', headers: { authorization: `Bearer ${accessToken}`, accept: 'application/json' } });
  }

  async #send(url: string, init: RequestInit): Promise<unknown> {
    let response: Response;
    try {
      response = await fetch(url, { ...init, signal: AbortSignal.timeout(this.#options.timeoutMs ?? 10_000) });
    } catch (error) {
      throw new OAuthError(error instanceof Error && error.name === 'TimeoutError' ? 'timed out' : 'unreachable');
    }
    const text = await response.text();
    let body: unknown;
    try {
      body = text === '' ? {} : JSON.parse(text);
    } catch {
      body = undefined;
    }
    if (!response.ok) {
      const code = typeof body === 'object' && body !== null && 'error' in body && typeof body.error === 'string' ? body.error : 'refused';
      throw new OAuthError(code.slice(0, 60), response.status);
    }
    return body;
  }
}
