/**
 * End to end: a song contest, with a contest's day shortened to seconds (CONTEST_DAY_SECONDS),
 * from its start to its results, through the real discord.js client and the emulator. Likes are
 * the votes, a member's like of their own entry is not one, an entry after the deadline is
 * refused, and the results are posted once, also when the bot was stopped over the deadline.
 */
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { PermissionFlagsBits } from 'discord-api-types/v10';
import type { EmulatorMessage, InteractionHandle } from '@music-bot/discord-emulator';
import { printBotLogsOnFailure, startE2E, type E2E } from './bot-process.js';

/** One contest day lasts this long: the contests below run for a day. */
const DAY_SECONDS = 12;

let bot: E2E;
printBotLogsOnFailure(() => bot);

beforeAll(async () => {
  bot = await startE2E({ webhooks: true, startingCredits: 500, env: { CONTEST_DAY_SECONDS: String(DAY_SECONDS) } });
}, 60_000);
afterAll(async () => bot?.close());
// Every REST call the bot made fits Discord's published API description.
afterEach(() => expect(bot.emulator.findings).toEqual([]));

async function answerText(handle: InteractionHandle): Promise<string> {
  const response = await handle.waitForResponse();
  const data = response.data as { content?: string } | undefined;
  if (data?.content) return data.content;
  const followUp = await handle.waitForFollowUp((m) => Boolean(m.content), 15_000);
  return followUp.content ?? '';
}

function customIds(message: EmulatorMessage): string[] {
  return (message.components ?? []).flatMap((row) => ('components' in row ? row.components.flatMap((c) => ('custom_id' in c && c.custom_id ? [c.custom_id] : [])) : []));
}

/** The channel's messages whose embed has this title. */
const titled = (title: string) => bot.emulator.channelMessages(bot.channelId).filter((m) => m.embeds?.[0]?.title === title);

async function song(userId: string, title: string): Promise<{ jobId: string; message: EmulatorMessage }> {
  const handle = bot.run(userId, { name: 'song', options: { prompt: `a song called ${title}`, title } });
  const jobId = await bot.jobIdOf(handle);
  return { jobId, message: await bot.result(handle, jobId, 30_000) };
}

/** The results message, once posted (the deadline comes within a contest day). */
async function waitForResults(title: string): Promise<EmulatorMessage> {
  await expect.poll(() => titled(title).length, { timeout: (DAY_SECONDS + 60) * 1000, interval: 250 }).toBe(1);
  return titled(title)[0]!;
}

describe('/contest', () => {
  it('runs from its start to its results: entries, likes as votes without self-votes, the winner’s role, a late entry refused', async () => {
    const guildId = bot.guild.id;
    const { members } = bot;
    const botRoleId = bot.guild.botRoleId;
    // The bot may manage roles, and the winner's role is below its own.
    bot.emulator.setRolePermissions(guildId, botRoleId, bot.emulator.memberPermissions(bot.channelId, bot.emulator.botUser.id) | PermissionFlagsBits.ManageRoles);
    const winnerRole = bot.emulator.createRole(guildId, { name: 'Contest winner', position: 1 });

    expect(await answerText(bot.run(members.alice, { name: 'contest', subcommand: 'start', options: { theme: 'Night drives', days: 1 } }))).toBe('Only moderators can do that: members with Manage Server or the server’s moderator role.');
    const start = bot.run(members.manager, { name: 'contest', subcommand: 'start', options: { theme: 'Night drives', days: 1, 'winner-role': winnerRole.id } });
    expect(await answerText(start)).toMatch(/^The contest \*\*Night drives\*\* has started, announced in <#\d+>\. It ends <t:\d+:F>/);
    const [announcement] = titled('🏆 Song contest: Night drives');
    expect(announcement?.embeds?.[0]?.description).toContain(`The winner gets <@&${winnerRole.id}>.`);
    // One at a time.
    expect(await answerText(bot.run(members.manager, { name: 'contest', subcommand: 'start', options: { theme: 'Another', days: 2 } }))).toMatch(/already running here: \*\*Night drives\*\*/);

    const [neon, lights, late] = await Promise.all([song(members.alice, 'Neon Mile'), song(members.bob, 'Tail Lights'), song(members.alice, 'Late Again')]);
    // Made during the contest: its requester may enter it from the result.
    expect(customIds(neon.message)).toContain(`contest-enter:${neon.jobId}`);
    const enterButton = (userId: string) => answerText(bot.emulator.clickButton({ messageId: neon.message.id, customId: `contest-enter:${neon.jobId}`, userId }));
    expect(await enterButton(members.bob)).toBe('Only your own songs from this server can enter, and not removed ones.');
    expect(await enterButton(members.alice)).toMatch(/^\*\*Neon Mile\*\* is in the contest \*\*Night drives\*\* \(your entry 1 of 3\)/);
    expect(await enterButton(members.alice)).toBe('**Neon Mile** is already in the contest **Night drives**.');
    // By command, with the song offered by autocomplete.
    const choices = await bot.emulator.autocomplete({ guildId, channelId: bot.channelId, userId: members.bob, name: 'contest', subcommand: 'enter', focused: { name: 'song', value: 'tail' } });
    expect(choices.map((choice) => choice.value)).toEqual([lights.jobId]);
    expect(await answerText(bot.run(members.bob, { name: 'contest', subcommand: 'enter', options: { song: lights.jobId } }))).toMatch(/^\*\*Tail Lights\*\* is in the contest/);

    // Votes: Alice's like of her own entry counts on the song but not in the contest.
    const like = async (message: EmulatorMessage, jobId: string, userId: string) => answerText(bot.emulator.clickButton({ messageId: message.id, customId: `like:${jobId}`, userId }));
    expect(await like(neon.message, neon.jobId, members.alice)).toMatch(/^You like/);
    expect(await like(neon.message, neon.jobId, members.bob)).toMatch(/^You like/);
    expect(await like(lights.message, lights.jobId, members.manager)).toMatch(/^You like/);
    expect(await like(lights.message, lights.jobId, members.owner)).toMatch(/^You like/);
    const { rows: counts } = await bot.db.pool.query<{ like_count: number }>('select like_count from jobs where id = any($1) order by like_count', [[neon.jobId, lights.jobId]]);
    expect(counts.map((row) => row.like_count)).toEqual([2, 2]);

    const status = await answerText(bot.run(members.owner, { name: 'contest', subcommand: 'status' }));
    expect(status).toContain('2 entries so far.');
    expect(status).toContain(`🥇 **Tail Lights** by <@${members.bob}> · 2 votes\n🥈 **Neon Mile** by <@${members.alice}> · 1 vote`);

    const results = await waitForResults('🏆 Results: Night drives');
    expect(results.content).toBe(`Congratulations, <@${members.bob}>!`);
    expect(results.embeds?.[0]?.description).toBe(
      [`🥇 **Tail Lights** by <@${members.bob}> · 2 votes`, `🥈 **Neon Mile** by <@${members.alice}> · 1 vote`, '2 songs were entered.', `<@${members.bob}> gets <@&${winnerRole.id}>.`].join('\n'),
    );
    expect(bot.emulator.member(guildId, members.bob)?.roles).toContain(winnerRole.id);

    // After the deadline: refused, and nothing stored.
    expect(await answerText(bot.run(members.alice, { name: 'contest', subcommand: 'enter', options: { song: late.jobId } }))).toMatch(/^The contest \*\*Night drives\*\* closed <t:\d+:R>: entries are no longer taken\.$/);
    const { rows: entries } = await bot.db.pool.query<{ job_id: string }>('select job_id from contest_entries order by entered_at');
    expect(entries.map((row) => row.job_id)).toEqual([neon.jobId, lights.jobId]);
  }, 180_000);

  it('says why the winner did not get a role the bot may not give', async () => {
    const highRole = bot.emulator.createRole(bot.guild.id, { name: 'Hall of fame' });
    const start = bot.run(bot.members.manager, { name: 'contest', subcommand: 'start', options: { theme: 'Short one', days: 1, 'winner-role': highRole.id } });
    expect(await answerText(start)).toMatch(/has started/);
    const made = await song(bot.members.alice, 'Quick Take');
    expect(await answerText(bot.run(bot.members.alice, { name: 'contest', subcommand: 'enter', options: { song: 'Quick Take' } }))).toMatch(/^\*\*Quick Take\*\* is in the contest/);
    expect(customIds(made.message)).toContain(`contest-enter:${made.jobId}`);
    // Ended early by a moderator: the results at once.
    expect(await answerText(bot.run(bot.members.manager, { name: 'contest', subcommand: 'end' }))).toMatch(/^The contest \*\*Short one\*\* has ended; its results are posted in <#\d+>\.$/);
    const results = await waitForResults('🏆 Results: Short one');
    expect(results.embeds?.[0]?.description).toContain(`The winner’s role <@&${highRole.id}> was not given: it is not below the bot’s highest role`);
    expect(bot.emulator.member(bot.guild.id, bot.members.alice)?.roles).not.toContain(highRole.id);
  }, 120_000);

  it('posts the results once when the bot was stopped over the deadline, and cancels without results', async () => {
    const start = bot.run(bot.members.manager, { name: 'contest', subcommand: 'start', options: { theme: 'Across a restart', days: 1 } });
    expect(await answerText(start)).toMatch(/has started/);
    const { rows } = await bot.db.pool.query<{ ends_at: Date }>("select ends_at from contests where theme = 'Across a restart'");
    const endsAt = rows[0]!.ends_at.getTime();
    await bot.stop();
    // Stopped until past the deadline (Postgres's clock is the bot's).
    await new Promise((resolve) => setTimeout(resolve, Math.max(0, endsAt - Date.now()) + 1_000));
    await bot.start();
    const results = await waitForResults('🏆 Results: Across a restart');
    expect(results.embeds?.[0]?.description).toBe('No songs were entered.');
    // The start's pass, the minute's pass and the delayed entry all ran: one post, one row that says so.
    const { rows: ended } = await bot.db.pool.query<{ state: string; results_message_id: string }>("select state, results_message_id from contests where theme = 'Across a restart'");
    expect(ended).toEqual([{ state: 'ended', results_message_id: results.id }]);
    // A later command settles after every pass of the start: still one results message.
    const cancelled = bot.run(bot.members.manager, { name: 'contest', subcommand: 'start', options: { theme: 'Called off', days: 3 } });
    expect(await answerText(cancelled)).toMatch(/has started/);
    expect(await answerText(bot.run(bot.members.manager, { name: 'contest', subcommand: 'end', options: { cancel: true } }))).toBe('The contest **Called off** was called off; no results are posted.');
    expect(titled('🏆 Results: Across a restart')).toHaveLength(1);
    expect(titled('🏆 Results: Called off')).toHaveLength(0);
    expect(await answerText(bot.run(bot.members.alice, { name: 'contest', subcommand: 'status' }))).toBe('No contest is running on this server. Moderators start one with `/contest start`.');
  }, 180_000);
});
