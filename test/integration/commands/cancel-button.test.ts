/**
 * The Cancel button of a request's private acknowledgement shows only for a job that waits for
 * its turn, and goes once a worker takes it. One slot at the service (`upstreamMaxInFlight: 1`)
 * and a song that holds it make the next one wait; a song the workers take at once gets none.
 */
import { eq, sql } from 'drizzle-orm';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { jobs } from '../../../src/db/schema.js';
import type { EmulatorMessage } from '@music-bot/discord-emulator';
import { buttonsOf, jobIdIn, privateAnswer, startBot, type BotHarness } from './harness.js';
import { countTrips } from '../../support/round-trips.js';

let h: BotHarness;

beforeAll(async () => {
  h = await startBot({ startingCredits: 500, settings: { upstreamMaxInFlight: 1 } });
});
afterAll(async () => h?.close());
afterEach(async () => {
  // Nothing a test left at the service holds the slot for the next one, passed or failed.
  for (const task of h.sim.listTasks()) h.sim.completeTask(task.taskId);
  await expect.poll(inFlight, { timeout: 10_000 }).toBe(0);
  expect(h.emulator.findings).toEqual([]);
});

/** Jobs at the service, by the counter the submission claim reads. */
async function inFlight(): Promise<number> {
  const { rows } = await h.db.db.execute<{ n: number }>(sql`select coalesce(sum(count), 0)::integer as n from jobs_in_flight`);
  return rows[0]!.n;
}

/** The job of a prompt, once its row is written. */
async function jobOfPrompt(prompt: string): Promise<string> {
  let id: string | undefined;
  await expect
    .poll(async () => {
      const [row] = await h.db.db.select({ id: jobs.id }).from(jobs).where(sql`${jobs.request}->>'prompt' = ${prompt}`);
      return (id = row?.id);
    }, { timeout: 10_000 })
    .toBeDefined();
  return id!;
}

async function stateOf(jobId: string): Promise<string | undefined> {
  const [row] = await h.db.db.select({ state: jobs.state }).from(jobs).where(eq(jobs.id, jobId));
  return row?.state;
}

/** The message as Discord holds it now. */
function now(message: EmulatorMessage): EmulatorMessage {
  const current = h.emulator.message(message.id);
  if (!current) throw new Error(`message ${message.id} is gone`);
  return current;
}

/** A song that holds the service's only slot until `release` completes its task. */
async function holdTheSlot(prompt: string): Promise<{ jobId: string; release: () => Promise<void> }> {
  h.setSimForThisTest({ taskMs: 60_000 });
  const jobId = jobIdIn(await privateAnswer(h.run(h.members.bob, { name: 'song', options: { prompt } })));
  await expect.poll(() => stateOf(jobId), { timeout: 10_000 }).toBe('submitted');
  return {
    jobId,
    async release() {
      const task = h.sim.listTasks().find((candidate) => candidate.body.sound === prompt);
      expect(h.sim.completeTask(task!.taskId)).toBe(true);
      await h.delivered(jobId);
    },
  };
}

describe('the Cancel button', () => {
  it('shows while a song waits for the service, and goes, the text kept, once the song is submitted', async () => {
    const holder = await holdTheSlot('holds the only slot');
    const handle = h.run(h.members.alice, { name: 'song', options: { prompt: 'waits for the slot' } });
    const ack = await privateAnswer(handle);
    const jobId = jobIdIn(ack);
    expect(buttonsOf(ack)).toEqual([`cancel:${jobId}`]);
    // The worker has looked and found no slot: the song waits, and keeps its button.
    await handle.waitForEdit((message) => (message.embeds?.[0]?.description ?? '').includes('Next in the queue.'));
    expect(await stateOf(jobId)).toBe('queued');
    expect(buttonsOf(now(ack))).toEqual([`cancel:${jobId}`]);

    await holder.release();
    await expect.poll(() => buttonsOf(now(ack)), { timeout: 10_000 }).toEqual([]);
    expect(await stateOf(jobId)).not.toBe('queued');
    expect(now(ack).content).toBe(ack.content);
  }, 30_000);

  it('cancels the waiting song when pressed, and gives its credits back', async () => {
    const holder = await holdTheSlot('holds the slot again');
    const ack = await privateAnswer(h.run(h.members.alice, { name: 'song', options: { prompt: 'changes her mind' } }));
    const jobId = jobIdIn(ack);
    const balance = await h.balance();

    const click = h.emulator.clickButton({ messageId: ack.id, customId: `cancel:${jobId}`, userId: h.members.alice });
    const answer = await click.waitForEdit((message) => (message.content ?? '').includes('Cancelled'));
    expect(answer.content).toContain('Cancelled your song request: 10 credits back');
    expect(buttonsOf(answer)).toEqual([]);
    expect(await stateOf(jobId)).toBe('cancelled');
    expect(await h.balance()).toBe(balance + 10);

    await holder.release();
    expect(h.sim.listTasks().some((task) => task.body.sound === 'changes her mind')).toBe(false);
  }, 30_000);

  it('goes from the acknowledgement of a song that /jobs cancel cancelled', async () => {
    const holder = await holdTheSlot('holds the slot once more');
    const ack = await privateAnswer(h.run(h.members.alice, { name: 'song', options: { prompt: 'cancelled by command' } }));
    const jobId = jobIdIn(ack);
    expect(buttonsOf(ack)).toEqual([`cancel:${jobId}`]);
    const cancel = await privateAnswer(h.run(h.members.alice, { name: 'jobs', subcommand: 'cancel', options: { id: jobId } }));
    expect(cancel.content).toContain('Cancelled your song request');
    await expect.poll(() => buttonsOf(now(ack)), { timeout: 10_000 }).toEqual([]);
    await holder.release();
  }, 30_000);

  it('goes from an acknowledgement that arrives after the song was taken', async () => {
    const holder = await holdTheSlot('holds the slot for a late acknowledgement');
    // The acknowledgement is held up (a 429 of 3 s) while the slot frees and a worker takes the song.
    h.emulator.rateLimitNext('POST /webhooks/{webhook_id}/{webhook_token}', 1, { retryAfterSeconds: 3 });
    const handle = h.run(h.members.alice, { name: 'song', options: { prompt: 'quick to go' } });
    const jobId = await jobOfPrompt('quick to go');
    await holder.release();
    await expect.poll(() => stateOf(jobId), { timeout: 10_000 }).toBe('submitted');
    const ack = await privateAnswer(handle);
    // Sent with the button (the song was waiting when it was accepted), then the button goes.
    expect(buttonsOf(ack)).toEqual([`cancel:${jobId}`]);
    await expect.poll(() => buttonsOf(now(ack)), { timeout: 10_000 }).toEqual([]);
    expect(h.emulator.rateLimited.some((hit) => hit.scripted)).toBe(true);
  }, 30_000);

  it('is not shown for a song the workers take at once, and no edit removes it', async () => {
    const handle = h.run(h.members.alice, { name: 'song', options: { prompt: 'no wait at all' } });
    const ack = await privateAnswer(handle);
    const jobId = jobIdIn(ack);
    expect(buttonsOf(ack)).toEqual([]);
    await h.delivered(jobId);
    const edits = h.emulator.requests.filter((request) => request.method === 'PATCH' && request.path.endsWith(`/messages/${ack.id}`));
    expect(edits).toEqual([]);
  }, 30_000);

  it('asks Redis nothing before a waiting song\'s acknowledgement goes out', async () => {
    const holder = await holdTheSlot('holds the slot while the front is counted');
    let interaction = '';
    let jobId = '';
    const counter = countTrips({
      stages: [{ name: 'acknowledged', endsWith: (trip) => trip.kind === 'discord' && trip.what.startsWith('POST /webhooks/') && trip.what.includes(`emulator.${interaction}.`) }],
      discord: h.emulator,
      service: h.sim,
      skipPools: [h.db.pool],
    });
    try {
      const handle = h.run(h.members.alice, { name: 'song', options: { prompt: 'offered without asking' } });
      interaction = handle.id;
      const [stage] = await counter.ended;
      // Whether the job was taken is not asked (a `get`): the record of the button, after the message is out, settles it.
      expect(stage!.trips.filter((trip) => trip.kind === 'redis' && trip.what === 'get')).toEqual([]);
      const ack = await privateAnswer(handle);
      jobId = jobIdIn(ack);
      expect(buttonsOf(ack)).toEqual([`cancel:${jobId}`]);
    } finally {
      counter.stop();
    }
    await holder.release();
    // At the service before the next test frees the slot.
    await expect.poll(() => stateOf(jobId), { timeout: 10_000 }).toBe('submitted');
  }, 30_000);

  it('in a private server, goes from the private reply once the song is submitted', async () => {
    const g = h.inNewGuild();
    await privateAnswer(g.run(g.members.manager, { name: 'settings', subcommand: 'visibility', options: { mode: 'private' } }));
    const holder = await holdTheSlot('holds the slot for a private server');
    const handle = g.run(g.members.alice, { name: 'song', options: { prompt: 'kept between us' } });
    const ack = await privateAnswer(handle);
    expect(ack.ephemeral).toBe(true);
    expect(ack.id).toBe(handle.original()?.id);
    const jobId = jobIdIn(ack);
    expect(buttonsOf(ack)).toEqual([`cancel:${jobId}`]);
    await holder.release();
    await expect.poll(() => stateOf(jobId), { timeout: 10_000 }).toBe('submitted');
    await expect.poll(() => buttonsOf(handle.original()!), { timeout: 10_000 }).toEqual([]);
    expect(handle.original()?.content).toBe(ack.content);
  }, 30_000);
});
