/**
 * When a server's weekly chart post is due: a weekday and an hour in the server's own time
 * zone (an IANA name), found from UTC instants with `Intl` alone, summer time included.
 */

/** The IANA name of the time zone `name` (Europe/Berlin, america/sao_paulo, UTC) as `Intl` spells it; undefined: none it knows. */
export function timeZoneNamed(name: string): string | undefined {
  if (name.trim().length === 0) return undefined;
  try {
    return new Intl.DateTimeFormat('en-US', { timeZone: name.trim() }).resolvedOptions().timeZone;
  } catch {
    return undefined;
  }
}

interface LocalTime {
  readonly year: number;
  readonly month: number;
  readonly day: number;
  readonly hour: number;
  readonly minute: number;
  /** 0 Sunday to 6 Saturday. */
  readonly weekday: number;
}

const formats = new Map<string, Intl.DateTimeFormat>();

/** The wall-clock time in `timeZone` at `at`. */
export function localTime(at: Date, timeZone: string): LocalTime {
  let format = formats.get(timeZone);
  if (!format) {
    format = new Intl.DateTimeFormat('en-US', { timeZone, hourCycle: 'h23', year: 'numeric', month: 'numeric', day: 'numeric', hour: 'numeric', minute: 'numeric', weekday: 'short' });
    formats.set(timeZone, format);
  }
  const parts = Object.fromEntries(format.formatToParts(at).map((part) => [part.type, part.value]));
  const weekday = ['Sun', 'Mon', 'Tue', 'Wed', 'Thu', 'Fri', 'Sat'].indexOf(parts['weekday'] ?? '');
  return { year: Number(parts['year']), month: Number(parts['month']), day: Number(parts['day']), hour: Number(parts['hour']), minute: Number(parts['minute']), weekday };
}

/** The UTC instant of a wall-clock hour in `timeZone` (an hour skipped by summer time comes out an hour later). */
function instantOf(year: number, month: number, day: number, hour: number, timeZone: string): Date {
  const asUtc = Date.UTC(year, month - 1, day, hour);
  let guess = asUtc;
  // Two rounds settle the zone's offset, which may differ on either side of a change.
  for (let round = 0; round < 2; round += 1) {
    const seen = localTime(new Date(guess), timeZone);
    const offset = Date.UTC(seen.year, seen.month - 1, seen.day, seen.hour, seen.minute) - guess;
    guess = asUtc - offset;
  }
  return new Date(guess);
}

/** The first instant after `now` that is `weekday` (0 Sunday) at `hour`:00 in `timeZone`. */
export function nextPostAt(schedule: { readonly weekday: number; readonly hour: number; readonly timeZone: string }, now: Date): Date {
  const today = localTime(now, schedule.timeZone);
  for (let ahead = 0; ahead <= 7; ahead += 1) {
    const date = new Date(Date.UTC(today.year, today.month - 1, today.day + ahead));
    if (date.getUTCDay() !== schedule.weekday) continue;
    const at = instantOf(date.getUTCFullYear(), date.getUTCMonth() + 1, date.getUTCDate(), schedule.hour, schedule.timeZone);
    if (at.getTime() > now.getTime()) return at;
  }
  throw new RangeError(`no weekday ${schedule.weekday} within a week`);
}

/** The ISO week (`2026-W48`) holding `at` in `timeZone`: the key that makes a server's post one per week. */
export function isoWeekOf(at: Date, timeZone: string): string {
  const local = localTime(at, timeZone);
  const date = new Date(Date.UTC(local.year, local.month - 1, local.day));
  // The week belongs to the year of its Thursday.
  const thursday = new Date(date.getTime() + (3 - ((date.getUTCDay() + 6) % 7)) * 86_400_000);
  const firstThursday = new Date(Date.UTC(thursday.getUTCFullYear(), 0, 4));
  const week = 1 + Math.round((thursday.getTime() - firstThursday.getTime()) / 86_400_000 / 7 - (3 - ((firstThursday.getUTCDay() + 6) % 7)) / 7);
  return `${thursday.getUTCFullYear()}-W${String(week).padStart(2, '0')}`;
}
