/**
 * The moderators' dashboard on the http role's server, under /dashboard: sign in with Discord,
 * the server picker, the guild pages of registry.ts, logout. The frame does for every page what
 * a page must not forget: the session (Redis), the member's right to the server checked again at
 * each request (access.ts), the origin and CSRF checks and rate limits on every change, the
 * security headers (a CSP with no inline script, no framing), the layout and the language.
 * docs/decisions/dashboard-sign-in.md says why it is built this way.
 */
import { createHash, timingSafeEqual } from 'node:crypto';
import cookie from '@fastify/cookie';
import helmet from '@fastify/helmet';
import rateLimit from '@fastify/rate-limit';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { Database } from '../db/client.js';
import { dataFacades } from '../discord/data.js';
import { findGuild } from '../guilds/settings.js';
import { isCreditsError } from '../credits/index.js';
import { SettingsError } from '../guilds/settings-error.js';
import { translator, type LocalText, type MessageKey, type Translator } from '../i18n/index.js';
import type { Logger } from '../logger.js';
import type { RedisClient } from '../queue/connection.js';
import { createAccessCheck, type AccessCheck, type GuildAccess } from './access.js';
import type { GuildReads } from '../discord-rest/guild-reads.js';
import { html, type Html } from './html.js';
import { DASHBOARD_PATH, layout, type LayoutInput } from './layout.js';
import { DiscordOAuth, OAuthError, randomToken } from './oauth.js';
import { directoryOf, type ActionNotice, type DashboardAsset, type DashboardPageSettings, type DashboardPipeline, type GuildPage, type GuildPageContext } from './pages.js';
import { DASHBOARD_ASSETS, GUILD_PAGES } from './registry.js';
import { createSessionStore, LOGIN_TTL_SECONDS, type Session, type SessionStore } from './sessions.js';
import { DASHBOARD_CSS } from './stylesheet.js';

export interface DashboardOptions {
  /** PUBLIC_URL: the dashboard is at PUBLIC_URL/dashboard, its callback PUBLIC_URL/dashboard/callback. */
  readonly publicUrl: string;
  readonly clientId: string;
  readonly clientSecret: string;
  /** DISCORD_WEB_URL: the authorize page's origin. */
  readonly webUrl: string;
  /** DISCORD_API_URL: token, revocation and user routes. */
  readonly apiUrl: string;
  readonly sessionHours: number;
}

export interface DashboardDeps {
  readonly options: DashboardOptions;
  readonly db: Database;
  readonly redis: RedisClient;
  /** Keys in Redis start with it (QUEUE_PREFIX). */
  readonly prefix: string;
  readonly reads: GuildReads;
  readonly ownerIds: readonly string[];
  readonly settings: DashboardPageSettings;
  /** The decisions the pages share with the commands (the library's Hide is the review queue's). */
  readonly pipeline: DashboardPipeline;
  readonly logger: Logger;
  /** @defaultValue GUILD_PAGES */
  readonly pages?: readonly GuildPage[];
  /** @defaultValue DASHBOARD_ASSETS */
  readonly assets?: readonly DashboardAsset[];
  readonly now?: () => Date;
}

/** Requests a client may make in a minute: sign-ins per address, changes per session and per address. */
export const RATE_LIMITS = { signInPerIp: 20, changesPerSession: 30, changesPerIp: 60 } as const;

/** Serves the dashboard under /dashboard on `app` (in a context of its own: its hooks and headers stay there). */
export function registerDashboard(app: FastifyInstance, deps: DashboardDeps): void {
  void app.register((scope) => buildDashboard(scope, deps), { prefix: DASHBOARD_PATH });
}

async function buildDashboard(app: FastifyInstance, deps: DashboardDeps): Promise<void> {
  const { options, logger } = deps;
  const pages = deps.pages ?? GUILD_PAGES;
  const assets = new Map<string, DashboardAsset>([
    ['dashboard.css', { name: 'dashboard.css', contentType: 'text/css; charset=utf-8', read: async () => DASHBOARD_CSS }],
    ...(deps.assets ?? DASHBOARD_ASSETS).map((asset) => [asset.name, asset] as const),
  ]);
  const assetBodies = new Map<string, Promise<string | Buffer>>();
  const now = deps.now ?? (() => new Date());
  const publicOrigin = new URL(options.publicUrl).origin;
  const secure = publicOrigin.startsWith('https:');
  // Secure cookies only over https; a loopback PUBLIC_URL (local runs, tests) is plain http.
  const sessionCookie = secure ? '__Host-dash_session' : 'dash_session';
  const loginCookie = secure ? '__Host-dash_login' : 'dash_login';
  const sessionTtlSeconds = options.sessionHours * 3600;
  const sessions: SessionStore = createSessionStore({ redis: deps.redis, prefix: deps.prefix, ttlSeconds: sessionTtlSeconds });
  const oauth = new DiscordOAuth({
    clientId: options.clientId,
    clientSecret: options.clientSecret,
    webUrl: options.webUrl,
    apiUrl: options.apiUrl,
    redirectUri: `${options.publicUrl.replace(/\/$/, '')}${DASHBOARD_PATH}/callback`,
  });
  const access: AccessCheck = createAccessCheck({ reads: deps.reads, findGuild: (guildId) => findGuild(deps.db, guildId), ownerIds: deps.ownerIds });
  const data = dataFacades(deps.db);

  await app.register(cookie);
  await app.register(helmet, {
    contentSecurityPolicy: {
      useDefaults: false,
      directives: {
        defaultSrc: ["'none'"],
        scriptSrc: ["'self'"],
        styleSrc: ["'self'"],
        imgSrc: ["'self'", 'data:'],
        // Songs play from the music service's storage in the library's player.
        mediaSrc: ["'self'", 'https:'],
        connectSrc: ["'self'"],
        fontSrc: ["'self'"],
        formAction: ["'self'"],
        frameAncestors: ["'none'"],
        baseUri: ["'none'"],
      },
    },
    hsts: secure ? { maxAge: 15_552_000 } : false,
    referrerPolicy: { policy: 'same-origin' },
    frameguard: { action: 'deny' },
    crossOriginEmbedderPolicy: false,
  });
  await app.register(rateLimit, {
    global: false,
    redis: deps.redis as never,
    nameSpace: `${deps.prefix}:dashboard:rate:`,
    skipOnError: true,
    errorResponseBuilder: (_request, context) => Object.assign(new Error('too many requests'), { statusCode: context.statusCode }),
  });
  app.addContentTypeParser('application/x-www-form-urlencoded', { parseAs: 'string', bodyLimit: 16 * 1024 }, (_request, body, done) => done(null, new URLSearchParams(String(body))));

  const cookieOptions = { path: '/', httpOnly: true, secure, sameSite: 'lax' as const };
  const idOf = (request: FastifyRequest) => request.cookies[sessionCookie];
  const tOf = (session: Session | undefined, request: FastifyRequest): Translator => translator(session?.locale ?? localeFromHeader(request.headers['accept-language']));
  const send = (reply: FastifyReply, status: number, page: Html) =>
    reply.code(status).header('cache-control', 'no-store').type('text/html; charset=utf-8').send(page.text);
  const viewerOf = (session: Session) => ({ name: session.name, csrfToken: session.csrfToken });
  const message = (t: Translator, page: { title: MessageKey; text: Html | string; status: number }, reply: FastifyReply, session?: Session) =>
    send(reply, page.status, layout({ t, title: t.text({ key: page.title }), body: html`<section class="card"><p>${page.text}</p><p><a href="${DASHBOARD_PATH}">${t('dashboard.backToServers')}</a></p></section>`, ...(session && { viewer: viewerOf(session) }) }));

  const hashOf = (value: string) => createHash('sha256').update(value).digest('hex').slice(0, 32);
  const signInLimit = app.rateLimit({ max: RATE_LIMITS.signInPerIp, timeWindow: 60_000, keyGenerator: (request) => `ip:${request.ip}` });
  // @fastify/rate-limit applies one limit per request (its first hook marks the request done), so
  // the session's limit is counted here, beside it in Redis: a minute's window from the first change.
  const sessionChangeLimit = async (request: FastifyRequest) => {
    const key = `${deps.prefix}:dashboard:rate:change-session:${hashOf(idOf(request) ?? request.ip)}`;
    const counted = await deps.redis.multi().set(key, 0, 'PX', 60_000, 'NX').incr(key).exec().catch(() => null);
    const count = counted?.[1]?.[1];
    // As the address's limit, an unreachable Redis lets the change through (skipOnError).
    if (typeof count === 'number' && count > RATE_LIMITS.changesPerSession) throw Object.assign(new Error('too many requests'), { statusCode: 429 });
  };
  const changeLimits = [app.rateLimit({ max: RATE_LIMITS.changesPerIp, timeWindow: 60_000, keyGenerator: (request) => `change-ip:${request.ip}` }), sessionChangeLimit];

  app.setErrorHandler(async (error: Error & { statusCode?: number }, request, reply) => {
    if (error.statusCode === 429) {
      // In the member's language once signed in (the session is only read: a refused request changes nothing).
      const session = await sessions.get(idOf(request)).catch(() => undefined);
      const t = tOf(session, request);
      return message(t, { title: 'dashboard.refused.title', text: t('dashboard.refused.tooMany'), status: 429 }, reply, session);
    }
    const t = tOf(undefined, request);
    if (error.statusCode !== undefined && error.statusCode < 500) return message(t, { title: 'dashboard.refused.title', text: t('dashboard.refused.badRequest'), status: error.statusCode }, reply);
    logger.error({ err: error, route: request.routeOptions.url }, 'dashboard request failed');
    return message(t, { title: 'dashboard.failed.title', text: t('dashboard.failed.text'), status: 500 }, reply);
  });
  app.setNotFoundHandler((request, reply) => message(tOf(undefined, request), { title: 'dashboard.notFound.title', text: tOf(undefined, request)('dashboard.notFound.text'), status: 404 }, reply));

  app.get<{ Params: { name: string } }>('/assets/:name', async (request, reply) => {
    const asset = assets.get(request.params.name);
    if (!asset) return reply.callNotFound();
    let body = assetBodies.get(asset.name);
    if (!body) assetBodies.set(asset.name, (body = asset.read()));
    return reply.header('cache-control', 'public, max-age=3600').type(asset.contentType).send(await body);
  });

  // ---- signing in and out ----

  app.get<{ Querystring: { next?: string } }>('/login', { onRequest: signInLimit }, async (request, reply) => {
    const state = randomToken();
    const verifier = randomToken(48);
    const browser = randomToken();
    await sessions.startLogin(state, { verifier, browser, next: safeNext(request.query.next) });
    void reply.setCookie(loginCookie, browser, { ...cookieOptions, maxAge: LOGIN_TTL_SECONDS });
    return reply.code(302).header('cache-control', 'no-store').redirect(oauth.authorizeUrl({ state, verifier }));
  });

  app.get<{ Querystring: Record<string, string | undefined> }>('/callback', { onRequest: signInLimit }, async (request, reply) => {
    const t = tOf(undefined, request);
    const { state, code, error } = request.query;
    const login = state ? await sessions.takeLogin(state) : undefined;
    const browser = request.cookies[loginCookie];
    void reply.clearCookie(loginCookie, cookieOptions);
    if (!login || browser === undefined || !sameSecret(login.browser, browser)) {
      return message(t, { title: 'dashboard.signIn.failedTitle', text: t('dashboard.signIn.expired'), status: 400 }, reply);
    }
    if (error !== undefined || !code) {
      return message(t, { title: 'dashboard.signIn.failedTitle', text: t('dashboard.signIn.cancelled'), status: 400 }, reply);
    }
    let created: { id: string; session: Session; ttlSeconds: number };
    try {
      const tokens = await oauth.exchangeCode(code, login.verifier);
      const [user, guilds] = await Promise.all([oauth.user(tokens.accessToken), oauth.guilds(tokens.accessToken)]);
      created = await sessions.create({ userId: user.id, name: user.name, locale: user.locale, tokens, guilds });
    } catch (failure) {
      if (!(failure instanceof OAuthError)) throw failure;
      logger.warn({ reason: failure.reason, status: failure.status }, 'dashboard sign-in failed');
      return message(t, { title: 'dashboard.signIn.failedTitle', text: t('dashboard.signIn.failed'), status: 502 }, reply);
    }
    logger.info({ userId: created.session.userId }, 'dashboard sign-in');
    void reply.setCookie(sessionCookie, created.id, { ...cookieOptions, maxAge: created.ttlSeconds });
    return reply.code(303).header('cache-control', 'no-store').redirect(login.next);
  });

  app.post('/logout', { onRequest: changeLimits }, async (request, reply) => {
    const id = idOf(request);
    const session = await sessions.get(id);
    if (!session || !changeAllowed(request, session)) return refuseChange(request, reply, session);
    await sessions.delete(id!);
    void reply.clearCookie(sessionCookie, cookieOptions);
    // The grant ends on Discord too; a failure is logged and the session is gone regardless.
    await oauth.revoke(session.tokens.accessToken).catch((failure: unknown) => logger.warn({ reason: failure instanceof OAuthError ? failure.reason : 'error' }, 'dashboard token revocation failed'));
    logger.info({ userId: session.userId }, 'dashboard sign-out');
    return reply.code(303).redirect(`${DASHBOARD_PATH}?signed-out=1`);
  });

  // ---- the picker ----

  app.get<{ Querystring: Record<string, string | undefined> }>('/', async (request, reply) => {
    const session = await sessions.get(idOf(request));
    const t = tOf(session, request);
    if (!session) {
      const signedOut = request.query['signed-out'] === '1';
      return send(reply, 200, layout({
        t,
        title: t('dashboard.name'),
        ...(signedOut && { notice: { kind: 'done' as const, text: t('dashboard.signedOut') } }),
        body: html`<section class="card"><p>${t('dashboard.signIn.intro')}</p><a class="button" href="${DASHBOARD_PATH}/login" data-testid="sign-in">${t('dashboard.signIn.button')}</a></section>`,
      }));
    }
    const botGuilds = await deps.reads.botGuilds();
    const present = new Set(botGuilds.map((guild) => guild.id));
    const candidates = session.guilds.filter((guild) => present.has(guild.id));
    const checked = await mapLimited(candidates, 4, async (guild) => ({ guild, access: await access(guild.id, session.userId).catch(() => undefined) }));
    const mine = checked.filter((entry) => entry.access?.isModerator === true);
    const isOwner = deps.ownerIds.includes(session.userId);
    const list = (entries: ReadonlyArray<{ id: string; name: string }>) =>
      html`<ul class="servers">${entries.map((guild) => html`<li><a href="${DASHBOARD_PATH}/g/${guild.id}" data-testid="server">${guild.name}</a></li>`)}</ul>`;
    const body = html`<section class="card" aria-labelledby="mine"><h2 id="mine">${t('dashboard.picker.mine')}</h2>
<p class="hint">${t('dashboard.picker.intro')}</p>
${mine.length === 0 ? html`<p data-testid="no-servers">${t('dashboard.picker.none')}</p>` : list(mine.map((entry) => ({ id: entry.guild.id, name: entry.access?.guild?.name ?? entry.guild.name })))}</section>
${isOwner ? html`<section class="card" aria-labelledby="all"><h2 id="all">${t('dashboard.picker.owners')}</h2>${list(botGuilds)}</section>` : ''}`;
    return send(reply, 200, layout({ t, title: t('dashboard.picker.title'), body, viewer: viewerOf(session), ...noticeOf(session, t) }));
  });

  // ---- a server's pages ----

  type Guarded = { session: Session; sessionId: string; t: Translator; ctx: GuildPageContext; page: GuildPage; allowed: readonly GuildPage[]; access: GuildAccess };

  /** The session, the page and the member's right to it; undefined once a refusal has been sent. */
  const guard = async (request: FastifyRequest<{ Params: { guildId: string; page?: string } }>, reply: FastifyReply, pageName: string | undefined): Promise<Guarded | undefined> => {
    const sessionId = idOf(request);
    const session = await sessions.get(sessionId);
    if (!session) {
      if (request.method === 'GET') await reply.code(303).redirect(`${DASHBOARD_PATH}/login?next=${encodeURIComponent(request.url)}`);
      else await refuseChange(request, reply, undefined);
      return undefined;
    }
    const t = tOf(session, request);
    const { guildId } = request.params;
    const guildAccess = /^\d{17,20}$/.test(guildId) ? await access(guildId, session.userId) : undefined;
    const allowed = guildAccess?.botPresent ? pages.filter((page) => mayOpen(page, guildAccess)) : [];
    const page = pageName === undefined ? allowed[0] : allowed.find((candidate) => candidate.path === pageName);
    if (!guildAccess?.guild || !page) {
      // The same answer whether the server, the page or the right is missing: nothing to learn by guessing.
      await message(t, { title: 'dashboard.noAccess.title', text: t('dashboard.noAccess.text'), status: 403 }, reply, session);
      return undefined;
    }
    const member = guildAccess.member;
    const ctx: GuildPageContext = {
      guildId,
      guildName: guildAccess.guild.name,
      viewer: { userId: session.userId, name: session.name, isModerator: guildAccess.isModerator, canManageGuild: member?.canManageGuild ?? false, isOwner: guildAccess.isOwner },
      t,
      data,
      db: deps.db,
      directory: directoryOf(deps.reads, guildAccess.guild),
      query: new URL(request.url, 'http://dashboard.invalid').searchParams,
      now: now(),
      basePath: `${DASHBOARD_PATH}/g/${guildId}`,
      csrfToken: session.csrfToken,
      settings: deps.settings,
      pipeline: deps.pipeline,
      logger,
    };
    return { session, sessionId: sessionId!, t, ctx, page, allowed, access: guildAccess };
  };

  app.get<{ Params: { guildId: string } }>('/g/:guildId', async (request, reply) => {
    const guarded = await guard(request, reply, undefined);
    if (guarded) return reply.code(303).redirect(`${guarded.ctx.basePath}/${guarded.page.path}`);
  });

  app.get<{ Params: { guildId: string; page: string } }>('/g/:guildId/:page', async (request, reply) => {
    const guarded = await guard(request, reply, request.params.page);
    if (!guarded) return;
    const { session, sessionId, t, ctx, page, allowed } = guarded;
    const body = page.render(await page.load(ctx), ctx);
    if (session.notice) await sessions.setNotice(sessionId, undefined);
    return send(reply, 200, layout({
      t,
      title: t.text({ key: page.titleKey }),
      body,
      viewer: viewerOf(session),
      guild: { name: ctx.guildName, links: allowed.map((candidate) => ({ href: `${ctx.basePath}/${candidate.path}`, label: t.text({ key: candidate.titleKey }), current: candidate === page })) },
      ...noticeOf(session, t),
      ...(page.scripts && { scripts: page.scripts }),
    }));
  });

  app.get<{ Params: { guildId: string; page: string; name: string } }>('/g/:guildId/:page/:name', async (request, reply) => {
    const guarded = await guard(request, reply, request.params.page);
    if (!guarded) return;
    const file = guarded.page.files?.[request.params.name];
    if (!file) return reply.callNotFound();
    const out = await file(guarded.ctx);
    const filename = out.filename.replace(/[^\w.-]/g, '_');
    return reply.header('cache-control', 'no-store').header('content-disposition', `attachment; filename="${filename}"`).type(out.contentType).send(out.body);
  });

  app.post<{ Params: { guildId: string; page: string; name: string } }>('/g/:guildId/:page/:name', { onRequest: changeLimits }, async (request, reply) => {
    const session = await sessions.get(idOf(request));
    // Refused before anything is read of the server: a change must come from our own page, with its token.
    if (!session || !changeAllowed(request, session)) return refuseChange(request, reply, session);
    const guarded = await guard(request, reply, request.params.page);
    if (!guarded) return;
    const { ctx, page, sessionId } = guarded;
    const action = Object.hasOwn(page.actions ?? {}, request.params.name) ? page.actions![request.params.name] : undefined;
    if (!action) return reply.callNotFound();
    const form = request.body instanceof URLSearchParams ? request.body : new URLSearchParams();
    let notice: ActionNotice;
    try {
      notice = await action(form, ctx);
    } catch (failure) {
      const text = userTextOf(failure);
      if (!text) throw failure;
      notice = { kind: 'error', text };
    }
    await sessions.setNotice(sessionId, { kind: notice.kind, key: notice.text.key, ...(notice.text.params && { params: { ...notice.text.params } }) });
    return reply.code(303).redirect(`${ctx.basePath}/${page.path}`);
  });

  /** A change must come from a page of this origin (Origin, else Referer) and carry the session's CSRF token. */
  function changeAllowed(request: FastifyRequest, session: Session): boolean {
    const origin = request.headers.origin ?? originOf(request.headers.referer);
    if (origin !== publicOrigin) return false;
    const fetchSite = request.headers['sec-fetch-site'];
    if (fetchSite !== undefined && fetchSite !== 'same-origin') return false;
    const token = request.body instanceof URLSearchParams ? request.body.get('_csrf') : null;
    return token !== null && sameSecret(token, session.csrfToken);
  }

  function refuseChange(request: FastifyRequest, reply: FastifyReply, session: Session | undefined) {
    logger.info({ route: request.routeOptions.url, signedIn: session !== undefined }, 'dashboard change refused');
    const t = tOf(session, request);
    return message(t, { title: 'dashboard.refused.title', text: t('dashboard.refused.csrf'), status: 403 }, reply, session);
  }
}

/** Who may open a page: owners' pages the bot's owners; the others the server's moderators, and the owners as with `/credits-admin`. */
function mayOpen(page: GuildPage, access: GuildAccess): boolean {
  return page.access === 'owner' ? access.isOwner : access.isModerator || access.isOwner;
}

function noticeOf(session: Session, t: Translator): Pick<LayoutInput, 'notice'> {
  if (!session.notice) return {};
  return { notice: { kind: session.notice.kind, text: t.text({ key: session.notice.key as MessageKey, ...(session.notice.params && { params: session.notice.params }) }) } };
}

/** The member's sentence of a refused change (a service's SettingsError or CreditsError), or undefined for a fault. */
function userTextOf(failure: unknown): LocalText | undefined {
  if (failure instanceof SettingsError || isCreditsError(failure)) return failure.userText;
  return undefined;
}

/** Only a path of the dashboard: an open redirect to elsewhere would make the sign-in a phishing tool. */
function safeNext(next: string | undefined): string {
  return next !== undefined && /^\/dashboard(\/[\w\-/]*)?(\?[\w\-=&%]*)?$/.test(next) ? next : DASHBOARD_PATH;
}

function originOf(url: string | undefined): string | undefined {
  if (url === undefined) return undefined;
  try {
    return new URL(url).origin;
  } catch {
    return undefined;
  }
}

function sameSecret(a: string, b: string): boolean {
  const [x, y] = [createHash('sha256').update(a).digest(), createHash('sha256').update(b).digest()];
  return timingSafeEqual(x, y);
}

/** The first of the browser's languages, before sign-in tells the member's Discord locale. */
function localeFromHeader(header: string | undefined): string | undefined {
  const first = header?.split(',')[0]?.split(';')[0]?.trim();
  if (!first) return undefined;
  if (first.startsWith('de')) return 'de';
  if (first.startsWith('es')) return 'es-ES';
  if (first.startsWith('pt')) return 'pt-BR';
  return undefined;
}

async function mapLimited<T, R>(items: readonly T[], limit: number, run: (item: T) => Promise<R>): Promise<R[]> {
  const results: R[] = new Array(items.length);
  let next = 0;
  const worker = async () => {
    while (next < items.length) {
      const index = next++;
      results[index] = await run(items[index]!);
    }
  };
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, worker));
  return results;
}
