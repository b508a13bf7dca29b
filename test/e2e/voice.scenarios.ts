/**
 * Listening together, end to end: the bot as `npm start` runs it, members in the emulator's
 * voice channels, and the emulator hearing (decrypting and decoding) what the bot streams.
 * Each scenario checks what the members read and what the emulator heard.
 */
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { eq } from 'drizzle-orm';
import { Redis } from 'ioredis';
import { ChannelType, InteractionResponseType, PermissionFlagsBits } from 'discord-api-types/v10';
import { afterAll, afterEach, beforeAll, expect, it, vi } from 'vitest';
import type { EmulatorMessage, InteractionHandle, RunCommandInput } from '@music-bot/discord-emulator';
import { jobs } from '../../src/db/schema.js';
import { found } from '../support/found.js';
import { printBotLogsOnFailure, startE2E, type E2E, type E2EOptions } from './bot-process.js';

export interface VoiceSong {
  readonly id: string;
  readonly title: string;
  /** Seconds of audio in the stored file, decoded here with ffmpeg. */
  readonly seconds: number;
}

/** What a member reads in answer to a command or a button: the reply (or its edit), or a private follow-up. */
export async function answerOf(handle: InteractionHandle, timeoutMs = 10_000): Promise<{ text: string; ephemeral: boolean }> {
  const response = await handle.waitForResponse(timeoutMs);
  return vi.waitFor(() => {
    const followUp = handle.followUps.find((message) => Boolean(message.content));
    if (followUp) return { text: followUp.content ?? '', ephemeral: true };
    const immediate = (response.data as { content?: string } | undefined)?.content;
    if (response.type === InteractionResponseType.ChannelMessageWithSource && immediate) return { text: immediate, ephemeral: response.ephemeral };
    const original = response.type === InteractionResponseType.DeferredChannelMessageWithSource ? handle.original() : undefined;
    return found(original?.content ? { text: original.content, ephemeral: response.ephemeral } : undefined, `an answer to ${handle.id}`);
  }, timeoutMs);
}

/** Seconds of audio in a media file, as ffmpeg decodes it (asynchronously: the simulator serving it runs in this process). */
async function secondsOf(url: string): Promise<number> {
  const { stdout } = await promisify(execFile)('ffmpeg', ['-hide_banner', '-loglevel', 'error', '-i', url, '-f', 's16le', '-ac', '2', '-ar', '48000', '-'], {
    encoding: 'buffer',
    maxBuffer: 64 * 1024 * 1024,
  });
  return stdout.byteLength / (48_000 * 4);
}

type Place = Partial<Pick<RunCommandInput, 'guildId' | 'channelId'>>;

/**
 * The scenarios of this file, with interactions brought over the gateway or POSTed to
 * /interactions, the roles in one process or apart. Those where the way in matters (an answer,
 * a button, a command reaching the player) run on every way; a restart, where the player's
 * process is the gateway's, runs in one process and with the roles apart, not again over HTTP in
 * one process (the same process and code as over the gateway); the player's own behaviour runs
 * over the gateway in one process (voice.test.ts) alone.
 */
export function voiceScenarios(setup: Pick<E2EOptions, 'interactions' | 'splitRoles'>): void {
  let bot: E2E;
  let voice: string;
  const overGatewayAlone = setup.interactions !== 'http' && setup.splitRoles !== true;
  /** A scenario of the player's own, the same whichever way its commands came. */
  const playerOnly = (name: string, scenario: () => Promise<void>, timeoutMs?: number): void => {
    if (overGatewayAlone) it(name, scenario, timeoutMs);
  };
  /** A restart of the player's process: in one process, and with the gateway's process apart from the http role's. */
  const restartOfThePlayer = (name: string, scenario: () => Promise<void>, timeoutMs?: number): void => {
    if (overGatewayAlone || setup.splitRoles === true) it(name, scenario, timeoutMs);
  };
  /** Where the player may run in another process than the interaction's: in one process, and with the roles apart. */
  const acrossProcesses = restartOfThePlayer;
  const songs: VoiceSong[] = [];
  printBotLogsOnFailure(() => bot);

  /** A finished song of the guild, made as members make them. */
  async function makeSong(title: string, place: Place = {}): Promise<VoiceSong> {
    const handle = bot.emulator.runCommand({ guildId: bot.guild.id, channelId: bot.channelId, userId: bot.members.alice, name: 'song', options: { prompt: `a song called ${title}`, title }, ...place });
    const id = await bot.jobIdOf(handle);
    await bot.delivered(id, 30_000);
    const [row] = await bot.db.db.select().from(jobs).where(eq(jobs.id, id));
    const url = found(row?.result?.clips?.[0]?.audioUrl, 'the song’s audio address');
    return { id, title, seconds: await secondsOf(url) };
  }

  function play(userId: string, song: string, place: Place = {}): InteractionHandle {
    return bot.emulator.runCommand({ guildId: bot.guild.id, channelId: bot.channelId, userId, name: 'play', options: { song }, ...place });
  }

  /** The bot's now-playing messages in the channel, oldest first: those with the player's buttons, or closed with a last line. */
  function nowPlayingMessages(channelId = bot.channelId): EmulatorMessage[] {
    return bot.emulator
      .channelMessages(channelId)
      .filter(
        (message) =>
          message.author?.id === bot.emulator.botUser.id &&
          ((message.components ?? []).some((row) => JSON.stringify(row).includes('player:')) || /^(The queue has ended|Stopped by|Nobody was listening)/.test(message.content ?? '')),
      );
  }

  /** Waits for the bot to be in (or out of) the voice channel. */
  async function botInVoice(channelId: string, inside: boolean): Promise<void> {
    await expect.poll(() => bot.emulator.voiceMembers(channelId).includes(bot.emulator.botUser.id), { timeout: 15_000 }).toBe(inside);
  }

  /** Calls to the service's API; fetching a song's media is not one. */
  const serviceCalls = () => bot.sim.requests.filter((request) => request.path.startsWith('/api/')).length;

  beforeAll(async () => {
    // A killed process's hold on a guild's player lapses in 3 s rather than 15 (VOICE_LEASE_MS).
    bot = await startE2E({ ...setup, webhooks: false, env: { VOICE_IDLE_SECONDS: '3', VOICE_LEASE_MS: '3000' } });
    voice = bot.emulator.createChannel(bot.guild.id, { name: 'Lounge', type: ChannelType.GuildVoice }).id;
    for (const title of ['First Light', 'Second Wind', 'Third Rail']) songs.push(await makeSong(title));
  }, 120_000);
  afterAll(async () => bot?.close());
  // Every REST call and voice message of the bot fits Discord's published descriptions.
  afterEach(() => expect(bot.emulator.findings).toEqual([]));
  // The player's own story of a failed scenario: what it played, and the states it went through.
  afterEach(({ task }) => {
    if (task.result?.state !== 'fail') return;
    const lines = bot.output().split('\n').filter((line) => /voice|"command":"(play|pause|resume|skip|stop|queue|radio|volume|seek|loop|shuffle|remove|move|clear)"/.test(line));
    console.log(`the player around "${task.name}":\n${lines.slice(-30).join('\n')}`);
  });

  it('tells a member in no voice channel, privately', async () => {
    const answer = await answerOf(play(bot.members.bob, songs[0]!.id));
    expect(answer).toEqual({ ephemeral: true, text: 'Join a voice channel first, then ask again: I play where you listen.' });
    expect(bot.emulator.voiceMembers(voice)).toEqual([]);
  });

  it('plays the song into the member’s voice channel, whole, for free, and leaves when the queue ends', async () => {
    const [song] = songs;
    const balance = await bot.balance();
    const callsBefore = serviceCalls();
    bot.emulator.joinVoice(bot.members.alice, voice);
    bot.emulator.resetVoiceReception(bot.guild.id);

    const answer = await answerOf(play(bot.members.alice, song!.id));
    expect(answer).toEqual({ ephemeral: false, text: `Now playing **First Light** in <#${voice}>.` });
    await botInVoice(voice, true);
    // The card is a public message of its own in the channel, not a reply under the member's answer.
    const card = await vi.waitFor(() => found(nowPlayingMessages()[0], 'the now-playing card'), 15_000);
    expect([card.ephemeral, card.interactionId, card.interaction_metadata, card.message_reference]).toEqual([false, undefined, undefined, undefined]);
    const heard = await bot.emulator.waitForVoiceFrames(bot.guild.id, 25, 15_000);
    // End-to-end encrypted (DAVE), as Discord requires in server voice channels, and every frame opened and decoded.
    expect(heard).toMatchObject({ channelId: voice, connected: true, daveProtocolVersion: 1, undecodable: 0, droppedNoSpeak: 0 });

    // The queue ends with the song: the now-playing message says so, and the bot leaves.
    await vi.waitFor(() => found(nowPlayingMessages().find((m) => m.content?.startsWith('The queue has ended')), 'the end of the queue'), 20_000);
    await botInVoice(voice, false);
    const whole = bot.emulator.voiceReception(bot.guild.id);
    // The file's length, within 5% (the five silence frames that end a stream are not the song's).
    const played = whole.seconds - (whole.silentFrames >= 5 ? 0.1 : 0);
    expect(Math.abs(played - song!.seconds) / song!.seconds, JSON.stringify({ played, file: song!.seconds })).toBeLessThan(0.05);
    expect(await bot.balance()).toBe(balance);
    expect(serviceCalls()).toBe(callsBefore);
  });

  it('queues, shows the queue, pauses and resumes, counts a vote skip, and stops only for a moderator', async () => {
    const [first, second] = songs;
    const { alice, bob, owner, manager } = bot.members;
    for (const member of [alice, bob, owner]) bot.emulator.joinVoice(member, voice);

    expect((await answerOf(play(alice, first!.id))).text).toBe(`Now playing **First Light** in <#${voice}>.`);
    // Paused at once, so the short test songs stay while the queue is checked.
    expect((await answerOf(bot.run(alice, { name: 'pause' }))).text).toBe(`Paused (<@${alice}>).`);
    expect((await answerOf(play(bob, second!.id))).text).toBe('Added **Second Wind** to the queue, at position 1.');
    const queue = (await answerOf(bot.run(bob, { name: 'queue' }))).text.split('\n');
    expect(queue[0]).toMatch(new RegExp(`^\\*\\*Paused:\\*\\* First Light · by <@${alice}> · 0:0\\d / \\d:\\d\\d$`));
    expect(queue.slice(1)).toEqual(['**Up next:**', `1. Second Wind · by <@${alice}> · asked by <@${bob}>`]);
    const message = found(nowPlayingMessages().at(-1), 'the now-playing message');
    expect(message.embeds?.[0]?.title).toBe('⏸ First Light');

    // Bob did not ask for this song: his skip is a vote, 1 of the 2 that three listeners need.
    expect((await answerOf(bot.run(bob, { name: 'skip' }))).text).toBe('Your vote to skip is counted: 1 of 2 needed.');
    expect((await answerOf(bot.run(owner, { name: 'skip' }))).text).toBe('The vote passed: skipped **First Light**.');
    // The same message, edited: the next song, playing.
    await vi.waitFor(() => expect(bot.emulator.message(message.id)?.embeds?.[0]?.title).toBe('▶ Second Wind'), 10_000);

    // The requester pauses from the message's button; another member may not resume.
    const pause = bot.emulator.clickButton({ messageId: message.id, customId: 'player:pause', userId: bob });
    expect(await answerOf(pause)).toEqual({ ephemeral: true, text: `Paused (<@${bob}>).` });
    expect((await answerOf(bot.run(alice, { name: 'resume' }))).text).toBe('Only whoever asked for this song, the DJ role or a moderator may pause or resume it.');
    expect((await answerOf(bot.run(bob, { name: 'resume' }))).text).toBe(`Playing again (<@${bob}>).`);
    // Alice is one of three listeners and no moderator: she may not stop it.
    expect((await answerOf(bot.run(alice, { name: 'stop' }))).text).toBe('Only moderators and the DJ role may stop the player (or someone listening alone).');
    expect((await answerOf(bot.run(manager, { name: 'stop' }))).text).toBe('Stopped. The queue is cleared and I left the channel.');
    await botInVoice(voice, false);
    expect(bot.emulator.message(message.id)?.content).toBe(`Stopped by <@${manager}>.`);
    // Edited all along, never posted again.
    expect(nowPlayingMessages().filter((m) => m.id > message.id)).toEqual([]);
    for (const member of [bob, owner]) bot.emulator.leaveVoice(bot.guild.id, member);
  });

  it('lets the DJ role skip any song', async () => {
    const { alice, bob, manager } = bot.members;
    const saved = await answerOf(bot.run(manager, { name: 'settings', subcommand: 'dj-role', options: { role: bot.djRole.id } }));
    expect(saved.text).toContain(`DJ role: <@&${bot.djRole.id}>`);
    bot.emulator.joinVoice(alice, voice);
    await answerOf(play(alice, songs[0]!.id));
    await answerOf(bot.run(alice, { name: 'pause' }));
    expect((await answerOf(bot.run(bob, { name: 'skip' }))).text).toBe(`Skipped **First Light** (<@${bob}>).`);
    await botInVoice(voice, false);
  });

  playerOnly('changes the volume and jumps within a song, for the DJ role and the song’s requester only: the emulator hears both', async () => {
    const [first, second] = songs;
    const { alice, bob, owner, manager } = bot.members;
    await answerOf(bot.run(manager, { name: 'settings', subcommand: 'dj-role', options: { role: bot.djRole.id } }));
    for (const member of [alice, owner]) bot.emulator.joinVoice(member, voice);
    const djOnly = 'Only moderators and the DJ role may do that (or someone listening alone).';
    /** The median loudness heard since the last reset, and the seconds of sound (the silence frames that end a stream left out). */
    const heard = () => {
      const reception = bot.emulator.voiceReception(bot.guild.id);
      const sorted = [...reception.envelope].sort((a, b) => a - b);
      return { loudness: sorted[Math.floor(sorted.length / 2)] ?? 0, seconds: reception.seconds - reception.silentFrames * 0.02 };
    };

    // Seek: Alice asked for the song, Bob is the DJ; the owner, one of two listeners, neither.
    await answerOf(play(alice, second!.id));
    await answerOf(bot.run(alice, { name: 'pause' }));
    const message = found(nowPlayingMessages().at(-1), 'the now-playing message');
    expect((await answerOf(bot.run(owner, { name: 'seek', options: { to: '0:01' } }))).text).toBe('Only whoever asked for this song, the DJ role or a moderator may jump within it.');
    expect((await answerOf(bot.run(alice, { name: 'seek', options: { to: 'soon' } }))).text).toBe('I did not understand that time. Write it as m:ss (1:30) or in seconds (90).');
    expect((await answerOf(bot.run(alice, { name: 'seek', options: { to: '0:05' } }))).text).toBe('That is past the end of the song (it is 0:02 long).');
    bot.emulator.resetVoiceReception(bot.guild.id);
    expect((await answerOf(bot.run(alice, { name: 'seek', options: { to: '0:01' } }))).text).toBe(`Jumped to 0:01 in **Second Wind** (<@${alice}>).`);
    // The card shows where the song is now, still paused.
    await vi.waitFor(() => expect(bot.emulator.message(message.id)?.embeds?.[0]?.description).toMatch(/🔘▬* 0:01 \/ 0:02/), 10_000);
    expect(bot.emulator.message(message.id)?.embeds?.[0]?.title).toBe('⏸ Second Wind');
    await answerOf(bot.run(alice, { name: 'resume' }));
    await vi.waitFor(() => expect(bot.emulator.message(message.id)?.content).toBe('The queue has ended; I left the voice channel.'), 20_000);
    const sought = heard();
    // The second half of the song, not the whole of it.
    expect(sought.seconds, JSON.stringify({ sought, file: second!.seconds })).toBeGreaterThan(0.5);
    expect(sought.seconds, JSON.stringify({ sought, file: second!.seconds })).toBeLessThan(second!.seconds - 0.6);

    // Volume: the whole player's, so the DJ's (or a lone listener's), not the requester's.
    await answerOf(play(alice, first!.id));
    await answerOf(bot.run(alice, { name: 'pause' }));
    expect((await answerOf(bot.run(alice, { name: 'volume', options: { level: 50 } }))).text).toBe(djOnly);
    expect((await answerOf(bot.run(bob, { name: 'volume', options: { level: 50 } }))).text).toBe(`Volume: 50% (<@${bob}>).`);
    bot.emulator.resetVoiceReception(bot.guild.id);
    await answerOf(bot.run(alice, { name: 'resume' }));
    await botInVoice(voice, false);
    const quieter = heard();
    // Half the amplitude: about 0.5 of the loudness heard at 100% (Opus is lossy).
    expect(quieter.loudness / sought.loudness, JSON.stringify({ quieter, sought })).toBeGreaterThan(0.35);
    expect(quieter.loudness / sought.loudness, JSON.stringify({ quieter, sought })).toBeLessThan(0.65);
    expect(quieter.seconds).toBeGreaterThan(first!.seconds * 0.8);
    bot.emulator.leaveVoice(bot.guild.id, owner);
  });

  playerOnly('loops a song until the loop is turned off, for the DJ role only', async () => {
    const [, , third] = songs;
    const { alice, bob, owner, manager } = bot.members;
    await answerOf(bot.run(manager, { name: 'settings', subcommand: 'dj-role', options: { role: bot.djRole.id } }));
    for (const member of [alice, owner]) bot.emulator.joinVoice(member, voice);
    await answerOf(play(alice, third!.id));
    await answerOf(bot.run(alice, { name: 'pause' }));
    const message = found(nowPlayingMessages().at(-1), 'the now-playing message');
    expect((await answerOf(bot.run(alice, { name: 'loop', options: { mode: 'song' } }))).text).toBe('Only moderators and the DJ role may do that (or someone listening alone).');
    expect((await answerOf(bot.run(bob, { name: 'loop', options: { mode: 'song' } }))).text).toBe(`Looping this song until the loop is turned off or it is skipped (<@${bob}>).`);
    await vi.waitFor(() => expect(bot.emulator.message(message.id)?.embeds?.[0]?.description).toContain('Loop: this song'), 10_000);
    bot.emulator.resetVoiceReception(bot.guild.id);
    await answerOf(bot.run(alice, { name: 'resume' }));
    // Two and a half songs' worth of sound from a queue of one: it played again.
    await bot.emulator.waitForVoiceFrames(bot.guild.id, Math.ceil(third!.seconds * 2.5 * 50), 20_000);
    expect(bot.emulator.voiceMembers(voice)).toContain(bot.emulator.botUser.id);
    expect((await answerOf(bot.run(bob, { name: 'loop', options: { mode: 'off' } }))).text).toBe(`Loop off: the queue plays once (<@${bob}>).`);
    await vi.waitFor(() => expect(bot.emulator.message(message.id)?.content).toBe('The queue has ended; I left the voice channel.'), 20_000);
    bot.emulator.leaveVoice(bot.guild.id, owner);
  });

  acrossProcesses('shuffles, moves, removes and clears queued songs under the DJ rules', async () => {
    const [first, second, third] = songs;
    const { alice, bob, owner, manager } = bot.members;
    await answerOf(bot.run(manager, { name: 'settings', subcommand: 'dj-role', options: { role: bot.djRole.id } }));
    for (const member of [alice, owner]) bot.emulator.joinVoice(member, voice);
    await answerOf(play(alice, first!.id));
    await answerOf(bot.run(alice, { name: 'pause' }));
    for (const song of [second, third]) await answerOf(play(alice, song!.id));
    await answerOf(play(owner, first!.id));
    const queued = async () => (await answerOf(bot.run(alice, { name: 'queue' }))).text.split('\n').slice(2).map((line) => line.replace(/ · .*$/, ''));
    expect(await queued()).toEqual(['1. Second Wind', '2. Third Rail', '3. First Light']);

    const djOnly = 'Only moderators and the DJ role may do that (or someone listening alone).';
    expect((await answerOf(bot.run(owner, { name: 'shuffle' }))).text).toBe(djOnly);
    expect((await answerOf(bot.run(owner, { name: 'move', options: { from: 1, to: 2 } }))).text).toBe(djOnly);
    expect((await answerOf(bot.run(owner, { name: 'clear' }))).text).toBe(djOnly);
    expect((await answerOf(bot.run(owner, { name: 'remove', options: { position: 1 } }))).text).toBe('Only whoever asked for that song, the DJ role or a moderator may take it out of the queue.');
    expect(await queued()).toEqual(['1. Second Wind', '2. Third Rail', '3. First Light']);

    expect((await answerOf(bot.run(bob, { name: 'move', options: { from: 3, to: 1 } }))).text).toBe(`Moved **First Light** to position 1 (<@${bob}>).`);
    expect(await queued()).toEqual(['1. First Light', '2. Second Wind', '3. Third Rail']);
    // The owner asked for the song now first: the owner may take it out.
    expect((await answerOf(bot.run(owner, { name: 'remove', options: { position: 1 } }))).text).toBe(`Took **First Light** (position 1) out of the queue (<@${owner}>).`);
    expect((await answerOf(bot.run(bob, { name: 'remove', options: { position: 5 } }))).text).toBe('The queue has no such place: it holds 2 songs, numbered from 1 as `/queue` shows them.');
    expect((await answerOf(bot.run(bob, { name: 'shuffle' }))).text).toBe(`Shuffled the queue (2 songs) (<@${bob}>).`);
    expect((await queued()).map((line) => line.slice(3)).sort()).toEqual(['Second Wind', 'Third Rail']);
    expect((await answerOf(bot.run(bob, { name: 'clear' }))).text).toBe(`Cleared the queue (2 songs); the song playing plays on (<@${bob}>).`);
    const queue = (await answerOf(bot.run(alice, { name: 'queue' }))).text.split('\n');
    expect(queue[0]).toMatch(/^\*\*Paused:\*\* First Light /);
    expect(queue.slice(1)).toEqual(['Nothing else is queued.']);
    expect((await answerOf(bot.run(manager, { name: 'stop' }))).text).toBe('Stopped. The queue is cleared and I left the channel.');
    await botInVoice(voice, false);
    bot.emulator.leaveVoice(bot.guild.id, owner);
  });

  playerOnly('plays the library as radio until stopped', async () => {
    const { alice, manager } = bot.members;
    bot.emulator.joinVoice(alice, voice);
    bot.emulator.resetVoiceReception(bot.guild.id);
    expect((await answerOf(bot.run(alice, { name: 'radio' }))).text).toBe(`Radio on in <#${voice}>: 3 songs of this server, shuffled, until someone stops it.`);
    // Past the three songs of the first round: the radio goes on with another.
    const total = songs.reduce((sum, song) => sum + song.seconds, 0);
    await bot.emulator.waitForVoiceFrames(bot.guild.id, Math.ceil((total + 1) * 50), 30_000);
    await botInVoice(voice, true);
    expect((await answerOf(bot.run(manager, { name: 'stop' }))).text).toBe('Stopped. The queue is cleared and I left the channel.');
    await botInVoice(voice, false);
  });

  playerOnly('leaves a channel nobody listens in', async () => {
    const { alice } = bot.members;
    bot.emulator.joinVoice(alice, voice);
    // The radio never runs out of songs: only the empty channel makes the bot leave.
    await answerOf(bot.run(alice, { name: 'radio' }));
    await botInVoice(voice, true);
    bot.emulator.leaveVoice(bot.guild.id, alice);
    await vi.waitFor(() => found(nowPlayingMessages().find((m) => m.content === 'Nobody was listening, so I left the voice channel.'), 'the bot leaving'), 15_000);
    await botInVoice(voice, false);
  });

  it('says which permission it lacks in the channel, and does not join', async () => {
    const base = PermissionFlagsBits.ViewChannel | PermissionFlagsBits.SendMessages | PermissionFlagsBits.EmbedLinks | PermissionFlagsBits.ReadMessageHistory | PermissionFlagsBits.UseApplicationCommands;
    const listener = base | PermissionFlagsBits.Connect | PermissionFlagsBits.Speak;
    for (const [everyone, missing] of [
      [base, 'Connect, Speak'],
      [base | PermissionFlagsBits.Connect, 'Speak'],
    ] as const) {
      const guild = bot.emulator.createGuild({ name: `No ${missing}`, everyonePermissions: everyone, botPermissions: base });
      const text = bot.emulator.createChannel(guild.id, { name: 'music' });
      const room = bot.emulator.createChannel(guild.id, { name: 'Room', type: ChannelType.GuildVoice });
      const member = bot.emulator.addMember(guild.id, { username: `listener-${missing.length}`, permissions: listener });
      bot.emulator.joinVoice(member.id, room.id);
      const handle = bot.emulator.runCommand({ guildId: guild.id, channelId: text.id, userId: member.id, name: 'radio' });
      expect(await answerOf(handle)).toEqual({
        ephemeral: true,
        text: `I cannot play in <#${room.id}>: I am missing the **${missing}** permission there. A moderator can grant it in the channel’s settings.`,
      });
      expect(bot.emulator.voiceMembers(room.id)).toEqual([member.id]);
    }
  });

  playerOnly('does not join a full channel', async () => {
    const room = bot.emulator.createChannel(bot.guild.id, { name: 'Booth', type: ChannelType.GuildVoice, userLimit: 1 });
    bot.emulator.joinVoice(bot.members.owner, room.id);
    const answer = await answerOf(bot.run(bot.members.owner, { name: 'radio' }));
    expect(answer).toEqual({ ephemeral: true, text: `<#${room.id}> is full (its user limit is reached), so I cannot join it.` });
    expect(bot.emulator.voiceMembers(room.id)).toEqual([bot.members.owner]);
    bot.emulator.leaveVoice(bot.guild.id, bot.members.owner);
  });

  playerOnly('skips a song whose audio cannot be fetched, with a line in the channel, and plays on', async () => {
    const [, second, third] = songs;
    const { alice } = bot.members;
    // The stored address of one song no longer answers.
    const [row] = await bot.db.db.select().from(jobs).where(eq(jobs.id, third!.id));
    const clips = row!.result!.clips!.map((clip) => ({ ...clip, audioUrl: `${bot.sim.url}/gone/${third!.id}.m4a` }));
    await bot.db.db.update(jobs).set({ result: { ...row!.result, clips } }).where(eq(jobs.id, third!.id));
    try {
      bot.emulator.joinVoice(alice, voice);
      bot.emulator.resetVoiceReception(bot.guild.id);
      await answerOf(play(alice, third!.id));
      await answerOf(play(alice, second!.id));
      await vi.waitFor(() => found(bot.emulator.channelMessages(bot.channelId).find((m) => m.content === 'Could not play **Third Rail** (its audio could not be fetched); going on with the queue.'), 'the line about the song'), 15_000);
      const message = found(nowPlayingMessages().at(-1), 'the now-playing message');
      await vi.waitFor(() => expect(bot.emulator.message(message.id)?.content).toBe('The queue has ended; I left the voice channel.'), 20_000);
      // The song that played, whole; the silence frames that pad each stream's end are not counted.
      const heard = bot.emulator.voiceReception(bot.guild.id);
      const sounding = heard.seconds - heard.silentFrames * 0.02;
      expect(Math.abs(sounding - second!.seconds) / second!.seconds, JSON.stringify({ sounding, file: second!.seconds })).toBeLessThan(0.1);
    } finally {
      await bot.db.db.update(jobs).set({ result: row!.result }).where(eq(jobs.id, third!.id));
    }
  });

  acrossProcesses('stops a song a moderator hides while it plays, and never plays it again', async () => {
    const { alice, bob, manager } = bot.members;
    await answerOf(bot.run(manager, { name: 'settings', subcommand: 'safety', options: { 'review-channel': bot.otherChannelId } }));
    const made = bot.run(alice, { name: 'song', options: { prompt: 'a song called Hidden Verse', title: 'Hidden Verse' } });
    const jobId = await bot.jobIdOf(made);
    const result = await bot.result(made, jobId, 30_000);
    bot.emulator.joinVoice(alice, voice);
    expect((await answerOf(play(alice, jobId))).text).toBe(`Now playing **Hidden Verse** in <#${voice}>.`);
    // Paused, so the short test song is still the one playing when the moderator decides; queued again behind the next.
    await answerOf(bot.run(alice, { name: 'pause' }));
    await answerOf(play(alice, songs[1]!.id));
    expect((await answerOf(play(alice, jobId))).text).toBe('Added **Hidden Verse** to the queue, at position 2.');
    const message = found(nowPlayingMessages().at(-1), 'the now-playing message');
    expect(message.embeds?.[0]?.title).toBe('⏸ Hidden Verse');

    const form = bot.emulator.clickButton({ messageId: result.id, customId: `report:${jobId}`, userId: bob });
    await form.waitForResponse();
    await answerOf(bot.emulator.submitModal({ interaction: form, fields: { reason: 'hateful' } }));
    const review = await vi.waitFor(
      () => found(bot.emulator.channelMessages(bot.otherChannelId).find((m) => (m.embeds?.[0]?.footer?.text ?? '').includes(jobId)), 'the review message'),
      10_000,
    );
    bot.emulator.resetVoiceReception(bot.guild.id);
    const hide = bot.emulator.clickButton({ messageId: review.id, customId: `review:${jobId}:hide`, userId: manager });
    expect((await answerOf(hide)).text).toBe('Hidden: the result is gone from the library, `/play` and remixes.');

    // The player, wherever it runs, skips it at once and says why without naming it; the next song plays in the same message.
    await vi.waitFor(
      () => found(bot.emulator.channelMessages(bot.channelId).find((m) => m.content === 'The song playing was removed from this server’s library, so I skipped it.'), 'the line about the song'),
      10_000,
    );
    await vi.waitFor(() => expect(bot.emulator.message(message.id)?.embeds?.[0]?.title).toBe('▶ Second Wind'), 10_000);
    // Its second place in the queue is gone too: the queue ends after the next song, having played that one alone.
    await vi.waitFor(() => expect(bot.emulator.message(message.id)?.content).toBe('The queue has ended; I left the voice channel.'), 20_000);
    const heard = bot.emulator.voiceReception(bot.guild.id);
    const sounding = heard.seconds - heard.silentFrames * 0.02;
    expect(Math.abs(sounding - songs[1]!.seconds) / songs[1]!.seconds, JSON.stringify({ sounding, file: songs[1]!.seconds })).toBeLessThan(0.1);
  });

  playerOnly('plays in two guilds at once', async () => {
    const other = bot.newGuild();
    const otherVoice = bot.emulator.createChannel(other.guild.id, { name: 'Den', type: ChannelType.GuildVoice }).id;
    const place = { guildId: other.guild.id, channelId: other.channelId };
    const song = await makeSong('Elsewhere', place);
    bot.emulator.joinVoice(bot.members.alice, voice);
    bot.emulator.joinVoice(bot.members.alice, otherVoice);
    bot.emulator.resetVoiceReception(bot.guild.id);
    bot.emulator.resetVoiceReception(other.guild.id);
    await Promise.all([answerOf(play(bot.members.alice, songs[2]!.id)), answerOf(play(bot.members.alice, song.id, place))]);
    const [here, there] = await Promise.all([bot.emulator.waitForVoiceFrames(bot.guild.id, 50, 15_000), bot.emulator.waitForVoiceFrames(other.guild.id, 50, 15_000)]);
    expect(here.channelId).toBe(voice);
    expect(there.channelId).toBe(otherVoice);
    await Promise.all([botInVoice(voice, false), botInVoice(otherVoice, false)]);
  });

  restartOfThePlayer('carries on after a restart, from the song that was playing, then the queue', async () => {
    const [first, second] = songs;
    const { alice } = bot.members;
    bot.emulator.joinVoice(alice, voice);
    await answerOf(play(alice, first!.id));
    await answerOf(bot.run(alice, { name: 'pause' }));
    await answerOf(play(alice, second!.id));
    await botInVoice(voice, true);
    const message = found(nowPlayingMessages().at(-1), 'the now-playing message');

    await bot.stop();
    await botInVoice(voice, false);
    bot.emulator.resetVoiceReception(bot.guild.id);
    await bot.start();

    await botInVoice(voice, true);
    await vi.waitFor(() => expect(bot.emulator.message(message.id)?.content).toBe('The queue has ended; I left the voice channel.'), 30_000);
    const heard = bot.emulator.voiceReception(bot.guild.id);
    const expected = first!.seconds + second!.seconds;
    expect(Math.abs(heard.seconds - expected) / expected, JSON.stringify({ heard: heard.seconds, expected })).toBeLessThan(0.1);
  });
  playerOnly('leaves on /stop where it sits with no player: killed while playing, its player lost with Redis’s data', async () => {
    const { alice, bob, manager } = bot.members;
    for (const member of [alice, bob]) bot.emulator.joinVoice(member, voice);
    await answerOf(play(alice, songs[0]!.id));
    await answerOf(bot.run(alice, { name: 'pause' }));
    await botInVoice(voice, true);

    await bot.kill();
    // Redis came back empty: the player's state and the dead process's claim on the guild are gone.
    const redis = new Redis(bot.redisUrl, { maxRetriesPerRequest: null });
    try {
      const keys = await redis.keys(`${bot.prefix}:voice:*`);
      if (keys.length > 0) await redis.del(...keys);
    } finally {
      await redis.quit();
    }
    await bot.start();
    // Discord still has the bot in the channel, and nothing plays: the resume found no player.
    expect(bot.emulator.voiceMembers(voice)).toContain(bot.emulator.botUser.id);

    // The rule of /stop holds: Alice is one of two listeners and no moderator.
    expect((await answerOf(bot.run(alice, { name: 'stop' }))).text).toBe('Only moderators and the DJ role may stop the player (or someone listening alone).');
    expect(bot.emulator.voiceMembers(voice)).toContain(bot.emulator.botUser.id);
    expect((await answerOf(bot.run(manager, { name: 'stop' }))).text).toBe('Stopped. The queue is cleared and I left the channel.');
    await botInVoice(voice, false);
    bot.emulator.leaveVoice(bot.guild.id, bob);
  }, 60_000);
  playerOnly('carries on after a crash, once the dead process’s claim on the guild lapses', async () => {
    const [first] = songs;
    const { alice } = bot.members;
    bot.emulator.joinVoice(alice, voice);
    await answerOf(play(alice, first!.id));
    await answerOf(bot.run(alice, { name: 'pause' }));
    await botInVoice(voice, true);
    const message = found(nowPlayingMessages().at(-1), 'the now-playing message');

    await bot.kill();
    await bot.start();
    bot.emulator.resetVoiceReception(bot.guild.id);
    await vi.waitFor(() => expect(bot.emulator.message(message.id)?.content).toBe('The queue has ended; I left the voice channel.'), 40_000);
    expect(bot.emulator.voiceReception(bot.guild.id).frames).toBeGreaterThan(50);
  }, 60_000);
  playerOnly('ranks songs in /charts by plays heard in voice and by likes, and /radio chart: plays the chart in order', async () => {
    const { alice, bob, owner, manager } = bot.members;
    const topper = await makeSong('Chart Topper');
    const runner = await makeSong('Runner Up');
    bot.emulator.joinVoice(alice, voice);
    // Chart Topper twice, Runner Up once, each heard to its end.
    expect((await answerOf(play(alice, topper.id))).text).toBe(`Now playing **Chart Topper** in <#${voice}>.`);
    await answerOf(play(alice, runner.id));
    await answerOf(play(alice, topper.id));
    const plays = async (jobId: string) => Number((await bot.db.pool.query('select count(*) from song_plays where job_id = $1', [jobId])).rows[0].count);
    await expect.poll(async () => [await plays(topper.id), await plays(runner.id)], { timeout: 30_000 }).toEqual([2, 1]);
    await botInVoice(voice, false);
    const chartLines = async (options: Record<string, string>) => (await answerOf(bot.run(bob, { name: 'charts', options }))).text.split('\n');
    const byPlays = await chartLines({ by: 'plays' });
    expect(byPlays[0]).toBe('**This week’s top songs, by plays in voice**');
    const line = (lines: string[], title: string) => lines.findIndex((text) => text.includes(`**${title}**`));
    expect(byPlays[line(byPlays, 'Chart Topper')]).toMatch(new RegExp(`^\`\\d+\\.\` \\*\\*Chart Topper\\*\\* by <@${alice}> · 2 plays · new$`));
    expect(byPlays[line(byPlays, 'Runner Up')]).toMatch(/ · 1 play · new$/);
    expect(line(byPlays, 'Chart Topper')).toBeLessThan(line(byPlays, 'Runner Up'));

    // Two members like Runner Up, one likes Chart Topper: by likes, Runner Up leads.
    const resultOf = (jobId: string) => found(bot.emulator.channelMessages(bot.channelId).find((message) => JSON.stringify(message.components ?? []).includes(`"like:${jobId}"`)), 'the song’s result');
    const like = (jobId: string, userId: string) => answerOf(bot.emulator.clickButton({ messageId: resultOf(jobId).id, customId: `like:${jobId}`, userId }));
    await like(runner.id, bob);
    await like(runner.id, owner);
    await like(topper.id, bob);
    expect(await chartLines({})).toEqual([
      '**This week’s top songs, by likes**',
      `\`1.\` **Runner Up** by <@${alice}> · 2 likes · new`,
      `\`2.\` **Chart Topper** by <@${alice}> · 1 like · new`,
      '-# Movement since last week.',
    ]);

    // The chart radio: the chart's first song first, then its second.
    const lastCard = nowPlayingMessages().at(-1)?.id ?? '';
    expect((await answerOf(bot.run(alice, { name: 'radio', options: { chart: 'week' } }))).text).toBe(
      `Chart radio on in <#${voice}>: the chart’s 2 songs in order, then shuffled, until someone stops it.`,
    );
    const card = await vi.waitFor(() => found(nowPlayingMessages().find((message) => message.id > lastCard), 'the chart radio’s card'), 15_000);
    expect(card.embeds?.[0]?.title).toBe('▶ Runner Up');
    await vi.waitFor(() => expect(bot.emulator.message(card.id)?.embeds?.[0]?.title).toBe('▶ Chart Topper'), 15_000);
    expect((await answerOf(bot.run(manager, { name: 'stop' }))).text).toBe('Stopped. The queue is cleared and I left the channel.');
    await botInVoice(voice, false);
  }, 120_000);
}
