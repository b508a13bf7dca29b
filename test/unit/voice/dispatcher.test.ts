/**
 * The voice requests over the dispatcher's port, with a fake voice line, a fake lease and a
 * player store kept in memory: one guild's requests run one after another, another guild's do
 * not wait for them, and a request that reaches a guild whose lease another process holds
 * touches nothing. (A song that cannot be played and a lapsing lease are the host's: see
 * test/integration/voice/player-host.test.ts.)
 */
import { Collection, type Guild } from 'discord.js';
import { describe, expect, it } from 'vitest';
import { english } from '../../../src/i18n/index.js';
import { silentLogger } from '../../../src/logger.js';
import { handleRequest, type LivePlayer, type RequestParts } from '../../../src/voice/dispatcher.js';
import { GuildOrder } from '../../../src/voice/guild-order.js';
import type { PlayerAnswer, PlayerOp, Requester } from '../../../src/voice/player-requests.js';
import type { PlayerState, PlayerStore, QueueEntry } from '../../../src/voice/store.js';
import { FakeVoiceLine } from '../../support/fake-voice-line.js';
import { gate } from '../../support/gate.js';

const BOT = '900000000000000001';
const LISTENER = '900000000000000002';
const OTHER_LISTENER = '900000000000000003';

/** The player store's contract, in memory. */
class MemoryStore implements PlayerStore {
  readonly states = new Map<string, PlayerState>();
  readonly queues = new Map<string, QueueEntry[]>();
  readonly votes = new Map<string, Set<string>>();
  async activeGuilds() {
    return [...this.states.keys()];
  }
  async read(guildId: string) {
    return this.states.get(guildId);
  }
  async write(guildId: string, state: PlayerState) {
    this.states.set(guildId, state);
  }
  async moveTo(guildId: string, channelId: string) {
    const state = this.states.get(guildId);
    if (state) this.states.set(guildId, { ...state, voiceChannelId: channelId });
  }
  async clear(guildId: string) {
    this.states.delete(guildId);
    this.queues.delete(guildId);
    this.votes.delete(guildId);
  }
  async queue(guildId: string) {
    return [...(this.queues.get(guildId) ?? [])];
  }
  async queueLength(guildId: string) {
    return this.queues.get(guildId)?.length ?? 0;
  }
  async enqueue(guildId: string, ...entries: QueueEntry[]) {
    const queue = this.queues.get(guildId) ?? [];
    this.queues.set(guildId, queue);
    queue.push(...entries);
    return entries.length === 0 ? queue.length : queue.length - entries.length + 1;
  }
  async next(guildId: string) {
    return this.queues.get(guildId)?.shift();
  }
  async clearQueue(guildId: string) {
    this.queues.delete(guildId);
  }
  async replaceQueue(guildId: string, entries: readonly QueueEntry[]) {
    this.queues.set(guildId, [...entries]);
  }
  async removeFromQueue(guildId: string, jobId: string) {
    const queue = this.queues.get(guildId) ?? [];
    const kept = queue.filter((entry) => entry.jobId !== jobId);
    this.queues.set(guildId, kept);
    return queue.length - kept.length;
  }
  async vote(guildId: string, userId: string) {
    const votes = this.votes.get(guildId) ?? new Set<string>();
    this.votes.set(guildId, votes.add(userId));
    return votes.size;
  }
  async clearVotes(guildId: string) {
    this.votes.delete(guildId);
  }
}

/** A guild as the dispatcher reads it: one voice channel with the bot's permissions and the listeners in it (and the bot, with `botInside`). */
function fakeGuild(guildId: string, voiceChannelId: string, { listeners = [LISTENER, OTHER_LISTENER], botInside = false } = {}): Guild {
  const state = (id: string, bot: boolean) => [id, { id, channelId: voiceChannelId, member: { user: { bot } } }] as [string, { id: string; channelId: string; member: { user: { bot: boolean } } }];
  const voiceStates = new Collection([...listeners.map((id) => state(id, false)), ...(botInside ? [state(BOT, true)] : [])]);
  const channel = {
    id: voiceChannelId,
    userLimit: 0,
    members: new Collection<string, unknown>(),
    isVoiceBased: () => true,
    permissionsFor: () => ({ has: () => true }),
  };
  const client = { user: { id: BOT } };
  return { id: guildId, client, voiceStates: { cache: voiceStates }, channels: { cache: new Collection([[voiceChannelId, channel]]) }, members: { me: { id: BOT } } } as unknown as Guild;
}

/**
 * The host as the dispatcher sees it, over the store: joining opens a fake line, moving on plays
 * the queue's next entry, ending clears the guild. The lease is a set of the guilds another
 * process took; `gates` hold a guild's next settings read until opened.
 */
function fakeHost() {
  const store = new MemoryStore();
  const order = new GuildOrder();
  const players = new Map<string, LivePlayer>();
  const lines: FakeVoiceLine[] = [];
  const heldElsewhere = new Set<string>();
  const gates = new Map<string, Promise<void>>();
  const guilds = new Map<string, Guild>();
  /** The guilds whose channel the bot was taken out of with no player there. */
  const leftWithoutPlayer: string[] = [];
  const finish = async (guildId: string) => {
    players.get(guildId)?.line.leave();
    players.delete(guildId);
    await store.clear(guildId);
  };
  const parts: RequestParts = {
    store,
    ffmpeg: { found: true },
    logger: silentLogger,
    guild: (guildId) => (guilds.get(guildId) ?? guilds.set(guildId, fakeGuild(guildId, `${guildId}1`)).get(guildId))!,
    settings: async (guildId) => {
      await gates.get(guildId);
      return undefined;
    },
    radioRound: async () => [],
    serially: (guildId, work) => order.run(guildId, work),
    holds: async (guildId) => !heldElsewhere.has(guildId),
    live: (guildId) => players.get(guildId),
    connect: (guild, channel) => {
      const existing = players.get(guild.id);
      if (existing) return existing;
      const line = new FakeVoiceLine(channel.id);
      lines.push(line);
      const live: LivePlayer = { guildId: guild.id, line, advancing: false, stopped: false };
      players.set(guild.id, live);
      return live;
    },
    leaveChannel: (guild) => {
      leftWithoutPlayer.push(guild.id);
      return true;
    },
    advance: async (live) => {
      const state = await store.read(live.guildId);
      const next = await store.next(live.guildId);
      if (!state || !next) return finish(live.guildId);
      await store.write(live.guildId, { ...state, current: next });
      live.line.play(next.mediaUrl);
    },
    skip: async (live) => parts.advance(live),
    play: (live, entry, from) => void live.line.play(entry.mediaUrl, from),
    finish,
    showNowPlaying: async () => {},
    checkListeners: () => {},
  };
  /** Another process took the guild's lease: this one leaves in the guild's order, the state left as it is. */
  const lapse = (guildId: string) => {
    heldElsewhere.add(guildId);
    return order.run(guildId, async () => {
      players.get(guildId)?.line.leave();
      players.delete(guildId);
    });
  };
  const ask = (guildId: string, action: PlayerOp, userId = LISTENER, canManageGuild = false) =>
    handleRequest(parts, { guildId, requester: { ...requester(guildId, userId), canManageGuild }, action });
  return { store, lines, gates, guilds, leftWithoutPlayer, lapse, ask };
}

function requester(guildId: string, userId: string): Requester {
  return { userId, roleIds: [], canManageGuild: false, channelId: `${guildId}2`, parentChannelId: null, guildLocale: 'en-US' };
}

function song(n: number): QueueEntry {
  return { jobId: `job-${n}`, clipId: `clip-${n}`, title: `Song ${n}`, makerId: LISTENER, mediaUrl: `https://media.example/${n}.mp3`, durationSeconds: 60, requestedBy: LISTENER };
}

const text = (reply: PlayerAnswer) => reply.lines.map((line) => english.text(line)).join('\n');

describe('the voice request dispatcher', () => {
  it("runs one guild's requests in the order they came: the first plays, the second queues behind it", async () => {
    const host = fakeHost();
    const guildId = '800000000000000001';
    const [first, second] = await Promise.all([host.ask(guildId, { op: 'play', entry: song(1) }), host.ask(guildId, { op: 'play', entry: song(2) })]);
    expect(text(first)).toBe(`Now playing **Song 1** in <#${guildId}1>.`);
    expect(text(second)).toBe('Added **Song 2** to the queue, at position 1.');
    expect(host.lines).toHaveLength(1);
    expect(host.lines[0]!.played).toEqual([song(1).mediaUrl]);
    expect((await host.store.read(guildId))?.current?.jobId).toBe('job-1');
    expect(await host.store.queue(guildId)).toEqual([song(2)]);
  });

  it("answers another guild while one guild's request waits", async () => {
    const host = fakeHost();
    const [slow, fast] = ['800000000000000002', '800000000000000003'];
    const held = gate();
    host.gates.set(slow, held.promise);
    const slowPlay = host.ask(slow, { op: 'play', entry: song(1) });
    const slowQueue = host.ask(slow, { op: 'queue' });
    expect(text(await host.ask(fast, { op: 'play', entry: song(2) }))).toBe(`Now playing **Song 2** in <#${fast}1>.`);
    expect(await host.store.read(slow)).toBeUndefined();
    held.open();
    expect(text(await slowPlay)).toBe(`Now playing **Song 1** in <#${slow}1>.`);
    expect(text(await slowQueue)).toMatch(/^\*\*Now playing:\*\* Song 1 /);
  });

  it('touches nothing for a guild whose lease another process took, however long the request waited', async () => {
    const host = fakeHost();
    const guildId = '800000000000000004';
    await host.ask(guildId, { op: 'play', entry: song(1) });
    await host.ask(guildId, { op: 'play', entry: song(2) });
    const lapsed = host.lapse(guildId);
    const play = host.ask(guildId, { op: 'play', entry: song(3) });
    const stop = host.ask(guildId, { op: 'stop' }, OTHER_LISTENER);
    await lapsed;
    expect(host.lines[0]!.left).toBe(true);
    expect(text(await play)).toBe('The player is not reachable right now. Try again in a moment.');
    expect(text(await stop)).toBe('The player is not reachable right now. Try again in a moment.');
    // What plays is the other process's: neither the song, the queue nor the channel changed here.
    expect((await host.store.read(guildId))?.current?.jobId).toBe('job-1');
    expect(await host.store.queue(guildId)).toEqual([song(2)]);
    expect(host.lines).toHaveLength(1);
  });

  it('skips at once for who asked for the song, and counts a vote from another listener', async () => {
    const host = fakeHost();
    const guildId = '800000000000000005';
    await host.ask(guildId, { op: 'play', entry: song(1) });
    await host.ask(guildId, { op: 'play', entry: song(2) });
    await host.ask(guildId, { op: 'play', entry: song(3) });
    expect(text(await host.ask(guildId, { op: 'skip' }))).toBe(`Skipped **Song 1** (<@${LISTENER}>).`);
    expect(host.lines[0]!.played).toEqual([song(1).mediaUrl, song(2).mediaUrl]);
    // Song 2 was asked for by LISTENER: the other listener's skip is one vote of two.
    expect(text(await host.ask(guildId, { op: 'skip' }, OTHER_LISTENER))).toBe('Your vote to skip is counted: 1 of 2 needed.');
    expect((await host.store.read(guildId))?.current?.jobId).toBe('job-2');
  });

  it('refuses a stop from a listener who does not control the player while another listens', async () => {
    const host = fakeHost();
    const guildId = '800000000000000006';
    await host.ask(guildId, { op: 'play', entry: song(1) });
    expect(text(await host.ask(guildId, { op: 'stop' }, OTHER_LISTENER))).toBe('Only moderators and the DJ role may stop the player (or someone listening alone).');
    expect(host.lines[0]!.left).toBe(false);
    expect((await host.store.read(guildId))?.current?.jobId).toBe('job-1');
  });

  it('takes the bot out of a channel the gateway has it in with no player, under the rule of stop', async () => {
    const host = fakeHost();
    const [shared, alone, empty] = ['800000000000000007', '800000000000000008', '800000000000000009'];
    host.guilds.set(shared, fakeGuild(shared, `${shared}1`, { botInside: true }));
    host.guilds.set(alone, fakeGuild(alone, `${alone}1`, { botInside: true, listeners: [OTHER_LISTENER] }));
    expect(text(await host.ask(shared, { op: 'stop' }, OTHER_LISTENER))).toBe('Only moderators and the DJ role may stop the player (or someone listening alone).');
    expect(text(await host.ask(alone, { op: 'stop' }, OTHER_LISTENER))).toBe('Stopped. The queue is cleared and I left the channel.');
    // Where the bot is in no channel, nothing plays and nothing is left.
    expect(text(await host.ask(empty, { op: 'stop' }, OTHER_LISTENER))).toMatch(/^Nothing is playing right now/);
    expect(host.leftWithoutPlayer).toEqual([alone]);
    expect(host.lines).toEqual([]);
  });

  it('changes the volume where the song is, and refuses it to a listener who does not control the player while another listens', async () => {
    const host = fakeHost();
    const guildId = '800000000000000010';
    await host.ask(guildId, { op: 'play', entry: song(1) });
    host.lines[0]!.positionMs = 12_500;
    expect(text(await host.ask(guildId, { op: 'volume', level: 50 }, OTHER_LISTENER))).toBe('Only moderators and the DJ role may do that (or someone listening alone).');
    expect(host.lines[0]!.starts).toHaveLength(1);
    expect(text(await host.ask(guildId, { op: 'volume', level: 50 }, OTHER_LISTENER, true))).toBe(`Volume: 50% (<@${OTHER_LISTENER}>).`);
    // The same song, started again where it was, at the new volume; the state keeps it for the next songs and a restart.
    expect(host.lines[0]!.played).toEqual([song(1).mediaUrl, song(1).mediaUrl]);
    expect(host.lines[0]!.starts[1]).toEqual({ startMs: 12_500, volume: 50 });
    expect((await host.store.read(guildId))?.volume).toBe(50);
    expect(text(await host.ask(guildId, { op: 'volume', level: 201 }, OTHER_LISTENER, true))).toBe('The volume goes from 0 to 200 percent.');
  });

  it('seeks for the song’s requester, not for another listener, and not past the song’s end', async () => {
    const host = fakeHost();
    const guildId = '800000000000000011';
    await host.ask(guildId, { op: 'play', entry: song(1) });
    await host.ask(guildId, { op: 'pause' });
    expect(text(await host.ask(guildId, { op: 'seek', seconds: 30 }, OTHER_LISTENER))).toBe('Only whoever asked for this song, the DJ role or a moderator may jump within it.');
    expect(text(await host.ask(guildId, { op: 'seek', seconds: 60 }))).toBe('That is past the end of the song (it is 1:00 long).');
    expect(text(await host.ask(guildId, { op: 'seek', seconds: 30 }))).toBe(`Jumped to 0:30 in **Song 1** (<@${LISTENER}>).`);
    expect(host.lines[0]!.starts.at(-1)).toEqual({ startMs: 30_000, volume: 100 });
    // It was paused: it stays paused where it now is.
    expect(host.lines[0]!.paused).toBe(true);
  });

  it('loops, shuffles, removes, moves and clears the queue under the DJ rules', async () => {
    const host = fakeHost();
    const guildId = '800000000000000012';
    await host.ask(guildId, { op: 'play', entry: song(1) });
    for (const n of [2, 3, 4]) await host.ask(guildId, { op: 'play', entry: { ...song(n), requestedBy: n === 3 ? OTHER_LISTENER : LISTENER } });
    const titles = async () => (await host.store.queue(guildId)).map((entry) => entry.title);

    for (const action of [{ op: 'loop', mode: 'song' }, { op: 'shuffle' }, { op: 'move', from: 1, to: 3 }, { op: 'clear' }, { op: 'remove', position: 1 }] as const) {
      expect(text(await host.ask(guildId, action, OTHER_LISTENER)), action.op).toMatch(/^Only /);
    }
    expect(await titles()).toEqual(['Song 2', 'Song 3', 'Song 4']);
    expect((await host.store.read(guildId))?.loop).toBeUndefined();

    // Whoever asked for a queued song may take it out.
    expect(text(await host.ask(guildId, { op: 'remove', position: 2 }, OTHER_LISTENER))).toBe(`Took **Song 3** (position 2) out of the queue (<@${OTHER_LISTENER}>).`);
    expect(text(await host.ask(guildId, { op: 'loop', mode: 'queue' }, OTHER_LISTENER, true))).toBe(`Looping the queue: each song goes back to its end once played (<@${OTHER_LISTENER}>).`);
    expect((await host.store.read(guildId))?.loop).toBe('queue');
    expect(text(await host.ask(guildId, { op: 'move', from: 2, to: 1 }, OTHER_LISTENER, true))).toBe(`Moved **Song 4** to position 1 (<@${OTHER_LISTENER}>).`);
    expect(await titles()).toEqual(['Song 4', 'Song 2']);
    expect(text(await host.ask(guildId, { op: 'move', from: 3, to: 1 }, OTHER_LISTENER, true))).toBe('The queue has no such place: it holds 2 songs, numbered from 1 as `/queue` shows them.');
    expect(text(await host.ask(guildId, { op: 'shuffle' }, OTHER_LISTENER, true))).toBe(`Shuffled the queue (2 songs) (<@${OTHER_LISTENER}>).`);
    expect((await titles()).sort()).toEqual(['Song 2', 'Song 4']);
    expect(text(await host.ask(guildId, { op: 'clear' }, OTHER_LISTENER, true))).toBe(`Cleared the queue (2 songs); the song playing plays on (<@${OTHER_LISTENER}>).`);
    expect(await titles()).toEqual([]);
    expect((await host.store.read(guildId))?.current?.jobId).toBe('job-1');
    expect(text(await host.ask(guildId, { op: 'shuffle' }, OTHER_LISTENER, true))).toBe('There is nothing to shuffle: fewer than two songs are queued.');
  });

  it('lets a member listening alone use every control, and says when nothing plays', async () => {
    const host = fakeHost();
    const guildId = '800000000000000013';
    expect(text(await host.ask(guildId, { op: 'volume', level: 80 }))).toMatch(/^Nothing is playing right now/);
    host.guilds.set(guildId, fakeGuild(guildId, `${guildId}1`, { listeners: [OTHER_LISTENER] }));
    await host.ask(guildId, { op: 'play', entry: song(1) }, OTHER_LISTENER);
    await host.ask(guildId, { op: 'play', entry: song(2) }, OTHER_LISTENER);
    expect(text(await host.ask(guildId, { op: 'volume', level: 80 }, OTHER_LISTENER))).toBe(`Volume: 80% (<@${OTHER_LISTENER}>).`);
    expect(text(await host.ask(guildId, { op: 'loop', mode: 'song' }, OTHER_LISTENER))).toMatch(/^Looping this song/);
    expect(text(await host.ask(guildId, { op: 'clear' }, OTHER_LISTENER))).toMatch(/^Cleared the queue \(1 song\)/);
  });
});
