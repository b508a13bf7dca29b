/**
 * The history page: the ledger newest first, filtered by kind, member and dates (a form that
 * reads as a GET, so a filtered page is a link one can share), paged both ways, and the CSV
 * export. The same words as `/credits-admin history`; a person's reason only for movements made
 * by hand, as there.
 */
import { ledgerKeys, type HistoryEntry, type HistoryPage } from '../../credits/index.js';
import { LEDGER_KINDS } from '../../db/schema.js';
import type { Translator } from '../../i18n/index.js';
import { KIND_WORDS, LEDGER_KIND_WORDS } from '../../pipeline/titles.js';
import type { HistoryFilter, HistoryScope } from '../data/history.js';
import { html, type Html } from '../html.js';
import { formats } from './chart-figure.js';

export interface HistoryView {
  readonly page: HistoryPage;
  readonly filter: HistoryFilter;
  /** Some filters could not be read and were left out. */
  readonly badFilter: boolean;
  readonly memberNames: ReadonlyMap<string, string>;
  /** The page's own address (the form's action), a page's link with the filters kept, and the CSV's. */
  readonly links: { readonly self: string; readonly page: (scope: HistoryScope, paging: { before?: number; after?: number }) => string; readonly csv: string };
}

function scopeOf(filter: HistoryFilter): HistoryScope {
  return { kind: filter.kind, member: filter.member, from: filter.from, to: filter.to };
}

function signed(amount: number, f: ReturnType<typeof formats>): string {
  return amount > 0 ? `+${f.number(amount)}` : f.number(amount);
}

function entryRow(entry: HistoryEntry, view: HistoryView, t: Translator): Html {
  const f = formats(t);
  const name = (id: string | null) => (id === null ? '' : (view.memberNames.get(id) ?? id));
  const what = entry.jobKind ? `${t.text({ key: LEDGER_KIND_WORDS[entry.kind] })} (${t.text({ key: KIND_WORDS[entry.jobKind] })})` : t.text({ key: LEDGER_KIND_WORDS[entry.kind] });
  const note = entry.key === ledgerKeys.startingCredits(entry.guildId)
    ? t('creditsAdmin.historyStartingCredits')
    : entry.key.startsWith(ledgerKeys.manual('')) && entry.reason
      ? entry.reason.slice(0, 200)
      : '';
  return html`<tr data-testid="history-row"><td>${f.when(entry.createdAt)}</td><td>${what}</td><td class="dv-num">${signed(entry.amount, f)}</td><td class="dv-num">${f.number(entry.balanceAfter)}</td><td>${name(entry.userId)}</td><td>${name(entry.actorId)}</td><td>${note}</td></tr>`;
}

function filterForm(view: HistoryView, t: Translator): Html {
  const { filter } = view;
  return html`<form class="card dv-filters" method="get" action="${view.links.self}" data-testid="history-filters">
<h2>${t('dashboard.history.filters')}</h2>
<div class="dv-filter-row">
<div><label for="history-kind">${t('dashboard.history.kind')}</label>
<select id="history-kind" name="kind"><option value="">${t('dashboard.history.anyKind')}</option>${LEDGER_KINDS.map(
    (kind) => html`<option value="${kind}"${filter.kind === kind ? html` selected` : ''}>${t.text({ key: LEDGER_KIND_WORDS[kind] })}</option>`,
  )}</select></div>
<div><label for="history-member">${t('dashboard.history.member')}</label>
<input type="text" id="history-member" name="member" inputmode="numeric" pattern="[0-9]{1,20}" value="${filter.member ?? ''}" aria-describedby="history-member-hint">
<p class="hint" id="history-member-hint">${t('dashboard.history.memberHint')}</p></div>
<div><label for="history-from">${t('dashboard.history.from')}</label><input type="date" id="history-from" name="from" value="${filter.from ?? ''}"></div>
<div><label for="history-to">${t('dashboard.history.to')}</label><input type="date" id="history-to" name="to" value="${filter.to ?? ''}"></div>
</div>
<button type="submit">${t('dashboard.history.apply')}</button> <a class="button secondary" href="${view.links.self}">${t('dashboard.history.clear')}</a>
</form>`;
}

export function renderHistory(view: HistoryView, t: Translator): Html {
  const { page } = view;
  const scope = scopeOf(view.filter);
  const paging = html`<nav class="dv-paging" aria-label="${t('dashboard.history.paging')}">
${page.newerAfterId !== null ? html`<a href="${view.links.page(scope, { after: page.newerAfterId })}" rel="prev" data-testid="history-newer">${t('dashboard.history.newer')}</a>` : ''}
${page.nextBeforeId !== null ? html`<a href="${view.links.page(scope, { before: page.nextBeforeId })}" rel="next" data-testid="history-older">${t('dashboard.history.older')}</a>` : ''}
</nav>`;
  return html`${view.badFilter ? html`<p class="notice error" role="alert" data-testid="history-bad-filter">${t('dashboard.history.badFilter')}</p>` : ''}
${filterForm(view, t)}
<section class="card" aria-labelledby="history-table-title">
<h2 id="history-table-title">${t('dashboard.history.movements')}</h2>
<p><a class="button secondary" href="${view.links.csv}" download data-testid="history-csv">${t('dashboard.history.export')}</a></p>
<p class="hint">${t('dashboard.history.exportHint')}</p>
${page.entries.length === 0
  ? html`<p class="hint" data-testid="history-empty">${t('dashboard.history.empty')}</p>`
  : html`<div class="dv-scroll"><table data-testid="history-table">
<thead><tr><th scope="col">${t('dashboard.history.when')}</th><th scope="col">${t('dashboard.history.what')}</th><th scope="col">${t('dashboard.history.amount')}</th><th scope="col">${t('dashboard.history.balanceAfter')}</th><th scope="col">${t('dashboard.history.who')}</th><th scope="col">${t('dashboard.history.by')}</th><th scope="col">${t('dashboard.history.note')}</th></tr></thead>
<tbody>${page.entries.map((entry) => entryRow(entry, view, t))}</tbody>
</table></div>`}
${paging}
</section>`;
}
