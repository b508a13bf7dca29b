/**
 * Real files from encoders that are not ours: sox wrote the WAVs, LAME the MP3s, committed in
 * test/fixtures/audio/ with the script that made them. Each plays 12.0 s; LAME adds its encoder
 * delay and padding (under 0.05 s) to the MP3s.
 */
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { probeAudio } from '../../../src/audio/duration.js';

const SECONDS = 12;
const TOLERANCE = 0.1;

function file(name: string): Buffer {
  return readFileSync(new URL(`../../fixtures/audio/${name}`, import.meta.url));
}

/** The bytes an ID3v2 tag takes, header included (its size is four 7-bit bytes). */
function id3Length(bytes: Buffer): number {
  expect(bytes.toString('latin1', 0, 3)).toBe('ID3');
  return 10 + ((bytes[6]! << 21) | (bytes[7]! << 14) | (bytes[8]! << 7) | bytes[9]!);
}

/** Reproducible noise: SHA-256 in counter mode. */
function noise(length: number, seed: string): Buffer {
  const blocks: Buffer[] = [];
  for (let counter = 0; blocks.length * 32 < length; counter += 1) {
    blocks.push(createHash('sha256').update(`${seed}:${counter}`).digest());
  }
  return Buffer.concat(blocks).subarray(0, length);
}

/** Text no MPEG sync word hides in: junk as a broken tool might leave it. */
const JUNK = Buffer.from('junk before the first frame. '.repeat(70));

describe('probeAudio', () => {
  it('reads a WAV’s duration from its header', async () => {
    expect(await probeAudio(file('mono-44k.wav'))).toEqual({ format: 'wav', durationSeconds: SECONDS });
    expect(await probeAudio(file('stereo-8k.wav'))).toEqual({ format: 'wav', durationSeconds: SECONDS });
  });

  it.each(['cbr.mp3', 'cbr-info.mp3', 'cbr-id3.mp3', 'vbr.mp3', 'vbr-id3.mp3', 'mpeg2.mp3'])('measures %s from LAME', async (name) => {
    const info = await probeAudio(file(name));
    expect(info?.format).toBe('mp3');
    expect(info?.durationSeconds).toBeGreaterThanOrEqual(SECONDS);
    expect(info?.durationSeconds).toBeLessThan(SECONDS + TOLERANCE);
  });

  it('finds the first frame after junk, with and without an ID3 tag', async () => {
    const tagged = file('vbr-id3.mp3');
    const tag = id3Length(tagged);
    const files = [
      Buffer.concat([JUNK, file('cbr.mp3')]),
      Buffer.concat([JUNK, file('vbr.mp3')]),
      Buffer.concat([tagged.subarray(0, tag), JUNK, tagged.subarray(tag)]),
      Buffer.concat([tagged.subarray(0, tag), noise(3000, 'after the tag'), tagged.subarray(tag)]),
      // A stream cut mid-frame: it starts with the tail of a frame.
      file('cbr.mp3').subarray(1000),
    ];
    for (const bytes of files) {
      const info = await probeAudio(bytes);
      expect(info?.format).toBe('mp3');
      expect(info?.durationSeconds).toBeGreaterThan(SECONDS - TOLERANCE);
      expect(info?.durationSeconds).toBeLessThan(SECONDS + TOLERANCE);
    }
  });

  it('goes on past junk in the middle of a stream, where a frame walk would stop', async () => {
    const cbr = file('cbr.mp3');
    const middle = 50_001; // not a frame boundary
    const info = await probeAudio(Buffer.concat([cbr.subarray(0, middle), Buffer.alloc(500), cbr.subarray(middle)]));
    expect(info?.format).toBe('mp3');
    expect(info?.durationSeconds).toBeGreaterThan(SECONDS - TOLERANCE);
    expect(info?.durationSeconds).toBeLessThan(SECONDS + TOLERANCE);
  });

  it('agrees with sox on the music service simulator’s MP3', async () => {
    // soxi -D packages/music-api-sim/src/assets/tone.mp3: 45489 samples at 22050 Hz.
    const info = await probeAudio(readFileSync(new URL('../../../packages/music-api-sim/src/assets/tone.mp3', import.meta.url)));
    expect(info?.format).toBe('mp3');
    expect(info?.durationSeconds).toBeCloseTo(45_489 / 22_050, 1);
  });

  it('refuses what is neither', async () => {
    expect(await probeAudio(Buffer.from('just some text that is not audio at all'))).toBeUndefined();
    expect(await probeAudio(readFileSync(new URL('../../../packages/music-api-sim/src/assets/cover.jpg', import.meta.url)))).toBeUndefined();
    expect(await probeAudio(readFileSync(new URL('../../../packages/music-api-sim/src/assets/tone.m4a', import.meta.url)))).toBeUndefined();
    expect(await probeAudio(Buffer.alloc(0))).toBeUndefined();
    expect(await probeAudio(JUNK)).toBeUndefined();
  });

  it('refuses noise, which has MPEG sync words but no stream', async () => {
    for (const seed of ['a', 'b', 'c', 'd', 'e', 'f', 'g', 'h']) {
      expect(await probeAudio(noise(200_000, seed))).toBeUndefined();
    }
  });
});
