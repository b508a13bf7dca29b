/**
 * `/help`: each command with this server's price, the balance, the member's own daily limit
 * and cooldown, and the moderators' commands for moderators only. Only the member sees it.
 */
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { privateAnswer, startBot, type BotHarness } from './harness.js';

let h: BotHarness;
let g: BotHarness;

beforeAll(async () => {
  h = await startBot({ startingCredits: 100 });
});
afterAll(async () => h?.close());
beforeEach(() => {
  g = h.inNewGuild();
});
afterEach(() => expect(h.emulator.findings).toEqual([]));

const help = (userId: string) => privateAnswer(g.run(userId, { name: 'help' }));

describe('/help', () => {
  it('shows a member the prices, the balance and no limits, and no moderators’ commands', async () => {
    const answer = await help(g.members.alice);
    expect(answer.ephemeral).toBe(true);
    expect(answer.content).toContain('**This server has 100 credits.**');
    expect(answer.content).toContain('You are a member here. You have no daily limit and no cooldown.');
    // The service's price list: a song 10, lyrics 1, a voice 4, a video 5, a download 2, an upload 2.
    for (const [command, cost] of [['song', 10], ['lyrics', 1], ['voice create', 4], ['video', 5], ['download', 2], ['upload', 2]] as const) {
      expect(answer.content).toMatch(new RegExp(`\`/${command}\` · ${cost} credits?: [A-Z][^(\n]*\\.\n`));
    }
    expect(answer.content).toContain('(`/song voice:`) costs 10 credits.');
    expect(answer.content).toContain('`/credits`:');
    expect(answer.content).not.toContain('**For moderators**');
    expect(answer.content).not.toContain('`/settings`');
  });

  it('shows the member’s own daily limit and the cooldown, which moderators do not have', async () => {
    await privateAnswer(g.run(g.members.manager, { name: 'settings', subcommand: 'cooldown', options: { seconds: 30 } }));
    await privateAnswer(g.run(g.members.manager, { name: 'credits-admin', subcommand: 'user-limit', options: { amount: 20 } }));
    await privateAnswer(g.run(g.members.manager, { name: 'credits-admin', subcommand: 'user-limit', options: { amount: 50, role: g.djRole.id } }));

    expect((await help(g.members.alice)).content).toContain(
      'You have a daily limit of 20 credits (0 used today; it resets at midnight UTC) and a cooldown of 30 s between requests.',
    );
    expect((await help(g.members.bob)).content).toContain('a daily limit of 50 credits');

    // Longer than Discord's 2,000 characters: the moderators' section follows in a second private message, whole.
    const handle = g.run(g.members.manager, { name: 'help' });
    const moderator = await privateAnswer(handle);
    expect(moderator.content).toContain('You are a moderator here: `/settings` and `/credits-admin` are yours.');
    expect(moderator.content).toContain('and no cooldown.');
    const rest = await handle.waitForFollowUp((message) => message.content.includes('**For moderators**'), 10_000);
    expect(rest.ephemeral).toBe(true);
    expect(rest.content).toContain('`/credits-admin`:');
    for (const message of [moderator, rest]) expect(message.content.length).toBeLessThanOrEqual(2000);
  });

  it('tells the bot’s owners what they are', async () => {
    const handle = g.run(g.members.owner, { name: 'help' });
    expect((await privateAnswer(handle)).content).toContain('You are one of the bot’s owners.');
    await handle.waitForFollowUp((message) => message.content.includes('**For moderators**'), 10_000);
  });
});
