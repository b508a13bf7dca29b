/**
 * The chart scripts the overview loads from the bot itself (the CSP allows no other origin):
 * Chart.js's own UMD build, read from the installed package, and the script that draws the
 * page's charts with it (charts-client.ts).
 */
import { readFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import path from 'node:path';
import { CHARTS_CLIENT_JS } from './charts-client.js';

export const CHART_LIBRARY_ASSET = 'chart.umd.min.js';
export const CHARTS_SCRIPT_ASSET = 'charts.js';

/** Chart.js's minified UMD build: the package's main file sits beside it in `dist/`. */
export async function readChartLibrary(): Promise<Buffer> {
  const main = createRequire(import.meta.url).resolve('chart.js');
  return readFile(path.join(path.dirname(main), 'chart.umd.min.js'));
}

export function readChartsScript(): Promise<string> {
  return Promise.resolve(CHARTS_CLIENT_JS);
}
