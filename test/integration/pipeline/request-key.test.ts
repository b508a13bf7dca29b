/**
 * One request, submitted twice at once (the chaos scenario "twin gateways": Discord sends every
 * interaction to every gateway session of its shard, so a second process, such as an old
 * instance still running during a deploy, submits each command again). The interaction's id is
 * the request key: one submission makes the job and its charge, the other finds them taken
 * and writes nothing.
 */
import { count, eq } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { setUserDailyCap } from '../../../src/credits/index.js';
import { creditLedger, jobs } from '../../../src/db/schema.js';
import { RequestTakenError, type SubmitInput, type SubmitResult } from '../../../src/pipeline/requests.js';
import { jobIdFor } from '../../../src/pipeline/accept-request.js';
import { found } from '../../support/found.js';
import { balanceOf, ledgerOfJob } from '../../support/ledger.js';
import { startHarness, type Harness } from '../../support/pipeline-harness.js';
import { awayFromUtcMidnight } from '../../support/utc-day.js';

let h: Harness;

beforeAll(async () => {
  h = await startHarness({ webhooks: false, startingCredits: 100, sim: { taskMs: 60_000 } });
});
afterAll(async () => h?.close());

function submission(requestKey: string, prompt: string, member?: { userId: string; roleIds: string[] }): SubmitInput {
  return {
    requester: { guildId: h.guildId, channelId: h.channelId, userId: member?.userId ?? h.userId, ...(member && { roleIds: member.roleIds }) },
    request: { kind: 'song', prompt },
    requestKey,
  };
}

async function jobsWithPrompt(prompt: string): Promise<number> {
  const [row] = await h.db.db.select({ n: count() }).from(jobs).where(eq(jobs.request, { kind: 'song', prompt }));
  return row!.n;
}

describe('a request submitted twice at once', () => {
  it('makes one job and one charge; the other submission is told it was taken and writes nothing', async () => {
    // The guild's first request: its row is made with the starting credits.
    const before = 100;
    const outcomes = await Promise.allSettled([
      h.app.pipeline.submit(submission('interaction-1', 'twice at once')),
      h.app.pipeline.submit(submission('interaction-1', 'twice at once')),
    ]);
    const accepted = outcomes.filter((outcome): outcome is PromiseFulfilledResult<SubmitResult> => outcome.status === 'fulfilled');
    const taken = outcomes.filter((outcome) => outcome.status === 'rejected').map((outcome) => (outcome as PromiseRejectedResult).reason);
    expect(accepted).toHaveLength(1);
    expect(taken).toHaveLength(1);
    expect(taken[0]).toBeInstanceOf(RequestTakenError);

    const jobId = accepted[0]!.value.jobId;
    expect(jobId).toBe(jobIdFor('interaction-1'));
    expect((taken[0] as RequestTakenError).jobId).toBe(jobId);
    expect(await jobsWithPrompt('twice at once')).toBe(1);
    expect((await ledgerOfJob(h.db.db, jobId)).map((entry) => entry.kind)).toEqual(['reserve']);
    expect(await balanceOf(h.db.db, h.guildId)).toBe(before - accepted[0]!.value.cost);
    // And the one job reaches the service, once.
    await vi.waitFor(() => found((h.sim.listTasks().some((task) => task.body['sound'] === 'twice at once') ? true : undefined)), 15_000);
    expect(h.sim.listTasks().filter((task) => task.body['sound'] === 'twice at once')).toHaveLength(1);
  });

  it('is not refused by a daily cap that only its own twin filled', async () => {
    // The charges and the cap's reading of today's spending on one UTC day (the bot's clocks).
    await awayFromUtcMidnight(15_000);
    // A cap of one song's cost: the twin's charge fills it, and the second submission must say "taken", not "over the cap".
    await setUserDailyCap(h.db.db, { guildId: h.guildId, amount: 10, actorId: 'moderator' });
    const member = { userId: 'member-with-a-cap', roleIds: [] };
    const first = await h.app.pipeline.submit(submission('interaction-2', 'capped', member));
    await expect(h.app.pipeline.submit(submission('interaction-2', 'capped', member))).rejects.toBeInstanceOf(RequestTakenError);
    // Another request by the same member is over the cap: refused as before.
    await expect(h.app.pipeline.submit(submission('interaction-3', 'capped again', member))).rejects.toMatchObject({ reason: 'user_cap' });
    expect(await jobsWithPrompt('capped')).toBe(1);
    expect(await jobsWithPrompt('capped again')).toBe(0);
    const charges = await h.db.db.select({ n: count() }).from(creditLedger).where(eq(creditLedger.jobId, first.jobId));
    expect(charges[0]!.n).toBe(1);
  });

  it('different keys, or none, are different requests', async () => {
    const [a, b] = await Promise.all([
      h.app.pipeline.submit(submission('interaction-4', 'twins by prompt only')),
      h.app.pipeline.submit(submission('interaction-5', 'twins by prompt only')),
    ]);
    expect(a.jobId).not.toBe(b.jobId);
    expect(await jobsWithPrompt('twins by prompt only')).toBe(2);
  });
});
