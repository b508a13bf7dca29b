/**
 * The AutoMod keyword-rule judge, rule by rule from Discord's documentation: the four keyword
 * matching strategies with the documentation's own examples, case, phrases, the allow list,
 * regular expressions (Rust's inline flags, ones JavaScript cannot compile, runaway ones),
 * exempt roles and channels, and which rules apply at all.
 */
import { describe, expect, it } from 'vitest';
import { compileAutomodRules, compilePattern, nestsUnboundedRepetition, TIMEOUTS_BEFORE_DROP, type AutomodRuleRecord } from '../../../src/safety/automod.js';

const AUTHOR = { roleIds: ['member-role'], channelId: 'music' };

function rule(metadata: AutomodRuleRecord['trigger_metadata'], extra: Partial<AutomodRuleRecord> = {}): AutomodRuleRecord {
  return { id: '1', name: 'Keyword Filter 1', enabled: true, event_type: 1, trigger_type: 1, trigger_metadata: metadata, exempt_roles: [], exempt_channels: [], ...extra };
}

/** Whether a rule with these keywords (and allowed words) matches the text. */
function keywordMatches(keyword: string, text: string, allowList: string[] = []): boolean {
  return compileAutomodRules([rule({ keyword_filter: [keyword], allow_list: allowList })]).match([['prompt', text]], AUTHOR) !== undefined;
}

describe('keyword matching strategies', () => {
  it('prefix (`cat*`): a word that starts with the keyword, as the documentation lists', () => {
    for (const [keyword, words] of [
      ['cat*', ['catch', 'Catapult', 'CAttLE']],
      ['tra*', ['train', 'trade', 'TRAditional']],
      ['the mat*', ['the matrix']],
    ] as const) {
      for (const word of words) expect(keywordMatches(keyword, `a ${word} here`), `${keyword} in ${word}`).toBe(true);
    }
    expect(keywordMatches('cat*', 'a wildcat')).toBe(false);
    expect(keywordMatches('cat*', 'location')).toBe(false);
  });

  it('suffix (`*cat`): a word that ends with the keyword', () => {
    for (const [keyword, words] of [
      ['*cat', ['wildcat', 'copyCat']],
      ['*tra', ['extra', 'ultra', 'orchesTRA']],
      ['*the mat', ['breathe mat']],
    ] as const) {
      for (const word of words) expect(keywordMatches(keyword, `${word}!`), `${keyword} in ${word}`).toBe(true);
    }
    expect(keywordMatches('*cat', 'catch')).toBe(false);
    expect(keywordMatches('*cat', 'location')).toBe(false);
  });

  it('anywhere (`*cat*`): inside a word too', () => {
    for (const [keyword, words] of [
      ['*cat*', ['location', 'eduCation']],
      ['*tra*', ['abstracted', 'outrage']],
      ['*the mat*', ['breathe matter']],
    ] as const) {
      for (const word of words) expect(keywordMatches(keyword, word), `${keyword} in ${word}`).toBe(true);
    }
    expect(keywordMatches('*cat*', 'a dog')).toBe(false);
  });

  it('whole word by default: the word or phrase alone, never inside another word', () => {
    expect(keywordMatches('cat', 'cat')).toBe(true);
    expect(keywordMatches('train', 'a train song')).toBe(true);
    expect(keywordMatches('the mat', 'on the mat')).toBe(true);
    expect(keywordMatches('the mat', 'on THE   MAT, twice')).toBe(true);
    expect(keywordMatches('cat', 'catch')).toBe(false);
    expect(keywordMatches('cat', 'wildcat')).toBe(false);
    expect(keywordMatches('the mat', 'the matrix')).toBe(false);
    // Punctuation ends a word as a space does.
    expect(keywordMatches('cat', '(cat).')).toBe(true);
    // Letters of any script make words: "gato" inside "gatoñ" is not the word.
    expect(keywordMatches('gato', 'gatoñ')).toBe(false);
  });

  it('treats keywords as text, not as patterns', () => {
    expect(keywordMatches('i like c++', 'i like c++ a lot')).toBe(true);
    expect(keywordMatches('a.b', 'axb')).toBe(false);
  });
});

describe('the allow list', () => {
  it('exempts what it names, with the same wildcards, and nothing outside it', () => {
    expect(keywordMatches('*cat*', 'education', ['education'])).toBe(false);
    expect(keywordMatches('*cat*', 'education and a cat', ['education'])).toBe(true);
    expect(keywordMatches('*cat*', 'educational locations', ['educat*', '*ocations'])).toBe(false);
    expect(keywordMatches('bad', 'not bad at all', ['not bad'])).toBe(false);
    expect(keywordMatches('bad', 'bad, not bad', ['not bad'])).toBe(true);
  });

  it('exempts a pattern’s match too', () => {
    const rules = compileAutomodRules([rule({ regex_patterns: ['sc[a-z]+'], allow_list: ['school'] })]);
    expect(rules.match([['prompt', 'back to school']], AUTHOR)).toBeUndefined();
    expect(rules.match([['prompt', 'a scam']], AUTHOR)).toBeDefined();
  });
});

describe('regular expressions', () => {
  it('match as the documentation’s example rule does, case-insensitively', () => {
    const rules = compileAutomodRules([rule({ regex_patterns: ['(b|c)at', '^(?:[0-9]{1,3}\\.){3}[0-9]{1,3}$'] })]);
    expect(rules.match([['prompt', 'a BAT']], AUTHOR)).toMatchObject({ ruleId: '1' });
    expect(rules.match([['prompt', '10.0.0.1']], AUTHOR)).toBeDefined();
    expect(rules.match([['prompt', 'a rat']], AUTHOR)).toBeUndefined();
    expect(rules.skippedPatterns).toBe(0);
  });

  it('read Rust’s leading inline flags and named groups', () => {
    expect(compilePattern('(?i)cat')?.test('CAT')).toBe(true);
    expect(compilePattern('(?s)a.b')?.flags).toContain('s');
    expect(compilePattern('(?P<animal>cat)')).toBeDefined();
  });

  it('leave out a pattern JavaScript cannot compile, and judge by the others', () => {
    const rules = compileAutomodRules([rule({ regex_patterns: ['[unclosed', 'ca+t', 'dog'] })]);
    expect(rules.skippedPatterns).toBe(1);
    expect(rules.match([['prompt', 'a dog']], AUTHOR)).toBeDefined();
    expect(rules.match([['prompt', 'caaat']], AUTHOR)).toBeDefined();
  });

  it('leave out nested unbounded repetition, and stop a runaway pattern within the budget', () => {
    expect(nestsUnboundedRepetition('(a+)+b')).toBe(true);
    expect(nestsUnboundedRepetition('(?:x*y)*')).toBe(true);
    expect(nestsUnboundedRepetition('((a)+)+')).toBe(true);
    expect(nestsUnboundedRepetition('(a+){2,9}')).toBe(true);
    expect(nestsUnboundedRepetition('^(?:[0-9]{1,3}\\.){3}[0-9]{1,3}$')).toBe(false);
    expect(nestsUnboundedRepetition('[(a+)]+')).toBe(false);
    expect(nestsUnboundedRepetition('\\(a+\\)+')).toBe(false);
    expect(compileAutomodRules([rule({ regex_patterns: ['(a+)+b'] })]).skippedPatterns).toBe(1);

    // Overlapping alternatives under a star: no nesting to see, exponential all the same. Stopped
    // at the budget each time; left out once it ran out of time three checks in a row.
    const rules = compileAutomodRules([rule({ regex_patterns: ['(a|a)*b'], keyword_filter: ['stop'] })], { regexBudgetMs: 20 });
    const runaway = `${'a'.repeat(40)}!`;
    for (let check = 1; check < TIMEOUTS_BEFORE_DROP; check += 1) {
      expect(rules.match([['prompt', runaway]], AUTHOR)).toBeUndefined();
      expect(rules.skippedPatterns, `after check ${check}`).toBe(0);
    }
    expect(rules.match([['prompt', runaway]], AUTHOR)).toBeUndefined();
    expect(rules.skippedPatterns).toBe(1);
    // The keywords still judge, and the pattern is not tried again.
    expect(rules.match([['prompt', 'please stop']], AUTHOR)).toBeDefined();
  });
});

describe('which rules apply', () => {
  it('only enabled KEYWORD rules on messages sent', () => {
    const rules = compileAutomodRules([
      rule({ keyword_filter: ['a'] }, { id: 'off', enabled: false }),
      rule({ keyword_filter: ['b'] }, { id: 'preset', trigger_type: 4 }),
      rule({ keyword_filter: ['c'] }, { id: 'profile', event_type: 2 }),
      rule({ keyword_filter: ['d'] }, { id: 'on', name: 'Words' }),
    ]);
    expect(rules.size).toBe(1);
    expect(rules.match([['prompt', 'a b c']], AUTHOR)).toBeUndefined();
    expect(rules.match([['prompt', 'a b c d']], AUTHOR)).toEqual({ label: 'prompt', ruleId: 'on', ruleName: 'Words' });
  });

  it('not to a member holding an exempt role, nor in an exempt channel', () => {
    const rules = compileAutomodRules([rule({ keyword_filter: ['cat'] }, { exempt_roles: ['mods'], exempt_channels: ['pets'] })]);
    expect(rules.match([['prompt', 'cat']], AUTHOR)).toBeDefined();
    expect(rules.match([['prompt', 'cat']], { roleIds: ['member-role', 'mods'], channelId: 'music' })).toBeUndefined();
    expect(rules.match([['prompt', 'cat']], { roleIds: [], channelId: 'pets' })).toBeUndefined();
    // A thread of an exempt channel, or a channel of an exempt category.
    expect(rules.match([['prompt', 'cat']], { roleIds: [], channelId: 'a-thread', parentChannelId: 'pets' })).toBeUndefined();
    expect(rules.match([['prompt', 'cat']], { roleIds: [], channelId: 'a-thread', parentChannelId: 'music' })).toBeDefined();
  });

  it('names the first text, in the order given, that a rule matches', () => {
    const rules = compileAutomodRules([rule({ keyword_filter: ['cat'] }, { id: '7', name: 'Pets' })]);
    expect(rules.match([['prompt', 'calm'], ['lyrics', undefined], ['title', 'a cat']], AUTHOR)).toEqual({ label: 'title', ruleId: '7', ruleName: 'Pets' });
  });
});
