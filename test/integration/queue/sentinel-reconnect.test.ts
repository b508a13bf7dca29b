/**
 * Connections through sentinels that answer slowly, when the primary is killed: ioredis asks a
 * sentinel for the primary on each attempt to reconnect, and when the sentinels announce the
 * failover in the middle of that question it gives the connection up for good (status `end`,
 * every command failing at once). The bot's connections are connected again, and all of them
 * reach the new primary.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createLogger } from '../../../src/logger.js';
import { closeRedis, connectRedis, type RedisClient } from '../../../src/queue/connection.js';
import { slowLink, startSentinelGroup, type SentinelGroup, type SlowLink } from '../../support/redis-topology.js';

const PASSWORD = 'data-pw-2c4f';
const SENTINEL_PASSWORD = 'sentinel-pw-81d7';
// Enough connections, each asking for the primary for most of its time, that some are asking when the news comes.
const CONNECTIONS = 8;
const ANSWER_DELAY_MS = 400;

let group: SentinelGroup | undefined;
const links: SlowLink[] = [];
const clients: RedisClient[] = [];
const log: string[] = [];
const lines = (msg: string) => log.map((line) => JSON.parse(line) as { msg: string; redis?: string }).filter((line) => line.msg === msg);

beforeAll(async () => {
  group = await startSentinelGroup({ password: PASSWORD, sentinelPassword: SENTINEL_PASSWORD });
  for (const port of group.sentinelPorts) links.push(await slowLink(port, ANSWER_DELAY_MS));
}, 60_000);

// Run last to first: the connections, then the links, then the servers; each bounded by the hook timeout.
afterAll(async () => group?.stop(), 30_000);
afterAll(async () => Promise.all(links.map((link) => link.close())), 10_000);
afterAll(async () => Promise.all(clients.map((client) => closeRedis(client, 500))), 10_000);

describe('connections through slow sentinels, the primary killed', () => {
  it('are all connected again to the new primary, those ioredis gave up on included', async () => {
    const logger = createLogger({ level: 'info' }, { write: (line: string) => void log.push(line) });
    const target = {
      mode: 'sentinel' as const,
      sentinels: links.map((link) => ({ host: '127.0.0.1', port: link.port })),
      name: group!.name,
      db: 0,
      username: undefined,
      password: PASSWORD,
      sentinelPassword: SENTINEL_PASSWORD,
    };
    for (let i = 0; i < CONNECTIONS; i += 1) clients.push(connectRedis(target, { name: `connection-${i}`, logger }));
    await Promise.all(clients.map((client) => client.ping()));

    const killed = await group!.killPrimary();
    await expect.poll(() => group!.primaryPort(), { timeout: 30_000, message: 'the sentinels never promoted the replica' }).not.toBe(killed);
    // Every connection writes on the new primary.
    await expect
      .poll(() => Promise.all(clients.map((client, i) => client.set(`reconnect:${i}`, 'done').catch((error: Error) => error.message))), { timeout: 40_000, interval: 500 })
      .toEqual(clients.map(() => 'OK'));
    expect(clients.map((client) => client.status)).toEqual(clients.map(() => 'ready'));
    // The case this file is for happened: else it proved nothing.
    expect(lines('redis connection ended; connecting again').length).toBeGreaterThan(0);
  }, 90_000);
});
