/**
 * Reports and the review queue: the Report button and message command on every result, one
 * review message per result in the server's review channel however many members report, the
 * moderators' Hide, Block and Dismiss on it (a voice hidden or deleted can no longer sing), the
 * requester's own Delete, `/moderation reports`, and the retention of what removed results said.
 */
import { randomUUID } from 'node:crypto';
import { eq } from 'drizzle-orm';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it, vi } from 'vitest';
import type { EmulatorMessage } from '@music-bot/discord-emulator';
import { jobs, resultReports, resultReviews, voicePersonas } from '../../../src/db/schema.js';
import { hideSong } from '../../../src/dashboard/data/library.js';
import { applyRetention } from '../../../src/pipeline/retention.js';
import { silentMp3 } from './fixtures.js';
import { auditsOf, buttonsOf, jobIdIn, privateAnswer, publicAnswer, startBot, type BotHarness } from './harness.js';

let h: BotHarness;
let g: BotHarness;

beforeAll(async () => {
  h = await startBot({ startingCredits: 500 });
});
afterAll(async () => h?.close());
beforeEach(() => {
  g = h.inNewGuild();
});
afterEach(() => expect(h.emulator.findings).toEqual([]));

/** A finished song of `userId`'s, and its posted result. */
async function song(userId: string, prompt: string): Promise<{ jobId: string; result: EmulatorMessage }> {
  const jobId = jobIdIn(await privateAnswer(g.run(userId, { name: 'song', options: { prompt } })));
  return { jobId, result: await g.delivered(jobId) };
}

/** The review channel: the guild's general channel, set as moderators do. */
async function setReviewChannel(): Promise<string> {
  const answer = await privateAnswer(g.run(g.members.manager, { name: 'settings', subcommand: 'safety', options: { 'review-channel': g.otherChannelId } }));
  expect(answer.ephemeral).toBe(true);
  return g.otherChannelId;
}

/** A member presses Report on the result and says why; resolves with the private answer. */
async function report(userId: string, result: EmulatorMessage, jobId: string, reason: string): Promise<EmulatorMessage> {
  const opened = g.emulator.clickButton({ messageId: result.id, customId: `report:${jobId}`, userId });
  await opened.waitForResponse();
  expect(opened.modal()?.custom_id).toBe(`report-modal:${jobId}`);
  return privateAnswer(g.emulator.submitModal({ interaction: opened, fields: { reason } }));
}

const reviews = (channelId: string) => g.emulator.channelMessages(channelId).filter((message) => message.embeds?.[0]?.title?.startsWith('Reported:'));

const audits = (action: string) => auditsOf(g, action);

const moderation = (userId: string, subcommand: 'unblock' | 'reports', options: Record<string, string> = {}) =>
  privateAnswer(g.run(userId, { name: 'moderation', subcommand, options }));

describe('reports', () => {
  it('puts Report and Delete on every result, and sends one review message however many members report, listing them all', async () => {
    const reviewChannel = await setReviewChannel();
    const { jobId, result } = await song(g.members.alice, 'a shanty about the harbour');
    expect(buttonsOf(result)).toEqual(expect.arrayContaining([`report:${jobId}`, `delete-result:${jobId}`]));

    expect((await report(g.members.bob, result, jobId, 'rude words in the lyrics')).content).toContain('your report is with this server’s moderators');
    await vi.waitFor(() => expect(reviews(reviewChannel)).toHaveLength(1));
    // Two more at once: the review message is edited, never posted again.
    const [owner, mod] = await Promise.all([
      report(g.members.owner, result, jobId, 'not for this server'),
      report(g.members.roleModerator, result, jobId, 'mocks a member'),
    ]);
    expect(owner.content).toContain('your report is with');
    expect(mod.content).toContain('your report is with');
    // The same member again: told so, privately, and nothing more is recorded.
    const again = await report(g.members.bob, result, jobId, 'still rude');
    expect(again).toMatchObject({ ephemeral: true, content: 'You have already reported this result.' });

    await vi.waitFor(() => expect(JSON.stringify(reviews(reviewChannel)[0]?.embeds)).toContain('3 reports'));
    const [review] = reviews(reviewChannel);
    expect(reviews(reviewChannel)).toHaveLength(1);
    const text = JSON.stringify(review!.embeds);
    for (const reason of ['rude words in the lyrics', 'not for this server', 'mocks a member']) expect(text).toContain(reason);
    expect(text).toContain(`<@${g.members.alice}>`);
    expect(text).toContain('a shanty about the harbour');
    expect(text).toContain(`https://discord.com/channels/${g.guild.id}/${g.channelId}/${result.id}`);
    expect(buttonsOf(review!)).toEqual([`review:${jobId}:hide`, `review:${jobId}:block`, `review:${jobId}:dismiss`]);
    expect(await g.db.db.select().from(resultReports).where(eq(resultReports.jobId, jobId))).toHaveLength(3);
    expect(await audits('result_reported')).toHaveLength(3);
  });

  it('records a report without a review channel, answers as usual, and lists it in /moderation reports for moderators only', async () => {
    const { jobId, result } = await song(g.members.alice, 'a waltz for the lighthouse');
    expect((await report(g.members.bob, result, jobId, 'spam')).content).toContain('your report is with');
    const [review] = await g.db.db.select().from(resultReviews).where(eq(resultReviews.jobId, jobId));
    expect(review).toMatchObject({ messageId: null, outcome: null });

    const listed = await moderation(g.members.manager, 'reports');
    expect(listed.content).toContain('1 open report:');
    expect(listed.content).toContain(`by <@${g.members.alice}>: 1 report`);
    expect(listed.content).toContain(`https://discord.com/channels/${g.guild.id}/${g.channelId}/${result.id}`);
    expect((await moderation(g.members.alice, 'reports')).content).toContain('Only moderators can do that');
  });

  it('reports through the Report message command on the bot’s result, and refuses it on another message', async () => {
    const reviewChannel = await setReviewChannel();
    const { jobId, result } = await song(g.members.alice, 'a lullaby for the night shift');
    const opened = g.emulator.runMessageCommand({ name: 'Report', messageId: result.id, userId: g.members.bob });
    await opened.waitForResponse();
    expect(opened.modal()?.custom_id).toBe(`report-modal:${jobId}`);
    expect((await privateAnswer(g.emulator.submitModal({ interaction: opened, fields: { reason: 'off topic' } }))).content).toContain('your report is with');
    await vi.waitFor(() => expect(reviews(reviewChannel)).toHaveLength(1));

    // The review message is the bot's too, but it is no result.
    const onReview = g.emulator.runMessageCommand({ name: 'Report', messageId: reviews(reviewChannel)[0]!.id, userId: g.members.bob });
    expect((await privateAnswer(onReview)).content).toBe('Only the bot’s results (songs, lyrics, videos, voices and files) can be reported this way.');
  });
});

/** A voice persona of `userId`'s with this name, its id, and its posted result. */
async function voice(userId: string, name: string): Promise<{ jobId: string; personaId: string; result: EmulatorMessage }> {
  const create = g.run(userId, { name: 'voice', subcommand: 'create', options: { name }, attachments: { audio: { filename: 'me.mp3', contentType: 'audio/mpeg', data: silentMp3(12) } } });
  const jobId = jobIdIn(await privateAnswer(create));
  const result = await g.delivered(jobId);
  const [persona] = await g.db.db.select({ id: voicePersonas.id }).from(voicePersonas).where(eq(voicePersonas.jobId, jobId));
  return { jobId, personaId: persona!.id, result };
}

describe('voices and files', () => {
  it('puts Report and Delete on a voice and on a downloaded file, and the Report message command takes them', async () => {
    const reviewChannel = await setReviewChannel();
    const made = await voice(g.members.alice, 'Gravel Voice');
    expect(buttonsOf(made.result)).toEqual(expect.arrayContaining([`report:${made.jobId}`, `delete-result:${made.jobId}`]));
    const source = await song(g.members.alice, 'a song to download');
    const fileJob = jobIdIn(await privateAnswer(g.emulator.clickButton({ messageId: source.result.id, customId: `download:${source.jobId}:mp3`, userId: g.members.alice })));
    const file = await g.delivered(fileJob);
    expect(buttonsOf(file)).toEqual(expect.arrayContaining([`report:${fileJob}`, `delete-result:${fileJob}`]));

    for (const [jobId, message] of [[made.jobId, made.result], [fileJob, file]] as const) {
      const opened = g.emulator.runMessageCommand({ name: 'Report', messageId: message.id, userId: g.members.bob });
      await opened.waitForResponse();
      expect(opened.modal()?.custom_id).toBe(`report-modal:${jobId}`);
      expect((await privateAnswer(g.emulator.submitModal({ interaction: opened, fields: { reason: 'a slur in it' } }))).content).toContain('your report is with');
    }
    await vi.waitFor(() => expect(reviews(reviewChannel)).toHaveLength(2));
    expect(reviews(reviewChannel).map((review) => review.embeds?.[0]?.title)).toContain('Reported: Gravel Voice');
  });

  it('Hide on a voice retires it: its result says so, it leaves /voice list, and /song can no longer sing with it; its maker’s Delete does the same', async () => {
    const reviewChannel = await setReviewChannel();
    const hidden = await voice(g.members.alice, 'Rasp Voice');
    const deleted = await voice(g.members.alice, 'Hum Voice');
    await report(g.members.bob, hidden.result, hidden.jobId, 'sounds like a member, mocking');
    await vi.waitFor(() => expect(reviews(reviewChannel)).toHaveLength(1));
    const answer = await privateAnswer(g.emulator.clickButton({ messageId: reviews(reviewChannel)[0]!.id, customId: `review:${hidden.jobId}:hide`, userId: g.members.manager }));
    expect(answer.content).toBe('Hidden: the voice is gone from `/voice list` and can no longer sing.');
    expect(g.emulator.message(hidden.result.id)?.embeds?.[0]?.description).toBe('This result was removed by a moderator.');

    const confirm = await privateAnswer(g.emulator.clickButton({ messageId: deleted.result.id, customId: `delete-result:${deleted.jobId}`, userId: g.members.alice }));
    await g.emulator.clickButton({ messageId: confirm.id, customId: `delete-confirm:${deleted.jobId}`, userId: g.members.alice }).waitForResponse();
    await vi.waitFor(() => expect(g.emulator.message(deleted.result.id)).toBeUndefined());

    const list = await privateAnswer(g.run(g.members.bob, { name: 'voice', subcommand: 'list' }));
    expect(list.content).toMatch(/^This server has no voice personas yet\./);
    const balance = await g.balance();
    for (const persona of [hidden.personaId, deleted.personaId]) {
      const refused = await privateAnswer(g.run(g.members.bob, { name: 'song', options: { prompt: 'sing it', voice: persona } }));
      expect(refused.content).toMatch(/^No voice of this server is called|^That is not one of this server’s voice personas/);
    }
    expect(await g.balance()).toBe(balance);

    // After MODERATION_RETENTION_DAYS the retired voices' names go, as a removed song's texts do; who made them and when stay.
    await applyRetention({ db: h.app.deps.db, logger: h.app.deps.logger, settings: { ...h.app.deps.settings, moderationRetentionDays: 90 }, now: () => new Date(Date.now() + 91 * 86_400_000) });
    const personas = await g.db.db.select().from(voicePersonas).where(eq(voicePersonas.guildId, g.guild.id));
    expect(personas.map(({ name, ownerId }) => ({ name, ownerId }))).toEqual([
      { name: '', ownerId: g.members.alice },
      { name: '', ownerId: g.members.alice },
    ]);
  });
});

describe('/moderation reports', () => {
  it('pages when more are open than one message holds: each page within Discord’s 2,000 characters, every report once, newest first', async () => {
    await setReviewChannel();
    // Thirteen open reviews of songs whose titles are as long as a line shows and all markdown, each escaped.
    const ids: string[] = [];
    for (let i = 0; i < 13; i += 1) {
      const id = randomUUID();
      ids.push(id);
      const reportedAt = new Date(Date.now() - i * 60_000);
      await g.db.db.insert(jobs).values({
        id,
        guildId: g.guild.id,
        channelId: g.channelId,
        userId: g.members.alice,
        kind: 'song',
        state: 'succeeded',
        request: { kind: 'song', prompt: 'p', title: `${String(i).padStart(2, '0')}${'*_'.repeat(40)}` },
        cost: 10,
        messageId: String(1_300_000_000_000_000_000n + BigInt(i)),
        completedAt: reportedAt,
      });
      await g.db.db.insert(resultReviews).values({ jobId: id, guildId: g.guild.id, reportedAt, createdAt: reportedAt });
      await g.db.db.insert(resultReports).values({ jobId: id, reporterId: g.members.bob, guildId: g.guild.id, reason: 'r', createdAt: reportedAt });
    }
    const listed = (message: EmulatorMessage) => ids.filter((id) => message.content?.includes(`/${g.channelId}/${String(1_300_000_000_000_000_000n + BigInt(ids.indexOf(id)))})`));

    let page = await moderation(g.members.manager, 'reports');
    const seen: string[] = [];
    const pages: string[][] = [];
    for (;;) {
      expect(page.content!.length).toBeLessThanOrEqual(2000);
      expect(page.content).toContain('13 open reports');
      pages.push(listed(page));
      seen.push(...listed(page));
      const [newer, older] = (page.components?.[0] && 'components' in page.components[0] ? page.components[0].components : []) as Array<{ custom_id: string; disabled?: boolean; label: string }>;
      expect([newer?.label, older?.label]).toEqual(['Newer', 'Older']);
      expect(newer?.disabled ?? false).toBe(pages.length === 1);
      if (older?.disabled) break;
      const clicked = g.emulator.clickButton({ messageId: page.id, customId: older!.custom_id, userId: g.members.manager });
      await clicked.waitForResponse();
      page = await vi.waitFor(() => {
        const edited = g.emulator.message(page.id)!;
        expect(listed(edited)).not.toEqual(pages.at(-1));
        return edited;
      });
    }
    expect(seen).toEqual(ids);
    expect(pages.length).toBeGreaterThan(1);
    expect(page.content).toContain(`Page ${pages.length} of ${pages.length}`);
  });
});

describe('the review message’s buttons', () => {
  it('Hide: moderators only; the result says it was removed and leaves /library, /play, autocomplete and remix', async () => {
    const reviewChannel = await setReviewChannel();
    const { jobId, result } = await song(g.members.alice, 'a march of the tin soldiers');
    await report(g.members.bob, result, jobId, 'offensive title');
    await vi.waitFor(() => expect(reviews(reviewChannel)).toHaveLength(1));
    const review = reviews(reviewChannel)[0]!;
    // A remix form opened before the song is hidden.
    const remixForm = g.emulator.clickButton({ messageId: result.id, customId: `remix:${jobId}`, userId: g.members.bob });
    await remixForm.waitForResponse();

    const refused = await privateAnswer(g.emulator.clickButton({ messageId: review.id, customId: `review:${jobId}:hide`, userId: g.members.bob }));
    expect(refused.content).toContain('Only moderators can do that');
    const hidden = await privateAnswer(g.emulator.clickButton({ messageId: review.id, customId: `review:${jobId}:hide`, userId: g.members.manager }));
    expect(hidden.content).toBe('Hidden: the result is gone from the library, `/play` and remixes.');

    const removed = g.emulator.message(result.id)!;
    expect(removed.embeds?.[0]?.description).toBe('This result was removed by a moderator.');
    expect(buttonsOf(removed)).toEqual([]);
    expect(JSON.stringify(removed)).not.toContain('tin soldiers');
    const edited = g.emulator.message(review.id)!;
    expect(edited.embeds?.[0]?.description).toContain(`Hidden by <@${g.members.manager}>`);
    expect(buttonsOf(edited)).toEqual([]);
    expect(await audits('report_hidden')).toMatchObject([{ actorId: g.members.manager, details: { jobId, requesterId: g.members.alice } }]);

    const library = await publicAnswer(g.run(g.members.bob, { name: 'library' }));
    expect(library.embeds?.[0]?.description).toBe('No songs here yet. `/song` makes the first one.');
    expect(await g.autocomplete(g.members.bob, { name: 'play', focused: { name: 'song', value: '' } })).toEqual([]);
    expect(await g.autocomplete(g.members.bob, { name: 'video', focused: { name: 'song', value: 'tin' } })).toEqual([]);
    expect((await privateAnswer(g.run(g.members.bob, { name: 'play', options: { song: jobId } }))).content).toBe('That is not a finished song of this server. Pick one from the list.');
    const balance = await g.balance();
    const remix = await privateAnswer(g.emulator.submitModal({ interaction: remixForm, fields: { style: 'sea shanty, again' } }));
    expect(remix.content).toBe('That song is no longer in this server’s library, so it can’t be remixed. `/song` makes a new one.');
    expect(await g.balance()).toBe(balance);
  });
});

describe('hiding from the dashboard', () => {
  it('hides a song no one reported through the same decision, the audit naming the dashboard; an open review says so, and a second hide changes nothing', async () => {
    const { jobId, result } = await song(g.members.alice, 'a waltz for the lighthouse keeper');
    expect(await hideSong(h.app.pipeline, { guildId: g.guild.id, jobId, actorId: g.members.manager })).toBe('hidden');
    await vi.waitFor(() => expect(g.emulator.message(result.id)?.embeds?.[0]?.description).toBe('This result was removed by a moderator.'));
    expect(await audits('report_hidden')).toMatchObject([{ actorId: g.members.manager, details: { jobId, requesterId: g.members.alice, source: 'dashboard' } }]);
    expect(await hideSong(h.app.pipeline, { guildId: g.guild.id, jobId, actorId: g.members.manager })).toBe('already');
    expect(await hideSong(h.app.pipeline, { guildId: g.guild.id, jobId: randomUUID(), actorId: g.members.manager })).toBe('not_found');
    expect(await audits('report_hidden')).toHaveLength(1);

    const reviewChannel = await setReviewChannel();
    const second = await song(g.members.alice, 'a reel for the ferry');
    await report(g.members.bob, second.result, second.jobId, 'too loud');
    await vi.waitFor(() => expect(reviews(reviewChannel)).toHaveLength(1));
    expect(await hideSong(h.app.pipeline, { guildId: g.guild.id, jobId: second.jobId, actorId: g.members.manager })).toBe('hidden');
    await vi.waitFor(() => expect(g.emulator.message(reviews(reviewChannel)[0]!.id)?.embeds?.[0]?.description).toContain(`Hidden by <@${g.members.manager}>`));
  });
});

describe('blocking from the review message', () => {
  it('blocks the requester for 30 days: their next /song and a button are refused at no cost, and unblock restores them', async () => {
    const reviewChannel = await setReviewChannel();
    const first = await song(g.members.alice, 'a reel for the fiddle');
    const second = await song(g.members.alice, 'a slow air');
    await report(g.members.bob, first.result, first.jobId, 'insulting');
    await vi.waitFor(() => expect(reviews(reviewChannel)).toHaveLength(1));
    const review = reviews(reviewChannel)[0]!;

    const blocked = await privateAnswer(g.emulator.clickButton({ messageId: review.id, customId: `review:${first.jobId}:block`, userId: g.members.manager }));
    const until = Math.floor((Date.now() + 30 * 86_400_000) / 1000);
    expect(blocked.content).toMatch(new RegExp(`^<@${g.members.alice}> can’t use the bot here until <t:(\\d+):f>`));
    expect(Number(/<t:(\d+):f>/.exec(blocked.content ?? '')?.[1])).toBeCloseTo(until, -2);
    const edited = g.emulator.message(review.id)!;
    expect(edited.embeds?.[0]?.description).toContain(`<@${g.members.alice}> blocked by <@${g.members.manager}>`);
    // Hide is still offered: the result itself is still there.
    expect(buttonsOf(edited)).toEqual([`review:${first.jobId}:hide`]);
    expect(await audits('report_blocked')).toHaveLength(1);
    expect(await audits('member_blocked')).toMatchObject([{ actorId: g.members.manager, details: { userId: g.members.alice } }]);

    const balance = await g.balance();
    const refusedSong = await privateAnswer(g.run(g.members.alice, { name: 'song', options: { prompt: 'one more' } }));
    expect(refusedSong.content).toContain('This server’s moderators have blocked you from using the bot until');
    const refusedButton = await privateAnswer(g.emulator.clickButton({ messageId: second.result.id, customId: `download:${second.jobId}:mp3`, userId: g.members.alice }));
    expect(refusedButton.content).toContain('This server’s moderators have blocked you from using the bot until');
    expect(await g.balance()).toBe(balance);

    expect((await moderation(g.members.manager, 'unblock', { member: g.members.alice })).content).toBe(`<@${g.members.alice}> can use the bot again.`);
    await g.delivered(jobIdIn(await privateAnswer(g.run(g.members.alice, { name: 'lyrics', options: { prompt: 'back again' } }))));
  });

  it('Dismiss closes the review and takes it off /moderation reports; a new report opens it again in the same message', async () => {
    const reviewChannel = await setReviewChannel();
    const { jobId, result } = await song(g.members.alice, 'a polka');
    await report(g.members.bob, result, jobId, 'too loud');
    await vi.waitFor(() => expect(reviews(reviewChannel)).toHaveLength(1));
    const review = reviews(reviewChannel)[0]!;
    const dismissed = await privateAnswer(g.emulator.clickButton({ messageId: review.id, customId: `review:${jobId}:dismiss`, userId: g.members.manager }));
    expect(dismissed.content).toBe('Dismissed. A new report opens it again.');
    expect(g.emulator.message(review.id)!.embeds?.[0]?.description).toContain(`Dismissed by <@${g.members.manager}>`);
    expect((await moderation(g.members.manager, 'reports')).content).toBe('No open reports.');
    expect(await audits('report_dismissed')).toHaveLength(1);

    await report(g.members.owner, result, jobId, 'really too loud');
    await vi.waitFor(() => expect(buttonsOf(g.emulator.message(review.id)!)).toHaveLength(3));
    expect(reviews(reviewChannel)).toHaveLength(1);
    expect((await moderation(g.members.manager, 'reports')).content).toContain('2 reports');
  });
});

describe('the requester’s Delete', () => {
  it('is the requester’s alone; after a confirmation the message goes and the song leaves the library, no credits back', async () => {
    const { jobId, result } = await song(g.members.alice, 'a song to take back');
    const other = await privateAnswer(g.emulator.clickButton({ messageId: result.id, customId: `delete-result:${jobId}`, userId: g.members.bob }));
    expect(other.content).toBe('Only the member who asked for this result can delete it.');

    const asked = g.emulator.clickButton({ messageId: result.id, customId: `delete-result:${jobId}`, userId: g.members.alice });
    const confirm = await privateAnswer(asked);
    expect(confirm.content).toBe('Delete this result? Its message goes and it leaves the library. The 10 credits it cost are not returned.');
    // Nothing happened yet.
    expect(g.emulator.message(result.id)).toBeDefined();
    const balance = await g.balance();

    const done = g.emulator.clickButton({ messageId: confirm.id, customId: `delete-confirm:${jobId}`, userId: g.members.alice });
    await done.waitForResponse();
    await vi.waitFor(() => expect(g.emulator.message(confirm.id)?.content).toBe('Deleted. The 10 credits it cost are not returned.'));
    await vi.waitFor(() => expect(g.emulator.message(result.id)).toBeUndefined());
    expect(await g.balance()).toBe(balance);
    const [row] = await g.db.db.select({ removal: jobs.removal, removedBy: jobs.removedBy }).from(jobs).where(eq(jobs.id, jobId));
    expect(row).toEqual({ removal: 'deleted', removedBy: g.members.alice });
    expect((await publicAnswer(g.run(g.members.bob, { name: 'library' }))).embeds?.[0]?.description).toBe('No songs here yet. `/song` makes the first one.');
    expect(await audits('result_deleted')).toMatchObject([{ actorId: g.members.alice, details: { jobId } }]);
  });
});

describe('retention', () => {
  it('clears the prompt, lyrics and titles of removed songs and the reasons of reports after MODERATION_RETENTION_DAYS, keeping who and when', async () => {
    const { jobId, result } = await song(g.members.alice, 'a secret prompt to forget');
    const kept = await song(g.members.alice, 'a prompt that stays');
    await report(g.members.bob, result, jobId, 'a reason to forget');
    await report(g.members.bob, kept.result, kept.jobId, 'a recent reason');
    const confirm = await privateAnswer(g.emulator.clickButton({ messageId: result.id, customId: `delete-result:${jobId}`, userId: g.members.alice }));
    await g.emulator.clickButton({ messageId: confirm.id, customId: `delete-confirm:${jobId}`, userId: g.members.alice }).waitForResponse();
    await vi.waitFor(async () => expect((await g.db.db.select({ at: jobs.removedAt }).from(jobs).where(eq(jobs.id, jobId)))[0]?.at).not.toBeNull());
    // The first report is as old as the removal; the other one comes ten days later.
    await g.db.db.update(resultReports).set({ createdAt: new Date(Date.now() + 10 * 86_400_000) }).where(eq(resultReports.jobId, kept.jobId));

    const deps = { db: h.app.deps.db, logger: h.app.deps.logger, settings: { ...h.app.deps.settings, moderationRetentionDays: 90 } };
    // A day short of the limit: nothing of the removed song is cleared yet.
    await applyRetention({ ...deps, now: () => new Date(Date.now() + 89 * 86_400_000) });
    const [before] = await g.db.db.select({ request: jobs.request }).from(jobs).where(eq(jobs.id, jobId));
    expect(before?.request.prompt).toBe('a secret prompt to forget');
    expect((await g.db.db.select().from(resultReports).where(eq(resultReports.jobId, jobId)))[0]?.reason).toBe('a reason to forget');

    const report91 = await applyRetention({ ...deps, now: () => new Date(Date.now() + 91 * 86_400_000) });
    expect(report91.removedTexts).toBeGreaterThanOrEqual(1);
    const [after] = await g.db.db.select().from(jobs).where(eq(jobs.id, jobId));
    expect(JSON.stringify([after?.request, after?.result])).not.toMatch(/secret prompt|Generated|lyrics/i);
    expect(after).toMatchObject({ userId: g.members.alice, removal: 'deleted', removedBy: g.members.alice, cost: 10 });
    const reports = await g.db.db.select().from(resultReports).where(eq(resultReports.reporterId, g.members.bob));
    expect(reports.find((row) => row.jobId === jobId)).toMatchObject({ reason: null, reporterId: g.members.bob });
    expect(reports.find((row) => row.jobId === kept.jobId)).toMatchObject({ reason: 'a recent reason' });
    // A song still shown keeps its texts however old.
    const [stays] = await g.db.db.select({ request: jobs.request }).from(jobs).where(eq(jobs.id, kept.jobId));
    expect(stays?.request.prompt).toBe('a prompt that stays');
  });
});
