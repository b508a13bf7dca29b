/**
 * Like and Reroll on every song, through the emulator and the real discord.js client: a like
 * per member, taken back by a second press, its count shown on the message with few edits; a
 * reroll made from the same inputs, charged once as `/song` for whoever presses it, one job for
 * a double click, linked to the first song of its line; neither on a hidden song.
 */
import { eq } from 'drizzle-orm';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { creditLedger, jobs, songLikes } from '../../../src/db/schema.js';
import type { EmulatorMessage } from '@music-bot/discord-emulator';
import { buttonsOf, jobIdIn, privateAnswer, startBot, type BotHarness } from './harness.js';

let h: BotHarness;

beforeAll(async () => {
  h = await startBot({ startingCredits: 500 });
});
afterAll(async () => h?.close());
afterEach(() => expect(h.emulator.findings).toEqual([]));

/** A guild with one song of alice's, delivered. */
async function guildWithSong(): Promise<{ g: BotHarness; song: string; message: EmulatorMessage }> {
  const g = h.inNewGuild();
  const ack = await privateAnswer(
    g.run(g.members.alice, { name: 'song', options: { prompt: 'sea shanty', title: 'Salt Wind', lyrics: 'heave ho the salt wind blows', model: 'ModelB-2.0' } }),
  );
  const song = jobIdIn(ack);
  return { g, song, message: await g.delivered(song) };
}

/** The Like button's label on a message, as the channel shows it now. */
function likeLabel(messageId: string): string | undefined {
  const message = h.emulator.message(messageId);
  for (const row of message?.components ?? []) {
    for (const component of 'components' in row ? row.components : []) {
      if ('custom_id' in component && component.custom_id.startsWith('like:') && 'label' in component) return String(component.label);
    }
  }
  return undefined;
}

async function hide(jobId: string): Promise<void> {
  await h.db.db.update(jobs).set({ removedAt: new Date(), removal: 'hidden', removedBy: 'a moderator' }).where(eq(jobs.id, jobId));
}

describe('Like', () => {
  it('counts one like per member, takes it back on a second press, and shows the count on the message', async () => {
    const { g, song, message } = await guildWithSong();
    expect(likeLabel(message.id)).toBe('Like · 0');
    const press = (userId: string) => privateAnswer(h.emulator.clickButton({ messageId: message.id, customId: `like:${song}`, userId }));

    const alice = await press(g.members.alice);
    expect(alice.ephemeral).toBe(true);
    expect(alice.content).toBe('You like **Salt Wind** (1 like now). Press Like again to take it back.');
    expect((await press(g.members.bob)).content).toContain('(2 likes now)');
    await expect.poll(() => likeLabel(message.id)).toBe('Like · 2');

    // Alice presses again: her like is taken back, bob's stays.
    expect((await press(g.members.alice)).content).toBe('You no longer like **Salt Wind** (1 like now).');
    await expect.poll(() => likeLabel(message.id)).toBe('Like · 1');
    const rows = await h.db.db.select().from(songLikes).where(eq(songLikes.jobId, song));
    expect(rows.map((row) => ({ userId: row.userId, liked: row.likedAt !== null })).sort((a, b) => a.userId.localeCompare(b.userId))).toEqual(
      [
        { userId: g.members.alice, liked: false },
        { userId: g.members.bob, liked: true },
      ].sort((a, b) => a.userId.localeCompare(b.userId)),
    );
    const [row] = await h.db.db.select({ likeCount: jobs.likeCount }).from(jobs).where(eq(jobs.id, song));
    expect(row?.likeCount).toBe(1);
    // Liking is free.
    expect(await h.db.db.select().from(creditLedger).where(eq(creditLedger.jobId, song))).toHaveLength(1);
  });

  it('shows many likes pressed together with fewer edits than likes', async () => {
    const { g, song, message } = await guildWithSong();
    const members = [g.members.alice, g.members.bob, g.members.manager, g.members.roleModerator, g.members.owner];
    const edits: string[] = [];
    const stop = h.emulator.onMessage((changed, change) => {
      if (change === 'update' && changed.id === message.id) edits.push(likeLabel(message.id) ?? '');
    });
    try {
      const answers = await Promise.all(members.map((userId) => privateAnswer(h.emulator.clickButton({ messageId: message.id, customId: `like:${song}`, userId }))));
      expect(answers.every((answer) => answer.content?.startsWith('You like **Salt Wind**'))).toBe(true);
      await expect.poll(() => likeLabel(message.id)).toBe('Like · 5');
    } finally {
      stop();
    }
    expect(edits.length).toBeGreaterThan(0);
    expect(edits.length).toBeLessThan(members.length);
  });

  it('writes the count in the language the message is in', async () => {
    const g = h.inNewGuild();
    const ack = await privateAnswer(g.run(g.members.alice, { name: 'song', options: { prompt: 'canción de cuna', title: 'Nana' }, locale: 'es-ES' }));
    const song = /`([0-9a-f-]{36})`/.exec(ack.content ?? '')![1]!;
    const message = await g.delivered(song);
    expect(likeLabel(message.id)).toBe('Me gusta · 0');
    const answer = await privateAnswer(h.emulator.clickButton({ messageId: message.id, customId: `like:${song}`, userId: g.members.bob }));
    expect(answer.content).toBe('You like **Nana** (1 like now). Press Like again to take it back.');
    await expect.poll(() => likeLabel(message.id)).toBe('Me gusta · 1');
  });

  it('refuses a hidden song, liking nothing', async () => {
    const { g, song, message } = await guildWithSong();
    await hide(song);
    const answer = await privateAnswer(h.emulator.clickButton({ messageId: message.id, customId: `like:${song}`, userId: g.members.bob }));
    expect(answer.content).toBe('This song can’t be liked: it was removed, or it isn’t one of this server’s songs.');
    expect(await h.db.db.select().from(songLikes).where(eq(songLikes.jobId, song))).toEqual([]);
  });
});

describe('Reroll', () => {
  async function ledgerOf(jobId: string) {
    const rows = await h.db.db.select().from(creditLedger).where(eq(creditLedger.jobId, jobId));
    return rows.map((row) => ({ kind: row.kind, amount: row.amount })).sort((a, b) => a.kind.localeCompare(b.kind));
  }
  /** What the service was asked to make by each create, without where to send its webhook. */
  const creates = () =>
    h.sim.requests
      .filter((r) => r.path === '/api/v1/producer/create')
      .map((r) => Object.fromEntries(Object.entries(r.body as Record<string, unknown>).filter(([key]) => !key.startsWith('webhook_'))));

  it('makes the song again from the same inputs, charged once as /song to whoever pressed it, linked to the song', async () => {
    const { g, song, message } = await guildWithSong();
    const asked = creates().at(-1);
    const before = await g.balance();
    const reroll = jobIdIn(await privateAnswer(h.emulator.clickButton({ messageId: message.id, customId: `reroll:${song}`, userId: g.members.bob })));
    expect(reroll).not.toBe(song);
    const result = await g.delivered(reroll);

    const fields = Object.fromEntries((result.embeds?.[0]?.fields ?? []).map((field) => [field.name, field.value]));
    expect(fields['Reroll of']).toBe(`Salt Wind (\`${song.slice(0, 8)}\`)`);
    expect(result.embeds?.[0]?.title).toBe('Salt Wind');
    expect(buttonsOf(result)).toContain(`reroll:${reroll}`);
    // The same inputs asked of the service.
    expect(asked).toMatchObject({ sound: 'sea shanty', mv: 'ModelB-2.0' });
    expect(creates().at(-1)).toEqual(asked);
    const [row] = await h.db.db.select().from(jobs).where(eq(jobs.id, reroll));
    expect(row).toMatchObject({ rerollOf: song, remixOf: null, userId: g.members.bob, kind: 'song', cost: 10 });
    expect(row?.request).toMatchObject({ prompt: 'sea shanty', title: 'Salt Wind', lyrics: 'heave ho the salt wind blows', model: 'ModelB-2.0' });
    // Exactly what the /song cost: the same balance change and the same ledger movements.
    expect(await g.balance()).toBe(before - 10);
    expect(await ledgerOf(reroll)).toEqual(await ledgerOf(song));

    // A reroll of the reroll links the first song.
    const again = jobIdIn(await privateAnswer(h.emulator.clickButton({ messageId: result.id, customId: `reroll:${reroll}`, userId: g.members.alice })));
    const second = await g.delivered(again);
    const secondFields = Object.fromEntries((second.embeds?.[0]?.fields ?? []).map((field) => [field.name, field.value]));
    expect(secondFields['Reroll of']).toBe(`Salt Wind (\`${song.slice(0, 8)}\`)`);
    const [secondRow] = await h.db.db.select({ rerollOf: jobs.rerollOf }).from(jobs).where(eq(jobs.id, again));
    expect(secondRow?.rerollOf).toBe(song);
  });

  it('makes one job of a double click, and says so to the second press', async () => {
    const { g, song, message } = await guildWithSong();
    const [balance, jobCount] = [await g.balance(), await g.jobCount()];
    const first = h.emulator.clickButton({ messageId: message.id, customId: `reroll:${song}`, userId: g.members.bob });
    const second = h.emulator.clickButton({ messageId: message.id, customId: `reroll:${song}`, userId: g.members.bob });
    const answers = await Promise.all([privateAnswer(first), privateAnswer(second)]);
    const accepted = answers.filter((answer) => /Job `/.test(answer.content ?? ''));
    const refused = answers.filter((answer) => answer.content === 'Your reroll of this song is already on its way.');
    expect([accepted.length, refused.length]).toEqual([1, 1]);
    await g.delivered(jobIdIn(accepted[0]!));
    expect(await g.jobCount()).toBe(jobCount + 1);
    expect(await g.balance()).toBe(balance - 10);
  });

  it('refuses a hidden song, charging nothing', async () => {
    const { g, song, message } = await guildWithSong();
    await hide(song);
    const [balance, jobCount] = [await g.balance(), await g.jobCount()];
    const answer = await privateAnswer(h.emulator.clickButton({ messageId: message.id, customId: `reroll:${song}`, userId: g.members.bob }));
    expect(answer.content).toBe('This song can’t be rerolled: it was removed, or it isn’t one of this server’s songs. `/song` makes a new one.');
    expect([await g.balance(), await g.jobCount()]).toEqual([balance, jobCount]);
  });
});
