/**
 * The simulator as an unreliable service: the random-fault mode (a share of the
 * calls fail, drawn from a weighted mix by a seeded generator) and the out-of-order webhook,
 * seen through the control API and the real client.
 */
import { describe, expect, it, vi } from 'vitest';
import { isMusicApiError } from '../../src/music-api/errors.js';
import { normaliseWebhookPayload } from '../../src/music-api/task-status.js';
import { verifyWebhookSignature } from '../../src/music-api/webhook-signature.js';
import { RANDOM_FAULT_KINDS, type RandomFaultKind } from '@music-bot/music-api-sim/faults.js';
import { harnessForTest, startWebhookReceiver, waitForState } from './helpers.js';

const secret = 'whsec-random';
/** Every kind at weight 0 but those given. */
const only = (weights: Partial<Record<RandomFaultKind, number>>) => ({
  ...Object.fromEntries(RANDOM_FAULT_KINDS.map((kind) => [kind, 0])),
  ...weights,
});

async function control(url: string, method: string, path: string, body?: unknown) {
  const response = await fetch(`${url}${path}`, {
    method,
    headers: { 'content-type': 'application/json' },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  const text = await response.text();
  return { status: response.status, json: text === '' ? undefined : (JSON.parse(text) as Record<string, unknown>) };
}

/** The status of each of `count` get-credits calls, one after another. */
async function creditStatuses(url: string, apiKey: string, count: number): Promise<number[]> {
  const statuses: number[] = [];
  for (let i = 0; i < count; i += 1) {
    const response = await fetch(`${url}/api/v1/get-credits`, { headers: { authorization: `Bearer ${apiKey}` } });
    await response.arrayBuffer();
    statuses.push(response.status);
  }
  return statuses;
}

describe('the out-of-order webhook', () => {
  it('[sim:webhook-out-of-order] sends the intermediate callback (RUNNING) after the final one, both rightly signed', async () => {
    const h = await harnessForTest({ signatureScheme: 'timestamped' });
    const receiver = await startWebhookReceiver();
    try {
      const task = await h.client.createSong({ sound: 'harp [sim:webhook-out-of-order]', webhook: { url: receiver.url, secret } });
      const hooks = await receiver.waitFor(2);
      const events = hooks.map((hook) => normaliseWebhookPayload(hook.rawBody, hook.headers));
      expect(events.map((event) => [event.event, event.status.state, event.taskId])).toEqual([
        ['song.completed', 'succeeded', task.taskId],
        ['song.streaming', 'running', task.taskId],
      ]);
      expect(hooks.map((hook) => verifyWebhookSignature({ rawBody: hook.rawBody, secret, headers: hook.headers }).ok)).toEqual([true, true]);
      // Two events, not one event twice: a receiver that deduplicates by event id keeps both.
      expect(hooks[0]!.headers['x-webhook-id']).not.toBe(hooks[1]!.headers['x-webhook-id']);
      // The simulator records an attempt once the receiver's answer is back, a moment after the receiver has the body.
      await expect.poll(() => h.sim.webhookAttempts.map((attempt) => attempt.event)).toEqual(['song.completed', 'song.streaming']);
      // The late one carries the body of the running task: no media yet.
      expect(events[1]!.status.clips[0]?.audioUrl).toBeUndefined();
    } finally {
      await receiver.close();
    }
  });

  it('is a control-API fault too, for the next task only', async () => {
    const h = await harnessForTest();
    const receiver = await startWebhookReceiver();
    try {
      expect((await control(h.sim.url, 'POST', '/_sim/faults', { kind: 'webhook-out-of-order' })).status).toBe(200);
      const first = await h.client.createSong({ sound: 'one', webhook: { url: receiver.url, secret } });
      await receiver.waitFor(2);
      const second = await h.client.createSong({ sound: 'two', webhook: { url: receiver.url, secret } });
      await receiver.waitFor(3);
      // The spec's body names no task: the simulator's record of each attempt does.
      const states = () =>
        h.sim.webhookAttempts.map((attempt) => {
          const name = attempt.taskId === first.taskId ? 'first' : attempt.taskId === second.taskId ? 'second' : '?';
          return `${name} ${normaliseWebhookPayload(attempt.body).status.state}`;
        });
      await expect.poll(states).toEqual(['first succeeded', 'first running', 'second succeeded']);
      expect(receiver.received.map((hook) => hook.rawBody.toString())).toEqual(h.sim.webhookAttempts.map((attempt) => attempt.body));
    } finally {
      await receiver.close();
    }
  });
});

describe('the random-fault mode', () => {
  it('is set, read and turned off through the control API, which refuses bad settings', async () => {
    const h = await harnessForTest();
    const { url } = h.sim;
    expect((await control(url, 'GET', '/_sim/random-faults')).json).toEqual({ randomFaults: null });
    for (const bad of [{}, { rate: 1.5 }, { rate: 0.3, mix: { explode: 1 } }, { rate: 0.3, mix: { '429': -1 } }, { rate: 0.3, seed: 1.5 }, { rate: 0.3, hangAccepted: 2 }, { rate: 0.3, webhookLateMs: { min: 5, max: 1 } }]) {
      expect((await control(url, 'POST', '/_sim/random-faults', bad)).status, JSON.stringify(bad)).toBe(400);
    }
    const set = await control(url, 'POST', '/_sim/random-faults', { rate: 1, mix: only({ '502': 1 }), seed: 42 });
    expect(set).toMatchObject({ status: 200, json: { randomFaults: { rate: 1, seed: 42, hangAccepted: 1, calls: 0 } } });

    expect(await creditStatuses(url, h.apiKey, 3)).toEqual([502, 502, 502]);
    const error = await h.client.getCredits().catch((caught: unknown) => caught);
    expect(isMusicApiError(error) && { status: error.status, type: error.type, retryable: error.retryable }).toEqual({
      status: 502,
      type: 'upstream_error',
      retryable: true,
    });
    const state = await control(url, 'GET', '/_sim/state');
    expect(state.json?.['randomFaults']).toMatchObject({ calls: 4, drawn: { '502': 4, '429': 0 } });
    // The injected faults are a separate thing: clearing them leaves the mode on.
    await control(url, 'DELETE', '/_sim/faults');
    expect(await creditStatuses(url, h.apiKey, 1)).toEqual([502]);

    expect((await control(url, 'DELETE', '/_sim/random-faults')).status).toBe(204);
    expect(await creditStatuses(url, h.apiKey, 2)).toEqual([200, 200]);
    expect(h.sim.getRandomFaults()).toBeUndefined();
  });

  it('fails about `rate` of the calls, the same ones for the same seed; a poll draws only the answer faults', async () => {
    const settings = { rate: 0.3, seed: 7, mix: only({ '429': 1, '500': 1, '502': 1, 'fail-task': 5, 'webhook-twice': 5 }) };
    const [a, b] = [await harnessForTest({ randomFaults: settings }), await harnessForTest({ randomFaults: settings })];
    const [first, second] = [await creditStatuses(a.sim.url, a.apiKey, 300), await creditStatuses(b.sim.url, b.apiKey, 300)];
    expect(second).toEqual(first);
    const failed = first.filter((status) => status !== 200);
    expect(failed.length / first.length).toBeGreaterThan(0.22);
    expect(failed.length / first.length).toBeLessThan(0.38);
    expect(new Set(failed)).toEqual(new Set([429, 500, 502]));
    // The task kinds weigh 10 of 13, yet no call that creates nothing drew one.
    expect(a.sim.getRandomFaults()).toMatchObject({ calls: 300, drawn: { 'fail-task': 0, 'webhook-twice': 0 } });

    const other = await harnessForTest({ randomFaults: { ...settings, seed: 8 } });
    expect(await creditStatuses(other.sim.url, other.apiKey, 300)).not.toEqual(first);
  }, 30_000);

  it("applies a task kind drawn by a create to that create's task", async () => {
    const h = await harnessForTest({ randomFaults: { rate: 1, mix: only({ 'fail-task': 1 }) } });
    const task = await h.client.createSong({ sound: 'drawn to fail' });
    expect(h.sim.getCredits()).toBe(90);
    const status = await waitForState(() => h.client.getProducerTask(task.taskId));
    expect(status.state).toBe('failed');
    expect(h.sim.getTask(task.taskId)).toMatchObject({ state: 'FAILED', refunded: true });
    expect(h.sim.getCredits()).toBe(100);
  });

  it('hangs a create after taking it with probability hangAccepted, and a poll without taking anything', async () => {
    const h = await harnessForTest({ taskMs: 60_000, randomFaults: { rate: 1, mix: only({ hang: 1 }), hangAccepted: 1 } }, { timeoutMs: 1_000 });
    const error = await h.client.createSong({ sound: 'taken, then silence' }).catch((caught: unknown) => caught);
    expect(isMusicApiError(error) && { kind: error.kind, maybeAccepted: error.maybeAccepted }).toEqual({ kind: 'timeout', maybeAccepted: true });
    expect(h.sim.listTasks().map((task) => [task.body['sound'], task.state])).toEqual([['taken, then silence', 'PENDING']]);
    expect(h.sim.getCredits()).toBe(90);
    const poll = await h.client.getProducerTask(h.sim.listTasks()[0]!.taskId).catch((caught: unknown) => caught);
    expect(isMusicApiError(poll) && { kind: poll.kind, retryable: poll.retryable }).toEqual({ kind: 'timeout', retryable: true });

    h.sim.setRandomFaults({ rate: 1, mix: only({ hang: 1 }), hangAccepted: 0 });
    await h.client.createSong({ sound: 'never taken' }).catch(() => undefined);
    expect(h.sim.listTasks()).toHaveLength(1);
    expect(h.sim.getRandomFaults()).toMatchObject({ drawn: { hang: 1, hangAccepted: 0 } });
  });

  it('with the whole mix, every kind happens to the calls and webhooks of a few dozen songs', async () => {
    const h = await harnessForTest(
      { credits: 10_000, taskMs: 50, concurrencyLimit: 1_000, webhookRetry: { attempts: 2, baseMs: 20 }, randomFaults: { rate: 1, seed: 3, webhookLateMs: { min: 10, max: 30 } } },
      // Long enough that only a hang times out, even on a busy machine (2 s was not, at a load of 14 on 2 cores).
      { timeoutMs: 5_000 },
    );
    const receiver = await startWebhookReceiver();
    try {
      const outcomes = await Promise.all(
        Array.from({ length: 60 }, (_, i) =>
          h.client.createSong({ sound: `song ${i}`, webhook: { url: receiver.url, secret } }).then(
            () => 'accepted',
            (error: unknown) => (isMusicApiError(error) ? (error.status ?? error.kind) : 'other'),
          ),
        ),
      );
      await expect.poll(() => h.sim.getRandomFaults()!.calls).toBe(60);
      const drawn = h.sim.getRandomFaults()!.drawn;
      expect(Object.entries(drawn).filter(([kind, count]) => kind !== 'no-webhook' && kind !== 'hangAccepted' && count === 0)).toEqual([]);
      expect(drawn['no-webhook']).toBe(0);
      expect(new Set(outcomes)).toEqual(new Set(['accepted', 429, 500, 502, 'timeout']));
      // Every hang was a create, so every hang was taken: the service holds a task for each.
      expect(drawn.hangAccepted).toBe(drawn.hang);
      expect(h.sim.listTasks()).toHaveLength(outcomes.filter((outcome) => outcome === 'accepted').length + drawn.hang);

      await vi.waitFor(() => {
        const attempts = h.sim.webhookAttempts;
        expect(attempts.some((attempt) => attempt.badSignature)).toBe(true);
        expect(attempts.some((attempt) => attempt.copy === 2)).toBe(true);
        expect(attempts.some((attempt) => attempt.event === 'song.streaming')).toBe(true);
        expect(attempts.some((attempt) => attempt.event === 'song.failed')).toBe(true);
        expect(h.sim.listTasks().filter((task) => task.state === 'FAILED')).toHaveLength(drawn['fail-task']);
      }, 10_000);
    } finally {
      await receiver.close();
    }
  }, 30_000);
});
