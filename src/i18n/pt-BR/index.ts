import type { Catalogue } from '../catalogue.js';
import { charts } from './charts.js';
import { contests } from './contests.js';
import { core } from './core.js';
import { dashboard } from './dashboard.js';
import { dashboardViews } from './dashboard-views.js';
import { generation } from './generation.js';
import { listening } from './listening.js';
import { moderation } from './moderation.js';
import { notify } from './notify.js';
import { reports } from './reports.js';
import { social } from './social.js';

export const catalogue: Catalogue = { ...core, ...generation, ...moderation, ...listening, ...reports, ...social, ...notify, ...dashboard, ...dashboardViews, ...charts, ...contests };
