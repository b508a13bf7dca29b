/**
 * Webhooks off: songs found done by polling, and every way a submission or a task can go
 * wrong. Each test asserts what Discord was sent and what the ledger holds afterwards.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { SubmitResult } from '../../../src/pipeline/requests.js';
import { RequestRefusedError } from '../../../src/pipeline/requests.js';
import { ensureGuild, grant } from '../../../src/credits/index.js';
import { eventually, startHarness, type Harness } from '../../support/pipeline-harness.js';
import { balanceOf, jobRow, ledgerOfJob, ledgerSum } from '../../support/ledger.js';

let h: Harness;

beforeAll(async () => {
  h = await startHarness({ webhooks: false, startingCredits: 1_000 });
});
afterAll(async () => h?.close());

async function delivered(jobId: string) {
  return eventually(async () => {
    const job = await jobRow(h.db.db, jobId);
    return job && job.deliveryState !== 'pending' ? job : undefined;
  }, 20_000, `job ${jobId} delivered`);
}

function finalEdits(jobId: string) {
  return h.emulator.requests.filter((r) => {
    const body = JSON.stringify(r.body ?? {});
    return r.method === 'PATCH' && r.path.includes('/messages/@original') && body.includes(`Job ${jobId}`) && !body.includes('Making your');
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
    h.sim.injectFault({ kind: 'status', status: 402, path: '/api/v1/producer/create' });
    const balance = await balanceOf(h.db.db, h.guildId);
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
    expect(JSON.stringify(message)).toContain('run out of credits');
    expect(JSON.stringify(message)).not.toMatch(/insufficient_credits|sim-secret/);
  });

  it('retries 429 and then succeeds, with one upstream task and one charge', async () => {
    h.sim.injectFault({ kind: 'status', status: 429, path: '/api/v1/producer/create', times: 2 });
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
    h.sim.injectFault({ kind: 'status', status: 502, path: '/api/v1/producer/lyrics-create' });
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
  it('falls back to a channel message that mentions only the requester', async () => {
    h.sim.setTaskMs(60_000);
    const { result } = await h.request({ kind: 'lyrics', prompt: 'slow lyrics' });
    const { jobId } = result as SubmitResult;
    const job = await eventually(async () => {
      const row = await jobRow(h.db.db, jobId);
      return row?.upstreamTaskId ? row : undefined;
    });
    // Sixteen minutes later: Discord has forgotten the token.
    h.emulator.clock.advance(16 * 60_000);
    await h.db.pool.query(`update jobs set interaction_at = interaction_at - interval '16 minutes' where id = $1`, [jobId]);
    h.sim.completeTask(job.upstreamTaskId!);
    const done = await delivered(jobId);
    expect(done.deliveryState).toBe('delivered');
    const message = await h.emulator.waitForMessage(h.channelId, (m) => (m.content ?? '').includes(`<@${h.userId}>`), 10_000);
    expect(JSON.stringify(message.embeds)).toContain(`Job ${jobId}`);
    const post = h.emulator.requests.find((r) => r.method === 'POST' && r.path === `/channels/${h.channelId}/messages`);
    expect(post?.allowed_mentions).toEqual({ parse: [], users: [h.userId] });
    expect(finalEdits(jobId)).toHaveLength(0);
    expect(JSON.stringify(h.emulator.requests.map((r) => r.path))).not.toContain(job.interactionToken);
    h.sim.setTaskMs(300);
  });
});
