/**
 * Discord's web side of OAuth2 on the emulator's origin (`DISCORD_WEB_URL`): the authorize page,
 * where a person signs in as one of the emulator's users (no passwords: a select) and approves or
 * cancels, and the authorization server metadata. Errors that must not go to the redirect
 * (an unknown client, an unregistered redirect_uri) get an error page, as on Discord.
 */
import type { APIUser } from 'discord-api-types/v10';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { ParsedBody } from '../http-body.js';
import type { AuthorizeRequest, OAuth2Authorizations } from './authorizations.js';

export interface AuthorizePageOptions {
  oauth2: OAuth2Authorizations;
  /** The people one may sign in as: every user who is not a bot. */
  users: () => APIUser[];
  /** Who the host signed in to Discord's web (`signInWeb`): the only user the page offers, whatever the cookie says. */
  webUser: () => APIUser | undefined;
  /** The application's name, shown on the consent page. */
  applicationName: () => string;
  /** The emulator's origin (issuer and authorize page) and its API base (`…/api`). */
  webUrl: () => string;
  apiUrl: () => string;
}

/** The cookie that keeps the person signed in as a user, so that `prompt=none` can skip the page. */
const SESSION_COOKIE = 'emulator_user';
/** The authorize request's parameters the consent form carries back. */
const CARRIED = ['response_type', 'client_id', 'redirect_uri', 'scope', 'state', 'code_challenge', 'code_challenge_method', 'prompt'] as const;
const PAGE_HEADERS = {
  'content-type': 'text/html; charset=utf-8',
  'cache-control': 'no-store',
  'content-security-policy': "default-src 'none'; style-src 'unsafe-inline'; frame-ancestors 'none'",
  'x-frame-options': 'DENY',
} as const;

/** Adds `GET/POST /oauth2/authorize` and `GET /.well-known/oauth-authorization-server` to the emulator's app. */
export function registerAuthorizePage(app: FastifyInstance, options: AuthorizePageOptions): void {
  const { oauth2 } = options;

  app.get('/oauth2/authorize', (request, reply) => {
    const params = new URL(request.originalUrl, 'http://emulator.invalid').searchParams;
    const check = oauth2.checkAuthorize(params);
    if (check.kind === 'error-page') return errorPage(reply, check.message);
    if (check.kind === 'error-redirect') return reply.code(302).header('location', check.location).send();
    const signedIn = options.webUser() ?? signedInUser(request, options.users());
    if (check.request.prompt === 'none' && signedIn && oauth2.hasGranted(signedIn.id, check.request.scopes)) {
      return reply.code(302).header('location', oauth2.approve(check.request, signedIn.id)).send();
    }
    return reply.code(200).headers(PAGE_HEADERS).send(consentPage(check.request, params, options, signedIn));
  });

  app.post('/oauth2/authorize', (request, reply) => {
    const body = request.body as ParsedBody | undefined;
    if (body?.kind !== 'form' || !body.form) return errorPage(reply, 'The consent form must be posted form-encoded.');
    const fields = body.form;
    const params = new URLSearchParams();
    for (const name of CARRIED) if (fields[name] !== undefined) params.set(name, fields[name]);
    const check = oauth2.checkAuthorize(params);
    if (check.kind === 'error-page') return errorPage(reply, check.message);
    if (check.kind === 'error-redirect') return reply.code(302).header('location', check.location).send();
    if (fields.decision === 'cancel') return reply.code(302).header('location', oauth2.deny(check.request)).send();
    if (fields.decision !== 'approve') return errorPage(reply, 'Choose Authorize or Cancel.');
    const webUser = options.webUser();
    // Someone else signed in since the page was drawn (the playground's persona changed): as Discord, refuse the stale form.
    if (webUser && fields.user_id !== webUser.id) return errorPage(reply, `Signed in as @${webUser.username} now: open the sign-in again.`);
    const user = options.users().find((candidate) => candidate.id === fields.user_id);
    if (!user) return errorPage(reply, 'Sign in as one of the emulator\'s users.');
    return reply
      .code(302)
      .header('set-cookie', `${SESSION_COOKIE}=${user.id}; Path=/; HttpOnly; SameSite=Lax`)
      .header('location', oauth2.approve(check.request, user.id))
      .send();
  });

  app.get('/.well-known/oauth-authorization-server', (_request, reply) =>
    reply.code(200).send({
      issuer: options.webUrl(),
      authorization_endpoint: `${options.webUrl()}/oauth2/authorize`,
      token_endpoint: `${options.apiUrl()}/v10/oauth2/token`,
      revocation_endpoint: `${options.apiUrl()}/v10/oauth2/token/revoke`,
      response_types_supported: ['code'],
      grant_types_supported: ['authorization_code', 'refresh_token', 'client_credentials'],
      token_endpoint_auth_methods_supported: ['client_secret_basic', 'client_secret_post', 'none'],
      revocation_endpoint_auth_methods_supported: ['client_secret_basic', 'client_secret_post', 'none'],
      code_challenge_methods_supported: ['S256'],
      authorization_response_iss_parameter_supported: true,
    }),
  );
}

function signedInUser(request: FastifyRequest, users: APIUser[]): APIUser | undefined {
  const cookies = request.headers.cookie ?? '';
  const id = /(?:^|;\s*)emulator_user=(\d+)/.exec(cookies)?.[1];
  return id ? users.find((user) => user.id === id) : undefined;
}

function errorPage(reply: FastifyReply, message: string): FastifyReply {
  return reply
    .code(400)
    .headers(PAGE_HEADERS)
    .send(page('Authorization error', `<h1>Authorization error</h1><p role="alert">${escapeHtml(message)}</p>`));
}

function consentPage(request: AuthorizeRequest, params: URLSearchParams, options: AuthorizePageOptions, signedIn: APIUser | undefined): string {
  const hidden = CARRIED.flatMap((name) => {
    const value = params.get(name);
    return value === null ? [] : [`<input type="hidden" name="${name}" value="${escapeHtml(value)}">`];
  }).join('');
  const labelOf = (user: APIUser) => (user.global_name ? `${user.global_name} (@${user.username})` : `@${user.username}`);
  function choices(): string {
    return options
      .users()
      .map((user) => `<option value="${user.id}"${user.id === signedIn?.id ? ' selected' : ''}>${escapeHtml(labelOf(user))}</option>`)
      .join('');
  }
  const webUser = options.webUser();
  // Signed in by the host: that user only, as Discord shows the account the browser is signed in to.
  const who = webUser
    ? `<p data-testid="signed-in-as">Signed in as <strong>${escapeHtml(labelOf(webUser))}</strong></p><input type="hidden" name="user_id" value="${webUser.id}">`
    : `<label for="user_id">Signed in as</label>
<select id="user_id" name="user_id" required>${choices()}</select>`;
  const scopes = request.scopes.map((scope) => `<li><code>${escapeHtml(scope)}</code></li>`).join('');
  const redirectHost = new URL(request.redirectUri).origin;
  return page(
    'Authorize access',
    `<h1>${escapeHtml(options.applicationName())} wants to access your account</h1>
<form method="post" action="/oauth2/authorize">${hidden}
${who}
<p>This will allow the developer to:</p><ul>${scopes}</ul>
<p>Once you authorize, you will be redirected to ${escapeHtml(redirectHost)}.</p>
<button type="submit" name="decision" value="cancel">Cancel</button>
<button type="submit" name="decision" value="approve">Authorize</button>
</form>`,
  );
}

function page(title: string, body: string): string {
  return `<!doctype html><html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1"><title>${title} · Discord emulator</title>
<style>body{font-family:sans-serif;background:#313338;color:#f2f3f5;max-width:32rem;margin:3rem auto;padding:0 1rem}select,button{font:inherit;margin:.5rem .5rem .5rem 0}</style></head><body>${body}</body></html>`;
}

function escapeHtml(value: string): string {
  return value.replace(/[&<>"']/g, (char) => `&#${char.charCodeAt(0)};`);
}
