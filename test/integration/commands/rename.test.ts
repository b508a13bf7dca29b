/**
 * `/jobs rename`: a member gives one of their own songs a new title, checked as a request's words
 * are; the title is the song's (the library, the player and autocomplete read it) and the posted result's, and the change is in the audit log.
 */
import { and, eq } from 'drizzle-orm';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it, vi } from 'vitest';
import { auditLog, jobs } from '../../../src/db/schema.js';
import { found } from '../../support/found.js';
import { jobIdIn, privateAnswer, startBot, type BotHarness } from './harness.js';

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

async function song(prompt: string, title: string): Promise<{ jobId: string; messageId: string }> {
  const jobId = jobIdIn(await privateAnswer(g.run(g.members.alice, { name: 'song', options: { prompt, title } })));
  return { jobId, messageId: (await g.delivered(jobId)).id };
}

const rename = (userId: string, id: string, title: string) => privateAnswer(g.run(userId, { name: 'jobs', subcommand: 'rename', options: { id, title } }));

describe('/jobs rename', () => {
  it('renames the member’s own song everywhere it is named, and logs it', async () => {
    const { jobId, messageId } = await song('a slow waltz', 'Working Title');
    const answer = await rename(g.members.alice, jobId, '  Midnight Waltz  ');
    expect(answer.content).toBe('Renamed: **Working Title** is now **Midnight Waltz**.');
    await vi.waitFor(() => found(g.emulator.message(messageId)?.embeds?.[0]?.title === 'Midnight Waltz' || undefined, 'the result retitled'), 10_000);
    const [row] = await g.db.db.select().from(jobs).where(eq(jobs.id, jobId));
    expect(row?.request.title).toBe('Midnight Waltz');
    const logged = await g.db.db.select().from(auditLog).where(and(eq(auditLog.guildId, g.guild.id), eq(auditLog.action, 'result_renamed')));
    expect(logged.map((row) => row.details)).toEqual([{ jobId, before: 'Working Title', after: 'Midnight Waltz' }]);
  });

  it('refuses another member’s song, a blocked word and an empty title, and changes nothing', async () => {
    const { jobId } = await song('a jig', 'Kept');
    expect((await rename(g.members.bob, jobId, 'Mine now')).content).toContain('No song of yours on this server is called that');
    await privateAnswer(g.run(g.members.manager, { name: 'moderation', subcommandGroup: 'blocklist', subcommand: 'add', options: { words: 'thorn' } }));
    expect((await rename(g.members.alice, jobId, 'A Thorn Song')).content).toContain('This server does not allow');
    expect((await rename(g.members.alice, jobId, '   ')).content).toBe('The title is empty.');
    const [row] = await g.db.db.select().from(jobs).where(eq(jobs.id, jobId));
    expect(row?.request.title).toBe('Kept');
  });
});
