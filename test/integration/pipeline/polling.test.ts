/**
 * Webhooks off: songs found done by polling, and every way a submission or a task can go
 * wrong. Each test asserts what Discord was sent and what the ledger holds afterwards.
 */
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import type { SubmitResult } from '../../../src/pipeline/requests.js';
import { RequestRefusedError } from '../../../src/pipeline/requests.js';
import { ensureGuild, grant } from '../../../src/credits/index.js';
import { found } from '../../support/found.js';
import { startHarness, type Harness } from '../../support/pipeline-harness.js';
import { balanceOf, jobRow, ledgerOfJob, ledgerSum } from '../../support/ledger.js';

let h: Harness;

beforeAll(async () => {
  h = await startHarness({ webhooks: false, startingCredits: 1_000 });
});
afterAll(async () => h?.close());
// Every REST call the pipeline made fits Discord's published API description.
afterEach(() => expect(h.emulator.findings).toEqual([]));

async function delivered(jobId: string) {
  return vi.waitFor(async () => {
    const job = await jobRow(h.db.db, jobId);
    return found(job && job.deliveryState !== 'pending' ? job : undefined, `job ${jobId} delivered`);
  }, 20_000);
}

function finalEdits(jobId: string) {
  return h.emulator.requests.filter((r) => {
    const body = JSON.stringify(r.body ?? {});
    return r.method === 'PATCH' && /\/messages\/(@|%40)original$/.test(r.path) && body.includes(`Job ${jobId}`) && !body.includes('Making your') && r.files.length === 0;
  });
}

describe('polling only', () => {
  it('finishes a song without any webhook and posts it in the deferred reply', async () => {
    const { handle, result } = await h.request({ kind: 'song', prompt: 'polka for pollers', model: 'ModelB-2.0 Pro' });
    const { jobId } = result as SubmitResult;
    const job = await delivered(jobId);
    expect(job.state).toBe('succeeded');
    const create = h.sim.requests.find((r) => r.path === '/api/v1/producer/create' && (r.body as { sound?: string }).sound === 'polka for pollers');
    expect(create?.body).not.toHaveProperty('webhook_url');
    expect(create?.body).toMatchObject({ mv: 'ModelB-2.0 Pro', task_type: 'create_music' });
    expect(h.sim.requests.some((r) => r.path === `/api/v1/producer/task/${job.upstreamTaskId}`)).toBe(true);
    const message = await handle.waitForEdit((m) => JSON.stringify(m.embeds ?? []).includes('ModelB-2.0 Pro'));
    expect(JSON.stringify(message.components)).toContain(`download:${jobId}:mp3`);
    expect(finalEdits(jobId)).toHaveLength(1);
    expect(await ledgerOfJob(h.db.db, jobId)).toEqual([{ kind: 'reserve', amount: -10, key: `job:${jobId}:debit` }]);
  });

  it('refunds a task that fails upstream exactly once and says so', async () => {
    const simBefore = h.sim.getCredits();
    const { handle, result } = await h.request({ kind: 'song', prompt: 'this one fails [sim:fail]' });
    const { jobId } = result as SubmitResult;
    const job = await delivered(jobId);
    expect(job.state).toBe('failed');
    expect(await ledgerOfJob(h.db.db, jobId)).toEqual([
      { kind: 'reserve', amount: -10, key: `job:${jobId}:debit` },
      { kind: 'refund', amount: 10, key: `job:${jobId}:credit` },
    ]);
    expect(h.sim.getCredits()).toBe(simBefore);
    const message = await handle.waitForEdit((m) => JSON.stringify(m.embeds ?? []).includes('could not be made'));
    expect(JSON.stringify(message.embeds)).toContain('10 credits were returned');
    expect(await ledgerSum(h.db.db, h.guildId)).toBe(await balanceOf(h.db.db, h.guildId));
  });

  it('releases the reservation when the service answers 402 at submission', async () => {
    h.setSimForThisTest({ faults: [{ kind: 'status', status: 402, path: '/api/v1/producer/create' }] });
    const balance = await h.balance();
    const { handle, result } = await h.request({ kind: 'song', prompt: 'no money upstream' });
    const { jobId } = result as SubmitResult;
    const job = await delivered(jobId);
    expect(job.state).toBe('failed');
    expect(job.upstreamTaskId).toBeNull();
    expect(await ledgerOfJob(h.db.db, jobId)).toEqual([
      { kind: 'reserve', amount: -10, key: `job:${jobId}:debit` },
      { kind: 'release', amount: 10, key: `job:${jobId}:credit` },
    ]);
    expect(await balanceOf(h.db.db, h.guildId)).toBe(balance);
    const message = await handle.waitForEdit((m) => JSON.stringify(m.embeds ?? []).includes('could not be made'));
    expect(JSON.stringify(message)).toContain('cannot pay for this right now: too few credits, or its plan does not include it');
    expect(JSON.stringify(message)).not.toMatch(/insufficient_credits|sim-secret/);
  });

  it('retries 429 and then succeeds, with one upstream task and one charge', async () => {
    h.setSimForThisTest({ faults: [{ kind: 'status', status: 429, path: '/api/v1/producer/create', times: 2 }] });
    const before = h.sim.requests.length;
    const { result } = await h.request({ kind: 'song', prompt: 'patience is a virtue' });
    const { jobId } = result as SubmitResult;
    const job = await delivered(jobId);
    expect(job.state).toBe('succeeded');
    const creates = h.sim.requests.slice(before).filter((r) => r.path === '/api/v1/producer/create');
    expect(creates.map((r) => r.status)).toEqual([429, 429, 200]);
    expect(await ledgerOfJob(h.db.db, jobId)).toEqual([{ kind: 'reserve', amount: -10, key: `job:${jobId}:debit` }]);
    expect(finalEdits(jobId)).toHaveLength(1);
  });

  it('retries 502 from the upstream provider', async () => {
    h.setSimForThisTest({ faults: [{ kind: 'status', status: 502, path: '/api/v1/producer/lyrics-create' }] });
    const before = h.sim.requests.length;
    const { result } = await h.request({ kind: 'lyrics', prompt: 'flaky providers' });
    const { jobId } = result as SubmitResult;
    const job = await delivered(jobId);
    expect(job.state).toBe('succeeded');
    const creates = h.sim.requests.slice(before).filter((r) => r.path === '/api/v1/producer/lyrics-create');
    expect(creates.map((r) => r.status)).toEqual([502, 200]);
    expect(await ledgerOfJob(h.db.db, jobId)).toEqual([{ kind: 'reserve', amount: -1, key: `job:${jobId}:debit` }]);
  });

  it('accepts exactly what a guild can pay for when 100 requests arrive at once, and records nothing for the rest', async () => {
    const guild = h.emulator.createGuild({ name: 'Busy guild' });
    await ensureGuild(h.db.db, guild.id, { startingCredits: 0 });
    await grant(h.db.db, { guildId: guild.id, amount: 100, actorId: 'owner', reason: 'test', key: `grant-${guild.id}` });
    const outcomes = await Promise.all(
      Array.from({ length: 100 }, (_, i) =>
        h.app.pipeline
          .submit({ requester: { guildId: guild.id, channelId: h.channelId, userId: `2000000000000000${String(i).padStart(2, '0')}` }, request: { kind: 'song', prompt: `crowd ${i}` } })
          .catch((error: unknown) => error),
      ),
    );
    const accepted = outcomes.filter((o): o is SubmitResult => !(o instanceof Error));
    const refused = outcomes.filter((o) => o instanceof RequestRefusedError);
    expect(accepted).toHaveLength(10);
    expect(refused).toHaveLength(90);
    expect(refused.every((e) => (e as RequestRefusedError).reason === 'insufficient_credits')).toBe(true);
    expect(await balanceOf(h.db.db, guild.id)).toBe(0);
    const { rows } = await h.db.pool.query('select count(*)::int as n from jobs where guild_id = $1', [guild.id]);
    expect(rows[0].n).toBe(10);
    expect(await ledgerSum(h.db.db, guild.id)).toBe(0);
    // They all finish, and every one is charged once.
    for (const job of accepted) expect((await delivered(job.jobId)).state).toBe('succeeded');
    expect(await balanceOf(h.db.db, guild.id)).toBe(0);
  }, 60_000);
});

describe('an interaction token that has expired', () => {
  async function slowJob(prompt: string) {
    h.setSimForThisTest({ taskMs: 60_000 });
    const { result } = await h.request({ kind: 'lyrics', prompt });
    const { jobId } = result as SubmitResult;
    return vi.waitFor(async () => {
      const row = await jobRow(h.db.db, jobId);
      return found(row?.upstreamTaskId ? row : undefined);
    }, 15_000);
  }

  async function expectChannelFallback(jobId: string, token: string) {
    const done = await delivered(jobId);
    expect(done.deliveryState).toBe('delivered');
    const message = await h.emulator.waitForMessage(
      h.channelId,
      (m) => JSON.stringify(m.embeds ?? []).includes(`Job ${jobId}`) && (m.content ?? '').startsWith(`<@${h.userId}>`),
      10_000,
    );
    expect(message.embeds?.[0]?.title).toBeDefined();
    const post = h.emulator.requests.find(
      (r) => r.method === 'POST' && r.path === `/channels/${h.channelId}/messages` && JSON.stringify(r.body).includes(`Job ${jobId}`),
    );
    expect((post?.body as { allowed_mentions?: unknown }).allowed_mentions).toEqual({ parse: [], users: [h.userId] });
    expect(finalEdits(jobId).filter((r) => r.status === 200)).toHaveLength(0);
    // The token travels only in Discord's own URL paths, never in what the bot writes.
    expect(h.emulator.requests.some((r) => JSON.stringify(r.body ?? '').includes(token))).toBe(false);
  }

  it('posts in the channel, mentioning only the requester, when the bot knows the token is too old', async () => {
    const job = await slowJob('slow lyrics');
    h.emulator.clock.advance(16 * 60_000);
    await h.db.pool.query(`update jobs set interaction_at = interaction_at - interval '16 minutes' where id = $1`, [job.id]);
    h.sim.completeTask(job.upstreamTaskId!);
    await expectChannelFallback(job.id, job.interactionToken!);
  });

  it('falls back the same way when Discord answers 50027 to the edit', async () => {
    const job = await slowJob('slower lyrics');
    // Only Discord's clock moves: the bot still thinks the token is fresh.
    h.emulator.clock.advance(16 * 60_000);
    h.sim.completeTask(job.upstreamTaskId!);
    await expectChannelFallback(job.id, job.interactionToken!);
    const refused = h.emulator.requests.filter(
      (r) => r.method === 'PATCH' && /\/messages\/(@|%40)original$/.test(r.path) && r.status === 401 && JSON.stringify(r.body).includes(`Job ${job.id}`),
    );
    expect(refused.length).toBeGreaterThanOrEqual(1);
    expect((refused[0]?.response as { code?: number }).code).toBe(50027);
  });
});

describe('a guild that keeps results private', () => {
  it('shows the result to the member only, and after the token only a notice in the channel', async () => {
    const guild = h.emulator.createGuild({ name: 'Private guild' });
    const channel = h.emulator.createChannel(guild.id, { name: 'quiet' });
    const member = h.emulator.addMember(guild.id, { username: 'shy' });
    await ensureGuild(h.db.db, guild.id, { startingCredits: 50 });
    await h.db.pool.query("update guilds set visibility = 'private' where id = $1", [guild.id]);

    // While the interaction lives: an ephemeral follow-up carries the result.
    const handle = h.emulator.runCommand({ guildId: guild.id, channelId: channel.id, userId: member.id, name: 'private-test', options: {} });
    // Acknowledged as the command layer does for a private guild: privately.
    const ack = await fetch(`${h.emulator.apiUrl}/v10/interactions/${handle.id}/${handle.token}/callback`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ type: 5, data: { flags: 64 } }),
    });
    expect(ack.status).toBe(204);
    const fresh = await h.app.pipeline.submit({
      requester: { guildId: guild.id, channelId: channel.id, userId: member.id },
      request: { kind: 'lyrics', prompt: 'secret diary' },
      reply: { applicationId: h.emulator.applicationId, interactionToken: handle.token, createdAt: new Date() },
    });
    const followUp = await handle.waitForFollowUp((m) => JSON.stringify(m.embeds ?? []).includes(`Job ${fresh.jobId}`), 15_000);
    expect(followUp.flags! & 64).toBe(64);
    expect(h.emulator.channelMessages(channel.id).some((m) => JSON.stringify(m.embeds ?? []).includes(fresh.jobId))).toBe(false);

    // Without a live interaction: a notice that names the job, and no result in public.
    const late = await h.app.pipeline.submit({
      requester: { guildId: guild.id, channelId: channel.id, userId: member.id },
      request: { kind: 'lyrics', prompt: 'another secret' },
    });
    await delivered(late.jobId);
    const notice = await h.emulator.waitForMessage(channel.id, (m) => (m.content ?? '').includes(late.jobId), 10_000);
    expect(notice.content).toContain(`<@${member.id}>`);
    expect(notice.embeds ?? []).toEqual([]);
  });
});

describe('a channel the bot cannot write to', () => {
  it('marks the delivery failed and keeps the result for /jobs show', async () => {
    const guild = h.emulator.createGuild({ name: 'Locked guild' });
    const locked = h.emulator.createChannel(guild.id, { name: 'locked' });
    h.emulator.denyChannel(locked.id);
    // No interaction to answer: the result can only go to the channel.
    const accepted = await h.app.pipeline.submit({
      requester: { guildId: guild.id, channelId: locked.id, userId: h.userId },
      request: { kind: 'lyrics', prompt: 'nobody hears this' },
    });
    const job = await delivered(accepted.jobId);
    expect(job.state).toBe('succeeded');
    expect(job.deliveryState).toBe('failed');
    expect(job.result).toMatchObject({ lyrics: expect.any(String) });
    const attempts = h.emulator.requests.filter((r) => r.path === `/channels/${locked.id}/messages`);
    expect(attempts.map((r) => r.status)).toEqual([403]);
    expect(await ledgerOfJob(h.db.db, accepted.jobId)).toEqual([{ kind: 'reserve', amount: -1, key: `job:${accepted.jobId}:debit` }]);
  });
});
