/**
 * OAuth2 as Discord runs it for the emulator's one application: its registered redirects, the
 * authorization codes the authorize page hands out, and the tokens `/oauth2/token` trades them
 * for (RFC 6749 with PKCE, RFC 7636, and revocation, RFC 7009). No HTTP here: the authorize page
 * (./authorize-page.ts) and the token routes (../endpoints/oauth2.ts) call in.
 */
import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';
import { OAuth2Scopes } from 'discord-api-types/v10';
import type { EmulatorClock } from '../clock.js';

/** How long a code lives: Discord's 100 seconds. */
export const AUTHORIZATION_CODE_LIFETIME_MS = 100_000;
/** `expires_in` of every access token: Discord's 7 days. */
export const ACCESS_TOKEN_LIFETIME_SECONDS = 604_800;

const KNOWN_SCOPES = new Set<string>(Object.values(OAuth2Scopes));
/** Scopes whose consent screen picks a server or channel (adding the bot, a webhook): not emulated. */
const UNEMULATED_SCOPES = new Set<string>([OAuth2Scopes.Bot, OAuth2Scopes.WebhookIncoming, OAuth2Scopes.ApplicationsCommands]);
const PKCE_CHALLENGE = /^[A-Za-z0-9_-]{43}$/;
const PKCE_VERIFIER = /^[A-Za-z0-9._~-]{43,128}$/;

export type OAuth2ErrorCode =
  | 'invalid_request'
  | 'invalid_client'
  | 'invalid_grant'
  | 'unauthorized_client'
  | 'unsupported_grant_type'
  | 'invalid_scope';

/** An OAuth2 error answer: `{ error, error_description }`, 401 for a client that failed to authenticate, else 400. */
export class OAuth2Error extends Error {
  readonly error: OAuth2ErrorCode;
  readonly status: number;

  constructor(error: OAuth2ErrorCode, description: string) {
    super(description);
    this.error = error;
    this.status = error === 'invalid_client' ? 401 : 400;
  }

  toBody(): { error: OAuth2ErrorCode; error_description: string } {
    return { error: this.error, error_description: this.message };
  }
}

/** A valid authorize request, as the consent page shows it and the approval turns into a code. */
export interface AuthorizeRequest {
  clientId: string;
  /** Where the answer goes: the given redirect_uri, or the only registered one when none was given. */
  redirectUri: string;
  scopes: string[];
  state: string | null;
  codeChallenge: string | null;
  prompt: 'consent' | 'none';
}

/** What an authorize request leads to: the consent page, an error page (nowhere safe to send the user), or a redirect with `error`. */
export type AuthorizeCheck =
  | { kind: 'consent'; request: AuthorizeRequest }
  | { kind: 'error-page'; message: string }
  | { kind: 'error-redirect'; location: string };

/** One authorization a user gave (or client credentials): its scopes and current tokens. */
export interface OAuth2Authorization {
  userId: string;
  scopes: string[];
  grantType: 'authorization_code' | 'client_credentials';
  /** Emulator clock time it was granted. */
  createdAt: number;
  /** Emulator clock time the current access token stops working. */
  expiresAt: number;
  /** Revoked (by `/oauth2/token/revoke`, a reused code, or the user); its tokens answer 401 and `invalid_grant`. */
  revoked: boolean;
  /** How many times it was refreshed. */
  refreshes: number;
}

interface StoredGrant extends OAuth2Authorization {
  accessToken: string;
  refreshToken: string | null;
}

interface StoredCode {
  request: AuthorizeRequest;
  userId: string;
  expiresAt: number;
  /** The grant it was exchanged for; a second exchange revokes it. */
  exchangedFor: StoredGrant | null;
}

/** The body of a token answer. */
export interface TokenAnswer {
  access_token: string;
  token_type: 'Bearer';
  expires_in: number;
  refresh_token?: string;
  scope: string;
}

export interface OAuth2Options {
  clock: EmulatorClock;
  clientId: string;
  clientSecret: string;
  /** The portal's "Public Client": the token routes take no secret, and authorize needs PKCE. */
  publicClient: boolean;
  redirectUris: readonly string[];
  /** The issuer the redirect names in `iss` (RFC 9207): the emulator's web origin. */
  issuer: () => string;
  /** The application owner's user id: client credentials act as this user. */
  ownerId: () => string;
}

/** The application's OAuth2 state and rules. */
export class OAuth2Authorizations {
  readonly #options: OAuth2Options;
  #redirectUris: string[] = [];
  readonly #codes = new Map<string, StoredCode>();
  readonly #grants: StoredGrant[] = [];
  /** The scopes each user approved on the page (Discord's "Authorized Apps"), until they remove the app. */
  readonly #consents = new Map<string, Set<string>>();

  constructor(options: OAuth2Options) {
    this.#options = options;
    this.setRedirectUris(options.redirectUris);
  }

  get clientId(): string {
    return this.#options.clientId;
  }

  get redirectUris(): readonly string[] {
    return this.#redirectUris;
  }

  /** Replaces the registered redirects, as saving them in the developer portal does; each an absolute URL without a fragment. */
  setRedirectUris(uris: readonly string[]): void {
    for (const uri of uris) {
      let url: URL;
      try {
        url = new URL(uri);
      } catch {
        throw new Error(`redirect URI ${JSON.stringify(uri)} is not an absolute URL`);
      }
      if (url.hash !== '' || uri.includes('#')) throw new Error(`redirect URI ${uri} has a fragment, which OAuth2 forbids`);
    }
    this.#redirectUris = [...new Set(uris)];
  }

  /** Every authorization granted so far, the user's only when `userId` is given. */
  list(userId?: string): OAuth2Authorization[] {
    return this.#grants
      .filter((grant) => userId === undefined || grant.userId === userId)
      .map(({ userId: user, scopes, grantType, createdAt, expiresAt, revoked, refreshes }) => ({
        userId: user,
        scopes: [...scopes],
        grantType,
        createdAt,
        expiresAt,
        revoked,
        refreshes,
      }));
  }

  /** The user removes the app under Settings, Authorized Apps: every token of theirs stops working. */
  deauthorize(userId: string): number {
    this.#consents.delete(userId);
    let count = 0;
    for (const grant of this.#grants) {
      if (grant.userId === userId && !grant.revoked) {
        grant.revoked = true;
        count += 1;
      }
    }
    return count;
  }

  /** Whether the user already approved every one of `scopes` (what `prompt=none` needs to skip the page). */
  hasGranted(userId: string, scopes: readonly string[]): boolean {
    const consented = this.#consents.get(userId);
    return consented !== undefined && scopes.every((scope) => consented.has(scope));
  }

  // ---- the authorize page ----

  /** Checks an authorize request's parameters in the order that decides where an error may go. */
  checkAuthorize(params: URLSearchParams): AuthorizeCheck {
    const clientId = params.get('client_id');
    if (!clientId) return { kind: 'error-page', message: 'Invalid OAuth2 client_id: none was given.' };
    if (clientId !== this.#options.clientId) return { kind: 'error-page', message: 'Unknown Application: no application has this client_id.' };
    const given = params.get('redirect_uri');
    let redirectUri: string;
    if (given === null) {
      if (this.#redirectUris.length !== 1) return { kind: 'error-page', message: 'Invalid OAuth2 redirect_uri: none was given, and the application has not exactly one registered.' };
      redirectUri = this.#redirectUris[0] as string;
    } else if (!this.#redirectUris.includes(given)) {
      return { kind: 'error-page', message: 'Invalid OAuth2 redirect_uri: it is not one of the redirects registered for the application.' };
    } else {
      redirectUri = given;
    }
    const state = params.get('state');
    const refuse = (error: string, description: string): AuthorizeCheck => ({
      kind: 'error-redirect',
      location: this.#redirect(redirectUri, { error, error_description: description, state }),
    });
    const responseType = params.get('response_type');
    if (responseType !== 'code') {
      return responseType === 'token'
        ? { kind: 'error-page', message: 'The implicit grant (response_type=token) is not emulated; use response_type=code.' }
        : refuse('unsupported_response_type', `Unsupported response_type ${JSON.stringify(responseType)}.`);
    }
    const scopes = splitScopes(params.get('scope'));
    if (scopes.length === 0) return refuse('invalid_scope', 'No scope was requested.');
    const unknown = scopes.filter((scope) => !KNOWN_SCOPES.has(scope));
    if (unknown.length > 0) return refuse('invalid_scope', `Invalid scope: ${unknown.join(' ')}.`);
    const unemulated = scopes.filter((scope) => UNEMULATED_SCOPES.has(scope));
    if (unemulated.length > 0) return { kind: 'error-page', message: `The scope ${unemulated.join(' ')} (adding the app to a server) is not emulated.` };
    const challenge = params.get('code_challenge');
    const method = params.get('code_challenge_method');
    if (challenge === null && method !== null) return refuse('invalid_request', 'code_challenge_method without code_challenge.');
    if (challenge !== null && method !== 'S256') return refuse('invalid_request', 'Only the code_challenge_method S256 is supported.');
    if (challenge !== null && !PKCE_CHALLENGE.test(challenge)) return refuse('invalid_request', 'Invalid code_challenge: it must be 43 characters of base64url.');
    if (challenge === null && this.#options.publicClient) return refuse('invalid_request', 'A public client must send a PKCE code_challenge.');
    const prompt = params.get('prompt') ?? 'consent';
    if (prompt !== 'consent' && prompt !== 'none') return refuse('invalid_request', `Invalid prompt ${JSON.stringify(prompt)}: consent or none.`);
    return {
      kind: 'consent',
      request: { clientId, redirectUri, scopes, state, codeChallenge: challenge, prompt },
    };
  }

  /** The user approved: a new code, and where the browser goes with it. */
  approve(request: AuthorizeRequest, userId: string): string {
    const consented = this.#consents.get(userId) ?? new Set<string>();
    for (const scope of request.scopes) consented.add(scope);
    this.#consents.set(userId, consented);
    const code = token(30);
    this.#codes.set(code, { request, userId, expiresAt: this.#options.clock.now() + AUTHORIZATION_CODE_LIFETIME_MS, exchangedFor: null });
    return this.#redirect(request.redirectUri, { code, state: request.state });
  }

  /** The user cancelled: where the browser goes with `error=access_denied`. */
  deny(request: AuthorizeRequest): string {
    return this.#redirect(request.redirectUri, { error: 'access_denied', error_description: 'The resource owner or authorization server denied the request', state: request.state });
  }

  #redirect(uri: string, params: Record<string, string | null>): string {
    const url = new URL(uri);
    for (const [name, value] of Object.entries(params)) if (value !== null) url.searchParams.set(name, value);
    url.searchParams.set('iss', this.#options.issuer());
    return url.toString();
  }

  // ---- the token routes ----

  /** `POST /oauth2/token`: one of the three grants, after the client authenticates. */
  token(form: Record<string, string>, authorization: string | undefined): TokenAnswer {
    const grantType = form.grant_type;
    if (grantType !== 'authorization_code' && grantType !== 'refresh_token' && grantType !== 'client_credentials') {
      throw new OAuth2Error('unsupported_grant_type', `Grant type ${grantType ?? 'None'} is not supported`);
    }
    const client = this.#authenticateClient(form, authorization);
    if (grantType === 'authorization_code') return this.#exchangeCode(form);
    if (grantType === 'refresh_token') return this.#refresh(form);
    if (client.public) throw new OAuth2Error('unauthorized_client', 'A public client cannot use client credentials.');
    return this.#clientCredentials(form);
  }

  /** `POST /oauth2/token/revoke`: revokes the authorization the token (access or refresh) belongs to; an unknown token is no error (RFC 7009). */
  revoke(form: Record<string, string>, authorization: string | undefined): void {
    this.#authenticateClient(form, authorization);
    const value = form.token;
    if (!value) throw new OAuth2Error('invalid_request', 'Missing "token" in request.');
    const hint = form.token_type_hint;
    if (hint !== undefined && hint !== 'access_token' && hint !== 'refresh_token') {
      throw new OAuth2Error('invalid_request', `Invalid "token_type_hint" in request.`);
    }
    const grant = this.#grants.find((candidate) => candidate.accessToken === value || candidate.refreshToken === value);
    if (grant) grant.revoked = true;
  }

  /** The user and scopes behind an access token, or null when it is unknown, revoked or expired. */
  resolve(accessToken: string): { userId: string; scopes: readonly string[] } | null {
    const grant = this.#grants.find((candidate) => candidate.accessToken === accessToken);
    if (!grant || grant.revoked || this.#options.clock.now() >= grant.expiresAt) return null;
    return { userId: grant.userId, scopes: grant.scopes };
  }

  /**
   * HTTP Basic (client_secret_basic) or form fields (client_secret_post), never both; no secret
   * at all only for a public client.
   */
  #authenticateClient(form: Record<string, string>, authorization: string | undefined): { public: boolean } {
    const basic = parseBasic(authorization);
    if (basic === 'malformed') throw new OAuth2Error('invalid_client', 'Invalid client: malformed HTTP Basic credentials.');
    if (basic && form.client_secret !== undefined) throw new OAuth2Error('invalid_request', 'More than one client authentication method.');
    if (basic && form.client_id !== undefined && form.client_id !== basic.id) throw new OAuth2Error('invalid_client', 'Invalid client: client_id differs from the Basic credentials.');
    const id = basic ? basic.id : form.client_id;
    const secret = basic ? basic.secret : form.client_secret;
    if (!id || id !== this.#options.clientId) throw new OAuth2Error('invalid_client', 'Invalid client.');
    if (secret === undefined) {
      if (!this.#options.publicClient) throw new OAuth2Error('invalid_client', 'Invalid client: missing client_secret.');
      return { public: true };
    }
    if (!sameSecret(secret, this.#options.clientSecret)) throw new OAuth2Error('invalid_client', 'Invalid client.');
    return { public: false };
  }

  #exchangeCode(form: Record<string, string>): TokenAnswer {
    const value = form.code;
    if (!value) throw new OAuth2Error('invalid_request', 'Missing "code" in request.');
    const code = this.#codes.get(value);
    if (!code || this.#options.clock.now() >= code.expiresAt) throw new OAuth2Error('invalid_grant', 'Invalid "code" in request.');
    if (code.exchangedFor) {
      // A code presented twice may have been stolen: what it bought is revoked too (RFC 6749, 4.1.2).
      code.exchangedFor.revoked = true;
      throw new OAuth2Error('invalid_grant', 'Invalid "code" in request.');
    }
    const redirectUri = form.redirect_uri;
    // Discord's token exchange names redirect_uri among its required fields, given at authorize or not.
    if (redirectUri === undefined) throw new OAuth2Error('invalid_request', 'Missing "redirect_uri" in request.');
    if (redirectUri !== code.request.redirectUri) throw new OAuth2Error('invalid_grant', 'Invalid "redirect_uri" in request.');
    const verifier = form.code_verifier;
    if (code.request.codeChallenge !== null || verifier !== undefined) {
      if (verifier === undefined || !PKCE_VERIFIER.test(verifier) || code.request.codeChallenge !== s256(verifier)) {
        // A wrong proof spends the code: it is not tried again.
        this.#codes.delete(value);
        throw new OAuth2Error('invalid_grant', 'Invalid "code_verifier" in request.');
      }
    }
    const grant = this.#grant(code.userId, code.request.scopes, 'authorization_code');
    code.exchangedFor = grant;
    return answer(grant);
  }

  #refresh(form: Record<string, string>): TokenAnswer {
    const value = form.refresh_token;
    if (!value) throw new OAuth2Error('invalid_request', 'Missing "refresh_token" in request.');
    const grant = this.#grants.find((candidate) => candidate.refreshToken === value);
    if (!grant || grant.revoked) throw new OAuth2Error('invalid_grant', 'Invalid "refresh_token" in request.');
    const asked = form.scope === undefined ? grant.scopes : splitScopes(form.scope);
    if (asked.length === 0 || asked.some((scope) => !grant.scopes.includes(scope))) {
      throw new OAuth2Error('invalid_scope', 'The requested scope exceeds the scope granted.');
    }
    // Both tokens are replaced: the old access token stops working at once, the old refresh token too.
    grant.accessToken = token(30);
    grant.refreshToken = token(30);
    grant.scopes = [...asked];
    grant.expiresAt = this.#options.clock.now() + ACCESS_TOKEN_LIFETIME_SECONDS * 1000;
    grant.refreshes += 1;
    return answer(grant);
  }

  #clientCredentials(form: Record<string, string>): TokenAnswer {
    const scopes = splitScopes(form.scope);
    if (scopes.length === 0) throw new OAuth2Error('invalid_scope', 'No scope was requested.');
    const invalid = scopes.filter((scope) => !KNOWN_SCOPES.has(scope) || UNEMULATED_SCOPES.has(scope));
    if (invalid.length > 0) throw new OAuth2Error('invalid_scope', `Invalid scope: ${invalid.join(' ')}.`);
    const grant = this.#grant(this.#options.ownerId(), scopes, 'client_credentials');
    return answer(grant);
  }

  #grant(userId: string, scopes: readonly string[], grantType: StoredGrant['grantType']): StoredGrant {
    const now = this.#options.clock.now();
    const grant: StoredGrant = {
      userId,
      scopes: [...scopes],
      grantType,
      createdAt: now,
      expiresAt: now + ACCESS_TOKEN_LIFETIME_SECONDS * 1000,
      revoked: false,
      refreshes: 0,
      accessToken: token(30),
      refreshToken: grantType === 'authorization_code' ? token(30) : null,
    };
    this.#grants.push(grant);
    return grant;
  }
}

function answer(grant: StoredGrant): TokenAnswer {
  return {
    token_type: 'Bearer',
    access_token: grant.accessToken,
    expires_in: ACCESS_TOKEN_LIFETIME_SECONDS,
    ...(grant.refreshToken !== null && { refresh_token: grant.refreshToken }),
    scope: grant.scopes.join(' '),
  };
}

/** Space-separated scopes, each once. */
export function splitScopes(value: string | null | undefined): string[] {
  return [...new Set((value ?? '').split(' ').filter((scope) => scope !== ''))];
}

/** The PKCE S256 challenge of a verifier. */
export function s256(verifier: string): string {
  return createHash('sha256').update(verifier).digest('base64url');
}

function token(length: number): string {
  return randomBytes(length).toString('base64url').slice(0, length);
}

/** `Basic base64(id:secret)`, each part form-encoded (RFC 6749, 2.3.1); undefined when the header is absent or not Basic. */
function parseBasic(header: string | undefined): { id: string; secret: string } | 'malformed' | undefined {
  const match = /^Basic\s+(\S+)$/i.exec(header ?? '');
  if (!match?.[1]) return undefined;
  const decoded = Buffer.from(match[1], 'base64').toString('utf8');
  const colon = decoded.indexOf(':');
  if (colon < 0) return 'malformed';
  try {
    return { id: decodeURIComponent(decoded.slice(0, colon).replace(/\+/g, ' ')), secret: decodeURIComponent(decoded.slice(colon + 1).replace(/\+/g, ' ')) };
  } catch {
    return 'malformed';
  }
}

function sameSecret(given: string, expected: string): boolean {
  const a = Buffer.from(given);
  const b = Buffer.from(expected);
  return a.length === b.length && timingSafeEqual(a, b);
}
