import { describe, expect, it } from 'vitest';
import { discordTimestamp, escapeMarkdown, inCode, truncate } from '../../src/text.js';

describe('escapeMarkdown', () => {
  it.each([
    ['a masked link', '[free nitro](https://evil.example/)', '\\[free nitro](https://evil.example/)'],
    ['two masked links on one line', '[a](https://x.example/) and [b](https://y.example/)', '\\[a](https://x.example/) and \\[b](https://y.example/)'],
    ['a spoiler', '||x||', '\\|\\|x\\|\\|'],
    ['bold', '**x**', '\\*\\*x\\*\\*'],
    ['italics and underline', '*a* _b_ __c__', '\\*a\\* \\_b\\_ \\_\\_c\\_\\_'],
    ['strikethrough', '~~x~~', '\\~\\~x\\~\\~'],
    ['inline code and a code block', '`a` ```b```', '\\`a\\` \\`\\`\\`b\\`\\`\\`'],
    ['a backslash', 'a\\b', 'a\\\\b'],
    ['a user mention', '<@123>', '\\<@123>'],
    ['a role and a channel mention', '<@&5> <#6>', '\\<@&5> \\<#6>'],
    ['@everyone and @here', '@everyone @here', '\\@everyone \\@here'],
    ['a heading', '# big', '\\# big'],
    ['subtext', '-# small', '\\-# small'],
    ['a bulleted list', '- one\n* two', '\\- one\n\\* two'],
    ['a numbered list', '1. one', '1\\. one'],
    ['a quote', '> quoted\n>>> all', '\\> quoted\n\\>>> all'],
  ])('shows %s as typed', (_what, typed, escaped) => {
    expect(escapeMarkdown(typed)).toBe(escaped);
  });

  it('leaves plain words, links and custom emoji alone', () => {
    expect(escapeMarkdown('rainy night lofi, 90 bpm')).toBe('rainy night lofi, 90 bpm');
    expect(escapeMarkdown('see https://example.com/a_b_c')).toBe('see https://example.com/a_b_c');
    expect(escapeMarkdown('<:wave:123>')).toBe('<:wave:123>');
  });

  it('keeps the bot’s own italics around a prompt whole', () => {
    // `*` + escaped + `*`: the member's stars are all escaped, so only the bot's two remain.
    const italic = `*${escapeMarkdown('**bold** and *it*')}*`;
    expect(italic.replace(/\\[*]/g, '')).toBe('*bold and it*');
  });
});

describe('inCode', () => {
  it('keeps a backtick from ending the code early, and leaves markdown as typed', () => {
    expect(inCode('a`b **c**')).toBe('aˋb **c**');
  });
});

describe('truncate', () => {
  it('cuts with an ellipsis, within the limit', () => {
    expect(truncate('abcdef', 4)).toBe('abc…');
    expect(truncate('abc', 4)).toBe('abc');
  });
});

describe('discordTimestamp', () => {
  it("writes Discord's timestamp markup in whole seconds, full date and time unless a style is given", () => {
    const at = new Date('2026-11-29T03:30:15.999Z');
    expect(discordTimestamp(at)).toBe('<t:1795923015:f>');
    expect(discordTimestamp(at, 'R')).toBe('<t:1795923015:R>');
  });
});
