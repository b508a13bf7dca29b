/**
 * Webhooks from the simulator, checked with the client's own verifier and normaliser.
 */
import { describe, expect, it } from 'vitest';
import { normaliseWebhookPayload } from '../../src/music-api/task-status.js';
import { verifyWebhookSignature } from '../../src/music-api/webhook-signature.js';
import { harnessForTest, receiverForTest, waitForState } from './helpers.js';

const secret = 'whsec-contract';
async function setup(simOptions: Parameters<typeof harnessForTest>[0] = {}, answers: number[] = []) {
  return { h: await harnessForTest(simOptions), r: await receiverForTest(answers) };
}

describe('webhook delivery', () => {
  it("signs with the spec's scheme; the body is exactly the polling body, nothing added", async () => {
    const { h, r } = await setup();
    const task = await h.client.createSong({ sound: 'harp', webhook: { url: r.url, secret } });
    const [hook] = await r.waitFor(1);
    expect(verifyWebhookSignature({ rawBody: hook!.rawBody, secret, headers: hook!.headers })).toEqual({
      ok: true,
      scheme: 'spec',
      timestamp: undefined,
    });
    expect(hook!.headers['x-webhook-signature']).toMatch(/^[0-9a-f]{64}$/);

    const event = normaliseWebhookPayload(hook!.rawBody, hook!.headers);
    expect(event.taskId).toBeUndefined();
    expect(event.status.state).toBe('succeeded');
    const polled = await h.client.getProducerTask(task.taskId);
    expect(JSON.parse(hook!.rawBody.toString())).toEqual(polled.raw);
    expect(event.status.clips).toEqual(polled.clips);
  });

  it.each(['base64', 'base64url'] as const)("signs the spec's scheme in %s when told to; the client verifies it", async (encoding) => {
    const { h, r } = await setup({ signatureEncoding: encoding });
    await h.client.createSong({ sound: 'harp', webhook: { url: r.url, secret } });
    const [hook] = await r.waitFor(1);
    const written = hook!.headers['x-webhook-signature'];
    expect(Buffer.from(String(written), encoding).toString(encoding)).toBe(written);
    expect(verifyWebhookSignature({ rawBody: hook!.rawBody, secret, headers: hook!.headers })).toMatchObject({ ok: true, scheme: 'spec' });
    expect(verifyWebhookSignature({ rawBody: hook!.rawBody, secret: 'not-the-secret', headers: hook!.headers })).toEqual({ ok: false, reason: 'mismatch' });
  });

  it("signs with the real service's timestamped scheme and sends its event headers", async () => {
    const { h, r } = await setup({ signatureScheme: 'timestamped' });
    const task = await h.client.createSong({ sound: 'harp', webhook: { url: r.url, secret } });
    const [hook] = await r.waitFor(1);
    const verdict = verifyWebhookSignature({ rawBody: hook!.rawBody, secret, headers: hook!.headers });
    expect(verdict).toMatchObject({ ok: true, scheme: 'timestamped' });
    expect(hook!.headers['x-webhook-signature']).toMatch(/^sha256=[0-9a-f]{64}$/);
    expect(Math.abs(Number(hook!.headers['x-webhook-timestamp']) - Date.now() / 1000)).toBeLessThan(10);
    expect(hook!.headers['x-webhook-id']).toMatch(/\S/);
    expect(hook!.headers['idempotency-key']).toBe(hook!.headers['x-webhook-id']);
    expect(hook!.headers['x-webhook-event']).toBe('song.completed');
    // The signature covers "<timestamp>.<body>", so it fails the spec scheme once the timestamp is gone.
    const { 'x-webhook-timestamp': _dropped, ...withoutTimestamp } = hook!.headers;
    expect(verifyWebhookSignature({ rawBody: hook!.rawBody, secret, headers: withoutTimestamp }).ok).toBe(false);

    const event = normaliseWebhookPayload(hook!.rawBody, hook!.headers);
    expect(event).toMatchObject({ taskId: task.taskId, platform: 'producer', event: 'song.completed', eventId: hook!.headers['x-webhook-id'] });
    // The notes' additions, and nothing else, beside the polling body.
    const { task_id: _taskId, platform: _platform, event: _event, ...envelope } = JSON.parse(hook!.rawBody.toString()) as Record<string, unknown>;
    expect(envelope).toEqual((await h.client.getProducerTask(task.taskId)).raw);
  });

  it('reports a failed task too, after the refund', async () => {
    const { h, r } = await setup({ signatureScheme: 'timestamped' });
    await h.client.createSong({ sound: 'doomed [sim:fail]', webhook: { url: r.url, secret } });
    const [hook] = await r.waitFor(1);
    expect(verifyWebhookSignature({ rawBody: hook!.rawBody, secret, headers: hook!.headers }).ok).toBe(true);
    const event = normaliseWebhookPayload(hook!.rawBody, hook!.headers);
    expect(event).toMatchObject({ event: 'song.failed', status: { state: 'failed' } });
    expect(h.sim.getCredits()).toBe(100);
  });

  it('delivers sonic results with the sonic polling body', async () => {
    const { h, r } = await setup();
    const voice = await h.client.createVoice({ audioUrl: 'https://files.example.com/v.wav', webhook: { url: r.url, secret } });
    const [hook] = await r.waitFor(1);
    expect(verifyWebhookSignature({ rawBody: hook!.rawBody, secret, headers: hook!.headers }).ok).toBe(true);
    const event = normaliseWebhookPayload(hook!.rawBody);
    const polled = await h.client.getSonicTask(voice.taskId);
    expect(JSON.parse(hook!.rawBody.toString())).toEqual(polled.raw);
    expect(event.status).toMatchObject({ state: 'succeeded', personaId: polled.personaId, personaName: polled.personaName });
  });

  it('retries a non-2xx answer with growing waits, keeping the event id', async () => {
    const { h, r } = await setup({ webhookRetry: { attempts: 4, baseMs: 60 }, signatureScheme: 'timestamped' }, [500, 503]);
    const task = await h.client.createSong({ sound: 'harp', webhook: { url: r.url, secret } });
    const attempts = await h.sim.waitForWebhookAttempts(3, { taskId: task.taskId });
    expect(attempts.map((a) => [a.attempt, a.status])).toEqual([
      [1, 500],
      [2, 503],
      [3, 200],
    ]);
    expect(new Set(attempts.map((a) => a.eventId)).size).toBe(1);
    const [first, second, third] = r.received;
    expect(second!.at - first!.at).toBeGreaterThanOrEqual(55);
    expect(third!.at - second!.at).toBeGreaterThanOrEqual(115);
    // Every retry is signed afresh and verifies.
    for (const hook of r.received) expect(verifyWebhookSignature({ rawBody: hook.rawBody, secret, headers: hook.headers }).ok).toBe(true);
    // A fourth try would come 240 ms after the third; another task's event, sent 400 ms after it ends, comes first.
    const later = await h.client.createSong({ sound: 'later [sim:webhook-late=400]', webhook: { url: r.url, secret } });
    await h.sim.waitForWebhookAttempts(1, { taskId: later.taskId });
    expect(h.sim.webhookAttempts.filter((a) => a.taskId === task.taskId)).toHaveLength(3);
  });

  it('stops after the configured attempts', async () => {
    const { h, r } = await setup({ webhookRetry: { attempts: 3, baseMs: 20 } }, [500, 500, 500, 500, 500]);
    const task = await h.client.createSong({ sound: 'harp', webhook: { url: r.url, secret } });
    await h.sim.waitForWebhookAttempts(3, { taskId: task.taskId });
    // A fourth try would come 80 ms after the third; another task's event, sent 300 ms after it ends, comes first.
    const later = await h.client.createSong({ sound: 'later [sim:webhook-late=300]', webhook: { url: r.url, secret } });
    await h.sim.waitForWebhookAttempts(1, { taskId: later.taskId });
    expect(h.sim.webhookAttempts.filter((a) => a.taskId === task.taskId).map((a) => a.status)).toEqual([500, 500, 500]);
  });

  it('records an unreachable receiver as an attempt with an error', async () => {
    const { h, r } = await setup({ webhookRetry: { attempts: 2, baseMs: 10 } });
    await r.close();
    await h.client.createSong({ sound: 'harp', webhook: { url: r.url, secret } });
    const attempts = await h.sim.waitForWebhookAttempts(2);
    expect(attempts.every((a) => a.status === undefined && typeof a.error === 'string')).toBe(true);
  });
});

describe('webhook faults', () => {
  it('[sim:bad-signature] signs with a wrong secret', async () => {
    const { h, r } = await setup();
    await h.client.createSong({ sound: 'harp [sim:bad-signature]', webhook: { url: r.url, secret } });
    const [hook] = await r.waitFor(1);
    expect(verifyWebhookSignature({ rawBody: hook!.rawBody, secret, headers: hook!.headers })).toEqual({ ok: false, reason: 'mismatch' });
  });

  it('[sim:webhook-twice] delivers the same event twice', async () => {
    const { h, r } = await setup({ signatureScheme: 'timestamped' });
    await h.client.createSong({ sound: 'harp [sim:webhook-twice]', webhook: { url: r.url, secret } });
    const hooks = await r.waitFor(2);
    expect(hooks[0]!.rawBody.equals(hooks[1]!.rawBody)).toBe(true);
    expect(hooks[0]!.headers['x-webhook-id']).toBe(hooks[1]!.headers['x-webhook-id']);
  });

  it('[sim:webhook-late=N] delivers N ms after the task ended', async () => {
    const { h, r } = await setup();
    const task = await h.client.createSong({ sound: 'harp [sim:webhook-late=400]', webhook: { url: r.url, secret } });
    const [hook] = await r.waitFor(1);
    expect(hook!.at - h.sim.getTask(task.taskId)!.endedAt!).toBeGreaterThanOrEqual(390);
  });

  it('[sim:no-webhook] sends nothing; polling still gives the result', async () => {
    const { h, r } = await setup();
    const task = await h.client.createSong({ sound: 'harp [sim:no-webhook]', webhook: { url: r.url, secret } });
    const status = await waitForState(() => h.client.getProducerTask(task.taskId));
    expect(status.state).toBe('succeeded');
    // Its webhook would have gone when it ended: before the webhook of a task that starts now.
    const later = await h.client.createSong({ sound: 'later', webhook: { url: r.url, secret } });
    await h.sim.waitForWebhookAttempts(1, { taskId: later.taskId });
    expect(r.received).toHaveLength(1);
    expect(h.sim.webhookAttempts.map((a) => a.taskId)).toEqual([later.taskId]);
  });

  it('the same faults through the control object apply to the next task only', async () => {
    const { h, r } = await setup();
    h.sim.injectFault({ kind: 'bad-signature' });
    const first = await h.client.createSong({ sound: 'one', webhook: { url: r.url, secret } });
    h.sim.completeTask(first.taskId);
    await r.waitFor(1);
    const second = await h.client.createSong({ sound: 'two', webhook: { url: r.url, secret } });
    h.sim.completeTask(second.taskId);
    const hooks = await r.waitFor(2);
    const verdicts = hooks.map((hook) => verifyWebhookSignature({ rawBody: hook.rawBody, secret, headers: hook.headers }).ok);
    expect(verdicts).toEqual([false, true]);
  });
});
