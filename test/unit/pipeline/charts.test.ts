/** The charts' periods and movement, and when a server's weekly post is due in its own time zone. */
import { describe, expect, it } from 'vitest';
import { isoWeekOf, localTime, nextPostAt, timeZoneNamed } from '../../../src/pipeline/chart-schedule.js';
import { movementOf, periodStarts, previousPeriodStart } from '../../../src/pipeline/charts.js';

describe('chart periods', () => {
  it('start on the UTC Monday and the first of the month', () => {
    expect(periodStarts(new Date('2026-11-29T23:59:59Z'))).toEqual({ week: '2026-11-23', month: '2026-11-01', all: '1970-01-01' });
    expect(periodStarts(new Date('2026-11-30T00:00:00Z'))).toEqual({ week: '2026-11-30', month: '2026-11-01', all: '1970-01-01' });
    expect(periodStarts(new Date('2027-01-01T08:00:00Z')).week).toBe('2026-12-28');
  });

  it('have the period before, except all time', () => {
    const at = new Date('2026-03-02T10:00:00Z');
    expect([previousPeriodStart('week', at), previousPeriodStart('month', at), previousPeriodStart('all', at)]).toEqual(['2026-02-23', '2026-02-01', undefined]);
    expect(previousPeriodStart('month', new Date('2026-01-15T00:00:00Z'))).toBe('2025-12-01');
  });
});

describe('movement', () => {
  it('is new, up, down or the same', () => {
    expect(movementOf(1, undefined)).toEqual({ kind: 'new' });
    expect(movementOf(1, 4)).toEqual({ kind: 'up', by: 3 });
    expect(movementOf(5, 2)).toEqual({ kind: 'down', by: 3 });
    expect(movementOf(2, 2)).toEqual({ kind: 'same' });
  });
});

describe('the weekly post’s time', () => {
  it('takes IANA names in any case and refuses the rest', () => {
    expect(timeZoneNamed('europe/berlin')).toBe('Europe/Berlin');
    expect(timeZoneNamed('UTC')).toBe('UTC');
    expect(timeZoneNamed('Mars/Olympus')).toBeUndefined();
    expect(timeZoneNamed('')).toBeUndefined();
  });

  it('is the next weekday at the hour in the server’s zone, summer time included', () => {
    // Sunday 29 November 2026, 12:00 UTC is 13:00 in Berlin (winter, UTC+1).
    const now = new Date('2026-11-29T12:00:00Z');
    expect(nextPostAt({ weekday: 0, hour: 18, timeZone: 'Europe/Berlin' }, now).toISOString()).toBe('2026-11-29T17:00:00.000Z');
    expect(nextPostAt({ weekday: 0, hour: 9, timeZone: 'Europe/Berlin' }, now).toISOString()).toBe('2026-12-06T08:00:00.000Z');
    expect(nextPostAt({ weekday: 1, hour: 0, timeZone: 'UTC' }, now).toISOString()).toBe('2026-11-30T00:00:00.000Z');
    // In summer Berlin is UTC+2; São Paulo is UTC-3 all year.
    expect(nextPostAt({ weekday: 5, hour: 20, timeZone: 'Europe/Berlin' }, new Date('2026-07-01T00:00:00Z')).toISOString()).toBe('2026-07-03T18:00:00.000Z');
    expect(nextPostAt({ weekday: 0, hour: 18, timeZone: 'America/Sao_Paulo' }, now).toISOString()).toBe('2026-11-29T21:00:00.000Z');
    // Across the change to summer time (Sunday 29 March 2026 in Berlin).
    expect(nextPostAt({ weekday: 0, hour: 18, timeZone: 'Europe/Berlin' }, new Date('2026-03-28T12:00:00Z')).toISOString()).toBe('2026-03-29T16:00:00.000Z');
  });

  it('names the ISO week in the server’s zone', () => {
    expect(isoWeekOf(new Date('2026-11-29T17:00:00Z'), 'Europe/Berlin')).toBe('2026-W48');
    // Still Sunday in São Paulo, already Monday in UTC.
    expect(isoWeekOf(new Date('2026-11-30T01:00:00Z'), 'America/Sao_Paulo')).toBe('2026-W48');
    expect(isoWeekOf(new Date('2026-11-30T01:00:00Z'), 'UTC')).toBe('2026-W49');
    expect(isoWeekOf(new Date('2027-01-01T12:00:00Z'), 'UTC')).toBe('2026-W53');
    expect(isoWeekOf(new Date('2026-01-01T12:00:00Z'), 'UTC')).toBe('2026-W01');
    expect(localTime(new Date('2026-11-29T23:30:00Z'), 'Asia/Tokyo')).toMatchObject({ day: 30, hour: 8, weekday: 1 });
  });
});
