/**
 * The shape of a catalogue entry: a string with `{name}` placeholders, or, when it depends on
 * the `count` parameter, its plural forms by CLDR category (`Intl.PluralRules`). `other` is
 * always there; a language adds what it needs (`one` for English, Spanish, Portuguese, German).
 */
export interface Plural {
  readonly zero?: string;
  readonly one?: string;
  readonly two?: string;
  readonly few?: string;
  readonly many?: string;
  readonly other: string;
}

export type Message = string | Plural;

/** A catalogue section: message keys to messages. */
export type Section = Readonly<Record<string, Message>>;

/** The same keys as the English section, each translated (its placeholders are checked by a test). */
export type Translation<English extends Section> = { readonly [K in keyof English]: Message };

export function isPlural(message: Message): message is Plural {
  return typeof message === 'object';
}

/** The placeholders a message uses, e.g. `{balance}` or `{balance:credits}` → `balance`; `count` for every plural. */
export function placeholdersOf(message: Message): Set<string> {
  const found = new Set<string>();
  const forms = isPlural(message) ? Object.values(message) : [message];
  for (const form of forms) for (const match of (form as string).matchAll(/\{(\w+)(?::\w+)?\}/g)) found.add(match[1]!);
  if (isPlural(message)) found.add('count');
  return found;
}
