/**
 * The library page: the server's songs newest first, each with an audio player, its requester
 * and date, and a Hide button (a form with the CSRF token) that takes it out of the library as
 * the review queue's Hide does.
 */
import type { Translator } from '../../i18n/index.js';
import type { LibrarySong, LibraryView } from '../data/library.js';
import { html, type Html } from '../html.js';
import { formats } from './chart-figure.js';

export interface LibraryPageView {
  readonly library: LibraryView;
  readonly memberNames: ReadonlyMap<string, string>;
  /** The hidden CSRF field every change carries. */
  readonly csrf: Html;
  readonly links: { readonly hide: string; readonly older: (jobId: string) => string; readonly newer: (jobId: string) => string };
}

function songRow(song: LibrarySong, view: LibraryPageView, t: Translator): Html {
  const f = formats(t);
  const title = song.title || t('dashboard.library.untitled');
  return html`<li class="card dv-song" data-testid="library-song">
<h2 class="dv-song-title">${title}</h2>
<p class="hint">${t('dashboard.library.byOn', { member: view.memberNames.get(song.userId) ?? song.userId, date: f.when(song.createdAt) })}</p>
${song.audioUrl
  ? html`<audio controls preload="none" src="${song.audioUrl}" aria-label="${t('dashboard.library.listen', { title })}"></audio>`
  : html`<p class="hint">${t('dashboard.library.noAudio')}</p>`}
<form method="post" action="${view.links.hide}">${view.csrf}<input type="hidden" name="job" value="${song.jobId}">
<button type="submit" class="danger" aria-label="${t('dashboard.library.hideNamed', { title })}">${t('dashboard.library.hide')}</button></form>
</li>`;
}

export function renderLibrary(view: LibraryPageView, t: Translator): Html {
  const { library } = view;
  if (library.songs.length === 0) return html`<p class="hint" data-testid="library-empty">${t('dashboard.library.empty')}</p>`;
  return html`<p class="hint">${t('dashboard.library.hideHint')}</p>
<ul class="dv-songs">${library.songs.map((song) => songRow(song, view, t))}</ul>
<nav class="dv-paging" aria-label="${t('dashboard.library.paging')}">
${library.newer ? html`<a href="${view.links.newer(library.newer)}" rel="prev">${t('dashboard.history.newer')}</a>` : ''}
${library.older ? html`<a href="${view.links.older(library.older)}" rel="next">${t('dashboard.history.older')}</a>` : ''}
</nav>`;
}
