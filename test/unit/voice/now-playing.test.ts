/** The now-playing card as members see it: the song, what is next, and the buttons for the player's state. */
import { describe, expect, it } from 'vitest';
import { decodeCustomId } from '../../../src/discord-rest/custom-ids.js';
import { english } from '../../../src/i18n/index.js';
import { isPlayerButton, nowPlayingMessage } from '../../../src/voice/now-playing.js';
import type { PlayerState, QueueEntry } from '../../../src/voice/store.js';

const song: QueueEntry = {
  jobId: '00000000-0000-4000-8000-000000000001',
  clipId: 'clip-1',
  title: 'Night Drive',
  makerId: '100000000000000001',
  mediaUrl: 'http://127.0.0.1/media/1.m4a',
  durationSeconds: 185,
  requestedBy: '100000000000000002',
};

const state = (changes: Partial<PlayerState> = {}): PlayerState => ({
  voiceChannelId: '200000000000000001',
  textChannelId: '200000000000000002',
  guildLocale: 'en-US',
  nowPlayingMessageId: null,
  current: song,
  paused: false,
  radio: null,
  stay: false,
  ...changes,
});

/** The buttons' subjects, in order, as the router reads them back. */
function buttons(message: ReturnType<typeof nowPlayingMessage>): string[] {
  return message.components[0]!.components.map((button) => {
    const data = button.toJSON() as { custom_id: string };
    return decodeCustomId(data.custom_id)?.subject ?? '';
  });
}

describe('the now-playing card', () => {
  it('names the song, its maker and requester, its length and the queue, with pause, skip and stop while it plays', () => {
    const message = nowPlayingMessage(english, state(), 3);
    const embed = message.embeds[0]!.toJSON();
    expect(message.content).toBe(english('player.message.playing'));
    expect(embed.title).toBe('▶ Night Drive');
    expect(embed.description).toBe(
      [
        english('player.message.maker', { maker: song.makerId, requester: song.requestedBy }),
        english('player.message.length', { length: '3:05' }),
        english('player.message.queued', { count: 3 }),
      ].join('\n'),
    );
    expect(buttons(message)).toEqual(['pause', 'skip', 'stop']);
    expect(buttons(message).every(isPlayerButton)).toBe(true);
  });

  it('offers resume instead of pause while paused, leaves out an unknown length, and says the radio picks what is next', () => {
    const message = nowPlayingMessage(english, state({ paused: true, radio: { userId: null, query: null }, current: { ...song, durationSeconds: null } }), 0);
    const embed = message.embeds[0]!.toJSON();
    expect(message.content).toBe(english('player.message.paused'));
    expect(embed.title).toBe('⏸ Night Drive');
    expect(embed.description).toBe(
      [english('player.message.maker', { maker: song.makerId, requester: song.requestedBy }), english('player.message.radio', { count: 0 })].join('\n'),
    );
    expect(buttons(message)).toEqual(['resume', 'skip', 'stop']);
  });

  it('shows how far the song has played on a bar, and the volume and the loop when they are set', () => {
    const message = nowPlayingMessage(english, state({ volume: 150, loop: 'queue' }), 2, 92.6);
    expect(message.embeds[0]!.toJSON().description!.split('\n')).toEqual([
      `By <@${song.makerId}> · asked by <@${song.requestedBy}>`,
      '▬▬▬▬▬▬▬🔘▬▬▬▬▬▬ 1:32 / 3:05',
      'Volume: 150%',
      'Loop: the queue',
      'Next in the queue: 2 songs',
    ]);
    // Past its length (a decoder's last frames): the bar stops at the end.
    expect(nowPlayingMessage(english, state({ loop: 'song' }), 0, 190).embeds[0]!.toJSON().description!.split('\n').slice(1, 3)).toEqual([
      '▬▬▬▬▬▬▬▬▬▬▬▬▬🔘 3:05 / 3:05',
      'Loop: this song',
    ]);
  });

  it('tells the player’s buttons from anything else', () => {
    expect(['pause', 'resume', 'skip', 'stop'].every(isPlayerButton)).toBe(true);
    expect(isPlayerButton('play')).toBe(false);
  });
});
