/**
 * The bot in threads and forum posts, each created after the bot connected: a public thread
 * (the bot hears of it by THREAD_CREATE), a private thread the bot was never added to (it
 * hears nothing; the interaction alone says where it runs) and a forum post. In each, a
 * request is answered in the thread, its result is posted there when the interaction token
 * has expired, and the thread counts as its parent channel for the allowed channels.
 */
import { ChannelType } from 'discord-api-types/v10';
import { eq } from 'drizzle-orm';
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { jobs } from '../../../src/db/schema.js';
import { changeSettings } from '../../../src/guilds/settings.js';
import type { EmulatorChannel } from '@music-bot/discord-emulator';
import { found } from '../../support/found.js';
import { jobIdIn, privateAnswer, startBot, type BotHarness } from './harness.js';

let h: BotHarness;
let forum: EmulatorChannel;
let otherForum: EmulatorChannel;

beforeAll(async () => {
  h = await startBot({ startingCredits: 200 });
  // The guild's account exists from its first use on.
  await privateAnswer(h.run(h.members.alice, { name: 'credits' }));
  // Made while the bot is connected: it hears of them by CHANNEL_CREATE.
  forum = h.emulator.createChannel(h.guild.id, { name: 'weekly-themes', type: ChannelType.GuildForum });
  otherForum = h.emulator.createChannel(h.guild.id, { name: 'off-topic-forum', type: ChannelType.GuildForum });
  for (const channelId of [h.channelId, forum.id]) {
    await changeSettings(h.db.db, { guildId: h.guild.id, actorId: h.members.manager, change: { setting: 'allowedChannels', add: channelId } });
  }
});
afterAll(async () => h?.close());
afterEach(() => expect(h.emulator.findings).toEqual([]));

type Kind = 'public thread' | 'private thread' | 'forum post';

/** A new thread of `kind` in the allowed channel (or forum), or in the other one, started by alice. */
function newThread(kind: Kind, name: string, allowed = true): EmulatorChannel {
  const ownerId = h.members.alice;
  if (kind === 'forum post') {
    return h.emulator.createForumPost(allowed ? forum.id : otherForum.id, { name, message: `Post: ${name}`, authorId: ownerId }).thread;
  }
  const parentId = allowed ? h.channelId : h.otherChannelId;
  // The bot is not added to the private thread: Discord tells it nothing of it.
  return h.emulator.createThread(parentId, { name, private: kind === 'private thread', ownerId });
}

const song = (threadId: string, prompt: string) =>
  h.run(h.members.alice, { name: 'song', options: { prompt }, channelId: threadId });

describe.each<Kind>(['public thread', 'private thread', 'forum post'])('in a %s', (kind) => {
  it('answers in the thread and posts the result there', async () => {
    const thread = newThread(kind, `${kind} songs`);
    const handle = song(thread.id, `a ${kind} song`);
    const ack = await privateAnswer(handle);
    expect(ack.channel_id).toBe(thread.id);
    const jobId = jobIdIn(ack);

    const result = await h.delivered(jobId);
    expect(result.channel_id).toBe(thread.id);
    expect(result.ephemeral).toBe(false);
    expect(result.embeds?.[0]).toBeDefined();
    // Everything this request showed is in the thread; nothing of it is in the parent.
    const shown = h.emulator.channelMessages(thread.id, { includeEphemeral: true }).filter((m) => m.interactionId === handle.id);
    expect(shown.map((m) => m.id)).toContain(result.id);
    const parentId = thread.parentId ?? '';
    expect(h.emulator.channelMessages(parentId, { includeEphemeral: true }).filter((m) => m.interactionId === handle.id)).toEqual([]);
    const [row] = await h.db.db.select().from(jobs).where(eq(jobs.id, jobId));
    expect(row?.channelId).toBe(thread.id);
  });

  it('posts the result into the thread when the interaction token has expired', async () => {
    h.setSimForThisTest({ taskMs: 60_000 });
    const thread = newThread(kind, `${kind} late`);
    const jobId = jobIdIn(await privateAnswer(song(thread.id, `a slow ${kind} song`)));
    const row = await vi.waitFor(async () => {
      const [job] = await h.db.db.select().from(jobs).where(eq(jobs.id, jobId));
      return found(job?.upstreamTaskId ? job : undefined);
    }, 15_000);

    // Only Discord's clock moves: the edit is refused with 50027, and the bot falls back to the channel.
    h.emulator.clock.advance(16 * 60_000);
    h.sim.completeTask(row.upstreamTaskId!);

    const result = await h.delivered(jobId);
    expect(result.channel_id).toBe(thread.id);
    expect(result.interactionId).toBeUndefined();
    expect(result.content).toContain(`<@${h.members.alice}>`);
    const posted = h.emulator.requests.filter(
      (r) => r.method === 'POST' && r.path === `/channels/${thread.id}/messages` && r.status === 200 && JSON.stringify(r.body).includes(jobId),
    );
    expect(posted).toHaveLength(1);
    expect(h.emulator.requests.some((r) => r.method === 'POST' && r.path === `/channels/${thread.parentId}/messages` && JSON.stringify(r.body).includes(jobId))).toBe(false);
  });

  it('refuses a request in a thread of a channel that is not allowed, and leaves nothing there', async () => {
    const thread = newThread(kind, `${kind} elsewhere`, false);
    const before = await h.balance();
    const handle = song(thread.id, 'not here');
    const answer = await privateAnswer(handle);
    expect(answer.ephemeral).toBe(true);
    expect(answer.content).toContain('can’t be used in this channel');
    expect(answer.content).toContain(`<#${h.channelId}>`);
    expect(h.emulator.channelMessages(thread.id).filter((m) => m.interactionId === handle.id)).toEqual([]);
    expect(await h.balance()).toBe(before);
  });
});
