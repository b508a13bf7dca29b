/**
 * Songs that finish by webhook: the happy path, forged, stale and repeated webhooks, and a
 * webhook racing a poll. Every test asserts what Discord was sent and what the ledger holds.
 */
import { createHmac, randomUUID } from 'node:crypto';
import { eq } from 'drizzle-orm';
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { voicePersonas, webhookEvents } from '../../../src/db/schema.js';
import type { SubmitResult } from '../../../src/pipeline/requests.js';
import { found } from '../../support/found.js';
import { SIM_KEY, startHarness, type Harness } from '../../support/pipeline-harness.js';
import { balanceOf, jobRow, ledgerOfJob, ledgerSum } from '../../support/ledger.js';
import { parseSamples } from '../../support/metrics.js';

let h: Harness;

beforeAll(async () => {
  h = await startHarness({ webhooks: true, startingCredits: 500 });
});
afterAll(async () => h?.close());
// Every REST call the pipeline made fits Discord's published API description.
afterEach(() => expect(h.emulator.findings).toEqual([]));

function resultEdits(jobId: string) {
  return h.emulator.requests.filter(
    (r) => r.method === 'PATCH' && /\/messages\/(@|%40)original$/.test(r.path) && JSON.stringify(r.body ?? {}).includes(`Job ${jobId}`) && !JSON.stringify(r.body ?? {}).includes('Making your') && r.files.length === 0,
  );
}

async function postWebhook(jobId: string, body: string, headers: Record<string, string>) {
  return fetch(`${h.app.httpUrl}/webhooks/music/${jobId}`, { method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body });
}

/** The bot's /metrics, as `name{labels}` → value. */
async function metrics(): Promise<Map<string, number>> {
  return parseSamples(await (await fetch(`${h.app.httpUrl}/metrics`)).text());
}

async function finished(jobId: string) {
  return vi.waitFor(async () => {
    const job = await jobRow(h.db.db, jobId);
    return found(job && job.deliveryState !== 'pending' ? job : undefined, `job ${jobId} delivered`);
  }, 20_000);
}

describe('a song finishing by webhook', () => {
  it('is submitted with a job-named webhook URL and its own secret, completed by the webhook and posted once', async () => {
    const balance = await h.balance();
    const { handle, result } = await h.request({ kind: 'song', prompt: 'sea shanty about databases', title: 'Rows' });
    const submitted = result as SubmitResult;
    expect(submitted.cost).toBe(10);

    const job = await finished(submitted.jobId);
    expect(job.state).toBe('succeeded');
    expect(job.deliveryState).toBe('delivered');

    const create = h.sim.requests.find((r) => r.path === '/api/v1/producer/create' && (r.body as { title?: string }).title === 'Rows');
    const body = create?.body as Record<string, unknown>;
    expect(body.webhook_url).toBe(`${h.publicUrl}/webhooks/music/${submitted.jobId}`);
    expect(typeof body.webhook_secret).toBe('string');
    expect(body.sound).toBe('sea shanty about databases');
    expect(body).not.toHaveProperty('mv');

    // Finished by the webhook, not a poll: the simulator's webhook was answered 2xx.
    const attempts = h.sim.webhookAttempts.filter((a) => a.url.endsWith(submitted.jobId));
    expect(attempts.some((a) => a.status === 200)).toBe(true);

    const edited = await handle.waitForEdit((m) => (m.embeds ?? []).some((e) => (e.footer?.text ?? '').includes(submitted.jobId) && !String(e.title).startsWith('Making')));
    const embed = edited.embeds?.[0];
    expect(JSON.stringify(embed)).toContain('/producer/');
    expect(resultEdits(submitted.jobId)).toHaveLength(1);

    expect(await ledgerOfJob(h.db.db, submitted.jobId)).toEqual([
      { kind: 'reserve', amount: -10, key: `job:${submitted.jobId}:debit` },
    ]);
    expect(await balanceOf(h.db.db, h.guildId)).toBe(balance - 10);
    expect(await ledgerSum(h.db.db, h.guildId)).toBe(await balanceOf(h.db.db, h.guildId));
  });
});

/** The job's row once the service has its task (its upstream task id is recorded). */
function sentUpstream(jobId: string) {
  return vi.waitFor(async () => {
    const row = await jobRow(h.db.db, jobId);
    return found(row?.upstreamTaskId ? row : undefined);
  }, 15_000);
}

/** A webhook reporting `status` for the job's task, signed with its secret. */
function sendEnd(jobId: string, job: { upstreamTaskId: string | null; webhookSecret: string | null }, status: string) {
  const body = JSON.stringify({ code: 200, message: 'success', status, task_id: job.upstreamTaskId, data: [{ clip_id: `c-${jobId}`, audio_url: 'https://cdn.example/c.mp3' }] });
  return postWebhook(jobId, body, { 'x-webhook-signature': createHmac('sha256', job.webhookSecret!).update(body).digest('hex') });
}

describe('webhooks that must change nothing', () => {
  it('refuses forged, stale, unsigned and malformed webhooks, answers 404 for unknown jobs, and ignores repeats', async () => {
    h.setSimForThisTest({ taskMs: 60_000, faults: [{ kind: 'no-webhook' }] });
    const { result } = await h.request({ kind: 'song', prompt: 'forgery test' });
    const { jobId } = result as SubmitResult;
    const job = await sentUpstream(jobId);
    const balance = await balanceOf(h.db.db, h.guildId);
    const envelope = JSON.stringify({ code: 200, message: 'success', status: 'SUCCESS', task_id: job.upstreamTaskId, data: [{ clip_id: 'forged', audio_url: 'https://evil.example/x.m4a' }] });

    const forged = await postWebhook(jobId, envelope, { 'x-webhook-signature': createHmac('sha256', 'wrong-secret').update(envelope).digest('hex') });
    expect(forged.status).toBe(401);
    const unsigned = await postWebhook(jobId, envelope, {});
    expect(unsigned.status).toBe(401);
    const old = Math.floor(Date.now() / 1000) - 3600;
    const staleSignature = `sha256=${createHmac('sha256', job.webhookSecret!).update(`${old}.${envelope}`).digest('hex')}`;
    const stale = await postWebhook(jobId, envelope, { 'x-webhook-signature': staleSignature, 'x-webhook-timestamp': String(old) });
    expect(stale.status).toBe(401);
    const malformedBody = '{not json';
    const malformed = await postWebhook(jobId, malformedBody, { 'x-webhook-signature': createHmac('sha256', job.webhookSecret!).update(malformedBody).digest('hex') });
    expect(malformed.status).toBe(400);
    const unknown = await postWebhook('00000000-0000-4000-8000-000000000000', envelope, { 'x-webhook-signature': 'abc' });
    expect(unknown.status).toBe(404);
    const tooBig = await postWebhook(jobId, 'x'.repeat(1024 * 1024 + 10), { 'x-webhook-signature': 'abc' });
    expect(tooBig.status).toBe(413);

    const unchanged = await jobRow(h.db.db, jobId);
    expect(unchanged?.state).toBe('submitted');
    expect(unchanged?.result).toBeNull();
    expect(await balanceOf(h.db.db, h.guildId)).toBe(balance);
    expect(resultEdits(jobId)).toHaveLength(0);

    // A genuine one, signed by the real service's timestamped scheme, twice.
    const now = Math.floor(Date.now() / 1000);
    const signature = `sha256=${createHmac('sha256', job.webhookSecret!).update(`${now}.${envelope}`).digest('hex')}`;
    const headers = { 'x-webhook-signature': signature, 'x-webhook-timestamp': String(now), 'x-webhook-id': `evt-${jobId}` };
    expect((await postWebhook(jobId, envelope, headers)).status).toBe(200);
    const repeat = await postWebhook(jobId, envelope, headers);
    expect(repeat.status).toBe(200);
    expect(await repeat.json()).toMatchObject({ duplicate: true });

    const done = await finished(jobId);
    expect(done.state).toBe('succeeded');
    // Every queue entry of the job (its completion, delivery and polls) has run out.
    await expect.poll(() => h.queueEntriesOf(jobId), { timeout: 10_000 }).toEqual({});
    expect(resultEdits(jobId)).toHaveLength(1);
    expect(await ledgerOfJob(h.db.db, jobId)).toEqual([{ kind: 'reserve', amount: -10, key: `job:${jobId}:debit` }]);
  });
});

describe('a voice persona finishing by webhook', () => {
  it('saves the persona when the result carries an id and media beside persona_id; the webhook signed in base64 is taken (an old unsigned timestamp beside it), forged ones in any encoding are not', async () => {
    h.setSimForThisTest({ taskMs: 60_000, faults: [{ kind: 'no-webhook' }] });
    const { result } = await h.request({ kind: 'voice', name: 'Alto Ada', audioUrl: 'https://files.example.com/alto.mp3' });
    const { jobId, cost } = result as SubmitResult;
    expect(cost).toBe(4);
    const job = await vi.waitFor(async () => {
      const row = await jobRow(h.db.db, jobId);
      return found(row?.upstreamTaskId ? row : undefined);
    }, 15_000);
    // The polling body exactly (no task_id added), with what a real result may carry beside the persona.
    const body = JSON.stringify({
      code: 200,
      message: 'success',
      data: {
        id: job.upstreamTaskId,
        persona_id: 'persona-alto-ada',
        name: 'Alto',
        state: 'succeeded',
        audio_url: 'https://cdn.example/sonic/alto-source.mp3',
        image_url: 'https://cdn.example/sonic/alto.jpg',
      },
    });
    const sign = (key: string, encoding: 'hex' | 'base64' | 'base64url') => createHmac('sha256', key).update(body).digest(encoding);

    for (const encoding of ['hex', 'base64', 'base64url'] as const) {
      const forged = await postWebhook(jobId, body, { 'x-webhook-signature': sign('wrong-secret', encoding) });
      expect(forged.status, encoding).toBe(401);
    }
    expect((await jobRow(h.db.db, jobId))?.state).toBe('submitted');
    expect(await h.db.db.select().from(voicePersonas).where(eq(voicePersonas.jobId, jobId))).toEqual([]);

    // A late retry of the spec's scheme: the timestamp beside it is not signed, so its age is no reason to refuse.
    const hourOld = String(Math.floor(Date.now() / 1000) - 3600);
    expect((await postWebhook(jobId, body, { 'x-webhook-signature': sign(job.webhookSecret!, 'base64'), 'x-webhook-timestamp': hourOld })).status).toBe(200);
    const done = await finished(jobId);
    expect(done.state).toBe('succeeded');
    const personas = await h.db.db.select().from(voicePersonas).where(eq(voicePersonas.jobId, jobId));
    expect(personas).toMatchObject([{ personaId: 'persona-alto-ada', name: 'Alto Ada', guildId: h.guildId, ownerId: h.userId }]);
    expect(await ledgerOfJob(h.db.db, jobId)).toEqual([{ kind: 'reserve', amount: -4, key: `job:${jobId}:debit` }]);
  });
});

describe('a header outside the signature', () => {
  it('cannot fail a job: a sonic body replayed with a forged X-Webhook-Event: song.failed saves the persona it carries', async () => {
    h.setSimForThisTest({ taskMs: 60_000, faults: [{ kind: 'no-webhook' }] });
    const { result } = await h.request({ kind: 'voice', name: 'Tenor Tom', audioUrl: 'https://files.example.com/tenor.mp3' });
    const { jobId } = result as SubmitResult;
    const job = await sentUpstream(jobId);
    // create-voice's polling body: the persona, no state word; only the body is signed.
    const body = JSON.stringify({ code: 200, message: 'success', data: { persona_id: 'persona-tenor-tom', name: 'Tenor' } });
    const signature = createHmac('sha256', job.webhookSecret!).update(body).digest('hex');

    const forged = await postWebhook(jobId, body, { 'x-webhook-signature': signature, 'x-webhook-event': 'song.failed' });
    expect(forged.status).toBe(200);
    const done = await finished(jobId);
    expect(done).toMatchObject({ state: 'succeeded', error: null });
    expect(await h.db.db.select().from(voicePersonas).where(eq(voicePersonas.jobId, jobId))).toMatchObject([{ personaId: 'persona-tenor-tom', name: 'Tenor Tom' }]);
    expect(await ledgerOfJob(h.db.db, jobId)).toEqual([{ kind: 'reserve', amount: -4, key: `job:${jobId}:debit` }]);

    // The same signed bytes without the header: the same event, a repeat.
    const genuine = await postWebhook(jobId, body, { 'x-webhook-signature': signature });
    expect(await genuine.json()).toMatchObject({ duplicate: true });
  });
});

describe('a second, different final state for one job', () => {
  it.each([
    ['SUCCESS', 'FAILED', 'succeeded', 'failed'],
    ['FAILED', 'SUCCESS', 'failed', 'succeeded'],
  ] as const)('%s then %s: the first stands, the second is counted', async (first, second, standing, reported) => {
    h.setSimForThisTest({ taskMs: 60_000, faults: [{ kind: 'no-webhook' }] });
    const { result } = await h.request({ kind: 'song', prompt: `changes its mind ${first}` });
    const { jobId } = result as SubmitResult;
    const job = await sentUpstream(jobId);
    const send = (status: string) => sendEnd(jobId, job, status);
    const counted = `musicbot_second_final_states_total{kind="song",standing="${standing}",reported="${reported}"}`;
    const before = (await metrics()).get(counted) ?? 0;

    expect((await send(first)).status).toBe(200);
    const done = await finished(jobId);
    expect(done.state).toBe(standing);
    const ledger = await ledgerOfJob(h.db.db, jobId);

    expect((await send(second)).status).toBe(200);
    await expect.poll(async () => ((await metrics()).get(counted) ?? 0) - before, { timeout: 10_000 }).toBe(1);
    expect(await jobRow(h.db.db, jobId)).toMatchObject({ state: standing, result: done.result, error: done.error, deliveryState: done.deliveryState });
    expect(await ledgerOfJob(h.db.db, jobId)).toEqual(ledger);
    await expect.poll(() => h.queueEntriesOf(jobId), { timeout: 10_000 }).toEqual({});
    expect(resultEdits(jobId).length).toBeLessThanOrEqual(1);
  });

  it('both ends sent at once: one stands, the other is counted, not dropped as the same entry', async () => {
    h.setSimForThisTest({ taskMs: 60_000, faults: [{ kind: 'no-webhook' }] });
    const { result } = await h.request({ kind: 'song', prompt: 'changes its mind at once' });
    const { jobId } = result as SubmitResult;
    const job = await sentUpstream(jobId);
    const send = (status: string) => sendEnd(jobId, job, status);
    const countOf = async (standing: string, reported: string) =>
      (await metrics()).get(`musicbot_second_final_states_total{kind="song",standing="${standing}",reported="${reported}"}`) ?? 0;
    const before = { succeeded: await countOf('succeeded', 'failed'), failed: await countOf('failed', 'succeeded') };

    // The second arrives while the first's queue entry still waits or runs.
    expect((await send('SUCCESS')).status).toBe(200);
    expect((await send('FAILED')).status).toBe(200);
    const done = await finished(jobId);
    const other = done.state === 'succeeded' ? 'failed' : 'succeeded';
    await expect.poll(async () => (await countOf(done.state, other)) - before[done.state as 'succeeded' | 'failed'], { timeout: 10_000 }).toBe(1);
    await expect.poll(() => h.queueEntriesOf(jobId), { timeout: 10_000 }).toEqual({});
    expect(await jobRow(h.db.db, jobId)).toMatchObject({ state: done.state });
  });
});

describe('a persona song, with webhooks on', () => {
  it('is sent without webhook fields (the sonic create takes none) and finished by polling', async () => {
    const { result } = await h.request({ kind: 'persona_song', voiceId: randomUUID(), personaId: 'persona-polled', prompt: 'a lullaby', lyrics: 'Sleep now' });
    const { jobId } = result as SubmitResult;
    const job = await finished(jobId);
    expect(job.state).toBe('succeeded');
    expect(job.result?.clips).toHaveLength(2);
    const create = h.sim.requests.find((r) => r.path === '/api/v1/sonic/create' && (r.body as { persona_id?: string }).persona_id === 'persona-polled');
    expect(create?.status).toBe(200);
    expect(create?.body).not.toHaveProperty('webhook_url');
    expect(create?.body).not.toHaveProperty('webhook_secret');
    expect(h.sim.requests.some((r) => r.path === `/api/v1/sonic/task/${job.upstreamTaskId}`)).toBe(true);
    expect(await ledgerOfJob(h.db.db, jobId)).toEqual([{ kind: 'reserve', amount: -10, key: `job:${jobId}:debit` }]);
  });
});

describe('a captured webhook sent again', () => {
  it('is a duplicate under a fresh X-Webhook-Id too: the id is not signed, so it cannot make a replay news', async () => {
    h.setSimForThisTest({ taskMs: 60_000, faults: [{ kind: 'no-webhook' }] });
    const { result } = await h.request({ kind: 'song', prompt: 'replay test' });
    const { jobId } = result as SubmitResult;
    const job = await sentUpstream(jobId);
    const envelope = JSON.stringify({ code: 200, message: 'success', status: 'SUCCESS', task_id: job.upstreamTaskId, data: [{ clip_id: 'c-1', audio_url: 'https://cdn.example/c-1.mp3' }] });
    const now = Math.floor(Date.now() / 1000);
    const signed = { 'x-webhook-signature': `sha256=${createHmac('sha256', job.webhookSecret!).update(`${now}.${envelope}`).digest('hex')}`, 'x-webhook-timestamp': String(now) };
    expect((await postWebhook(jobId, envelope, { ...signed, 'x-webhook-id': 'evt-genuine' })).status).toBe(200);
    await finished(jobId);

    for (const id of ['evt-replayed-1', 'evt-replayed-2']) {
      const replay = await postWebhook(jobId, envelope, { ...signed, 'x-webhook-id': id, 'idempotency-key': id });
      expect(replay.status).toBe(200);
      expect(await replay.json()).toMatchObject({ duplicate: true });
    }
    // The spec's scheme carries no id at all: an attacker's added one changes nothing either.
    const specSigned = { 'x-webhook-signature': createHmac('sha256', job.webhookSecret!).update(envelope).digest('hex') };
    expect(await (await postWebhook(jobId, envelope, { ...specSigned, 'x-webhook-id': 'evt-added' })).json()).toMatchObject({ duplicate: true });

    expect(await h.db.db.select({ key: webhookEvents.eventKey }).from(webhookEvents).where(eq(webhookEvents.jobId, jobId))).toHaveLength(1);
    await expect.poll(() => h.queueEntriesOf(jobId), { timeout: 10_000 }).toEqual({});
    expect(resultEdits(jobId)).toHaveLength(1);
  });
});

describe('a webhook and a poll arriving together', () => {
  it('deliver once, with one ledger movement', async () => {
    h.setSimForThisTest({ faults: [{ kind: 'webhook-twice' }] });
    const finishedLyrics = 'musicbot_jobs_finished_total{kind="lyrics",state="succeeded"}';
    const duplicates = 'musicbot_webhooks_total{outcome="duplicate"}';
    const before = await metrics();
    const { result } = await h.request({ kind: 'lyrics', prompt: 'a race between two messengers' });
    const { jobId } = result as SubmitResult;
    const job = await finished(jobId);
    expect(job.state).toBe('succeeded');

    // Both copies were answered, and every path that could act on the job (the second
    // webhook, the polls) has run out of the queues.
    const hooks = await h.sim.waitForWebhookAttempts(2, { taskId: job.upstreamTaskId!, timeoutMs: 10_000 });
    await expect.poll(() => h.queueEntriesOf(jobId), { timeout: 10_000 }).toEqual({});
    expect(hooks.map((attempt) => ({ copy: attempt.copy, status: attempt.status }))).toEqual([
      { copy: 1, status: 200 },
      { copy: 2, status: 200 },
    ]);
    const after = await metrics();
    // Completed once, whether the webhook or a poll got there first; the second copy was taken for a repeat.
    expect((after.get(finishedLyrics) ?? 0) - (before.get(finishedLyrics) ?? 0)).toBe(1);
    expect((after.get(duplicates) ?? 0) - (before.get(duplicates) ?? 0)).toBe(1);
    expect(resultEdits(jobId)).toHaveLength(1);
    expect(await ledgerOfJob(h.db.db, jobId)).toEqual([{ kind: 'reserve', amount: -1, key: `job:${jobId}:debit` }]);
    expect(await ledgerSum(h.db.db, h.guildId)).toBe(await balanceOf(h.db.db, h.guildId));
  });
});

describe('the HTTP server', () => {
  it('counts every webhook verdict exactly once, those Fastify refuses before the handler too', async () => {
    const { result } = await h.request({ kind: 'song', prompt: 'verdicts' });
    const { jobId } = result as SubmitResult;
    // Finished: its genuine webhook is counted, and none arrives while this test counts.
    const job = await finished(jobId);
    const total = (samples: Map<string, number>) =>
      [...samples].filter(([name]) => name.startsWith('musicbot_webhooks_total{')).reduce((sum, [, value]) => sum + value, 0);
    const before = await metrics();

    const malformedBody = '{not json';
    const answers = await Promise.all([
      postWebhook('00000000-0000-4000-8000-000000000000', '{}', { 'x-webhook-signature': 'abc' }),
      postWebhook(jobId, '{}', { 'x-webhook-signature': 'abc' }),
      postWebhook(jobId, malformedBody, { 'x-webhook-signature': createHmac('sha256', job.webhookSecret!).update(malformedBody).digest('hex') }),
      postWebhook(jobId, 'x'.repeat(1024 * 1024 + 10), { 'x-webhook-signature': 'abc' }),
    ]);
    expect(answers.map((answer) => answer.status)).toEqual([404, 401, 400, 413]);

    const after = await metrics();
    const delta = (name: string) => (after.get(name) ?? 0) - (before.get(name) ?? 0);
    expect(delta('musicbot_webhooks_total{outcome="unknown_job"}')).toBe(1);
    expect(delta('musicbot_webhooks_total{outcome="malformed"}')).toBe(1);
    expect(delta('musicbot_webhooks_total{outcome="too_large"}')).toBe(1);
    expect(total(after) - total(before)).toBe(4);
  });

  it('reports Postgres and Redis on /healthz and the pipeline on /metrics', async () => {
    const { result } = await h.request({ kind: 'song', prompt: 'something to count' });
    const { jobId } = result as SubmitResult;
    expect((await finished(jobId)).state).toBe('succeeded');
    const body = JSON.stringify({ code: 200, message: 'success', status: 'SUCCESS', data: [] });
    const forged = await postWebhook(jobId, body, { 'x-webhook-signature': createHmac('sha256', 'wrong-secret').update(body).digest('hex') });
    expect(forged.status).toBe(401);

    const health = await fetch(`${h.app.httpUrl}/healthz`);
    expect(health.status).toBe(200);
    expect(await health.json()).toMatchObject({ status: 'ok', postgres: 'ok', redis: 'ok' });
    const metrics = await (await fetch(`${h.app.httpUrl}/metrics`)).text();
    expect(metrics).toMatch(/musicbot_jobs_accepted_total\{kind="song"\} [1-9]/);
    expect(metrics).toMatch(/musicbot_credits_total\{movement="reserved"\} [1-9]/);
    expect(metrics).toMatch(/musicbot_webhooks_total\{outcome="bad_signature_mismatch"\} [1-9]/);
    expect(metrics).toMatch(/musicbot_jobs\{kind="song",state="succeeded"\} [1-9]/);
    expect(metrics).toMatch(/musicbot_queue_depth\{queue="poll",state="delayed"\}/);
    expect(metrics).toContain('musicbot_discord_delivery_seconds_bucket');
    expect(metrics).not.toContain(SIM_KEY);
  });
});
