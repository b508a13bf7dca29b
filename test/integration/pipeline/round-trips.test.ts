/**
 * The round trips of one `/song`, from the interaction to the job submitted to the music service
 * and shown as such: Postgres statements, Redis commands, Discord calls and the service's
 * requests, per stage, on the real stack. Each stage's budget is today's count, so a change that
 * adds a round trip to the path fails here; one that removes one lowers the budget.
 */
import { sql } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { guilds } from '../../../src/db/schema.js';
import { jobIdIn, privateAnswer, queuesIdle, startBot, type BotHarness } from '../commands/harness.js';
import { countTrips, songStages, type StageCounts } from '../../support/round-trips.js';

let h: BotHarness;

beforeAll(async () => {
  h = await startBot({ startingCredits: 500 });
});
afterAll(async () => h?.close());

/**
 * Resolves once no maintenance pass runs, waits or falls due within the next 5 s: the passes run on
 * their own schedules, and their statements in a counted window would be counted as the request's.
 */
async function maintenanceQuiet(): Promise<void> {
  const { maintenance } = h.app.deps.queues;
  await expect
    .poll(
      async () => {
        // Passes due at once wait their turn (one runs at a time): a waiting one runs next.
        const [counts, schedulers] = await Promise.all([maintenance.getJobCounts('active', 'waiting', 'prioritized'), maintenance.getJobSchedulers()]);
        const inHand = (counts['active'] ?? 0) + (counts['waiting'] ?? 0) + (counts['prioritized'] ?? 0);
        return inHand === 0 && schedulers.every((scheduler) => scheduler.next === undefined || scheduler.next - Date.now() > 5_000);
      },
      { timeout: 50_000, interval: 250 },
    )
    .toBe(true);
}

/** Each stage's round trips at most. */
const BUDGET: Record<string, StageCounts> = {
  'first answer': { postgres: 2, redis: 0, discord: 1, service: 0 },
  'enqueued and sent': { postgres: 1, redis: 1, discord: 1, service: 1 },
  'submitted and shown': { postgres: 3, redis: 2, discord: 1, service: 0 },
};

describe('one /song in a warmed guild', () => {
  it('makes no more round trips per stage than its budget', async () => {
    // The guild's first request does the one-time work (its row, the pools' connections, the
    // queues' scripts); it is delivered and its queue entries gone, so nothing of it runs while
    // the next one is counted.
    const first = await privateAnswer(h.run(h.members.alice, { name: 'song', options: { prompt: 'warms the guild' } }));
    await h.delivered(jobIdIn(first));
    await expect.poll(() => queuesIdle(h.app), { timeout: 10_000 }).toBe(true);
    h.setSimForThisTest({ taskMs: 60_000 });

    let interaction = '';
    await maintenanceQuiet();
    const counter = countTrips({
      stages: songStages(() => interaction),
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

describe('one /song of a member under a daily cap', () => {
  it('reads the cap once, with the guild, and the spending under the member\'s lock', async () => {
    const g = h.inNewGuild();
    await g.balance();
    await h.db.db.update(guilds).set({ userDailyCap: 1_000 }).where(sql`${guilds.id} = ${g.guild.id}`);
    const first = await privateAnswer(g.run(g.members.alice, { name: 'song', options: { prompt: 'warms the capped guild' } }));
    await g.delivered(jobIdIn(first));
    await expect.poll(() => queuesIdle(h.app), { timeout: 10_000 }).toBe(true);

    let interaction = '';
    const [firstAnswer] = songStages(() => interaction);
    await maintenanceQuiet();
    const counter = countTrips({ stages: [firstAnswer!], discord: h.emulator, service: h.sim, skipPools: [h.db.pool] });
    try {
      const handle = g.run(g.members.alice, { name: 'song', options: { prompt: 'counted under the cap' } });
      interaction = handle.id;
      const [stage] = await counter.ended;
      const statements = stage!.trips.filter((trip) => trip.kind === 'postgres').map((trip) => trip.what);
      console.log(`[figure] /song round trips under a daily cap, first answer: postgres ${statements.length}`);
      // The guild's read, then the transaction: begin, the member's lock, the spending today, the reservation, commit.
      expect(statements, statements.join(' | ')).toHaveLength(6);
      await g.delivered(jobIdIn(await privateAnswer(handle)));
    } finally {
      counter.stop();
    }
  });
});

describe('one /song in a guild with a low-balance alert, its balance above the threshold', () => {
  it('makes no more round trips than one in a guild without', async () => {
    const g = h.inNewGuild();
    await g.balance();
    await h.db.db.update(guilds).set({ alertBelow: 10, alertChannelId: g.otherChannelId }).where(sql`${guilds.id} = ${g.guild.id}`);
    const first = await privateAnswer(g.run(g.members.alice, { name: 'song', options: { prompt: 'warms the alerting guild' } }));
    await g.delivered(jobIdIn(first));
    await expect.poll(() => queuesIdle(h.app), { timeout: 10_000 }).toBe(true);
    g.setSimForThisTest({ taskMs: 60_000 });

    let interaction = '';
    await maintenanceQuiet();
    const counter = countTrips({ stages: songStages(() => interaction), discord: h.emulator, service: h.sim, skipPools: [h.db.pool] });
    try {
      interaction = g.run(g.members.alice, { name: 'song', options: { prompt: 'counted above the threshold' } }).id;
      const stages = await counter.ended;
      const statements = stages.flatMap((stage) => stage.trips).filter((trip) => trip.kind === 'postgres').map((trip) => trip.what);
      const budget = Object.values(BUDGET).reduce((sum, stage) => sum + stage.postgres, 0);
      // Nothing to alert about: the reservation's own statement keeps the alert armed.
      expect(statements.length, statements.join(' | ')).toBeLessThanOrEqual(budget);
    } finally {
      counter.stop();
      for (const task of h.sim.listTasks()) h.sim.completeTask(task.taskId);
    }
  });
});
