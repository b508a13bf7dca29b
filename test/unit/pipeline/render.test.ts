import { describe, expect, it } from 'vitest';
import { decodeCustomId } from '../../../src/discord-rest/custom-ids.js';
import { asChannelMessage, DISCORD_LIMITS, renderFailure, renderProgress, renderResult, withoutFiles } from '../../../src/pipeline/render.js';
import type { JobRow } from '../../../src/pipeline/job-rows.js';

function job(overrides: Partial<JobRow> = {}): JobRow {
  const now = new Date('2026-11-22T10:00:00Z');
  return {
    id: '6f1c0c84-1f55-4f8a-9a0e-3f4b8a1d2c3e',
    guildId: '100000000000000001',
    channelId: '100000000000000002',
    userId: '100000000000000003',
    kind: 'song',
    request: { kind: 'song', prompt: 'a calm lo-fi tune', model: 'ModelB-2.0' },
    state: 'succeeded',
    cost: 10,
    upstreamTaskId: 'task-1',
    webhookSecret: 'secret-never-shown',
    applicationId: '100000000000000004',
    interactionToken: 'token-never-shown',
    interactionAt: now,
    locale: null,
    guildLocale: null,
    result: {
      clips: [
        {
          clipId: 'clip-1',
          title: 'Calm',
          lyrics: 'la la la',
          audioUrl: 'https://cdn.example/producer/clip-1.m4a',
          wavUrl: 'https://cdn.example/producer/clip-1-wav.wav',
          imageUrl: 'https://cdn.example/producer/clip-1-img.jpg',
        },
      ],
    },
    error: null,
    submitAttempts: 1,
    submitUncertainAt: null,
    deliveryState: 'pending',
    deliveryClaimedAt: null,
    messageId: null,
    parentJobId: null,
    remixOf: null,
    rerollOf: null,
    likeCount: 0,
    createdAt: now,
    updatedAt: now,
    submittedAt: now,
    completedAt: now,
    deliveredAt: null,
    deadlineAt: null,
    removedAt: null,
    removal: null,
    removedBy: null,
    ...overrides,
  };
}

function embedLength(message: ReturnType<typeof renderResult>): number {
  return (message.embeds ?? []).reduce(
    (sum, embed) =>
      sum +
      (embed.title?.length ?? 0) +
      (embed.description?.length ?? 0) +
      (embed.footer?.text.length ?? 0) +
      (embed.fields ?? []).reduce((s, f) => s + f.name.length + f.value.length, 0),
    0,
  );
}

describe('renderResult', () => {
  it('shows the audio once: no Listen button and no link for a take the message carries as a file', () => {
    const base = job();
    const attached = renderResult({ ...base, result: { ...base.result, attachedTakes: [1] } });
    const urls = JSON.stringify(attached);
    expect(urls).not.toContain('clip-1.m4a');
    expect(urls).toContain('clip-1-wav.wav');
    // Posted anew, without its files, it links the audio again.
    expect(JSON.stringify(renderResult(withoutFiles({ ...base, result: { ...base.result, attachedTakes: [1] } })))).toContain('clip-1.m4a');
  });

  it('shows a song with its links, cover, requester, model, cost and working buttons', () => {
    const message = renderResult(job());
    const embed = message.embeds?.[0];
    expect(embed?.title).toBe('Calm');
    expect(embed?.image?.url).toBe('https://cdn.example/producer/clip-1-img.jpg');
    const fields = Object.fromEntries((embed?.fields ?? []).map((f) => [f.name, f.value]));
    expect(fields['Requested by']).toBe('<@100000000000000003>');
    expect(fields.Model).toBe('ModelB-2.0');
    expect(fields.Cost).toBe('10 credits');
    expect(fields.Links).toContain('(https://cdn.example/producer/clip-1.m4a)');
    expect(fields.Links).toContain('(https://cdn.example/producer/clip-1-wav.wav)');
    const linkButtons = (message.components ?? []).flatMap((row) => ('components' in row ? row.components.flatMap((c) => ('url' in c ? [c.url] : [])) : []));
    expect(linkButtons).toEqual(['https://cdn.example/producer/clip-1.m4a']);
    const customIds = (message.components ?? []).flatMap((row) =>
      'components' in row ? row.components.flatMap((c) => ('custom_id' in c ? [c.custom_id] : [])) : [],
    );
    // The clip links its WAV: no WAV for sale.
    expect(customIds.map((id) => decodeCustomId(id))).toEqual([
      { action: 'play', subject: job().id },
      { action: 'like', subject: job().id },
      { action: 'video', subject: job().id },
      { action: 'download', subject: job().id, arg: 'mp3' },
      { action: 'remix', subject: job().id },
      { action: 'reroll', subject: job().id },
      { action: 'report', subject: job().id },
      { action: 'delete-result', subject: job().id },
    ]);
    expect(JSON.stringify(message)).not.toMatch(/never-shown/);
  });

  it('sells only the files a song does not link, each button with its price', () => {
    const labels = (message: ReturnType<typeof renderResult>) =>
      (message.components ?? []).flatMap((row) => ('components' in row ? row.components.flatMap((c) => ('custom_id' in c && 'label' in c ? [c.label] : [])) : []));
    const bare = { clipId: 'c', audioUrl: 'https://cdn.example/producer/c.m4a' };
    expect(labels(renderResult(job({ result: { clips: [bare] } })))).toEqual([
      'Play in voice',
      'Like · 0',
      'Make a video · 5 credits',
      'MP3 file · 2 credits',
      'WAV file · 2 credits',
      'Remix · 10 credits',
      'Reroll · 10 credits',
      'Report',
      'Delete',
    ]);
    const full = { ...bare, audioUrl: 'https://cdn.example/producer/c.mp3', wavUrl: 'https://cdn.example/c-wav.wav', videoUrl: 'https://cdn.example/c-video.mp4' };
    expect(labels(renderResult(job({ result: { clips: [full] } })))).toEqual(['Play in voice', 'Like · 0', 'Remix · 10 credits', 'Reroll · 10 credits', 'Report', 'Delete']);
    // The price the pipeline charges, here a configured persona song's.
    const persona = job({ kind: 'persona_song', request: { kind: 'persona_song', prompt: 'x' }, result: { clips: [bare] } });
    expect(labels(renderResult(persona, undefined, (kind) => (kind === 'persona_song' ? 1 : 3))).slice(-4, -2)).toEqual(['Remix · 1 credit', 'Reroll · 1 credit']);
  });

  it('keeps very long lyrics within the description and 6000-character limits', () => {
    const lyrics = 'verse '.repeat(2000);
    const message = renderResult(job({ result: { clips: [{ clipId: 'c', title: 'T'.repeat(300), lyrics, audioUrl: 'https://x.example/a.m4a' }] } }));
    const embed = message.embeds?.[0];
    expect(embed?.title?.length).toBeLessThanOrEqual(DISCORD_LIMITS.embedTitle);
    expect(embed?.description?.length).toBeLessThanOrEqual(DISCORD_LIMITS.embedDescription);
    expect(embedLength(message)).toBeLessThanOrEqual(DISCORD_LIMITS.embedTotal);
  });

  it('names the song a remix was made from, its markdown shown as typed', () => {
    const source = '0b5e7a52-3c1d-4e8f-9a6b-2d4c6e8f0a1b';
    const remix = renderResult(job({ request: { kind: 'song', prompt: 'x', remixOf: { jobId: source, title: 'Rain *on* tin' } }, remixOf: source }));
    const fields = Object.fromEntries((remix.embeds?.[0]?.fields ?? []).map((f) => [f.name, f.value]));
    expect(fields['Remix of']).toBe('Rain \\*on\\* tin (`0b5e7a52`)');
    expect(renderResult(job()).embeds?.[0]?.fields?.map((f) => f.name)).not.toContain('Remix of');
  });

  it('names the first song of a reroll’s line, and shows how many like the song on its Like button', () => {
    const first = '0b5e7a52-3c1d-4e8f-9a6b-2d4c6e8f0a1b';
    const reroll = renderResult(job({ request: { kind: 'song', prompt: 'x', rerollOf: { jobId: first, title: 'Rain *on* tin' } }, rerollOf: first, likeCount: 1234 }));
    const fields = Object.fromEntries((reroll.embeds?.[0]?.fields ?? []).map((f) => [f.name, f.value]));
    expect(fields['Reroll of']).toBe('Rain \\*on\\* tin (`0b5e7a52`)');
    const buttons = JSON.stringify(reroll.components);
    expect(buttons).toContain(JSON.stringify({ type: 2, style: 2, label: 'Like · 1,234', custom_id: `like:${job().id}`, emoji: { name: '❤️' } }));
    expect(renderResult(job()).embeds?.[0]?.fields?.map((f) => f.name)).not.toContain('Reroll of');
  });

  it('names an upload by the member’s title, not the service’s', () => {
    const upload = job({ kind: 'upload', request: { kind: 'upload', audioUrl: 'https://x.example/a.wav', title: 'My demo' }, result: { clips: [{ clipId: 'c', title: 'Uploaded audio' }] } });
    expect(renderResult(upload).embeds?.[0]?.title).toBe('My demo');
  });

  it('shows a voice’s name as typed: escaped in the title, whole in the hint’s code', () => {
    const voice = renderResult(job({ kind: 'voice', request: { kind: 'voice', name: '**Big** `Voice`', audioUrl: 'https://x.example/a.mp3' }, result: {} }));
    expect(voice.embeds?.[0]?.title).toBe('Voice persona “\\*\\*Big\\*\\* \\`Voice\\`” is ready');
    expect(voice.embeds?.[0]?.description).toBe('Use it with `/song prompt:a lullaby voice:**Big** ˋVoiceˋ`, or any prompt of yours.');
  });

  it('never renders a non-http link from the service', () => {
    const message = renderResult(job({ result: { clips: [{ clipId: 'c', audioUrl: 'javascript:alert(1)' }] } }));
    expect(JSON.stringify(message)).not.toContain('javascript:');
  });

  it('offers "Make a song" on lyrics', () => {
    const message = renderResult(job({ kind: 'lyrics', request: { kind: 'lyrics', prompt: 'rain' }, result: { lyrics: 'Rain on the roof' } }));
    expect(message.embeds?.[0]?.description).toBe('Rain on the roof');
    const row = message.components?.[0];
    const button = row && 'components' in row ? row.components[0] : undefined;
    expect(button && 'custom_id' in button && decodeCustomId(button.custom_id)?.action).toBe('make-song');
  });
});

describe('renderFailure', () => {
  it('says whether credits came back, without upstream text', () => {
    const failed = renderFailure(job({ state: 'failed', error: { kind: 'upstream_failed', message: 'The music service could not make this one.', creditsReturned: 10 } }));
    expect(failed.embeds?.[0]?.description).toContain('10 credits were returned');
    const none = renderFailure(job({ state: 'failed', error: { kind: 'x', message: 'm', creditsReturned: 0 } }));
    expect(none.embeds?.[0]?.description).toContain('No credits were returned');
  });

  it('shows a message of the service, which may echo the member’s text, escaped', () => {
    const failed = renderFailure(job({ state: 'failed', error: { kind: 'x', message: 'bad prompt: [free](https://evil.example/)', creditsReturned: 0 } }));
    expect(failed.embeds?.[0]?.description).toContain('bad prompt: \\[free](https://evil.example/)');
  });
});

describe('renderProgress', () => {
  it('shows the queue position and a relative expected time', () => {
    const message = renderProgress(job({ state: 'queued' }), { position: 3, expectedAt: new Date('2026-11-22T10:01:00Z') });
    expect(message.embeds?.[0]?.description).toContain('position 3');
    expect(message.embeds?.[0]?.description).toContain(`<t:${Date.parse('2026-11-22T10:01:00Z') / 1000}:R>`);
  });
});

describe('asChannelMessage', () => {
  it('mentions the requester and allows only that mention', () => {
    const message = asChannelMessage(job(), renderResult(job()));
    expect(message.content?.startsWith('<@100000000000000003>')).toBe(true);
    expect(message.allowed_mentions).toEqual({ parse: [], users: ['100000000000000003'] });
  });
});

describe('a removed result', () => {
  it('shows nothing of the song, no button and no file, and says who removed it', () => {
    const hidden = renderResult(job({ removedAt: new Date(), removal: 'hidden', removedBy: '100000000000000009' }));
    expect(hidden.embeds?.[0]?.description).toBe('This result was removed by a moderator.');
    expect(hidden.components).toEqual([]);
    expect(hidden.attachments).toEqual([]);
    expect(JSON.stringify(hidden)).not.toMatch(/lo-fi|Calm|la la la|cdn\.example/);
    const deleted = renderResult(job({ removedAt: new Date(), removal: 'deleted', removedBy: '100000000000000003' }));
    expect(deleted.embeds?.[0]?.description).toBe('This result was deleted by the member who asked for it.');
  });
});
