/**
 * What each role's `/readyz` and `/livez` say while Redis or Postgres is away, with the bot as
 * four real processes (`ROLE=gateway`, `ROLE=worker`, `ROLE=http`, `ROLE=all`) on a redis-server of this
 * file's own, stopped and started again, and on Postgres through a proxy that is cut. Ready means
 * able to do this role's work: only the workers need Redis for it. Live is the process alone, so
 * no outage of a shared dependency makes an orchestrator restart every process at once.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startWorld, tcpProxy, type BotProcess, type TcpProxy, type World } from '@music-bot/test-world';
import { findFreePort } from '../../src/embedded/free-port.js';
import { createTestDatabase } from '../support/database.js';

type Role = 'gateway' | 'worker' | 'http' | 'all';
const ROLES: readonly Role[] = ['gateway', 'worker', 'http', 'all'];

let world: World;
let postgres: TcpProxy;
/** Where each process serves its health: the http and all roles on their public port (no METRICS_PORT), the others on METRICS_PORT. */
const healthUrl = {} as Record<Role, string>;
const bots: BotProcess[] = [];

beforeAll(async () => {
  const database = await createTestDatabase();
  postgres = await tcpProxy(database.url);
  world = await startWorld({ postgres: { url: postgres.url }, redis: { persistent: false } });
  for (const role of ROLES) {
    const port = await findFreePort();
    const env: Record<string, string> = role === 'http' || role === 'all' ? { ROLE: role, HTTP_PORT: String(port) } : { ROLE: role, METRICS_PORT: String(port), METRICS_HOST: '127.0.0.1' };
    const bot = world.bot({ name: role, env: { ...env, LOG_LEVEL: 'info' } });
    bots.push(bot);
    await bot.start();
    healthUrl[role] = `http://127.0.0.1:${port}`;
  }
}, 180_000);

afterAll(async () => {
  await world?.close();
  await postgres?.close();
}, 120_000);

async function status(role: Role, route: '/readyz' | '/livez'): Promise<number> {
  return (await fetch(`${healthUrl[role]}${route}`, { signal: AbortSignal.timeout(5_000) })).status;
}

async function statuses(route: '/readyz' | '/livez'): Promise<Record<Role, number>> {
  const entries = await Promise.all(ROLES.map(async (role) => [role, await status(role, route)] as const));
  return Object.fromEntries(entries) as Record<Role, number>;
}

describe('readiness and liveness by role', () => {
  it('all ready and live with Postgres and Redis up', async () => {
    await expect.poll(() => statuses('/readyz'), { timeout: 30_000 }).toEqual({ gateway: 200, worker: 200, http: 200, all: 200 });
    expect(await statuses('/livez')).toEqual({ gateway: 200, worker: 200, http: 200, all: 200 });
  });

  it('Redis away: the worker and all are not ready; the gateway and the http role still are (their work lands in Postgres); all stay live', async () => {
    await world.redis!.stop();
    try {
      // The positive signal first: the worker has seen Redis go.
      await expect.poll(() => status('worker', '/readyz'), { timeout: 15_000 }).toBe(503);
      expect(await statuses('/readyz')).toEqual({ gateway: 200, worker: 503, http: 200, all: 503 });
      const body = (await (await fetch(`${healthUrl.http}/readyz`)).json()) as Record<string, unknown>;
      expect(body).toMatchObject({ status: 'ready', postgres: 'ok', redis: 'down' });
      expect(await statuses('/livez')).toEqual({ gateway: 200, worker: 200, http: 200, all: 200 });
    } finally {
      await world.redis!.start();
    }
    await expect.poll(() => statuses('/readyz'), { timeout: 30_000 }).toEqual({ gateway: 200, worker: 200, http: 200, all: 200 });
  });

  it('Postgres away: no role is ready; all stay live', async () => {
    postgres.cut();
    try {
      await expect.poll(() => statuses('/readyz'), { timeout: 15_000 }).toEqual({ gateway: 503, worker: 503, http: 503, all: 503 });
      expect(await statuses('/livez')).toEqual({ gateway: 200, worker: 200, http: 200, all: 200 });
    } finally {
      postgres.restore();
    }
    await expect.poll(() => statuses('/readyz'), { timeout: 30_000 }).toEqual({ gateway: 200, worker: 200, http: 200, all: 200 });
    for (const bot of bots) expect(bot.running, bot.name).toBe(true);
  });
});
