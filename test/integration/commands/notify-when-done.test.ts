/**
 * "Tell me when it is done": a long job's requester gets a direct message linking the result,
 * where they asked (`/notify`) or their server said so (`/settings notify`); not for a short job,
 * not for a member who said no, and a DM Discord refuses costs the result nothing.
 */
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it, onTestFinished, vi } from 'vitest';
import type { EmulatorMessage } from '@music-bot/discord-emulator';
import { found } from '../../support/found.js';
import { jobIdIn, privateAnswer, startBot, type BotHarness } from './harness.js';

/** Longer than the harness's `notifyAfterMs` (5 s). */
const LONG = '[sim:task-ms=5500]';

let h: BotHarness;
let g: BotHarness;

beforeAll(async () => {
  h = await startBot();
});
afterAll(async () => h?.close());
beforeEach(() => {
  g = h.inNewGuild();
});
afterEach(() => expect(h.emulator.findings).toEqual([]));

/** The bot's DMs to `userId` about this test's guild (a user's DM channel is shared by every test). */
const dmsTo = (userId: string): EmulatorMessage[] =>
  g.emulator.channelMessages(g.emulator.dmChannel(userId).id).filter((message) => message.content.includes(`<#${g.channelId}>`));

/** Resolves once the bot decided about telling the job's requester, with the log line that says so. */
const decided = (jobId: string) =>
  vi.waitFor(() => found(g.logs.find((line) => line.jobId === jobId && (line.msg === 'requester told' || line.msg === 'requester not told')), 'the decision'), 20_000);

async function song(userId: string, prompt: string): Promise<{ jobId: string; result: EmulatorMessage }> {
  const jobId = jobIdIn(await privateAnswer(g.run(userId, { name: 'song', options: { prompt } })));
  return { jobId, result: await g.delivered(jobId, 30_000) };
}

describe('notify when done', () => {
  it('tells a member who asked, by DM with a link to the result, once; not for a short job', async () => {
    const asked = await privateAnswer(g.run(g.members.alice, { name: 'notify', options: { 'when-done': 'on' } }));
    expect(asked.content).toBe('You will get a direct message when a job of yours that takes longer than 60 seconds ends.');

    const long = await song(g.members.alice, `a slow waltz ${LONG}`);
    expect((await decided(long.jobId)).msg).toBe('requester told');
    const [dm, ...more] = dmsTo(g.members.alice);
    expect(more).toEqual([]);
    expect(dm?.content).toBe(`**A slow waltz** is done in <#${g.channelId}>: https://discord.com/channels/${g.guild.id}/${g.channelId}/${long.result.id}`);

    const short = await song(g.members.alice, 'a quick jig');
    expect(await decided(short.jobId)).toMatchObject({ msg: 'requester not told', reason: 'short' });
    expect(dmsTo(g.members.alice)).toHaveLength(1);
  });

  it('follows the server’s default, which a member may turn off for themselves', async () => {
    const set = await privateAnswer(g.run(g.members.manager, { name: 'settings', subcommand: 'notify', options: { 'when-done': true } }));
    expect(set.content).toContain('Direct message when a long job ends: on, unless a member turned it off with `/notify`');
    const off = await privateAnswer(g.run(g.members.alice, { name: 'notify', options: { 'when-done': 'off' } }));
    expect(off.content).toBe('You will not get direct messages when your jobs end.');
    const follows = await privateAnswer(g.run(g.members.bob, { name: 'notify', options: { 'when-done': 'server' } }));
    expect(follows.content).toContain('You follow the server');

    const [bobs, alices] = await Promise.all([song(g.members.bob, `a long hymn ${LONG}`), song(g.members.alice, `a long dirge ${LONG}`)]);
    expect((await decided(bobs.jobId)).msg).toBe('requester told');
    expect(await decided(alices.jobId)).toMatchObject({ msg: 'requester not told', reason: 'not asked' });
    expect(dmsTo(g.members.bob).map((message) => message.content)).toEqual([expect.stringContaining(`/${bobs.result.id}`)]);
    expect(dmsTo(g.members.alice)).toEqual([]);
  });

  it('keeps the result when Discord refuses the DM, and logs it', async () => {
    await privateAnswer(g.run(g.members.alice, { name: 'notify', options: { 'when-done': 'on' } }));
    g.emulator.closeDirectMessages(g.members.alice);
    onTestFinished(() => g.emulator.closeDirectMessages(g.members.alice, false));
    const long = await song(g.members.alice, `a closed door ${LONG}`);
    await vi.waitFor(() => found(g.logs.find((line) => line.jobId === long.jobId && line.msg === 'the requester takes no direct message'), 'the refusal'), 20_000);
    expect(dmsTo(g.members.alice)).toEqual([]);
    expect(g.emulator.message(long.result.id)?.embeds?.[0]?.title).toBe('A closed door');
  });
});
