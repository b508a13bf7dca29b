/** Every guild page of the dashboard and the assets they load: the one list the frame serves. */
import { CHART_LIBRARY_ASSET, CHARTS_SCRIPT_ASSET, readChartLibrary, readChartsScript } from './assets/chart-assets.js';
import { historyPage, libraryPage, overviewPage } from './insight-pages.js';
import type { DashboardAsset, GuildPage } from './pages.js';
import { blocklistPage } from './blocklist-page.js';
import { ownersPage } from './owners-page.js';
import { settingsPage } from './settings-page.js';

/** The guild pages, in the navigation's order. The first a member may open is where the picker leads. */
export const GUILD_PAGES: readonly GuildPage[] = [overviewPage, historyPage, libraryPage, settingsPage, blocklistPage, ownersPage];

/** Scripts, stylesheets and libraries the pages load (the frame's own stylesheet is added by the frame). */
export const DASHBOARD_ASSETS: readonly DashboardAsset[] = [
  { name: CHART_LIBRARY_ASSET, contentType: 'text/javascript; charset=utf-8', read: readChartLibrary },
  { name: CHARTS_SCRIPT_ASSET, contentType: 'text/javascript; charset=utf-8', read: readChartsScript },
];
