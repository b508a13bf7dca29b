/**
 * A server's blocklist: words and phrases compiled once into a matcher that says whether a
 * member's text uses one. Whole words by default; `*` at the start or end of an entry matches
 * a word ending or starting with it (`*foo*`: a word containing it). Text and entries pass
 * through the same normalisation, so the easy disguises (case, accents, look-alike letters,
 * digits for letters, separators inside a word) still match. What it cannot catch, and why:
 * docs/decisions/blocklist-matching.md.
 */

export interface Blocklist {
  /** The first entry, as listed, that `text` uses; undefined when it uses none. */
  match(text: string): string | undefined;
  /** How many entries were kept (an entry that normalises to nothing is dropped). */
  readonly size: number;
}

/**
 * Letters that look like Latin ones, and the digits and signs written for letters, after
 * lowercasing. `i`, `l` and `1` are one letter (an `I` and an `l` look the same in most fonts,
 * and `1` stands for either), so `l` and `1` fold into `i` in text and entries alike.
 */
const LOOK_ALIKES: Readonly<Record<string, string>> = {
  // Cyrillic
  а: 'a', в: 'b', е: 'e', к: 'k', м: 'm', н: 'h', о: 'o', р: 'p', с: 'c', т: 't', у: 'y', х: 'x',
  ѕ: 's', і: 'i', ј: 'j', ԁ: 'd', һ: 'h', ԛ: 'q', ԝ: 'w', ү: 'y', ӏ: 'i',
  // Greek
  α: 'a', β: 'b', ε: 'e', η: 'n', ι: 'i', κ: 'k', μ: 'u', ν: 'v', ο: 'o', ρ: 'p', τ: 't', υ: 'u', χ: 'x', ω: 'w',
  // Latin letters that do not decompose
  ı: 'i', ɡ: 'g', ł: 'i', ø: 'o', đ: 'd', ß: 'ss',
  // Digits and signs for letters
  '0': 'o', '1': 'i', '3': 'e', '4': 'a', '5': 's', '7': 't', '@': 'a', $: 's',
  l: 'i',
};
const LOOK_ALIKE = new RegExp(`[${Object.keys(LOOK_ALIKES).join('').replace(/[$\\\]^-]/g, '\\$&')}]`, 'gu');

/** Signs that may sit inside a word without ending it (`f.o.o`, `f-o-o`, zero-width characters). */
const INSIDE_WORD = /[.\-_'’`~*·•\p{Cf}]/u;
const WORD_CHAR = /[\p{L}\p{N}]/u;
const SPACE = /\s/u;
/** What a character is to the tokenizer: part of a word, a space, a sign inside a word, or a break. */
const enum Kind {
  Word,
  Space,
  Inside,
  Break,
}
const kindOf = (char: string): Kind =>
  WORD_CHAR.test(char) ? Kind.Word : SPACE.test(char) ? Kind.Space : INSIDE_WORD.test(char) ? Kind.Inside : Kind.Break;
/** The kind of each ASCII character, looked up rather than tested: most text is ASCII. */
const ASCII_KINDS = Array.from({ length: 128 }, (_, code) => kindOf(String.fromCharCode(code)));
const NON_ASCII = /[\u0080-\uffff]/;
const ASCII_LOOK_ALIKE = /[013457@$l]/g;

/** Text as the matcher compares it: NFKC's compatibility forms, no combining marks, lowercase, look-alikes folded. */
export function normalizeText(text: string): string {
  const plain = NON_ASCII.test(text) ? text.normalize('NFKD').replace(/\p{M}/gu, '') : text;
  const lower = plain.toLowerCase();
  return NON_ASCII.test(lower)
    ? lower.replace(LOOK_ALIKE, (char) => LOOK_ALIKES[char] ?? char)
    : lower.replace(ASCII_LOOK_ALIKE, (char) => LOOK_ALIKES[char] ?? char);
}

/**
 * The words of normalised text, read two ways: `split`, every run of letters and digits a word;
 * `joined`, pieces joined across in-word signs (`f.o.o`, `ass-hat`), then runs of two or more
 * single letters joined across spaces (`f o o`, but `a b.a.d` is `a bad`). The matcher looks at both.
 */
export function wordsOf(normalized: string): { split: string[]; joined: string[] } {
  const split: string[] = [];
  const inWord: string[] = [];
  // Whether the gap before each of inWord's words was spaces and in-word signs only.
  const spaceBefore: boolean[] = [];
  let start = -1;
  let gap: Kind.Inside | Kind.Space | Kind.Break | undefined;
  const length = normalized.length;
  for (let i = 0; i <= length; ) {
    const code = i < length ? normalized.charCodeAt(i) : 32;
    const wide = code >= 0xd800 && code < 0xdc00 && i + 1 < length;
    const kind = code < 128 ? ASCII_KINDS[code]! : kindOf(wide ? normalized.slice(i, i + 2) : normalized[i]!);
    if (kind === Kind.Word) {
      if (start < 0) start = i;
    } else {
      if (start >= 0) {
        const piece = normalized.slice(start, i);
        split.push(piece);
        if (gap === Kind.Inside && inWord.length > 0) inWord[inWord.length - 1] += piece;
        else {
          if (inWord.length > 0) spaceBefore.push(gap === Kind.Space);
          inWord.push(piece);
        }
        start = -1;
        gap = kind;
      } else if (gap !== undefined && gap !== Kind.Break && kind !== gap) {
        // A gap of in-word signs only joins; with a space it is a space; anything else breaks.
        gap = kind === Kind.Break ? Kind.Break : Kind.Space;
      }
    }
    i += wide ? 2 : 1;
  }
  const joined: string[] = [];
  inWord.forEach((word, i) => {
    const joins = i > 0 && spaceBefore[i - 1] === true && word.length === 1 && inWord[i - 1]!.length === 1;
    if (joins) joined[joined.length - 1] += word;
    else joined.push(word);
  });
  return { split, joined };
}

type Part = { readonly text: string; readonly how: 'word' | 'prefix' | 'suffix' | 'inside' };
type Entry = { readonly listed: string; readonly parts: readonly Part[] };

function compileEntry(listed: string): Entry | undefined {
  const trimmed = listed.trim();
  const starts = trimmed.startsWith('*');
  const ends = trimmed.endsWith('*') && trimmed.length > 1;
  const { joined: words } = wordsOf(normalizeText(trimmed.replace(/^\*+|\*+$/g, '')));
  if (words.length === 0) return undefined;
  const parts = words.map((text, i): Part => {
    const first = i === 0 && starts;
    const last = i === words.length - 1 && ends;
    return { text, how: first && last ? 'inside' : first ? 'suffix' : last ? 'prefix' : 'word' };
  });
  return { listed: trimmed, parts };
}

function partMatches(part: Part, word: string): boolean {
  switch (part.how) {
    case 'word':
      return word === part.text;
    case 'prefix':
      return word.startsWith(part.text);
    case 'suffix':
      return word.endsWith(part.text);
    case 'inside':
      return word.includes(part.text);
  }
}

/**
 * Compiles `entries` (words and phrases, as a moderator lists them) into a matcher. Entries are
 * indexed by their first word (whole, its start, or its end), so a check costs a few map
 * lookups per word of the text, however long the list.
 */
export function compileBlocklist(entries: readonly string[]): Blocklist {
  const byWord = new Map<string, Entry[]>();
  const byPrefix = new Map<string, Entry[]>();
  const bySuffix = new Map<string, Entry[]>();
  const inside: Entry[] = [];
  const seen = new Set<string>();
  let size = 0;
  for (const listed of entries) {
    const entry = compileEntry(listed);
    if (!entry) continue;
    const key = entry.parts.map((part) => `${part.how}:${part.text}`).join(' ');
    if (seen.has(key)) continue;
    seen.add(key);
    size += 1;
    const first = entry.parts[0]!;
    const index = first.how === 'word' ? byWord : first.how === 'prefix' ? byPrefix : first.how === 'suffix' ? bySuffix : undefined;
    if (!index) inside.push(entry);
    else index.set(first.text, [...(index.get(first.text) ?? []), entry]);
  }
  const lengths = (index: Map<string, Entry[]>) => [...new Set([...index.keys()].map((key) => key.length))].sort((a, b) => a - b);
  const prefixLengths = lengths(byPrefix);
  const suffixLengths = lengths(bySuffix);

  const restMatches = (entry: Entry, words: readonly string[], at: number) =>
    at + entry.parts.length <= words.length && entry.parts.every((part, i) => i === 0 || partMatches(part, words[at + i]!));

  const firstMatching = (found: readonly Entry[] | undefined, words: readonly string[], at: number) =>
    found?.find((entry) => restMatches(entry, words, at))?.listed;

  function matchIn(words: readonly string[]): string | undefined {
    for (let at = 0; at < words.length; at += 1) {
      const word = words[at]!;
      let listed = firstMatching(byWord.get(word), words, at);
      for (let i = 0; listed === undefined && i < prefixLengths.length && prefixLengths[i]! <= word.length; i += 1) {
        listed = firstMatching(byPrefix.get(word.slice(0, prefixLengths[i])), words, at);
      }
      for (let i = 0; listed === undefined && i < suffixLengths.length && suffixLengths[i]! <= word.length; i += 1) {
        listed = firstMatching(bySuffix.get(word.slice(word.length - suffixLengths[i]!)), words, at);
      }
      for (let i = 0; listed === undefined && i < inside.length; i += 1) {
        if (word.includes(inside[i]!.parts[0]!.text) && restMatches(inside[i]!, words, at)) listed = inside[i]!.listed;
      }
      if (listed !== undefined) return listed;
    }
    return undefined;
  }

  return {
    size,
    match(text) {
      if (size === 0) return undefined;
      const { joined, split } = wordsOf(normalizeText(text));
      // Most text joins nothing: then the two readings are the same words.
      return matchIn(joined) ?? (joined.length === split.length ? undefined : matchIn(split));
    },
  };
}
