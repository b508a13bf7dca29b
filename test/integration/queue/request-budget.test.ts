/**
 * The request budget every process shares through Redis (Discord's global REST limit): at most
 * the budget in any sliding second across processes; a process whose Redis does not answer keeps
 * to its share of the budget instead of waiting for Redis, and says so once.
 */
import { Redis } from 'ioredis';
import { afterEach, describe, expect, it } from 'vitest';
import { findFreePort } from '../../../src/embedded/free-port.js';
import { createLogger } from '../../../src/logger.js';
import { createRequestBudget } from '../../../src/queue/request-budget.js';
import { testRedis } from '../../support/database.js';

const connections: Redis[] = [];
afterEach(() => {
  for (const redis of connections.splice(0)) redis.disconnect();
});

function connect(url: string): Redis {
  // As the bot connects: commands wait for Redis rather than fail.
  const redis = new Redis(url, { maxRetriesPerRequest: null, lazyConnect: false });
  redis.on('error', () => {});
  connections.push(redis);
  return redis;
}

function capture() {
  const raw: string[] = [];
  const logger = createLogger({ level: 'debug' }, { write: (line: string) => void raw.push(line) });
  return { logger, messages: () => raw.map((line) => (JSON.parse(line) as { msg: string }).msg) };
}

/**
 * The most permits seen within any window of `windowMs`. The windows are 950 ms: a permit is
 * seen when this process's event loop gets to it, up to a few milliseconds after Redis granted it.
 */
function busiest(times: readonly number[], windowMs = 950): number {
  const sorted = [...times].sort((a, b) => a - b);
  let most = 0;
  let first = 0;
  for (let last = 0; last < sorted.length; last += 1) {
    while (sorted[last]! - sorted[first]! >= windowMs) first += 1;
    most = Math.max(most, last - first + 1);
  }
  return most;
}

async function takeAll(budgets: ReadonlyArray<{ take(signal?: AbortSignal): Promise<void> }>, each: number): Promise<number[]> {
  const granted: number[] = [];
  await Promise.all(budgets.flatMap((budget) => Array.from({ length: each }, () => budget.take().then(() => void granted.push(performance.now())))));
  return granted;
}

describe('a request budget shared through Redis', () => {
  it('grants at most the budget in any second across three processes, and no fewer', async () => {
    const { url, prefix } = testRedis();
    const { logger } = capture();
    const budgets = [1, 2, 3].map(() => createRequestBudget({ redis: connect(url), prefix, name: 'discord-rest', perSecond: 20, logger }));
    const started = performance.now();
    const granted = await takeAll(budgets, 20);
    expect(granted).toHaveLength(60);
    expect(busiest(granted)).toBeLessThanOrEqual(20);
    // 60 permits at 20 a second, evenly spaced: the last about 2.95 s after the first.
    expect(Math.max(...granted) - started).toBeGreaterThan(2_800);
    expect(Math.max(...granted) - started).toBeLessThan(4_000);
  });

  it('keeps budgets of different prefixes apart', async () => {
    const { url } = testRedis();
    const { logger } = capture();
    const [a, b] = [testRedis().prefix, testRedis().prefix].map((prefix) => createRequestBudget({ redis: connect(url), prefix, name: 'discord-rest', perSecond: 10, logger }));
    const started = performance.now();
    // Five each at 10 a second: 0.4 s apart, 0.9 s were they one budget.
    await takeAll([a!, b!], 5);
    expect(performance.now() - started).toBeLessThan(700);
  });

  it('without an answer from Redis, keeps to its share and says so once, never waiting for Redis', async () => {
    const { prefix } = testRedis();
    const { logger, messages } = capture();
    // Nothing listens there: the commands wait in the client's queue, unanswered.
    const away = connect(`redis://127.0.0.1:${await findFreePort()}`);
    const budget = createRequestBudget({ redis: away, prefix, name: 'discord-rest', perSecond: 10, logger, redisTimeoutMs: 100 });
    const started = performance.now();
    const granted = await takeAll([budget], 25);
    expect(granted).toHaveLength(25);
    expect(busiest(granted)).toBeLessThanOrEqual(10);
    // 25 at 10 a second, after one wait for Redis: about 2.1 s.
    expect(Math.max(...granted) - started).toBeLessThan(4_000);
    expect(messages().filter((msg) => msg.startsWith('request budget: Redis unreachable'))).toHaveLength(1);
  });

  it('lets a request whose time is up leave the line without a permit', async () => {
    const { url, prefix } = testRedis();
    const { logger } = capture();
    const budget = createRequestBudget({ redis: connect(url), prefix, name: 'discord-rest', perSecond: 1, logger });
    await budget.take();
    await expect(budget.take(AbortSignal.timeout(100))).rejects.toThrow(/timed? ?out|abort/i);
    // The line goes on: the next permit comes once the first second is over.
    const started = performance.now();
    await budget.take();
    expect(performance.now() - started).toBeLessThan(1_000);
  });
});
