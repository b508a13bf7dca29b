/**
 * Speaking the member's language: `translator(locale)` gives the `t` that every reply, refusal
 * and result is written with, and `LocalText` carries a message (key and parameters) through
 * layers that do not know the language yet, such as errors.
 */
import { en, type Catalogue, type MessageKey, type ParamsArg } from './catalogue.js';
import { catalogue as de } from './de/index.js';
import { catalogue as esES } from './es-ES/index.js';
import { isAppLocale, resolveLocale, type AppLocale } from './locales.js';
import { isPlural, type Message, type Plural } from './messages.js';
import { catalogue as ptBR } from './pt-BR/index.js';

export { DISCORD_LOCALES_OF, LOCALES, isAppLocale, resolveLocale, type AppLocale } from './locales.js';
export type { MessageKey, ParamsArg, ParamsOf } from './catalogue.js';
export { placeholdersOf, isPlural, type Message, type Plural } from './messages.js';

export const CATALOGUES: Readonly<Record<AppLocale, Catalogue>> = { en, 'es-ES': esES, 'pt-BR': ptBR, de };

/** Writes a message in one language. */
export type Translate = <K extends MessageKey>(key: K, ...params: ParamsArg<K>) => string;

/** A message not yet written: its key and parameters, rendered later in the reader's language. */
export interface LocalText {
  readonly key: MessageKey;
  readonly params?: Readonly<Record<string, string | number>>;
}

export function localText<K extends MessageKey>(key: K, ...params: ParamsArg<K>): LocalText {
  return params[0] === undefined ? { key } : { key, params: params[0] };
}

/** A language's `t`, with its language, a writer for a carried message, and its ways of naming a month and a day. */
type LocaleTranslator = Translate & { readonly locale: AppLocale; text(text: LocalText): string; month(date: Date): string; day(date: Date): string };

const translators = new Map<AppLocale, LocaleTranslator>();

/** The `t` of a language (cached; one per language). */
export function translator(locale: AppLocale | string | null | undefined) {
  const resolved = isAppLocale(locale) ? locale : resolveLocale(locale);
  let translate = translators.get(resolved);
  if (!translate) {
    const catalogue = CATALOGUES[resolved];
    const numbers = new Intl.NumberFormat(resolved);
    const plurals = new Intl.PluralRules(resolved);
    const months = new Intl.DateTimeFormat(resolved, { month: 'long', year: 'numeric', timeZone: 'UTC' });
    const days = new Intl.DateTimeFormat(resolved, { dateStyle: 'medium', timeZone: 'UTC' });
    const counted = (unit: string, count: string | number): string | undefined => {
      const message = (catalogue as Readonly<Record<string, Message | undefined>>)[`unit.${unit}`];
      return message === undefined ? undefined : render(message, { count }, numbers, plurals, counted);
    };
    // Each message with its command names written in, once per key: the catalogues never change.
    const messages = new Map<MessageKey, Message>();
    const write = (key: MessageKey, params?: Readonly<Record<string, string | number>>): string => {
      let message = messages.get(key);
      if (message === undefined) messages.set(key, (message = withCommandNames(catalogue[key] ?? en[key], catalogue)));
      return render(message, params, numbers, plurals, counted);
    };
    translate = Object.assign(<K extends MessageKey>(key: K, ...params: ParamsArg<K>) => write(key, params[0]), {
      locale: resolved,
      text: (text: LocalText) => write(text.key, text.params),
      /** A UTC calendar month as the reader says it: "November 2026", "noviembre de 2026". */
      month: (date: Date) => months.format(date),
      /** A UTC day as the reader writes it, where Discord's `<t:…:d>` does not render (menus): "Nov 25, 2026". */
      day: (date: Date) => days.format(date),
    });
    translators.set(resolved, translate);
  }
  return translate;
}

export type Translator = ReturnType<typeof translator>;

/** English: for logs, for tests, and where no reader is known. */
export const english = translator('en');

/**
 * Writes the command references of a message (`{/jobs show id:}`) with the names the reader's
 * Discord shows: the command, subcommand and option names of their language, and a choice's
 * name for `option:value` (see README.md).
 */
function withCommandNames(message: Message, catalogue: Catalogue): Message {
  const write = (form: string) =>
    form.replace(COMMAND_REFERENCE, (_whole, kind: string, reference: string) => {
      const written = commandReference(reference, catalogue);
      return kind === '/' ? written : (written.split(' ').at(-1) ?? written);
    });
  if (!isPlural(message)) return /\{[/:]/.test(message) ? write(message) : message;
  return Object.fromEntries(Object.entries(message).map(([category, form]) => [category, write(form as string)])) as unknown as Plural;
}

/** `{/jobs show}` writes a command as the reader types it; `{:song voice}` writes only the last name (an option's). */
export const COMMAND_REFERENCE = /\{([/:])([^}]+)\}/g;

function commandReference(reference: string, catalogue: Catalogue): string {
  const names = catalogue as Readonly<Record<string, Message | undefined>>;
  const name = (key: string, fallback: string) => {
    const found = names[key];
    return typeof found === 'string' ? found : fallback;
  };
  const path: string[] = [];
  const words: string[] = [];
  for (const token of reference.trim().split(/\s+/)) {
    const colon = token.indexOf(':');
    if (colon < 0) {
      path.push(token);
      words.push(name(`command.${path.join('.')}.name`, token));
      continue;
    }
    const option = token.slice(0, colon);
    const value = token.slice(colon + 1);
    const optionPath = `command.${[...path, option].join('.')}`;
    words.push(`${name(`${optionPath}.name`, option)}:${value === '' ? '' : name(`${optionPath}.choice.${value}`, value)}`);
  }
  return `/${words.join(' ')}`;
}

/**
 * `{name}` writes a parameter (a number formatted for the language, but bare in `<t:{at}:R>`);
 * `{name:unit}` writes a number with its noun in the right plural form, from the catalogue's
 * `unit.<unit>` (`{cost:credits}`: "1 credit", "5 credits").
 */
const PARAMETER = /\{(\w+)(?::(\w+))?\}/g;

function render(
  message: Message,
  params: Readonly<Record<string, string | number>> | undefined,
  numbers: Intl.NumberFormat,
  plurals: Intl.PluralRules,
  counted: (unit: string, count: string | number) => string | undefined,
): string {
  let form: string;
  if (isPlural(message)) {
    const count = Number(params?.count ?? 0);
    form = message[plurals.select(count)] ?? message.other;
  } else {
    form = message;
  }
  if (!params) return form;
  return form.replace(PARAMETER, (whole, name: string, unit: string | undefined, offset: number) => {
    const value = params[name];
    if (value === undefined) return whole;
    // Discord's timestamp markup (`<t:{at}:R>`) takes the bare Unix seconds.
    if (form.startsWith('<t:', offset - 3)) return String(value);
    // A number given as text (digits kept ungrouped on purpose) is counted as written.
    if (unit !== undefined) return counted(unit, value) ?? (typeof value === 'number' ? numbers.format(value) : value);
    return typeof value === 'number' ? numbers.format(value) : value;
  });
}
