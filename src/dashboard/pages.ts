/**
 * The dashboard's guild pages, and how to add one. The frame (routes.ts) does everything around a
 * page: the session, the member's right to the server (checked again at every request), the
 * CSRF token and origin check on every change, rate limits, the layout and the language. A page
 * only reads and renders, and names the changes it takes.
 *
 * To add a page:
 * 1. Write a `GuildPage` (its `path` is the last part of `/dashboard/g/<guild id>/<path>`):
 *    `load(ctx)` reads what the page shows through the same services as the commands
 *    (`ctx.data`, `ctx.db`), `render(data, ctx)` returns `html` (src/dashboard/html.ts; never
 *    build markup any other way). Titles and every text come from the catalogue (`ctx.t`).
 * 2. Put it in `GUILD_PAGES` (registry.ts), in the order the navigation shows it.
 * 3. A change is a form that posts to `actionUrl(ctx, page, action)` with `csrfField(ctx)` in it;
 *    its `actions[action](form, ctx)` applies it and returns a notice (or throws a SettingsError or
 *    CreditsError, whose text the member reads). The frame redirects back to the page with it.
 * 4. A download (a CSV) is a `files[name](ctx)`, served at `<page path>/<name>`; a script or a
 *    stylesheet is an entry in `DASHBOARD_ASSETS` (registry.ts), served at `/dashboard/assets/<name>` (the CSP
 *    allows scripts from there and nowhere else: no inline script, no inline style attribute).
 */
import type { Readable } from 'node:stream';
import type { Database } from '../db/client.js';
import type { DataFacades } from '../discord/data.js';
import type { LocalText, MessageKey, Translator } from '../i18n/index.js';
import type { Logger } from '../logger.js';
import type { Pipeline } from '../pipeline/pipeline.js';
import { html, type Html } from './html.js';
import type { ChannelFact, GuildFacts, GuildReads, RoleFact } from '../discord-rest/guild-reads.js';

/** Who may open a page: the server's moderators (and the bot's owners), or the bot's owners alone. */
export type PageAccess = 'moderator' | 'owner';

/** What a page is handed at each request, once the frame has checked who asks. */
export interface GuildPageContext {
  readonly guildId: string;
  /** The server's name (from Discord, through the bot): text, escaped like any other by `html`. */
  readonly guildName: string;
  readonly viewer: Viewer;
  /** The member's language (their Discord locale). */
  readonly t: Translator;
  /** The same services the commands use, bound to the database. */
  readonly data: DataFacades;
  /** For reads no facade offers yet (charts, reports); changes go through `data`. */
  readonly db: Database;
  /** The server's channels and roles, with names, read through the bot (cached briefly). */
  readonly directory: GuildDirectory;
  /** The request's query (filters, a page number). */
  readonly query: URLSearchParams;
  readonly now: Date;
  /** `/dashboard/g/<guild id>`: where this server's pages live. */
  readonly basePath: string;
  /** The session's CSRF token: every form that changes something carries it (`csrfField`). */
  readonly csrfToken: string;
  /** Settings the commands read too (the models offered, starting credits). */
  readonly settings: DashboardPageSettings;
  /** The pipeline's decisions a page takes as a command does (the library's Hide). */
  readonly pipeline: DashboardPipeline;
  readonly logger: Logger;
}

export type DashboardPipeline = Pick<Pipeline, 'decideReport'>;

export interface DashboardPageSettings {
  readonly musicModels: readonly string[];
  readonly startingCredits: number;
}

export interface Viewer {
  readonly userId: string;
  /** The name Discord shows for them (text, like the server's name). */
  readonly name: string;
  readonly isModerator: boolean;
  /** Holds Manage Server: only they may change the moderator role, as with `/settings moderator-role`. */
  readonly canManageGuild: boolean;
  readonly isOwner: boolean;
}

/** What an action answers: a notice shown on the page it returns to. */
export interface ActionNotice {
  readonly kind: 'done' | 'error';
  readonly text: LocalText;
}

export type PageAction = (form: URLSearchParams, ctx: GuildPageContext) => Promise<ActionNotice>;

/** A file a page offers: a CSV export, streamed. */
export interface DashboardFile {
  readonly filename: string;
  readonly contentType: string;
  readonly body: string | Buffer | Readable;
}

export interface GuildPage<D = unknown> {
  /** `overview`, `history`, `settings`…: lowercase letters and dashes. */
  readonly path: string;
  /** The page's name in the navigation and its title. */
  readonly titleKey: MessageKey;
  readonly access: PageAccess;
  load(ctx: GuildPageContext): Promise<D>;
  render(data: D, ctx: GuildPageContext): Html;
  readonly actions?: Readonly<Record<string, PageAction>>;
  readonly files?: Readonly<Record<string, (ctx: GuildPageContext) => Promise<DashboardFile>>>;
  /** Assets of `DASHBOARD_ASSETS` the page loads as scripts (deferred), by name. */
  readonly scripts?: readonly string[];
}

/** A static asset: a stylesheet, a script or a chart library, served from the bot (no CDN). */
export interface DashboardAsset {
  /** The file name under `/dashboard/assets/`. */
  readonly name: string;
  readonly contentType: string;
  /** Read once, at the first request. */
  read(): Promise<string | Buffer>;
}

/** A server's channels and roles with their names, for pickers. */
export interface GuildDirectory {
  /** Roles a member can be given, highest first, `@everyone` and bots' own roles left out. */
  readonly roles: readonly RoleFact[];
  channels(): Promise<readonly ChannelFact[]>;
  /** Members' names as the server shows them, by id (only ids of digits are asked; a member who left is absent). */
  memberNames(userIds: readonly string[]): Promise<ReadonlyMap<string, string>>;
}

export function directoryOf(reads: Pick<GuildReads, 'channels' | 'memberNames'>, guild: GuildFacts): GuildDirectory {
  const roles = guild.roles.filter((role) => role.id !== guild.id && !role.managed).sort((a, b) => b.position - a.position);
  return {
    roles,
    channels: () => reads.channels(guild.id),
    memberNames: (userIds) => reads.memberNames(guild.id, userIds.filter((id) => /^\d{1,20}$/.test(id))),
  };
}

/** Declares a page with its data type checked between `load` and `render`. */
export function defineGuildPage<D>(page: GuildPage<D>): GuildPage {
  return page as unknown as GuildPage;
}

/** The hidden field that carries the CSRF token in a form. */
export function csrfField(ctx: Pick<GuildPageContext, 'csrfToken'>): Html {
  return html`<input type="hidden" name="_csrf" value="${ctx.csrfToken}">`;
}

/** Where a page's form posts `action`. */
export function actionUrl(ctx: Pick<GuildPageContext, 'basePath'>, page: string, action: string): string {
  return `${ctx.basePath}/${page}/${action}`;
}
