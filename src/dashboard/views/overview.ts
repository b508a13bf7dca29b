/**
 * The overview page: the server's figures as `/credits` gives them, with the pace and when the
 * balance runs out, the alert and the freeze; then the charts: credits per day (30 or 90 days)
 * stacked by kind beside what came in, the top members by spend, and songs per day.
 */
import { INCOMING_KINDS, SPEND_KINDS, type IncomingKind, type SpendKind } from '../../credits/index.js';
import type { MessageKey, Translator } from '../../i18n/index.js';
import { SHORT_DAYS, type ChartData } from '../data/charts.js';
import type { Overview } from '../data/overview.js';
import { html, type Html } from '../html.js';
import { chartFigure, formats, type ChartSeries } from './chart-figure.js';

/** The ranges the credits chart offers, in days. */
export const RANGES = [30, 90] as const;
export type Range = (typeof RANGES)[number];

const SPEND_COLORS: Readonly<Record<SpendKind, string>> = {
  song: '#5865f2',
  lyrics: '#23a55a',
  video: '#f0b232',
  download: '#eb459e',
  upload: '#00a8fc',
  voice: '#f23f43',
};
const INCOMING_COLORS: Readonly<Record<IncomingKind, string>> = { grant: '#b5bac1', allowance: '#57f287', purchase: '#fee75c' };

export const SPEND_WORDS: Readonly<Record<SpendKind, MessageKey>> = {
  song: 'dashboard.charts.kind.song',
  lyrics: 'dashboard.charts.kind.lyrics',
  video: 'dashboard.charts.kind.video',
  download: 'dashboard.charts.kind.download',
  upload: 'dashboard.charts.kind.upload',
  voice: 'dashboard.charts.kind.voice',
};
const INCOMING_WORDS: Readonly<Record<IncomingKind, MessageKey>> = {
  grant: 'dashboard.charts.incoming.grant',
  allowance: 'dashboard.charts.incoming.allowance',
  purchase: 'dashboard.charts.incoming.purchase',
};

export interface OverviewView {
  /** Null: the bot keeps no credits for the server yet. */
  readonly overview: Overview | null;
  readonly charts: ChartData;
  readonly range: Range;
  readonly now: Date;
  /** Members' names as the server shows them, by id; an id without one is shown as the id. */
  readonly memberNames: ReadonlyMap<string, string>;
  /** The alert channel's name, when the server still has it. */
  readonly alertChannelName: string | undefined;
  /** Where the range links and a member's history link go. */
  readonly links: { readonly range: (days: Range) => string; readonly memberHistory: (userId: string) => string };
}

function card(id: string, title: string, figure: string, hint: Html | string, extra = ''): Html {
  return html`<div class="dv-card${extra}" data-testid="card-${id}"><h2>${title}</h2><p class="dv-figure" data-testid="figure-${id}">${figure}</p><p class="hint">${hint}</p></div>`;
}

function figures(overview: Overview, view: OverviewView, t: Translator): Html {
  const f = formats(t);
  const date = (at: Date) => t.day(at);
  const channel = view.alertChannelName ?? (overview.alert.state === 'off' ? '' : overview.alert.channelId);
  const alert = overview.alert;
  return html`<section class="dv-cards" aria-label="${t('dashboard.overview.figures')}">
${card('balance', t('dashboard.overview.balance'), f.number(overview.balance), t('dashboard.overview.balanceHint'))}
${card('month', t('dashboard.overview.month', { month: t.month(overview.month.start) }), f.number(overview.month.spent), t('dashboard.overview.monthJobs', { jobs: overview.month.jobs }))}
${overview.allowance > 0
  ? card('allowance', t('dashboard.overview.allowance'), f.number(overview.allowance), t('dashboard.overview.allowanceNext', { date: date(overview.nextTopUp) }))
  : card('allowance', t('dashboard.overview.allowance'), t('dashboard.overview.allowanceNone'), t('dashboard.overview.allowanceNoneHint'))}
${overview.runsOutOn
  ? card('runs-out', t('dashboard.overview.runsOut'), date(overview.runsOutOn), t('dashboard.overview.pace', { perDay: Math.round(overview.pacePerDay) }), overview.runsOutOn.getTime() - view.now.getTime() < 7 * 86_400_000 ? ' dv-warn' : '')
  : card('runs-out', t('dashboard.overview.runsOut'), t('dashboard.overview.runsOutNever'), t('dashboard.overview.noPace'))}
${alert.state === 'off'
  ? card('alert', t('dashboard.overview.alert'), t('dashboard.overview.alertStateOff'), t('dashboard.overview.alertOffHint'))
  : alert.state === 'armed'
    ? card('alert', t('dashboard.overview.alert'), t('dashboard.overview.alertStateArmed'), t('dashboard.overview.alertArmed', { below: alert.below, channel }))
    : card('alert', t('dashboard.overview.alert'), t('dashboard.overview.alertStateBelow'), t('dashboard.overview.alertBelow', { below: alert.below, channel }), ' dv-warn')}
${overview.frozen
  ? card('spending', t('dashboard.overview.spending'), t('dashboard.overview.frozen'), t('dashboard.overview.frozenHint'), ' dv-warn')
  : card('spending', t('dashboard.overview.spending'), t('dashboard.overview.open'), t('dashboard.overview.openHint'))}
</section>`;
}

function spendChart(view: OverviewView, t: Translator): Html {
  const f = formats(t);
  const days = view.charts.flows.slice(-view.range);
  const spentStack = t('dashboard.charts.stackSpent');
  const addedStack = t('dashboard.charts.stackAdded');
  const series: ChartSeries[] = [
    ...SPEND_KINDS.map((kind, index) => ({ label: t.text({ key: SPEND_WORDS[kind] }), data: days.map((day) => day.spent[kind]), stack: spentStack, pattern: index, color: SPEND_COLORS[kind] })),
    ...INCOMING_KINDS.map((kind, index) => ({
      label: t.text({ key: INCOMING_WORDS[kind] }),
      data: days.map((day) => day.incoming[kind]),
      stack: addedStack,
      pattern: SPEND_KINDS.length + index,
      color: INCOMING_COLORS[kind],
    })),
  ];
  const spentOf = (day: (typeof days)[number]) => SPEND_KINDS.reduce((sum, kind) => sum + day.spent[kind], 0);
  const addedOf = (day: (typeof days)[number]) => INCOMING_KINDS.reduce((sum, kind) => sum + day.incoming[kind], 0);
  const spent = days.reduce((sum, day) => sum + spentOf(day), 0);
  const added = days.reduce((sum, day) => sum + addedOf(day), 0);
  const controls = html`<p class="dv-range" data-testid="range">${t('dashboard.charts.range')}: ${RANGES.map((days, index) =>
    html`${index > 0 ? ' · ' : ''}${days === view.range
      ? html`<strong aria-current="true">${t('dashboard.charts.days', { days })}</strong>`
      : html`<a href="${view.links.range(days)}">${t('dashboard.charts.days', { days })}</a>`}`,
  )}</p>`;
  const table = html`<thead><tr><th scope="col">${t('dashboard.charts.day')}</th>${SPEND_KINDS.map((kind) => html`<th scope="col">${t.text({ key: SPEND_WORDS[kind] })}</th>`)}<th scope="col">${t('dashboard.charts.totalSpent')}</th>${INCOMING_KINDS.map((kind) => html`<th scope="col">${t.text({ key: INCOMING_WORDS[kind] })}</th>`)}</tr></thead>
<tbody>${[...days].reverse().map((day) => html`<tr><th scope="row">${f.shortDay(day.day)}</th>${SPEND_KINDS.map((kind) => html`<td>${f.number(day.spent[kind])}</td>`)}<td>${f.number(spentOf(day))}</td>${INCOMING_KINDS.map((kind) => html`<td>${f.number(day.incoming[kind])}</td>`)}</tr>`)}</tbody>`;
  return chartFigure(
    {
      id: 'chart-spend',
      title: t('dashboard.charts.spent'),
      summary: t('dashboard.charts.spentSummary', { days: view.range, spent, added }),
      spec: { type: 'bar', stacked: true, labels: days.map((day) => f.shortDay(day.day)), series, valueTitle: t('dashboard.charts.valueCredits') },
      table,
      controls,
    },
    t,
  );
}

function memberName(view: OverviewView, userId: string, t: Translator): string {
  return userId === '' ? t('dashboard.charts.noMember') : (view.memberNames.get(userId) ?? userId);
}

function topMembersChart(view: OverviewView, t: Translator): Html {
  const f = formats(t);
  const members = view.charts.topMembers;
  const table = html`<thead><tr><th scope="col">${t('dashboard.charts.member')}</th><th scope="col">${t('dashboard.charts.spentColumn')}</th><th scope="col">${t('dashboard.charts.jobs')}</th></tr></thead>
<tbody>${members.map((member) => html`<tr><th scope="row">${member.userId === ''
    ? memberName(view, member.userId, t)
    : html`<a href="${view.links.memberHistory(member.userId)}">${memberName(view, member.userId, t)}</a>`}</th><td>${f.number(member.spent)}</td><td>${f.number(member.jobs)}</td></tr>`)}</tbody>`;
  return chartFigure(
    {
      id: 'chart-members',
      title: t('dashboard.charts.topMembers', { days: SHORT_DAYS }),
      summary: t('dashboard.charts.topSummary', { days: SHORT_DAYS, count: members.length }),
      spec: {
        type: 'hbar',
        labels: members.map((member) => memberName(view, member.userId, t)),
        series: [{ label: t('dashboard.charts.spentColumn'), data: members.map((member) => member.spent), pattern: 0, color: SPEND_COLORS.song }],
        valueTitle: t('dashboard.charts.valueCredits'),
      },
      table,
      ...(members.length === 0 && { empty: t('dashboard.charts.noSpenders', { days: SHORT_DAYS }) }),
    },
    t,
  );
}

function songsChart(view: OverviewView, t: Translator): Html {
  const f = formats(t);
  const days = view.charts.flows.slice(-view.range).map((day) => day.day);
  const songs = view.charts.songs.slice(-view.range);
  const total = songs.reduce((sum, n) => sum + n, 0);
  const table = html`<thead><tr><th scope="col">${t('dashboard.charts.day')}</th><th scope="col">${t('dashboard.charts.songsColumn')}</th></tr></thead>
<tbody>${days.map((day, index) => ({ day, n: songs[index] ?? 0 })).reverse().map(({ day, n }) => html`<tr><th scope="row">${f.shortDay(day)}</th><td>${f.number(n)}</td></tr>`)}</tbody>`;
  return chartFigure(
    {
      id: 'chart-songs',
      title: t('dashboard.charts.songs'),
      summary: t('dashboard.charts.songsSummary', { days: view.range, count: total }),
      spec: {
        type: 'line',
        labels: days.map((day) => f.shortDay(day)),
        series: [{ label: t('dashboard.charts.songsColumn'), data: songs, pattern: 0, color: SPEND_COLORS.lyrics }],
        valueTitle: t('dashboard.charts.songsColumn'),
      },
      table,
    },
    t,
  );
}

export function renderOverview(view: OverviewView, t: Translator): Html {
  if (!view.overview) return html`<p class="notice" data-testid="no-account">${t('dashboard.overview.noAccount')}</p>`;
  return html`${figures(view.overview, view, t)}
${spendChart(view, t)}
<div class="grid">
${topMembersChart(view, t)}
${songsChart(view, t)}
</div>`;
}
