import { describe, expect, it } from 'vitest';
import { parseFault, parseMarkers } from '@music-bot/music-api-sim/faults.js';

describe('simulator prompt markers', () => {
  it('reads status, hang, task and webhook markers from any string field', () => {
    const markers = parseMarkers({
      sound: 'drums [sim:429x2] and [sim:hang-accepted]',
      lyrics: '[SIM:fail]',
      title: '[sim:webhook-late=750][sim:task-ms=50]',
      make_instrumental: true,
    });
    expect(markers.map((marker) => marker.fault)).toEqual([
      { kind: 'status', status: 429, type: 'rate_limited', times: 2 },
      { kind: 'hang', accepted: true },
      { kind: 'fail-task' },
      { kind: 'webhook-late', ms: 750 },
      { kind: 'task-ms', ms: 50 },
    ]);
  });

  it('reads the out-of-order webhook marker and fault', () => {
    expect(parseMarkers('x [sim:webhook-out-of-order]').map((marker) => marker.fault)).toEqual([{ kind: 'webhook-out-of-order' }]);
    expect(parseFault({ kind: 'webhook-out-of-order', times: 2 })).toEqual({ kind: 'webhook-out-of-order', times: 2 });
  });

  it("gives 403 the real service's insufficient_credits type and ignores unknown markers", () => {
    expect(parseMarkers('[sim:403]').map((marker) => marker.fault)).toEqual([{ kind: 'status', status: 403, type: 'insufficient_credits' }]);
    expect(parseMarkers('[sim:explode] [sim] [sim:task-ms]')).toEqual([]);
  });

  it('keys a marker by the text around it, so another prompt counts separately', () => {
    const [first] = parseMarkers({ sound: 'a [sim:500]' });
    const [second] = parseMarkers({ sound: 'b [sim:500]' });
    expect(first?.text).not.toBe(second?.text);
  });

  it('reads proxy markers: an HTML page with that status, without or after creating the task', () => {
    expect(parseMarkers('x [sim:proxy-502-accepted] [sim:proxy-200-accepted] [sim:proxy-502x2]').map((marker) => marker.fault)).toEqual([
      { kind: 'proxy', status: 502, accepted: true },
      { kind: 'proxy', status: 200, accepted: true },
      { kind: 'proxy', status: 502, times: 2 },
    ]);
    expect(parseFault({ kind: 'proxy', status: 502, accepted: true })).toEqual({ kind: 'proxy', status: 502, accepted: true });
    expect(parseFault({ kind: 'proxy', status: 99 })).toMatch(/proxy/);
  });

  it('reads the empty-success marker and fault', () => {
    expect(parseMarkers('x [sim:empty-success]').map((marker) => marker.fault)).toEqual([{ kind: 'empty-success' }]);
    expect(parseFault({ kind: 'empty-success', times: 2 })).toEqual({ kind: 'empty-success', times: 2 });
  });

  it('checks faults sent to the control API', () => {
    expect(parseFault({ kind: 'status', status: 502 })).toEqual({ kind: 'status', status: 502 });
    expect(parseFault({ kind: 'status', status: 200 })).toMatch(/status/);
    expect(parseFault({ kind: 'webhook-late' })).toMatch(/ms/);
    expect(parseFault({ kind: 'fail-task', times: 0 })).toMatch(/times/);
    expect(parseFault({ kind: 'nope' })).toMatch(/kind/);
  });
});
