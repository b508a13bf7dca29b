/**
 * The commands the bot tells members to type (`/song prompt:a lullaby voice:Sine Singer`), in
 * every language: each names a command, subcommand and options that exist under the names the
 * reader's Discord shows, a choice by its shown name, and every option the command requires,
 * so that typing it as written sends it.
 */
import { ApplicationCommandOptionType } from 'discord-api-types/v10';
import { describe, expect, it } from 'vitest';
import { commandDefinitions } from '../../../commands/index.js';
import { CATALOGUES, LOCALES, placeholdersOf, translator, type MessageKey } from '../../../src/i18n/index.js';

interface Shape {
  readonly type?: number;
  readonly name: string;
  readonly required?: boolean;
  readonly choices?: readonly { readonly value: string | number }[];
  readonly options?: readonly Shape[];
}

const isSubcommand = (option: Shape) =>
  option.type === ApplicationCommandOptionType.Subcommand || option.type === ApplicationCommandOptionType.SubcommandGroup;

/** Every message of the catalogue as a member reads it, its placeholders filled in. */
function rendered(locale: (typeof LOCALES)[number]): Array<[string, string]> {
  const t = translator(locale);
  return Object.entries(CATALOGUES.en).map(([key, message]) => {
    const params = Object.fromEntries([...placeholdersOf(message)].map((name) => [name, name === 'count' ? 2 : 'Sine Singer']));
    return [key, t.text({ key: key as MessageKey, params })];
  });
}

/** What is wrong with a command written in a code span, for a reader of `locale`; empty when it sends as written. */
function problemsOf(locale: (typeof LOCALES)[number], code: string): string[] {
  const names = { ...CATALOGUES.en, ...CATALOGUES[locale] } as Record<string, unknown>;
  const shown = (path: string[]) => names[`command.${path.join('.')}.name`] ?? path.at(-1);
  const words = code.slice(1).split(' ');
  let shape: Shape | undefined = (commandDefinitions as readonly Shape[]).find((command) => shown([command.name]) === words[0]);
  if (!shape) return [`no command /${words[0]}`];
  const path = [shape.name];
  let index = 1;
  while (shape.options?.some(isSubcommand) && index < words.length && !words[index]!.includes(':')) {
    const word = words[index];
    const sub: Shape | undefined = shape.options.find((option) => isSubcommand(option) && shown([...path, option.name]) === word);
    if (!sub) return [`no subcommand ${word} of /${path.join(' ')}`];
    shape = sub;
    path.push(sub.name);
    index += 1;
  }
  if (shape.options?.some(isSubcommand)) return [`/${path.join(' ')} needs a subcommand`];
  const given = new Map<string, string>();
  let current: Shape | undefined;
  for (const word of words.slice(index)) {
    const colon = word.indexOf(':');
    const option = colon > 0 ? shape.options?.find((candidate) => shown([...path, candidate.name]) === word.slice(0, colon)) : undefined;
    if (option) {
      current = option;
      given.set(option.name, word.slice(colon + 1));
    } else if (current) {
      given.set(current.name, `${given.get(current.name)} ${word}`);
    } else {
      return [`"${word}" is no option of /${path.join(' ')}`];
    }
  }
  const problems: string[] = [];
  for (const option of shape.options ?? []) {
    const value = given.get(option.name);
    if (option.required && !value) problems.push(`/${path.join(' ')} needs ${shown([...path, option.name])}:`);
    const choiceName = (choice: string | number) => names[`command.${[...path, option.name].join('.')}.choice.${choice}`];
    if (value && option.choices && !option.choices.some((choice) => value === choiceName(choice.value))) {
      problems.push(`${value} is no choice of ${option.name}`);
    }
  }
  return problems;
}

describe.each(LOCALES)('hints in %s', (locale) => {
  it('name commands that send as written: options that exist, choices by their names, every required option', () => {
    const wrong: string[] = [];
    let checked = 0;
    for (const [key, text] of rendered(locale)) {
      for (const [, code] of text.matchAll(/`(\/[^`]+)`/g)) {
        // A command named with options to type (`/jobs show id:…`); a bare `/song` or `/song voice:` only names it.
        if (!/\S:\S/.test(code!)) continue;
        checked += 1;
        for (const problem of problemsOf(locale, code!)) wrong.push(`${key}: \`${code}\`: ${problem}`);
      }
    }
    expect(wrong).toEqual([]);
    expect(checked).toBeGreaterThanOrEqual(4);
  });
});
