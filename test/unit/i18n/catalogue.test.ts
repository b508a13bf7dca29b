/**
 * What the compiler cannot check in the catalogue: every language has every key and no other,
 * each translation uses the same placeholders and is plural where English is, with the plural
 * forms its language needs; and every translated command name and description keeps
 * Discord's limits and name pattern.
 */
import { describe, expect, it } from 'vitest';
import { commandDefinitions } from '../../../commands/index.js';
import { localizationKeys, localizeCommand } from '../../../src/discord/localize.js';
import { CATALOGUES, COMMAND_REFERENCE, LOCALES, isPlural, placeholdersOf, resolveLocale, translator, type Message } from '../../../src/i18n/index.js';

const english = CATALOGUES.en as Record<string, Message>;
const translations = LOCALES.filter((locale) => locale !== 'en');

describe.each(translations)('the %s catalogue', (locale) => {
  const catalogue = CATALOGUES[locale] as Record<string, Message>;

  it('has every English key, and no other', () => {
    expect(Object.keys(catalogue).sort()).toEqual(Object.keys(english).sort());
  });

  it('uses the same placeholders as English, plural where English is, with its language’s plural forms', () => {
    const categories = new Intl.PluralRules(locale).resolvedOptions().pluralCategories;
    const wrong: string[] = [];
    for (const [key, source] of Object.entries(english)) {
      const translated = catalogue[key];
      if (translated === undefined) continue;
      const expected = [...placeholdersOf(source)].sort();
      const actual = [...placeholdersOf(translated)].sort();
      if (JSON.stringify(expected) !== JSON.stringify(actual)) wrong.push(`${key}: {${actual.join(', ')}} instead of {${expected.join(', ')}}`);
      if (isPlural(source) !== isPlural(translated)) wrong.push(`${key}: ${isPlural(source) ? 'must be' : 'must not be'} plural`);
      if (isPlural(translated)) {
        const missing = categories.filter((category) => !(category in translated));
        if (missing.length > 0) wrong.push(`${key}: plural forms ${missing.join(', ')} missing`);
      }
      const forms = isPlural(translated) ? Object.values(translated) : [translated];
      if (forms.some((form) => form.trim() === '')) wrong.push(`${key}: empty`);
    }
    expect(wrong).toEqual([]);
  });
});

describe('the English catalogue', () => {
  it('has the plural forms English needs', () => {
    const categories = new Intl.PluralRules('en').resolvedOptions().pluralCategories;
    const wrong = Object.entries(english)
      .filter(([, message]) => isPlural(message) && categories.some((category) => !(category in (message as object))))
      .map(([key]) => key);
    expect(wrong).toEqual([]);
  });
});

/** The command references of a message (`{/jobs show id:}`, `{:song voice}`), as written. */
function referencesOf(message: Message): string[] {
  const forms = isPlural(message) ? Object.values(message) : [message];
  return [...new Set(forms.flatMap((form) => [...(form as string).matchAll(COMMAND_REFERENCE)].map((match) => `${match[1]}${match[2]}`)))].sort();
}

describe('command references in messages', () => {
  it('name the same commands in every language, and each names a command, subcommand, option or choice that exists', () => {
    const wrong: string[] = [];
    for (const [key, source] of Object.entries(english)) {
      for (const locale of translations) {
        const translated = (CATALOGUES[locale] as Record<string, Message>)[key];
        if (translated && JSON.stringify(referencesOf(translated)) !== JSON.stringify(referencesOf(source))) {
          wrong.push(`${locale} ${key}: ${referencesOf(translated).join(' ')} instead of ${referencesOf(source).join(' ')}`);
        }
      }
      for (const reference of referencesOf(source)) {
        const path: string[] = [];
        for (const token of reference.slice(1).trim().split(/\s+/)) {
          const [name, value] = token.split(':');
          path.push(name!);
          if (english[`command.${path.join('.')}.name`] === undefined) wrong.push(`${key}: ${reference} names no command "${path.join(' ')}"`);
          if (value && english[`command.${path.join('.')}.choice.${value}`] === undefined) wrong.push(`${key}: ${reference} names no choice "${value}"`);
        }
      }
    }
    expect(wrong).toEqual([]);
  });

  it('are written with the names the reader’s Discord shows', () => {
    expect(translator('en')('jobs.refusal.notYours')).toContain('`/jobs list`');
    expect(translator('de')('jobs.refusal.notYours')).toContain(`\`/${CATALOGUES.de['command.jobs.name']} ${CATALOGUES.de['command.jobs.list.name']}\``);
    const spanish = translator('es-ES')('welcome.visibility');
    expect(spanish).toContain(`/${CATALOGUES['es-ES']['command.settings.name']} ${CATALOGUES['es-ES']['command.settings.visibility.name']} ${CATALOGUES['es-ES']['command.settings.visibility.mode.name']}:${CATALOGUES['es-ES']['command.settings.visibility.mode.choice.private']}`);
    expect(translator('pt-BR')('song.refusal.voiceModel')).toContain(`\`${CATALOGUES['pt-BR']['command.song.model.name']}\``);
  });
});

describe('translating', () => {
  it('picks the language from Discord’s locale, Latin American Spanish included, and falls back to English', () => {
    expect(resolveLocale('de')).toBe('de');
    expect(resolveLocale('pt-BR')).toBe('pt-BR');
    expect(resolveLocale('es-419')).toBe('es-ES');
    expect(resolveLocale('fr')).toBe('en');
    expect(resolveLocale(undefined)).toBe('en');
    expect(translator('fr')('error.generic')).toBe(CATALOGUES.en['error.generic']);
    expect(translator('de')('error.generic')).toBe(CATALOGUES.de['error.generic']);
  });
});

/** Discord's rules for application command names (its reference, "Application Command Naming"). */
const NAME = /^[-_\p{L}\p{N}\p{sc=Deva}\p{sc=Thai}]{1,32}$/u;

describe('command localizations', () => {
  it('exist in English for every command, subcommand, option and choice, matching the definitions', () => {
    const wrong: string[] = [];
    for (const definition of commandDefinitions) {
      for (const { key, english: text } of localizationKeys(definition)) {
        if (english[key] === undefined) wrong.push(`${key}: missing`);
        else if (english[key] !== text) wrong.push(`${key}: "${String(english[key])}" in the catalogue, "${text}" in the definition`);
      }
    }
    expect(wrong).toEqual([]);
  });

  it.each(translations)('keep Discord’s limits and name pattern in %s', (locale) => {
    const wrong: string[] = [];
    const check = (node: Record<string, unknown>, where: string) => {
      const names = (node.name_localizations ?? {}) as Record<string, string>;
      const descriptions = (node.description_localizations ?? {}) as Record<string, string>;
      for (const [code, name] of Object.entries(names)) {
        if (resolveLocale(code) !== locale) continue;
        const isChoice = !('type' in node) && !('options' in node) && 'value' in node;
        if (isChoice ? name.length < 1 || name.length > 100 : !NAME.test(name) || name !== name.toLowerCase()) wrong.push(`${where} name "${name}"`);
      }
      for (const [code, description] of Object.entries(descriptions)) {
        if (resolveLocale(code) === locale && (description.length < 1 || description.length > 100)) wrong.push(`${where} description (${description.length} characters)`);
      }
      for (const option of (node.options ?? []) as Array<Record<string, unknown>>) check(option, `${where} ${String(option.name)}`);
      for (const choice of (node.choices ?? []) as Array<Record<string, unknown>>) check(choice, `${where} choice ${String(choice.value)}`);
    };
    for (const definition of commandDefinitions) {
      const localized = localizeCommand(definition) as unknown as Record<string, unknown>;
      expect(Object.keys((localized.name_localizations ?? {}) as object).length).toBeGreaterThan(0);
      check(localized, `/${definition.name}`);
    }
    expect(wrong).toEqual([]);
  });
});
