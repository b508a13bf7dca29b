/** The page around every dashboard page: head, header with the member and logout, navigation, notice. */
import type { Translator } from '../i18n/index.js';
import { html, type Html } from './html.js';

export const DASHBOARD_PATH = '/dashboard';
export const ASSETS_PATH = `${DASHBOARD_PATH}/assets`;

export interface LayoutInput {
  readonly t: Translator;
  readonly title: string;
  readonly body: Html;
  /** Signed in: their name, and the CSRF token for the logout form. */
  readonly viewer?: { readonly name: string; readonly csrfToken: string };
  /** A server's pages: its name and the links of the navigation. */
  readonly guild?: { readonly name: string; readonly links: ReadonlyArray<{ readonly href: string; readonly label: string; readonly current: boolean }> };
  readonly notice?: { readonly kind: 'done' | 'error'; readonly text: string };
  /** Assets (names under /dashboard/assets) loaded as scripts, deferred. */
  readonly scripts?: readonly string[];
}

export function layout(input: LayoutInput): Html {
  const { t } = input;
  const title = input.guild ? `${input.title} · ${input.guild.name}` : input.title;
  return html`<!doctype html>
<html lang="${t.locale}">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="referrer" content="same-origin">
<title>${title} · ${t('dashboard.name')}</title>
<link rel="stylesheet" href="${ASSETS_PATH}/dashboard.css">
${(input.scripts ?? []).map((name) => html`<script src="${ASSETS_PATH}/${name}" defer></script>`)}
</head>
<body>
<a class="skip" href="#main">${t('dashboard.skip')}</a>
<header class="top">
<a class="brand" href="${DASHBOARD_PATH}">${t('dashboard.name')}</a>
${input.viewer
  ? html`<div class="who"><span data-testid="viewer">${t('dashboard.signedInAs', { name: input.viewer.name })}</span>
<form method="post" action="${DASHBOARD_PATH}/logout"><input type="hidden" name="_csrf" value="${input.viewer.csrfToken}"><button type="submit" class="secondary" data-testid="logout">${t('dashboard.signOut')}</button></form></div>`
  : ''}
</header>
${input.guild
  ? html`<nav class="pages" aria-label="${t('dashboard.serverPages')}"><ul>${input.guild.links.map(
      (link) => html`<li><a href="${link.href}"${link.current ? html` aria-current="page"` : ''}>${link.label}</a></li>`,
    )}</ul></nav>`
  : ''}
<main id="main">
${input.guild ? html`<p class="hint" data-testid="guild-name">${input.guild.name}</p>` : ''}
<h1>${input.title}</h1>
${input.notice ? html`<p class="notice${input.notice.kind === 'error' ? ' error' : ''}" role="status" data-testid="notice">${input.notice.text}</p>` : ''}
${input.body}
</main>
</body>
</html>`;
}
