import { describe, expect, it } from 'vitest';
import { CUSTOM_ID_ACTIONS, decodeCustomId, encodeCustomId, type CustomId } from '../../../src/discord-rest/custom-ids.js';

const jobId = '6f1c0c84-1f55-4f8a-9a0e-3f4b8a1d2c3e';

describe('custom ids', () => {
  it.each(CUSTOM_ID_ACTIONS)('%s survives encoding and decoding, with an argument and without', (action) => {
    const bare: CustomId = { action, subject: jobId };
    const withArg: CustomId = { action, subject: jobId, arg: 'wav' };
    expect(decodeCustomId(encodeCustomId(bare))).toEqual(bare);
    expect(decodeCustomId(encodeCustomId(withArg))).toEqual(withArg);
  });

  it('writes action, subject and argument apart by colons', () => {
    expect(encodeCustomId({ action: 'download', subject: jobId, arg: 'mp3' })).toBe(`download:${jobId}:mp3`);
    expect(encodeCustomId({ action: 'video', subject: jobId })).toBe(`video:${jobId}`);
    expect(encodeCustomId({ action: 'history-page', subject: 'all', arg: '120' })).toBe('history-page:all:120');
  });

  it('keeps every colon after the subject in the argument', () => {
    expect(decodeCustomId('history-page:all:12:34')).toEqual({ action: 'history-page', subject: 'all', arg: '12:34' });
    expect(decodeCustomId(encodeCustomId({ action: 'show', subject: jobId, arg: 'a:b:c' }))).toEqual({
      action: 'show',
      subject: jobId,
      arg: 'a:b:c',
    });
  });

  it('keeps an empty argument apart from none', () => {
    expect(decodeCustomId(`video:${jobId}:`)).toEqual({ action: 'video', subject: jobId, arg: '' });
    expect(decodeCustomId(`video:${jobId}`)).not.toHaveProperty('arg');
  });

  it.each([
    ['an action of another bot or an older version', 'shuffle:123'],
    ['an action in another case', `VIDEO:${jobId}`],
    ['a name every object has', 'constructor:x'],
    ['no subject', 'video'],
    ['an empty subject', 'video:'],
    ['no action', `:${jobId}`],
    ['nothing', ''],
  ])('decodes %s to nothing', (_what, raw) => {
    expect(decodeCustomId(raw)).toBeUndefined();
  });

  it('refuses to write more than Discord’s 100 characters', () => {
    const fits = { action: 'show', subject: jobId, arg: 'x'.repeat(100 - `show:${jobId}:`.length) } as const;
    expect(encodeCustomId(fits)).toHaveLength(100);
    expect(() => encodeCustomId({ ...fits, arg: `${fits.arg}x` })).toThrow(RangeError);
    expect(() => encodeCustomId({ ...fits, arg: `${fits.arg}x` })).toThrow('custom id longer than 100 characters: show');
  });
});
