/**
 * What an operator reads on `/metrics` about commands: each interaction counted once by name
 * and outcome (a refusal with its reason), autocomplete not at all, and each result delivery
 * by the path it took. The members act through the emulator; the counts are scraped from the
 * bot's own registry through the HTTP server's `/metrics`.
 */
import type { FastifyInstance } from 'fastify';
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { buildHttpServer } from '../../../src/http/server.js';
import { silentLogger } from '../../../src/logger.js';
import { found } from '../../support/found.js';
import { jobIdIn, privateAnswer, startBot, type BotHarness } from './harness.js';
import { parseSamples } from '../../support/metrics.js';

let h: BotHarness;
let server: FastifyInstance;

beforeAll(async () => {
  // The counts are the whole bot's since it started: a world of the file's own.
  h = await startBot({ startingCredits: 500, ownWorld: true });
  const { db, redis, queues, metrics } = h.app.deps;
  server = buildHttpServer({ db, redis, queues, metrics, logger: silentLogger });
});
afterAll(async () => {
  await server?.close();
  await h?.close();
});
afterEach(() => expect(h.emulator.findings).toEqual([]));

/** The scrape, as `name{labels}` → value. */
async function scrape(): Promise<Map<string, number>> {
  const response = await server.inject({ method: 'GET', url: '/metrics' });
  expect(response.statusCode).toBe(200);
  return parseSamples(response.body);
}

const commands = (command: string, outcome: string, reason = '') => `musicbot_commands_total{command="${command}",outcome="${outcome}",reason="${reason}"}`;

/** Waits until the sample reaches `value`; fails saying what it last read. */
async function reaches(name: string, value: number): Promise<void> {
  let last: number | undefined;
  await vi.waitFor(async () => found((last = (await scrape()).get(name)) === value, () => `${name} to be ${value} (last read ${last})`), 10_000);
}

describe('commands on /metrics', () => {
  it('counts an accepted /song once, and its result as delivered by editing the reply', async () => {
    const jobId = jobIdIn(await privateAnswer(h.run(h.members.alice, { name: 'song', options: { prompt: 'counted once' } })));
    await reaches(commands('song', 'accepted'), 1);
    await h.delivered(jobId);
    await reaches('musicbot_result_deliveries_total{path="edit"}', 1);

    const samples = await scrape();
    expect(samples.get('musicbot_result_deliveries_total{path="channel"}') ?? 0).toBe(0);
    expect(samples.get('musicbot_result_deliveries_total{path="failed"}') ?? 0).toBe(0);
    // The old counter keeps working beside the new one.
    expect(samples.get('musicbot_deliveries_total{outcome="interaction_reply"}')).toBe(1);
    // Nothing waits once the song is delivered.
    for (const queue of ['submit', 'poll', 'complete', 'deliver']) await reaches(`musicbot_queue_oldest_waiting_seconds{queue="${queue}"}`, 0);
  });

  it('counts a refusal with its reason', async () => {
    await h.setBalance(3);
    const answer = await privateAnswer(h.run(h.members.alice, { name: 'song', options: { prompt: 'cannot pay' } }));
    expect(answer.content).toContain('This server has 3 credits');
    await reaches(commands('song', 'refused', 'insufficient_credits'), 1);
    expect((await scrape()).get(commands('song', 'accepted'))).toBe(1);
    await h.setBalance(500);
  });

  it('does not count autocomplete', async () => {
    const before = await scrape();
    const choices = await h.autocomplete(h.members.alice, {
      name: 'song',
      focused: { name: 'model', value: '' },
    });
    expect(choices.length).toBeGreaterThan(0);
    // A command after it, counted: the autocomplete was handled well before.
    await privateAnswer(h.run(h.members.alice, { name: 'help', options: {} }));
    await reaches(commands('help', 'accepted'), (before.get(commands('help', 'accepted')) ?? 0) + 1);
    const after = await scrape();
    const songTotal = (samples: Map<string, number>) =>
      [...samples].filter(([name]) => name.startsWith('musicbot_commands_total{command="song"')).reduce((sum, [, value]) => sum + value, 0);
    expect(songTotal(after)).toBe(songTotal(before));
  });
});
