/**
 * METRICS_PORT on the http role: `/metrics`, `/healthz` and `/readyz` leave the public port,
 * where only the webhooks (and `/interactions`) remain, and are served on the ops port with the
 * deployment's gauges. DATABASE_POOL_SIZE bounds each pool.
 */
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import type { SubmitResult } from '../../../src/pipeline/requests.js';
import { findFreePort } from '../../../src/embedded/free-port.js';
import { startHarness, type Harness } from '../../support/pipeline-harness.js';
import { found } from '../../support/found.js';
import { jobRow } from '../../support/ledger.js';

let h: Harness;
let ops: string;

beforeAll(async () => {
  const port = await findFreePort();
  ops = `http://127.0.0.1:${port}`;
  h = await startHarness({
    webhooks: true,
    startingCredits: 500,
    env: { METRICS_PORT: String(port), METRICS_HOST: '127.0.0.1', DATABASE_POOL_SIZE: '3', MIGRATE_ON_START: 'false' },
  });
});
afterAll(async () => h?.close());

describe('the ops port', () => {
  it('serves metrics and health, which the public port no longer does', async () => {
    for (const route of ['/metrics', '/healthz', '/readyz']) {
      expect((await fetch(`${ops}${route}`)).status, route).toBe(200);
      expect((await fetch(`${h.app.httpUrl}${route}`)).status, route).toBe(404);
    }
    // The deployment's gauges (read from Redis and Postgres) come with the http role's ops port.
    expect(await (await fetch(`${ops}/metrics`)).text()).toMatch(/^musicbot_queue_depth\{/m);
  });

  it('leaves the webhooks on the public port, and songs are still made through them', async () => {
    const { result } = await h.request({ kind: 'song', prompt: 'off the public port' });
    const { jobId } = result as SubmitResult;
    const job = await vi.waitFor(async () => {
      const row = await jobRow(h.db.db, jobId);
      return found(row?.deliveryState === 'delivered' ? row : undefined);
    }, 20_000);
    expect(job.state).toBe('succeeded');
    expect(h.sim.webhookAttempts.some((attempt) => attempt.url.includes(jobId) && attempt.status === 200)).toBe(true);
  });

  it('keeps each Postgres pool within DATABASE_POOL_SIZE', async () => {
    await Promise.all(Array.from({ length: 12 }, (_, i) => h.request({ kind: 'lyrics', prompt: `pool ${i}` })));
    const { rows } = await h.db.pool.query<{ name: string; n: number }>(
      "select application_name as name, count(*)::int as n from pg_stat_activity where datname = current_database() and application_name like 'music-bot %' group by 1",
    );
    expect(rows.length).toBeGreaterThan(0);
    for (const row of rows) expect(row.n, row.name).toBeLessThanOrEqual(3);
  });
});
