import { describe, expect, it } from 'vitest';
import { describeShape, lackingResult } from '../../../src/pipeline/result-needs.js';
import { toStoredResult } from '../../../src/pipeline/transitions.js';
import { toTaskStatus } from '../../../src/music-api/task-status.js';

const stored = (data: Record<string, unknown>[]) => toStoredResult(toTaskStatus({ code: 200, message: 'success', status: 'SUCCESS', data }));
/** A sonic create-voice body: the persona in `data`, its state beside it. */
const voice = (data: Record<string, unknown>) => toStoredResult(toTaskStatus({ code: 200, message: 'success', data }));

describe('what a success must carry', () => {
  it('a song: an http(s) audio_url on some clip', () => {
    expect(lackingResult('song', {}, stored([{ clip_id: 'c', audio_url: 'https://cdn.example/c.m4a' }]))).toBeUndefined();
    expect(lackingResult('song', {}, stored([{ clip_id: 'c', audio_url: '' }, { clip_id: 'd', audio_url: 'https://cdn.example/d.m4a' }]))).toBeUndefined();
    expect(lackingResult('song', {}, stored([{ clip_id: 'c', audio: 'https://cdn.example/c.m4a', image_url: 'https://cdn.example/c.jpg' }]))).toBe('audio_url');
    expect(lackingResult('persona_song', {}, stored([{ clip_id: 'c', audio_url: 'javascript:alert(1)' }]))).toBe('audio_url');
  });

  it('lyrics: text under either known field, not blank', () => {
    expect(lackingResult('lyrics', {}, stored([{ title: 'T', text: 'la la' }]))).toBeUndefined();
    expect(lackingResult('lyrics', {}, stored([{ title: 'T', lyrics: 'la la' }]))).toBeUndefined();
    expect(lackingResult('lyrics', {}, stored([{ title: 'T', text: '  \n ' }]))).toBe('text or lyrics');
    expect(lackingResult('lyrics', {}, stored([{ title: 'T', content: 'la la' }]))).toBe('text or lyrics');
  });

  it("a download: the service's link, or the spec's clip media in the format asked for", () => {
    expect(lackingResult('download', { format: 'mp3' }, stored([{ clip_id: 'c', download_url: 'https://cdn.example/c.mp3' }]))).toBeUndefined();
    expect(lackingResult('download', { format: 'mp3' }, stored([{ clip_id: 'c', url: 'https://cdn.example/c.mp3' }]))).toBeUndefined();
    expect(lackingResult('download', { format: 'wav' }, stored([{ clip_id: 'c', wav_url: 'https://cdn.example/c.wav' }]))).toBeUndefined();
    expect(lackingResult('download', { format: 'mp3' }, stored([{ clip_id: 'c', audio_url: 'https://cdn.example/c.m4a' }]))).toBeUndefined();
    expect(lackingResult('download', { format: 'mp3' }, stored([{ clip_id: 'c', wav_url: 'https://cdn.example/c.wav' }]))).toBe('download_url or url');
  });

  it('a video its video_url; a voice its persona_id; an upload nothing', () => {
    expect(lackingResult('video', {}, stored([{ clip_id: 'c', video_url: 'https://cdn.example/c.mp4' }]))).toBeUndefined();
    expect(lackingResult('video', {}, stored([{ clip_id: 'c', image_url: 'https://cdn.example/c.jpg' }]))).toBe('video_url');
    expect(lackingResult('voice', {}, voice({ state: 'succeeded', persona_id: 'p-1', name: 'V' }))).toBeUndefined();
    expect(lackingResult('voice', {}, voice({ state: 'succeeded', name: 'V' }))).toBe('persona_id');
    expect(lackingResult('upload', {}, stored([{ clip_id: 'c' }]))).toBeUndefined();
  });
});

describe("a body's shape", () => {
  it('names fields and types, never values; a blank field is told from a missing one', () => {
    const shape = describeShape({
      code: 200,
      message: 'success',
      data: [{ clip_id: 'secret-ish', audio: 'https://cdn.example/x', lyrics: '', tags: null, ok: true }],
      status: 'SUCCESS',
    });
    expect(shape).toBe('{code: number, message: string, data: [{clip_id: string, audio: string, lyrics: empty string, tags: null, ok: boolean}], status: string}');
  });

  it('stays short: deep, wide and long bodies are cut', () => {
    const wide = Object.fromEntries(Array.from({ length: 40 }, (_, i) => [`f${i}`, i]));
    expect(describeShape(wide)).toContain('… 40 fields');
    expect(describeShape([1, 2, 3, 4, 5])).toBe('[number, number, number, … 5 items]');
    expect(describeShape({ a: { b: { c: { d: { e: 1 } } } } })).toBe('{a: {b: {c: {d: {…}}}}}');
    const long = Object.fromEntries(Array.from({ length: 30 }, (_, i) => [`field_${'x'.repeat(30)}_${i}`, [{ y: 'z' }]]));
    expect(describeShape(long).length).toBeLessThanOrEqual(1_500);
  });
});
