import { describe, expect, it } from 'vitest';
import { INCOMING_KINDS, SPEND_KINDS, type DayFlows } from '../../../src/credits/index.js';
import type { ChartData } from '../../../src/dashboard/data/charts.js';
import type { Overview } from '../../../src/dashboard/data/overview.js';
import { renderHistory } from '../../../src/dashboard/views/history.js';
import { renderLibrary } from '../../../src/dashboard/views/library.js';
import { renderOverview, type OverviewView } from '../../../src/dashboard/views/overview.js';
import { raw } from '../../../src/dashboard/html.js';
import { LOCALES, translator } from '../../../src/i18n/index.js';

const HOSTILE = `<img src=x onerror="alert(1)"></script><script>alert(2)</script>`;
const now = new Date('2026-11-29T12:00:00Z');

function flows(days: number): DayFlows[] {
  return Array.from({ length: days }, (_, i) => {
    const day = new Date(now.getTime() - (days - 1 - i) * 86_400_000).toISOString().slice(0, 10);
    const spent = Object.fromEntries(SPEND_KINDS.map((kind, k) => [kind, i === days - 1 ? 10 * (k + 1) : 0])) as DayFlows['spent'];
    const incoming = Object.fromEntries(INCOMING_KINDS.map((kind) => [kind, kind === 'grant' && i === days - 1 ? 500 : 0])) as DayFlows['incoming'];
    return { day, spent, incoming };
  });
}

const overview: Overview = {
  balance: 12_345,
  frozen: true,
  allowance: 500,
  nextTopUp: new Date('2026-12-01T00:00:00Z'),
  month: { start: new Date('2026-11-01T00:00:00Z'), spent: 678, jobs: 9 },
  pacePerDay: 22.6,
  runsOutOn: new Date('2027-05-01T00:00:00Z'),
  alert: { state: 'below', below: 20_000, channelId: '42' },
};
const charts: ChartData = { flows: flows(90), songs: Array.from({ length: 90 }, (_, i) => i % 3), topMembers: [{ userId: '7', jobs: 3, charged: 40, returned: 0, spent: 40 }, { userId: '', jobs: 1, charged: 5, returned: 0, spent: 5 }] };
const view = (range: 30 | 90 = 30): OverviewView => ({
  overview,
  charts,
  range,
  now,
  memberNames: new Map([['7', HOSTILE]]),
  alertChannelName: HOSTILE,
  links: { range: (days) => `?range=${days}`, memberHistory: (id) => `history?member=${id}` },
});

/** The JSON a chart's canvas carries, as the browser reads the attribute back. */
function chartSpec(page: string, id: string): { labels: string[]; series: Array<{ label: string; data: number[]; pattern: number }> } {
  const attribute = new RegExp(`id="${id}-canvas"[^>]*data-chart="([^"]*)"`).exec(page)?.[1];
  if (attribute === undefined) throw new Error(`no chart ${id}`);
  const decoded = attribute.replaceAll('&quot;', '"').replaceAll('&lt;', '<').replaceAll('&gt;', '>').replaceAll('&#39;', "'").replaceAll('&amp;', '&');
  return JSON.parse(decoded) as ReturnType<typeof chartSpec>;
}

describe('the overview view', () => {
  it('shows the figures, each chart with a pattern per series and its numbers as a table', () => {
    const page = renderOverview(view(), translator('en')).text;
    expect(page).toContain('data-testid="figure-balance">12,345<');
    expect(page).toContain('data-testid="figure-month">678<');
    expect(page).toContain('Used in November 2026');
    expect(page).toContain('data-testid="figure-spending">Frozen<');
    const spend = chartSpec(page, 'chart-spend');
    expect(spend.labels).toHaveLength(30);
    expect(spend.series.map((series) => series.label)).toEqual(['Songs', 'Lyrics', 'Videos', 'Downloads', 'Uploads', 'Voices', 'Grants', 'Allowances', 'Purchases']);
    expect(new Set(spend.series.map((series) => series.pattern)).size).toBe(9);
    expect(spend.series[0]!.data.at(-1)).toBe(10);
    expect(page).toMatch(/data-testid="chart-spend-table">[\s\S]*<th scope="row">Nov 29<\/th><td>10<\/td><td>20<\/td>/);
    expect(chartSpec(renderOverview(view(90), translator('en')).text, 'chart-spend').labels).toHaveLength(90);
  });

  it('keeps a hostile member or channel name as text, in the markup and in the chart data', () => {
    const page = renderOverview(view(), translator('en')).text;
    expect(page).not.toContain('<script>');
    expect(page).not.toContain('<img');
    expect(page).toContain('&lt;img src=x onerror=&quot;alert(1)&quot;&gt;');
    expect(chartSpec(page, 'chart-members').labels).toEqual([HOSTILE, 'No member']);
  });

  it('is written in every language', () => {
    for (const locale of LOCALES) {
      const page = renderOverview(view(), translator(locale)).text;
      expect(page).not.toMatch(/dashboard\.\w+\./);
    }
    expect(renderOverview(view(), translator('de')).text).toContain('12.345');
  });

  it('says when the server has no account yet', () => {
    expect(renderOverview({ ...view(), overview: null }, translator('en')).text).toContain('data-testid="no-account"');
  });
});

describe('the history and library views', () => {
  it('lists movements with hostile names and reasons as text, and keeps the filters in the paging links', () => {
    const entry = {
      id: 5, guildId: 'g', key: 'manual:1', kind: 'grant' as const, amount: 25, balanceAfter: 125, jobId: null, userId: null, actorId: '7',
      reason: HOSTILE, createdAt: now, jobKind: null,
    };
    const page = renderHistory(
      {
        page: { entries: [entry], nextBeforeId: 5, newerAfterId: null },
        filter: { kind: 'grant', member: undefined, from: '2026-11-01', to: undefined, before: undefined, after: undefined },
        badFilter: false,
        memberNames: new Map([['7', HOSTILE]]),
        links: { self: '/h', page: (scope, paging) => `/h?kind=${scope.kind ?? ''}&from=${scope.from ?? ''}&before=${paging.before ?? ''}`, csv: '/h.csv' },
      },
      translator('en'),
    ).text;
    expect(page).not.toContain('<script>');
    expect(page).toContain('+25');
    expect(page).toContain('href="/h?kind=grant&amp;from=2026-11-01&amp;before=5"');
    expect(page).toContain('<option value="grant" selected>');
  });

  it('lists songs with a player and a Hide form carrying the CSRF token', () => {
    const page = renderLibrary(
      {
        library: { songs: [{ jobId: 'j1', title: HOSTILE, userId: '7', createdAt: now, audioUrl: 'https://cdn.example/a.mp3' }], older: undefined, newer: undefined },
        memberNames: new Map(),
        csrf: raw('<input type="hidden" name="_csrf" value="tok">'),
        links: { hide: '/hide', older: (id) => `?older=${id}`, newer: (id) => `?newer=${id}` },
      },
      translator('en'),
    ).text;
    expect(page).not.toContain('<script>');
    expect(page).toContain('<audio controls preload="none" src="https://cdn.example/a.mp3"');
    expect(page).toMatch(/<form method="post" action="\/hide"><input type="hidden" name="_csrf" value="tok"><input type="hidden" name="job" value="j1">/);
  });
});
