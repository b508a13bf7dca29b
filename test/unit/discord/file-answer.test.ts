import { describe, expect, it } from 'vitest';
import { filesPerMessage } from '../../../src/discord/file-answer.js';

const sized = (...bytes: number[]) => bytes.map((size, index) => ({ name: `f${index}`, bytes: size }));
const names = (messages: Array<Array<{ name: string }>>) => messages.map((message) => message.map((file) => file.name));

describe('filesPerMessage', () => {
  it('keeps the files in order, at most the limit together, a full file alone', () => {
    expect(names(filesPerMessage(sized(100, 100, 30), 100))).toEqual([['f0'], ['f1'], ['f2']]);
    expect(names(filesPerMessage(sized(40, 50, 20, 90), 100))).toEqual([['f0', 'f1'], ['f2'], ['f3']]);
  });

  it('puts at most ten files in a message', () => {
    const messages = filesPerMessage(sized(...Array.from({ length: 23 }, () => 1)), 1_000);
    expect(messages.map((message) => message.length)).toEqual([10, 10, 3]);
    expect(messages.flat().map((file) => file.name)).toEqual(Array.from({ length: 23 }, (_, i) => `f${i}`));
  });

  it('gives nothing for no files', () => {
    expect(filesPerMessage([], 100)).toEqual([]);
  });
});
