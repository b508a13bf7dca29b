/**
 * The paid buttons of a song result sell only what the result does not link already, and say
 * what they make and what it costs. A press on an older message's button for a file the song
 * already links (and the same request typed) answers with the link and charges nothing.
 */
import { and, eq } from 'drizzle-orm';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { jobs, voicePersonas } from '../../../src/db/schema.js';
import type { EmulatorMessage } from '@music-bot/discord-emulator';
import { silentMp3 } from './fixtures.js';
import { buttonsOf, jobIdIn, privateAnswer, startBot, type BotHarness } from './harness.js';

let h: BotHarness;

beforeAll(async () => {
  h = await startBot({ startingCredits: 500 });
});
afterAll(async () => h?.close());
afterEach(() => expect(h.emulator.findings).toEqual([]));

async function accepted(handle: ReturnType<BotHarness['run']>): Promise<string> {
  return jobIdIn(await privateAnswer(handle));
}

/** The labels of the buttons with a custom id (the paid ones), by custom id. */
function paidLabels(message: EmulatorMessage): Record<string, string> {
  const labels: Record<string, string> = {};
  for (const row of message.components ?? []) {
    for (const component of 'components' in row ? row.components : []) {
      // The free Play in voice, Like, Report and Delete buttons are not sold.
      if ('custom_id' in component && 'label' in component && !/^(play|like|report|delete-result):/.test(component.custom_id)) labels[component.custom_id] = String(component.label);
    }
  }
  return labels;
}

function simCalls(path: string): number {
  return h.sim.requests.filter((request) => request.path === path).length;
}

describe('a producer song, which links its WAV and its video', () => {
  let songId: string;
  let result: EmulatorMessage;

  beforeAll(async () => {
    songId = await accepted(h.run(h.members.alice, { name: 'song', options: { prompt: 'a reel for the fiddle' } }));
    result = await h.delivered(songId);
  });

  it('offers no WAV and no video, only an MP3 and a remix, each with its price', () => {
    const links = JSON.stringify(result.embeds?.[0]?.fields);
    expect(links).toContain('-wav.wav');
    expect(links).toContain('-video.mp4');
    expect(buttonsOf(result)).toEqual([`play:${songId}`, `like:${songId}`, `download:${songId}:mp3`, `remix:${songId}`, `reroll:${songId}`, `report:${songId}`, `delete-result:${songId}`]);
    expect(paidLabels(result)).toEqual({
      [`download:${songId}:mp3`]: 'MP3 file · 2 credits',
      [`remix:${songId}`]: 'Remix · 10 credits',
      [`reroll:${songId}`]: 'Reroll · 10 credits',
    });
  });

  it('answers an older message’s WAV and video buttons with the links, and charges nothing', async () => {
    // A result as the bot rendered it before: WAV and Make a video on a song that links both.
    const response = await fetch(`${h.emulator.apiUrl}/v10/channels/${h.channelId}/messages`, {
      method: 'POST',
      headers: { authorization: `Bot ${h.emulator.botToken}`, 'content-type': 'application/json' },
      body: JSON.stringify({
        content: 'An older result',
        components: [
          {
            type: 1,
            components: [
              { type: 2, style: 2, label: 'Make a video', custom_id: `video:${songId}` },
              { type: 2, style: 2, label: 'WAV', custom_id: `download:${songId}:wav` },
            ],
          },
        ],
      }),
    });
    const { id: messageId } = (await response.json()) as { id: string };
    const [balance, jobCount, videos, downloads] = [await h.balance(), await h.jobCount(), simCalls('/api/v1/producer/video-clip'), simCalls('/api/v1/producer/download')];

    const video = await privateAnswer(h.emulator.clickButton({ messageId, customId: `video:${songId}`, userId: h.members.alice }));
    expect(video.ephemeral).toBe(true);
    expect(video.content).toMatch(/^This song already comes with its music video, so nothing was charged: http.*-video\.mp4$/);
    const wav = await privateAnswer(h.emulator.clickButton({ messageId, customId: `download:${songId}:wav`, userId: h.members.alice }));
    expect(wav.content).toMatch(/^This song already comes with its WAV file, so nothing was charged: http.*-wav\.wav$/);
    // Typed, the same request gets the same answer.
    const typed = await privateAnswer(h.run(h.members.bob, { name: 'download', options: { song: songId, format: 'wav' } }));
    expect(typed.content).toContain('already comes with its WAV file');

    expect(await h.balance()).toBe(balance);
    expect(await h.jobCount()).toBe(jobCount);
    expect([simCalls('/api/v1/producer/video-clip'), simCalls('/api/v1/producer/download')]).toEqual([videos, downloads]);
  });
});

describe('a persona song of two takes, which links neither', () => {
  it('offers each take its own Play, video, MP3, WAV and remix, and a take’s WAV is made of its clip and charged', async () => {
    const voice = h.run(h.members.alice, {
      name: 'voice',
      subcommand: 'create',
      options: { name: 'Reedy Alice' },
      attachments: { audio: { filename: 'me.mp3', contentType: 'audio/mpeg', data: silentMp3(12) } },
    });
    await h.delivered(await accepted(voice));
    const [persona] = await h.db.db
      .select()
      .from(voicePersonas)
      .where(and(eq(voicePersonas.guildId, h.guild.id), eq(voicePersonas.name, 'Reedy Alice')));

    const songId = await accepted(h.run(h.members.alice, { name: 'song', options: { prompt: 'a hum', voice: persona!.id, lyrics: 'hm hm hm' } }));
    const result = await h.delivered(songId);
    // Take 1's buttons keep the ids of a one-take result; take 2's carry its number.
    expect(buttonsOf(result).filter((id) => id.startsWith('play:'))).toEqual([`play:${songId}`, `play:${songId}:2`]);
    expect(paidLabels(result)).toEqual({
      [`video:${songId}`]: 'Make a video · take 1 · 5 credits',
      [`download:${songId}:mp3`]: 'MP3 file · take 1 · 2 credits',
      [`download:${songId}:wav`]: 'WAV file · take 1 · 2 credits',
      [`remix:${songId}`]: `Remix · take 1 · ${h.config.personaSongCost} credits`,
      [`reroll:${songId}`]: `Reroll · ${h.config.personaSongCost} credits`,
      [`video:${songId}:2`]: 'Make a video · take 2 · 5 credits',
      [`download:${songId}:mp3:2`]: 'MP3 file · take 2 · 2 credits',
      [`download:${songId}:wav:2`]: 'WAV file · take 2 · 2 credits',
      [`remix:${songId}:2`]: `Remix · take 2 · ${h.config.personaSongCost} credits`,
    });
    const links = JSON.stringify(result.embeds?.[0]?.fields);
    expect(links).toContain('Audio (take 1)');
    expect(links).toContain('Audio (take 2)');

    const balance = await h.balance();
    const wav = await accepted(h.emulator.clickButton({ messageId: result.id, customId: `download:${songId}:wav:2`, userId: h.members.alice }));
    await h.delivered(wav);
    const [row] = await h.db.db.select().from(jobs).where(eq(jobs.id, wav));
    const [song] = await h.db.db.select().from(jobs).where(eq(jobs.id, songId));
    expect(row?.state).toBe('succeeded');
    const secondClip = song?.result?.clips?.[1]?.clipId;
    expect(secondClip).toEqual(expect.any(String));
    expect(h.sim.requests.filter((request) => request.path === '/api/v1/producer/download').at(-1)?.body).toMatchObject({ format: 'wav', clip_id: secondClip });
    expect(await h.balance()).toBe(balance - 2);
  });

});
