/**
 * The music service refuses a submission with 402 (too few credits, or a plan that does not
 * allow the operation): the job fails with its credits released, the member reads that the
 * bot's account cannot pay and the owners know, and the owners are told once, however many
 * jobs the shortage refuses.
 */
import { Writable } from 'node:stream';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { createLogger } from '../../../src/logger.js';
import { MusicApiError } from '../../../src/music-api/index.js';
import { ACCOUNT_REFUSAL_ALERT_WINDOW_MS, submissionFailure } from '../../../src/pipeline/account-refusal.js';
import type { SubmitResult } from '../../../src/pipeline/requests.js';
import { found } from '../../support/found.js';
import { jobRow, ledgerOfJob } from '../../support/ledger.js';
import { startHarness, type Harness } from '../../support/pipeline-harness.js';

let h: Harness;
const logLines: Array<{ level: number; msg: string; jobId?: string }> = [];

beforeAll(async () => {
  const sink = new Writable({
    write: (chunk: Buffer, _encoding, done) => {
      for (const line of chunk.toString().split('\n')) if (line.trim() !== '') logLines.push(JSON.parse(line) as never);
      done();
    },
  });
  h = await startHarness({ webhooks: false, startingCredits: 500, logger: createLogger({ level: 'error' }, sink) });
});
afterAll(async () => h?.close());

const dmsTo = (userId: string) => h.emulator.channelMessages(h.emulator.dmChannel(userId).id);
const alertKey = () => `${h.prefix}:alert:account-refused`;

async function settled(jobId: string) {
  return vi.waitFor(async () => {
    const row = await jobRow(h.db.db, jobId);
    return found(row && row.deliveryState !== 'pending' ? row : undefined, `job ${jobId} settled`);
  }, 20_000);
}

describe('a 402 at submission', () => {
  it('fails each job with its credits released, tells the member the owners know, and the owners once, logging each at error level', async () => {
    h.setSimForThisTest({ credits: 0 });
    const owner = h.members.owner;
    const dmsBefore = dmsTo(owner).length;
    const balance = await h.balance();

    const requests = await Promise.all(['first', 'second', 'third'].map((word) => h.request({ kind: 'song', prompt: `a ${word} song the account cannot pay` })));
    const jobs = await Promise.all(requests.map(({ result }) => settled((result as SubmitResult).jobId)));
    for (const [index, { handle }] of requests.entries()) {
      const job = jobs[index]!;
      const jobId = job.id;
      expect(job.state).toBe('failed');
      expect(job.error).toMatchObject({ kind: 'account_refused', creditsReturned: 10 });
      expect(await ledgerOfJob(h.db.db, jobId)).toEqual([
        { kind: 'reserve', amount: -10, key: `job:${jobId}:debit` },
        { kind: 'release', amount: 10, key: `job:${jobId}:credit` },
      ]);
      const message = await handle.waitForEdit((m) => JSON.stringify(m.embeds ?? []).includes('could not be made'));
      expect(JSON.stringify(message.embeds)).toContain('cannot pay for this right now: too few credits, or its plan does not include it. The bot’s owners know.');
      expect(logLines.filter((line) => line.level === 50 && line.jobId === jobId && line.msg.startsWith('the music service account cannot pay'))).toHaveLength(1);
    }
    expect(await h.balance()).toBe(balance);

    const alerts = dmsTo(owner).slice(dmsBefore);
    expect(alerts).toHaveLength(1);
    expect(alerts[0]!.content).toContain('refused a request with 402 (POST /api/v1/producer/create)');
    expect(alerts[0]!.content).toContain('too few credits, or its plan does not allow this operation');
    expect(alerts[0]!.allowed_mentions).toEqual({ parse: [] });
    // The window the alert stands for, shared by every worker through Redis.
    const ttl = await h.app.deps.redis.pttl(alertKey());
    expect(ttl).toBeGreaterThan(ACCOUNT_REFUSAL_ALERT_WINDOW_MS - 60_000);
    expect(ttl).toBeLessThanOrEqual(ACCOUNT_REFUSAL_ALERT_WINDOW_MS);
  });

  it('tells the owners again once the window has passed', async () => {
    h.setSimForThisTest({ credits: 0 });
    const owner = h.members.owner;
    await h.app.deps.redis.del(alertKey());
    const dmsBefore = dmsTo(owner).length;
    const { result } = await h.request({ kind: 'lyrics', prompt: 'lyrics the account cannot pay' });
    expect((await settled((result as SubmitResult).jobId)).error).toMatchObject({ kind: 'account_refused', creditsReturned: 1 });
    expect(dmsTo(owner).slice(dmsBefore).map((dm) => dm.content)).toEqual([expect.stringContaining('(POST /api/v1/producer/lyrics-create)')]);
  });

  it('with nobody to tell, says so to nobody: the member is asked to tell the bot’s owners', async () => {
    const { deps } = h.app;
    await deps.redis.del(alertKey());
    const unreachable = { ...deps, settings: { ...deps.settings, account: { ...deps.settings.account, ownerIds: [], alertChannelId: undefined } } };
    const refusal = new MusicApiError({ kind: 'insufficient_credits', operation: 'createSong', method: 'POST', path: '/api/v1/producer/create', status: 402 });
    const job = { id: '00000000-0000-4000-8000-0000000000aa', kind: 'song' as const, guildId: h.guildId };
    const error = await submissionFailure(unreachable, job, refusal);
    expect(error).toEqual({ kind: 'insufficient_credits', message: expect.stringContaining('Only the bot’s owners can fix this: please let them know.') });
    expect(await deps.redis.exists(alertKey())).toBe(0);
    expect(logLines.filter((line) => line.level === 50 && line.jobId === job.id)).toHaveLength(1);
  });
});
