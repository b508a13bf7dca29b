import { describe, expect, it } from 'vitest';
import pino from 'pino';
import { Writable } from 'node:stream';
import { createRefusalLog } from '../../../src/http/refusal-log.js';

function capture() {
  const lines: Array<{ level: number; msg: string; refused?: Record<string, number>; sinceMs?: number }> = [];
  const stream = new Writable({
    write(chunk: Buffer, _encoding, done) {
      for (const line of chunk.toString().split('\n').filter(Boolean)) lines.push(JSON.parse(line) as (typeof lines)[number]);
      done();
    },
  });
  return { logger: pino({ level: 'debug' }, stream), lines };
}

describe('refusals on the public port', () => {
  it('log each at debug and at most one info line a minute, counting by reason', async () => {
    const { logger, lines } = capture();
    let now = 1_000_000;
    const log = createRefusalLog(logger, { now: () => now });
    for (let i = 0; i < 500; i += 1) log({ reason: i % 2 === 0 ? 'webhook unknown_job' : 'interaction bad_signature' }, 'refused');
    now += 59_000;
    log({ reason: 'webhook unknown_job' }, 'refused');
    now += 2_000;
    log({ reason: 'webhook bad_signature_mismatch' }, 'refused');
    await new Promise((resolve) => setImmediate(resolve));

    expect(lines.filter((line) => line.level === 20)).toHaveLength(502);
    const summaries = lines.filter((line) => line.level === 30);
    expect(summaries).toEqual([
      expect.objectContaining({ msg: 'requests refused on the public port', refused: { 'webhook unknown_job': 1 } }),
      expect.objectContaining({
        refused: { 'webhook unknown_job': 250, 'interaction bad_signature': 250, 'webhook bad_signature_mismatch': 1 },
        sinceMs: 61_000,
      }),
    ]);
  });
});
