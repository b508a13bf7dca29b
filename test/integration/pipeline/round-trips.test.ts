/**
 * The round trips of one `/song`, from the interaction to the job submitted to the music service
 * and shown as such: Postgres statements, Redis commands, Discord calls and the service's
 * requests, per stage, on the real stack. Each stage's budget is today's count, so a change that
 * adds a round trip to the path fails here; one that removes one lowers the budget.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { jobIdIn, privateAnswer, startBot, type BotHarness } from '../commands/harness.js';
import { after, allOf, countTrips, type StageCounts, type Trip } from '../../support/round-trips.js';

let h: BotHarness;

beforeAll(async () => {
  h = await startBot({ startingCredits: 500 });
});
afterAll(async () => h?.close());

/** Each stage's round trips at most. */
const BUDGET: Record<string, StageCounts> = {
  'first answer': { postgres: 2, redis: 0, discord: 1, service: 0 },
  'enqueued and sent': { postgres: 1, redis: 1, discord: 1, service: 1 },
  'submitted and shown': { postgres: 4, redis: 1, discord: 1, service: 0 },
};

describe('one /song in a warmed guild', () => {
  it('makes no more round trips per stage than its budget', async () => {
    // The guild's first request does the one-time work (its row, the pools' connections, the
    // queues' scripts); it is delivered, so nothing of it runs while the next one is counted.
    const first = await privateAnswer(h.run(h.members.alice, { name: 'song', options: { prompt: 'warms the guild' } }));
    await h.delivered(jobIdIn(first));
    h.setSimForThisTest({ taskMs: 60_000 });

    // The interaction's token is in every path its answers take: `emulator.<interaction id>.…`.
    let interaction = '';
    const ours = (trip: Trip) => interaction !== '' && trip.what.includes(`emulator.${interaction}.`);
    const counter = countTrips({
      stages: [
        { name: 'first answer', endsWith: (trip) => trip.kind === 'discord' && ours(trip) && trip.what.endsWith('/callback') },
        {
          name: 'enqueued and sent',
          endsWith: allOf(
            (trip) => trip.kind === 'service' && trip.what === 'POST /api/v1/producer/create',
            (trip) => trip.kind === 'discord' && ours(trip) && trip.what.startsWith('POST /webhooks/'),
          ),
        },
        {
          name: 'submitted and shown',
          endsWith: allOf(
            (trip) => trip.kind === 'postgres' && trip.what.startsWith('update "jobs" set "state"'),
            // The submit job's completion in its queue.
            (trip) => trip.kind === 'redis' && trip.what === 'evalsha',
            after(
              (trip) => trip.kind === 'discord' && ours(trip) && trip.what.startsWith('PATCH ') && trip.what.endsWith('/messages/%40original'),
              (trip) => trip.kind === 'postgres' && trip.what === 'commit',
            ),
          ),
        },
      ],
      discord: h.emulator,
      service: h.sim,
      skipPools: [h.db.pool],
    });
    try {
      const handle = h.run(h.members.alice, { name: 'song', options: { prompt: 'counted' } });
      interaction = handle.id;
      const stages = await counter.ended;
      for (const stage of stages) {
        const { postgres, redis, discord, service } = stage.counts;
        console.log(`[figure] /song round trips, ${stage.name}: postgres ${postgres}, redis ${redis}, discord ${discord}, service ${service}`);
      }
      const total = (kind: keyof StageCounts) => stages.reduce((sum, stage) => sum + stage.counts[kind], 0);
      console.log(`[figure] /song round trips, in all: postgres ${total('postgres')}, redis ${total('redis')}, discord ${total('discord')}, service ${total('service')}`);
      for (const stage of stages) {
        const budget = BUDGET[stage.name]!;
        for (const kind of Object.keys(budget) as Array<keyof StageCounts>) {
          expect(stage.counts[kind], `${stage.name}, ${kind}: ${stage.trips.filter((trip) => trip.kind === kind).map((trip) => trip.what).join(' | ')}`).toBeLessThanOrEqual(budget[kind]);
        }
      }
    } finally {
      counter.stop();
      for (const task of h.sim.listTasks()) h.sim.completeTask(task.taskId);
    }
  });
});
