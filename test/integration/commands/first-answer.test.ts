/**
 * One answer, with the decision, inside Discord's 3 seconds: an accepted request's first
 * callback is the public "Starting…" message (or, in a private guild, the private
 * acknowledgement), and a slow database makes the router defer within its budget instead of
 * losing the interaction. (Every refusal's first callback is checked in refusals.test.ts.)
 */
import { InteractionResponseType } from 'discord-api-types/v10';
import { sql } from 'drizzle-orm';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { changeSettings } from '../../../src/guilds/settings.js';
import { createdFor, jobIdIn, privateAnswer, startBot, type BotHarness } from './harness.js';

let h: BotHarness;

beforeAll(async () => {
  h = await startBot({ startingCredits: 200 });
});
afterAll(async () => h?.close());
afterEach(() => expect(h.emulator.findings).toEqual([]));

/**
 * Holds a lock on the guild's row (or, for checks that only read, on the whole table) (as a long moderator transaction or a busy database
 * would) until `release` resolves; resolves once the lock is held.
 */
async function holdGuildRow(guildId: string, mode: 'row' | 'table', release: Promise<unknown>): Promise<{ done: Promise<void> }> {
  let held!: () => void;
  const isHeld = new Promise<void>((resolve) => (held = resolve));
  const done = h.db.db.transaction(async (tx) => {
    if (mode === 'row') await tx.execute(sql`select id from guilds where id = ${guildId} for update`);
    else await tx.execute(sql`lock table guilds in access exclusive mode`);
    held();
    await release;
  });
  await isHeld;
  // Wrapped: an async function returning the promise itself would wait for it.
  return { done };
}

describe('an accepted request', () => {
  it('is answered once, publicly, with "Starting…", and the cost follows in private', async () => {
    const { handle, created, stop } = createdFor(h.emulator, () => h.run(h.members.alice, { name: 'song', options: { prompt: 'one answer' } }));
    const response = await handle.waitForResponse();
    expect(response).toMatchObject({ type: InteractionResponseType.ChannelMessageWithSource, ephemeral: false });
    expect(handle.original()?.content).toBe(`Starting a song for <@${h.members.alice}>…`);
    const ack = await privateAnswer(handle);
    expect(ack.content).toContain('costs **10 credits**');
    const result = await h.delivered(jobIdIn(ack));
    stop();
    expect(result.id).toBe(handle.original()?.id);
    // One public message (the reply, now the result) and one private follow-up: nothing else.
    expect(created().map((message) => message.ephemeral)).toEqual([false, true]);
  });

  it('in a private guild, is answered once, in private, with its cost', async () => {
    const g = h.inNewGuild();
    await privateAnswer(g.run(g.members.alice, { name: 'credits' }));
    await changeSettings(g.db.db, { guildId: g.guild.id, actorId: g.members.manager, change: { setting: 'visibility', visibility: 'private' } });
    const { handle, created, stop } = createdFor(h.emulator, () => g.run(g.members.alice, { name: 'lyrics', options: { prompt: 'quietly' } }));
    const response = await handle.waitForResponse();
    expect(response).toMatchObject({ type: InteractionResponseType.ChannelMessageWithSource, ephemeral: true });
    const ack = await privateAnswer(handle);
    expect(ack.id).toBe(handle.original()?.id);
    const result = await g.delivered(jobIdIn(ack));
    stop();
    expect(result.ephemeral).toBe(true);
    expect(created().every((message) => message.ephemeral)).toBe(true);
  });
});

describe('a slow database', () => {
  it('makes the router defer within its budget; the request then goes on as usual', async () => {
    const g = h.inNewGuild();
    await privateAnswer(g.run(g.members.alice, { name: 'credits' }));
    const before = await g.balance();

    let release!: () => void;
    const released = new Promise<void>((resolve) => (release = resolve));
    const { done: lock } = await holdGuildRow(g.guild.id, 'row', released);
    const handle = g.run(g.members.alice, { name: 'song', options: { prompt: 'patience' } });
    try {
      // While the reservation waits for the lock, Discord already has its answer: a deferral.
      const response = await handle.waitForResponse(2_500);
      expect(response).toMatchObject({ type: InteractionResponseType.DeferredChannelMessageWithSource, ephemeral: false });
      expect(await g.jobCount()).toBe(0);
    } finally {
      release();
      await lock;
    }

    const started = await handle.waitForEdit((message) => message.content === `Starting a song for <@${g.members.alice}>…`);
    expect(started.ephemeral).toBe(false);
    const ack = await privateAnswer(handle);
    expect(ack.content).toContain('costs **10 credits**');
    await g.delivered(jobIdIn(ack));
    expect(await g.balance()).toBe(before - 10);
    const deferred = g.logs.find((line) => line.msg === 'no decision within the answer budget; deferred' && line.interactionId === handle.id);
    expect(deferred).toBeDefined();
    // Operators see the same in /metrics: first answers by how they were given.
    const firstAnswers = await h.app.deps.metrics.firstAnswer.get();
    const count = (how: string) =>
      firstAnswers.values.find((value) => value.metricName?.endsWith('_count') && value.labels.how === how)?.value ?? 0;
    expect(count('deferred')).toBeGreaterThanOrEqual(1);
    expect(count('answered')).toBeGreaterThanOrEqual(1);
  });

  it('turns a refusal decided after the deferral into a private answer, and deletes the public one', async () => {
    const g = h.inNewGuild();
    await privateAnswer(g.run(g.members.alice, { name: 'credits' }));
    await g.setBalance(3);

    let release!: () => void;
    const released = new Promise<void>((resolve) => (release = resolve));
    const { done: lock } = await holdGuildRow(g.guild.id, 'table', released);
    const { handle, created, stop } = createdFor(h.emulator, () => g.run(g.members.alice, { name: 'song', options: { prompt: 'no money' } }));
    try {
      expect(await handle.waitForResponse(2_500)).toMatchObject({ type: InteractionResponseType.DeferredChannelMessageWithSource });
    } finally {
      release();
      await lock;
    }

    const answer = await privateAnswer(handle);
    stop();
    expect(answer.content).toBe('This server has 3 credits and this costs 10. Only the bot’s owners can add credits.');
    // The "thinking…" reply was the only public message, and it is gone.
    const publicOnes = created().filter((message) => !message.ephemeral);
    expect(publicOnes).toHaveLength(1);
    expect(g.emulator.message(publicOnes[0]!.id)).toBeUndefined();
    expect(await g.balance()).toBe(3);
    expect(await g.jobCount()).toBe(0);
  });
});
