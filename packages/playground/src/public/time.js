/** Dates the way Discord's client writes them, in the browser's own language and time zone. */

const STYLES = {
  t: { hour: 'numeric', minute: '2-digit' },
  T: { hour: 'numeric', minute: '2-digit', second: '2-digit' },
  d: { dateStyle: 'short' },
  D: { dateStyle: 'long' },
  f: { dateStyle: 'long', timeStyle: 'short' },
  F: { dateStyle: 'full', timeStyle: 'short' },
};

/** `<t:UNIX:style>` as text; style R is relative ("in 4 seconds", "2 minutes ago"). */
export function formatTimestamp(date, style = 'f') {
  if (style === 'R') return relativeTime(date);
  return new Intl.DateTimeFormat(undefined, STYLES[style] ?? STYLES.f).format(date);
}

/** The longest date form, for tooltips. */
export function fullDate(date) {
  return formatTimestamp(date, 'F');
}

const UNITS = [
  ['year', 365 * 24 * 3600],
  ['month', 30 * 24 * 3600],
  ['day', 24 * 3600],
  ['hour', 3600],
  ['minute', 60],
  ['second', 1],
];

export function relativeTime(date, now = Date.now()) {
  const seconds = Math.round((date.getTime() - now) / 1000);
  const [unit, size] = UNITS.find(([, length]) => Math.abs(seconds) >= length) ?? UNITS.at(-1);
  return new Intl.RelativeTimeFormat(undefined, { numeric: 'auto' }).format(Math.round(seconds / size), unit);
}

function sameDay(a, b) {
  return a.getFullYear() === b.getFullYear() && a.getMonth() === b.getMonth() && a.getDate() === b.getDate();
}

/** A message's time: "Today at 08:04", "Yesterday at 21:30", else the date and time. */
export function messageTime(date, now = new Date()) {
  const time = formatTimestamp(date, 't');
  if (sameDay(date, now)) return `Today at ${time}`;
  const yesterday = new Date(now);
  yesterday.setDate(now.getDate() - 1);
  if (sameDay(date, yesterday)) return `Yesterday at ${time}`;
  return `${formatTimestamp(date, 'd')} ${time}`;
}

/** The day divider's label, e.g. "November 23, 2026". */
export function dayLabel(date) {
  return formatTimestamp(date, 'D');
}

/** A key that changes once a day, to place day dividers. */
export function dayKey(date) {
  return `${date.getFullYear()}-${date.getMonth() + 1}-${date.getDate()}`;
}

/** Rewrites every relative timestamp under `root` (elements with data-relative = unix seconds). */
export function refreshRelativeTimes(root) {
  for (const node of root.querySelectorAll('[data-relative]')) {
    node.textContent = relativeTime(new Date(Number(node.dataset.relative) * 1000));
  }
}
