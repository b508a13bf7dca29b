import { describe, expect, it } from 'vitest';
import { compileBlocklist } from '../../../src/safety/blocklist.js';
import { randomForTest, type SeededRandom } from '../../support/seeded-random.js';

const list = compileBlocklist(['foo', 'ass', 'kill', 'bad phrase', 'grim*', '*hole', 'nasty day*']);

describe('blocklist matcher', () => {
  it('refuses a listed word as typed, and names the entry that matched', () => {
    expect(list.match('a song about foo and rain')).toBe('foo');
    expect(list.match('a song about rain')).toBeUndefined();
  });

  it.each([
    ['letter case', 'a song about FoO'],
    ['accents', 'a song about fóö'],
    ['combining marks', 'a song about fo\u0301o\u0308'],
    ['fullwidth forms', 'a song about ｆｏｏ'],
    ['mathematical letters', 'a song about 𝐟𝐨𝐨'],
    ['Cyrillic look-alikes', 'a song about fоо'],
    ['Greek look-alikes', 'a song about fοο'],
    ['dots inside the word', 'a song about f.o.o'],
    ['hyphens inside the word', 'a song about f-o-o'],
    ['underscores inside the word', 'a song about f_o_o'],
    ['spaced-out letters', 'a song about f o o today'],
    ['zero-width characters', 'a song about f\u200bo\u200co\u2060'],
    ['a soft hyphen', 'a song about fo\u00ado'],
    ['zeros for o', 'a song about f00'],
  ])('refuses a listed word disguised by %s', (_disguise, text) => {
    expect(list.match(text)).toBe('foo');
  });

  it.each([
    ['1 for i and l', 'k1ll them'],
    ['an I for l', 'kiII them'],
    ['@ and $ for a and s', 'what an @$$'],
    ['4 and 5 for a and s', 'what an 455'],
    ['a listed word joined to another by a hyphen', 'what an ass-hat'],
  ])('refuses %s', (_disguise, text) => {
    expect(list.match(text)).toBeDefined();
  });

  it('refuses 3 for e and 7 for t', () => {
    const short = compileBlocklist(['street']);
    expect(short.match('down the 57r337')).toBe('street');
  });

  it('matches a prefix entry at the start of a word, and a suffix entry at its end', () => {
    expect(list.match('a grimdark tale')).toBe('grim*');
    expect(list.match('a GRIM tale')).toBe('grim*');
    expect(list.match('a begrimed tale')).toBeUndefined();
    expect(list.match('a rathole')).toBe('*hole');
    expect(list.match('a wholesome song')).toBeUndefined();
    expect(compileBlocklist(['*rim*']).match('begrimed')).toBe('*rim*');
  });

  it('matches a phrase across words, whatever lies between them', () => {
    expect(list.match('such a bad phrase')).toBe('bad phrase');
    expect(list.match('such a BAD,   phrase!')).toBe('bad phrase');
    expect(list.match('such a b.a.d phr4se')).toBe('bad phrase');
    expect(list.match('such a bad-phrase')).toBe('bad phrase');
    expect(list.match('a bad song, a phrase')).toBeUndefined();
    expect(list.match('a nasty daydream')).toBe('nasty day*');
    expect(list.match('a nasty')).toBeUndefined();
  });

  it.each(['a class act', 'my assistant', 'the bass line', 'a passage', 'skills', 'Scunthorpe', 'a buffoon', 'a grass field'])(
    'accepts %s: a listed word inside an unlisted one is not refused',
    (text) => {
      expect(list.match(text)).toBeUndefined();
    },
  );

  it('matches nothing with an empty list', () => {
    const empty = compileBlocklist([]);
    expect(empty.size).toBe(0);
    expect(empty.match('anything at all, foo')).toBeUndefined();
  });

  it('ignores entries that normalise to nothing', () => {
    const blank = compileBlocklist(['', '   ', '*', '**', '...', '\u200b', '-_-']);
    expect(blank.size).toBe(0);
    expect(blank.match('some text. - _ * ... and more')).toBeUndefined();
    expect(compileBlocklist(['', 'foo', '*']).size).toBe(1);
  });
});

// ---- property test: disguises refused, words that merely contain a listed word accepted ----

const LETTERS = 'abcdefghijklmnopqrstuvwxyz';
/** Long enough that no filler equals or ends a 3–5 letter listed word by chance, checked below. */
const FILLER = ['please', 'compose', 'melody', 'sunset', 'guitars', 'thunder', 'ocean', 'remember'];
const LOOK_ALIKE: Record<string, readonly string[]> = {
  a: ['а', 'α', '4', '@'], b: ['в', 'β'], c: ['с'], d: ['ԁ'], e: ['е', 'ε', '3'], h: ['һ', 'н'], i: ['і', 'ι', '1', 'I'],
  j: ['ј'], k: ['к', 'κ'], l: ['1', 'I'], m: ['м'], o: ['о', 'ο', '0'], p: ['р', 'ρ'], s: ['ѕ', '5', '$'], t: ['т', 'τ', '7'],
  u: ['υ'], v: ['ν'], w: ['ԝ', 'ω'], x: ['х', 'χ'], y: ['у'],
};
const ACCENTS = ['\u0301', '\u0300', '\u0308', '\u0302', '\u0327', '\u030c'];
const IN_WORD = ['.', '-', '_', '\u200b', '\u200d', '\u00ad', '·'];

const pick = <T,>(random: SeededRandom, from: readonly T[]): T => from[random.below(from.length)]!;
const letters = (random: SeededRandom, min: number, max: number) =>
  Array.from({ length: min + random.below(max - min + 1) }, () => pick(random, [...LETTERS])).join('');
const fullwidth = (char: string) => (/[a-z0-9]/i.test(char) ? String.fromCodePoint(char.codePointAt(0)! + 0xfee0) : char);

/** One character of a word, disguised by any of: look-alike, case, fullwidth form, accent. */
function disguiseLetter(random: SeededRandom, char: string): string {
  let out = char;
  if (random.next() < 0.4 && LOOK_ALIKE[char]) out = pick(random, LOOK_ALIKE[char]);
  if (random.next() < 0.4) out = out.toUpperCase();
  if (random.next() < 0.2) out = fullwidth(out);
  if (random.next() < 0.3) out += pick(random, ACCENTS);
  return out;
}

/** A word disguised letter by letter, then with separators: none, in-word signs anywhere, or spaces between every letter. */
function disguiseWord(random: SeededRandom, word: string, separators: boolean): string {
  const chars = [...word].map((char) => disguiseLetter(random, char));
  const mode = separators ? random.below(3) : 0;
  if (mode === 0) return chars.join('');
  if (mode === 1) return chars.map((char, i) => (i > 0 && random.next() < 0.6 ? pick(random, IN_WORD) : '') + char).join('');
  return chars.join(random.next() < 0.5 ? ' ' : ' . ');
}

const sentence = (random: SeededRandom, middle: string) => [pick(random, FILLER), pick(random, FILLER), middle, pick(random, FILLER)].join(' ');

describe('blocklist matcher, over random words and disguises', () => {
  it('refuses every listed word in any combination of its disguises', () => {
    const random = randomForTest();
    for (let round = 0; round < 200; round += 1) {
      const words = Array.from({ length: 20 }, () => letters(random, 3, 5));
      const matcher = compileBlocklist(words);
      for (let n = 0; n < 10; n += 1) {
        const word = pick(random, words);
        const text = sentence(random, disguiseWord(random, word, true));
        expect(matcher.match(text), JSON.stringify({ word, text })).toBeDefined();
      }
    }
  });

  it('accepts a word that holds a listed word strictly inside it, disguised or not', () => {
    const random = randomForTest();
    for (let round = 0; round < 200; round += 1) {
      const words = Array.from({ length: 20 }, () => letters(random, 3, 5));
      const matcher = compileBlocklist(words);
      expect(matcher.match(FILLER.join(' '))).toBeUndefined();
      for (let n = 0; n < 10; n += 1) {
        const word = pick(random, words);
        const around = letters(random, 2, 4) + word + letters(random, 2, 4);
        const text = sentence(random, disguiseWord(random, around, false));
        expect(matcher.match(text), JSON.stringify({ word, around, text })).toBeUndefined();
      }
    }
  });
});
