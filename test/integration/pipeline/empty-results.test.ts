/**
 * A task the service reports SUCCESS without what its job's kind is for (a song without audio,
 * lyrics without text, a video or download without its link, a voice without its persona) is a
 * failure: refunded once, told to the member, and its body's shape logged once for the operator.
 */
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { checkAccount } from '../../../src/pipeline/account.js';
import { createLogger } from '../../../src/logger.js';
import type { GenerationRequest, SubmitResult } from '../../../src/pipeline/requests.js';
import { found } from '../../support/found.js';
import { startHarness, type Harness } from '../../support/pipeline-harness.js';
import { balanceOf, jobRow, ledgerOfJob, ledgerSum } from '../../support/ledger.js';

const EMPTY_SUCCESS_LOG = 'task reported success without its result; refunded as failed';

let h: Harness;
const lines: Array<Record<string, unknown>> = [];

beforeAll(async () => {
  const logger = createLogger({ level: 'warn' }, { write: (line: string) => void lines.push(JSON.parse(line) as Record<string, unknown>) });
  h = await startHarness({ webhooks: true, startingCredits: 200, sim: { taskMs: 600 }, logger });
});
afterAll(async () => {
  await h?.close();
});

const source = { clipId: '5d1f2a3b-4c5d-4e6f-8a9b-0c1d2e3f4a5b', sourceJobId: '0b8e7a52-3c2b-4d8e-9a0b-1c2d3e4f5a6b' };
const cases: Array<[string, GenerationRequest, string]> = [
  ['a song without an audio URL', { kind: 'song', prompt: 'an empty song' }, 'audio_url'],
  ['a persona song without an audio URL', { kind: 'persona_song', voiceId: '6f1f7a52-3c2b-4d8e-9a0b-1c2d3e4f5a6b', personaId: 'persona-empty', lyrics: 'nothing sung' }, 'audio_url'],
  ['lyrics without text', { kind: 'lyrics', prompt: 'empty words' }, 'text'],
  ['a video without its link', { kind: 'video', ...source }, 'video_url'],
  ['a download without its link', { kind: 'download', format: 'mp3', ...source }, 'download_url'],
  ['a voice without persona_id', { kind: 'voice', name: 'Hollow', audioUrl: 'https://files.example.com/hollow.mp3' }, 'persona_id'],
];

describe('a success with nothing in it', () => {
  it.each(cases)('%s: failed, refunded once, the member told, its shape logged once', async (_name, request, lacking) => {
    await checkAccount(h.app.deps, 'command');
    h.sim.injectFault({ kind: 'empty-success' });
    const { handle, result } = await h.request(request);
    const { jobId, cost } = result as SubmitResult;

    // The member reads that it failed and that the credits came back.
    const notice = await handle.waitForEdit((m) => JSON.stringify(m.embeds ?? []).includes('sent nothing back'), 15_000);
    expect(JSON.stringify(notice.embeds)).toMatch(/could not be made/);
    expect(JSON.stringify(notice.embeds)).toContain(`${cost} credit`);

    const job = await vi.waitFor(async () => {
      const row = await jobRow(h.db.db, jobId);
      return found(row && row.deliveryState !== 'pending' ? row : undefined);
    }, 15_000);
    expect(job).toMatchObject({ state: 'failed', error: { kind: 'empty_result', creditsReturned: cost } });
    // The webhook (a persona song takes none) and the backup polls have all run: nothing moves the credits again.
    if (request.kind !== 'persona_song') await h.sim.waitForWebhookAttempts(1, { taskId: job.upstreamTaskId!, timeoutMs: 15_000 });
    await expect.poll(() => h.queueEntriesOf(jobId), { timeout: 15_000 }).toEqual({});
    expect(await ledgerOfJob(h.db.db, jobId)).toEqual([
      { kind: 'reserve', amount: -cost, key: `job:${jobId}:debit` },
      { kind: 'refund', amount: cost, key: `job:${jobId}:credit` },
    ]);
    expect(await balanceOf(h.db.db, h.guildId)).toBe(await ledgerSum(h.db.db, h.guildId));

    // One line, naming the fields the body had, never their values.
    const logged = lines.filter((line) => line['msg'] === EMPTY_SUCCESS_LOG && line['jobId'] === jobId);
    expect(logged).toHaveLength(1);
    const shape = String(logged[0]!['shape']);
    expect(logged[0]).toMatchObject({ kind: request.kind, lacking: expect.stringContaining(lacking) });
    expect(shape).toMatch(/data: /);
    expect(shape).not.toContain(`${lacking}:`);
    expect(shape).not.toMatch(/https?:|persona-|success|SUCCESS|succeeded/);

    // The service charged for its success: the account check counts it as spent, without drift.
    expect(await checkAccount(h.app.deps, 'command')).toMatchObject({ spentSince: cost, drift: 0 });
  });
});
