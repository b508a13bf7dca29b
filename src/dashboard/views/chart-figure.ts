/**
 * A chart as the dashboard draws it: a canvas that the charts script (src/dashboard/assets)
 * draws with Chart.js from the JSON in its `data-chart` attribute, a sentence that says what it
 * shows for screen readers, and the same numbers as a table under a disclosure. The JSON is an
 * attribute value, escaped by `html` like any text: a member's name in it stays text.
 */
import type { Translator } from '../../i18n/index.js';
import { html, type Html } from '../html.js';

export interface ChartSeries {
  readonly label: string;
  readonly data: readonly number[];
  /** Series with the same stack are stacked together; different stacks stand side by side. */
  readonly stack?: string;
  /** The series' pattern (0 solid, then stripes, dots, hatching…), so it reads without colour. */
  readonly pattern: number;
  readonly color: string;
}

export interface ChartSpec {
  readonly type: 'bar' | 'hbar' | 'line';
  readonly labels: readonly string[];
  readonly series: readonly ChartSeries[];
  readonly stacked?: boolean;
  /** The value axis's title. */
  readonly valueTitle?: string;
}

export interface ChartFigureInput {
  /** Unique on the page: ids and test ids derive from it. */
  readonly id: string;
  readonly title: string;
  /** What the chart shows, in a sentence: its accessible name. */
  readonly summary: string;
  readonly spec: ChartSpec;
  /** The numbers, as a table (its header and rows). */
  readonly table: Html;
  /** Links or controls shown under the title (the range). */
  readonly controls?: Html;
  /** Shown instead of the chart when there is nothing to draw. */
  readonly empty?: string;
}

/** A chart's section. The table carries the chart's id (`<id>-table`) so tests and readers can find it. */
export function chartFigure(input: ChartFigureInput, t: Translator): Html {
  const { id } = input;
  return html`<section class="card dv-chart" aria-labelledby="${id}-title" data-testid="${id}">
<h2 id="${id}-title">${input.title}</h2>
${input.controls ?? ''}
${input.empty
  ? html`<p class="hint" data-testid="${id}-empty">${input.empty}</p>`
  : html`<div class="dv-chart-box"><canvas id="${id}-canvas" role="img" aria-label="${input.summary}" data-chart="${JSON.stringify(input.spec)}"></canvas></div>
<details class="dv-numbers"><summary>${t('dashboard.charts.numbers')}</summary>
<div class="dv-scroll"><table data-testid="${id}-table"><caption class="visually-hidden">${input.summary}</caption>${input.table}</table></div>
</details>`}
</section>`;
}

/** Formats numbers and days in the reader's language. */
export function formats(t: Translator) {
  const number = new Intl.NumberFormat(t.locale);
  const shortDay = new Intl.DateTimeFormat(t.locale, { month: 'short', day: 'numeric', timeZone: 'UTC' });
  const when = new Intl.DateTimeFormat(t.locale, { dateStyle: 'medium', timeStyle: 'short', timeZone: 'UTC' });
  return {
    number: (value: number) => number.format(value),
    /** `YYYY-MM-DD` as "Nov 3". */
    shortDay: (day: string) => shortDay.format(new Date(`${day}T00:00:00Z`)),
    /** An instant as a date and a time, in UTC (as the ledger's days are). */
    when: (at: Date) => `${when.format(at)} UTC`,
  };
}
