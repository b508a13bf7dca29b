/**
 * The overview, history and library pages: what a moderator reads every morning. Each reads
 * through the credits and pipeline functions (src/dashboard/data) and renders with the pure
 * views (src/dashboard/views); the library's Hide goes through the review queue's decision.
 */
import { localText } from '../i18n/index.js';
import { CHART_LIBRARY_ASSET, CHARTS_SCRIPT_ASSET } from './assets/chart-assets.js';
import { loadCharts } from './data/charts.js';
import { ledgerCsvStream, loadHistory, parseHistoryFilter, type HistoryScope } from './data/history.js';
import { hideSong, libraryCursorOf, loadLibrary } from './data/library.js';
import { loadOverview } from './data/overview.js';
import { actionUrl, csrfField, defineGuildPage, type GuildPageContext } from './pages.js';
import { renderHistory } from './views/history.js';
import { renderLibrary } from './views/library.js';
import { renderOverview, type Range } from './views/overview.js';

const queryOf = (ctx: GuildPageContext) => Object.fromEntries(ctx.query);

function historyLink(ctx: GuildPageContext, scope: HistoryScope, paging: { before?: number; after?: number } = {}): string {
  const params = new URLSearchParams();
  for (const [name, value] of Object.entries({ ...scope, ...paging })) if (value !== undefined && value !== '') params.set(name, String(value));
  const query = params.toString();
  return `${ctx.basePath}/history${query ? `?${query}` : ''}`;
}

export const overviewPage = defineGuildPage({
  path: 'overview',
  titleKey: 'dashboard.overview.title',
  access: 'moderator',
  scripts: [CHART_LIBRARY_ASSET, CHARTS_SCRIPT_ASSET],
  async load(ctx) {
    const range: Range = ctx.query.get('range') === '90' ? 90 : 30;
    const [overview, charts, channels] = await Promise.all([
      loadOverview(ctx.db, ctx.guildId, ctx.now),
      loadCharts(ctx.db, ctx.guildId, ctx.now),
      ctx.directory.channels(),
    ]);
    const memberNames = await ctx.directory.memberNames(charts.topMembers.map((member) => member.userId).filter(Boolean));
    const alertChannel = overview && overview.alert.state !== 'off' ? overview.alert.channelId : undefined;
    return { overview, charts, range, memberNames, alertChannelName: channels.find((channel) => channel.id === alertChannel)?.name };
  },
  render(data, ctx) {
    return renderOverview(
      {
        ...data,
        now: ctx.now,
        links: { range: (days) => `${ctx.basePath}/overview?range=${days}`, memberHistory: (userId) => historyLink(ctx, { member: userId }) },
      },
      ctx.t,
    );
  },
});

export const historyPage = defineGuildPage({
  path: 'history',
  titleKey: 'dashboard.history.title',
  access: 'moderator',
  async load(ctx) {
    const { filter, badFields } = parseHistoryFilter(queryOf(ctx));
    const page = await loadHistory(ctx.db, ctx.guildId, filter);
    const people = page.entries.flatMap((entry) => [entry.userId, entry.actorId]).filter((id): id is string => id !== null && /^\d+$/.test(id));
    return { page, filter, badFilter: badFields.length > 0, memberNames: await ctx.directory.memberNames([...new Set(people)]) };
  },
  render(data, ctx) {
    const member = data.filter.member;
    return renderHistory(
      {
        ...data,
        links: {
          self: `${ctx.basePath}/history`,
          page: (scope, paging) => historyLink(ctx, scope, paging),
          csv: `${ctx.basePath}/history/ledger.csv${member ? `?member=${member}` : ''}`,
        },
      },
      ctx.t,
    );
  },
  files: {
    'ledger.csv': async (ctx) => {
      const { member } = parseHistoryFilter({ member: ctx.query.get('member') ?? undefined }).filter;
      return {
        filename: `ledger-${ctx.guildId}${member ? `-${member}` : ''}.csv`,
        contentType: 'text/csv; charset=utf-8',
        body: await ledgerCsvStream(ctx.db, ctx.guildId, member),
      };
    },
  },
});

export const libraryPage = defineGuildPage({
  path: 'library',
  titleKey: 'dashboard.library.title',
  access: 'moderator',
  async load(ctx) {
    const library = await loadLibrary(ctx.db, ctx.guildId, libraryCursorOf(queryOf(ctx)));
    return { library, memberNames: await ctx.directory.memberNames([...new Set(library.songs.map((song) => song.userId))]) };
  },
  render(data, ctx) {
    return renderLibrary(
      {
        ...data,
        csrf: csrfField(ctx),
        links: {
          hide: actionUrl(ctx, 'library', 'hide'),
          older: (jobId) => `${ctx.basePath}/library?older=${jobId}`,
          newer: (jobId) => `${ctx.basePath}/library?newer=${jobId}`,
        },
      },
      ctx.t,
    );
  },
  actions: {
    hide: async (form, ctx) => {
      const jobId = form.get('job') ?? '';
      if (!/^[0-9a-f-]{36}$/i.test(jobId)) return { kind: 'error', text: localText('dashboard.library.notFound') };
      const outcome = await hideSong(ctx.pipeline, { guildId: ctx.guildId, jobId, actorId: ctx.viewer.userId });
      if (outcome === 'hidden') return { kind: 'done', text: localText('dashboard.library.hidden') };
      return { kind: 'error', text: localText(outcome === 'already' ? 'dashboard.library.alreadyHidden' : 'dashboard.library.notFound') };
    },
  },
});
