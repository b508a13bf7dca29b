/** A chart as members read it, in `/charts` and in the weekly post: one line per song, in the reader's language. */
import type { Translate } from '../i18n/index.js';
import { escapeMarkdown } from '../text.js';
import type { ChartEntry, ChartMetric, ChartPeriod, Movement } from './charts.js';
import { describeJob } from './titles.js';

function movementText(movement: Movement, t: Translate): string {
  switch (movement.kind) {
    case 'new':
      return t('charts.movement.new');
    case 'same':
      return t('charts.movement.same');
    case 'up':
      return t('charts.movement.up', { by: movement.by });
    case 'down':
      return t('charts.movement.down', { by: movement.by });
  }
}

function countText(metric: ChartMetric, count: number, t: Translate): string {
  if (metric === 'likes') return t('unit.likes', { count });
  return t(metric === 'plays' ? 'unit.plays' : 'unit.remixes', { count });
}

/** The chart's heading, its lines (rank, title, maker, count, movement) and what the movement compares with; or that it is empty. */
export function chartText(entries: readonly ChartEntry[], chart: { readonly period: ChartPeriod; readonly metric: ChartMetric }, t: Translate): string {
  const heading = t(`charts.heading.${chart.period}`, { by: t(`charts.by.${chart.metric}`) });
  if (entries.length === 0) return `${heading}\n${t(`charts.empty.${chart.metric}`)}`;
  const lines = entries.map((entry) =>
    t('charts.line', {
      rank: entry.rank,
      title: escapeMarkdown(describeJob(entry.song, t, 80)),
      maker: entry.song.userId,
      count: countText(chart.metric, entry.count, t),
      movement: movementText(entry.movement, t),
    }),
  );
  return [heading, ...lines, `-# ${t(`charts.since.${chart.period}`)}`].join('\n');
}
