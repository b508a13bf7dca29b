/**
 * The bot under Discord's rate limits, as the emulator enforces them: 30 results finishing
 * together in one channel are each delivered once, as results, with few 429s; and when an
 * interaction's edit bucket is empty, progress edits are dropped while the result waits its
 * turn and arrives.
 */
import { inArray } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { jobs } from '../../../src/db/schema.js';
import type { SubmitResult } from '../../../src/pipeline/requests.js';
import type { EmulatorMessage, RecordedRequest } from '@music-bot/discord-emulator';
import { found } from '../../support/found.js';
import { jobRow } from '../../support/ledger.js';
import { startHarness, type Harness } from '../../support/pipeline-harness.js';

const RESULT_COLOUR = 0x57f287;

type Embed = { title?: string; color?: number; footer?: { text: string } };
const firstEmbed = (body: unknown): Embed | undefined => (body as { embeds?: Embed[] } | null)?.embeds?.[0];
const isProgress = (body: unknown): boolean => firstEmbed(body)?.title?.startsWith('Making your') ?? false;
const isResultOf = (body: unknown, jobId: string): boolean =>
  firstEmbed(body)?.color === RESULT_COLOUR && firstEmbed(body)?.footer?.text === `Job ${jobId}`;

async function settled(h: Harness, jobId: string): Promise<void> {
  await vi.waitFor(async () => found(((await jobRow(h.db.db, jobId))?.deliveryState === 'delivered' ? true : undefined), `job ${jobId} delivered`), 90_000);
  await vi.waitFor(async () => found((Object.keys(await h.queueEntriesOf(jobId)).length === 0 ? true : undefined), `job ${jobId}'s queue entries done`), 30_000);
}

async function submittedTaskIds(h: Harness, jobIds: readonly string[]): Promise<string[]> {
  let states = '';
  return vi.waitFor(async () => {
    const rows = await h.db.db
      .select({ id: jobs.id, state: jobs.state, taskId: jobs.upstreamTaskId })
      .from(jobs)
      .where(inArray(jobs.id, [...jobIds]));
    states = rows.map((row) => row.state).join(', ');
    return found(rows.length === jobIds.length && rows.every((row) => row.taskId) ? rows.map((row) => row.taskId!) : undefined, () => `every job submitted to the service (states: ${states})`);
  }, 30_000);
}

describe('30 results finishing together in one channel', () => {
  let h: Harness;
  beforeAll(async () => {
    // Discord's 5 messages per channel, in a window of 2 s instead of its 5 s: the results still
    // wait several windows (longer than a job's lock) in the REST client's queue.
    h = await startHarness({
      webhooks: true,
      startingCredits: 1_000,
      sim: { concurrencyLimit: 40 },
      settings: { upstreamMaxInFlight: 40 },
      emulator: { rateLimits: { channelMessages: { limit: 5, windowMs: 2_000 } } },
    });
  });
  afterAll(async () => h?.close());

  it('are all delivered, each once and as the result, with few 429s', async () => {
    h.setSimForThisTest({ taskMs: 600_000 });
    const jobIds: string[] = [];
    for (let i = 0; i < 30; i += 1) {
      const { result } = await h.request({ kind: 'song', prompt: `rush hour ${i}` });
      jobIds.push((result as SubmitResult).jobId);
    }
    const taskIds = await submittedTaskIds(h, jobIds);
    // Their interaction tokens are past 15 minutes: every result goes to the channel.
    await h.db.db.update(jobs).set({ interactionAt: new Date(Date.now() - 20 * 60_000) }).where(inArray(jobs.id, jobIds));

    const from = h.emulator.requests.at(-1)?.seq ?? 0;
    for (const taskId of taskIds) expect(h.sim.completeTask(taskId)).toBe(true);
    for (const jobId of jobIds) await settled(h, jobId);

    // The channel's own messages, not the interactions' replies (which the old tokens no longer reach).
    const messages = h.emulator.channelMessages(h.channelId).filter((m) => m.interactionId === undefined);
    for (const jobId of jobIds) {
      const ofJob = messages.filter((m: EmulatorMessage) => m.embeds[0]?.footer?.text === `Job ${jobId}`);
      expect(ofJob, `channel messages of job ${jobId}`).toHaveLength(1);
      const [message] = ofJob;
      expect(isResultOf(message, jobId)).toBe(true);
      expect(message!.content).toContain(`<@${h.userId}>`);
      expect((await jobRow(h.db.db, jobId))?.messageId).toBe(message!.id);
    }

    const limited = h.emulator.rateLimited.filter((hit) => hit.requestSeq > from && !hit.scripted);
    const posts = h.emulator.requests.filter((r: RecordedRequest) => r.seq > from && r.method === 'POST' && r.path === `/channels/${h.channelId}/messages`);
    const counts = new Map<string, number>();
    for (const hit of limited) counts.set(`${hit.method} ${hit.route}`, (counts.get(`${hit.method} ${hit.route}`) ?? 0) + 1);
    const byRoute = [...counts].map(([route, n]) => `${route}: ${n}`);
    const span = ((posts.at(-1)?.at ?? 0) - (posts[0]?.at ?? 0)) / 1000;
    console.log(
      `[figure] 30 results in one channel: ${posts.length} message posts over ${span.toFixed(1)} s, ` +
        `${limited.length} × 429 from the emulator${byRoute.length ? ` (${byRoute.join(', ')})` : ''}`,
    );
    expect(posts.filter((r) => r.status === 200)).toHaveLength(30);
    expect(limited.length).toBeLessThanOrEqual(3);
  }, 180_000);
});

describe('an interaction whose edit bucket is empty', () => {
  let h: Harness;
  beforeAll(async () => {
    // Three edits per 5 s to one interaction's messages: the accepted reply and the first
    // progress edits use them up, and the window outlasts the completion.
    h = await startHarness({ webhooks: false, emulator: { rateLimits: { interactionWebhook: { limit: 3, windowMs: 5_000 } } } });
  });
  afterAll(async () => h?.close());

  const progressEdits = async (outcome: 'shown' | 'dropped' | 'failed'): Promise<number> =>
    (await h.app.deps.metrics.progressEdits.get()).values.find((v) => v.labels.outcome === outcome)?.value ?? 0;

  it('drops progress edits, never the result, which comes last', async () => {
    h.setSimForThisTest({ taskMs: 600_000 });
    const { handle, result } = await h.request({ kind: 'song', prompt: 'crowded reply' });
    const { jobId } = result as SubmitResult;
    const [taskId] = await submittedTaskIds(h, [jobId]);
    const onToken = (r: RecordedRequest) => r.method === 'PATCH' && r.path.startsWith(`/webhooks/${h.emulator.applicationId}/${handle.token}/`);

    // The bucket ran dry, and the bot dropped a progress edit instead of queueing it.
    await vi.waitFor(async () => found(((await progressEdits('dropped')) > 0 ? true : undefined), 'a progress edit dropped'), 30_000);
    expect(h.sim.completeTask(taskId!)).toBe(true);
    await settled(h, jobId);

    const edits = h.emulator.requests.filter(onToken);
    const progress = edits.filter((r) => isProgress(r.body));
    const results = edits.filter((r) => isResultOf(r.body, jobId));
    console.log(
      `[figure] empty edit bucket: ${await progressEdits('dropped')} progress edit(s) dropped, ${progress.filter((r) => r.status === 429).length} of them after a 429; ` +
        `result edits answered ${results.map((r) => r.status).join(', ')}`,
    );
    // What Discord took of the progress is exactly what the bot counted as shown: a dropped edit never went out later.
    expect(progress.filter((r) => r.status === 200)).toHaveLength(await progressEdits('shown'));
    // The result was not dropped: it went through (after waiting for the bucket when it met a 429), and nothing came after it.
    expect(results.some((r) => r.status === 200)).toBe(true);
    const firstResult = results[0]!.seq;
    expect(progress.filter((r) => r.seq > firstResult)).toEqual([]);
    expect(edits.at(-1)?.status).toBe(200);
    expect(isResultOf(edits.at(-1)?.body, jobId)).toBe(true);
    expect(isResultOf(handle.original(), jobId)).toBe(true);
  }, 120_000);
});
