import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { probeAudio } from '../../../src/audio/duration.js';
import { silentMp3, sineWav } from '../../integration/commands/fixtures.js';

describe('probeAudio', () => {
  it('reads a WAV’s duration from its header', () => {
    expect(probeAudio(sineWav({ seconds: 12 }))).toEqual({ format: 'wav', durationSeconds: 12 });
    expect(probeAudio(sineWav({ seconds: 3.5, sampleRate: 8000 }))?.durationSeconds).toBeCloseTo(3.5, 3);
  });

  it('sums an MP3’s frames, after an ID3 tag', () => {
    const info = probeAudio(silentMp3(12, { id3: true }));
    expect(info?.format).toBe('mp3');
    expect(info?.durationSeconds).toBeGreaterThan(12);
    expect(info?.durationSeconds).toBeLessThan(12.05);
  });

  it('reads the simulator’s real MP3', () => {
    const bytes = readFileSync(new URL('../../../src/sandbox/music-api-sim/assets/tone.mp3', import.meta.url));
    const info = probeAudio(bytes);
    expect(info?.format).toBe('mp3');
    expect(info?.durationSeconds).toBeGreaterThan(0.2);
    expect(info?.durationSeconds).toBeLessThan(30);
  });

  it('refuses what is neither', () => {
    expect(probeAudio(Buffer.from('just some text that is not audio at all'))).toBeUndefined();
    expect(probeAudio(readFileSync(new URL('../../../src/sandbox/music-api-sim/assets/cover.jpg', import.meta.url)))).toBeUndefined();
    expect(probeAudio(Buffer.alloc(0))).toBeUndefined();
  });
});
