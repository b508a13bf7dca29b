/**
 * Numbers read as a native speaker writes them: every counted noun agrees with its number in
 * every language ("1 credit", "1.000.000 de créditos"), whichever parameter carries it, and a
 * month is named in words, in the reader's language.
 */
import { describe, expect, it } from 'vitest';
import { CATALOGUES, LOCALES, isPlural, placeholdersOf, translator, type Message, type MessageKey } from '../../../src/i18n/index.js';

/** Every message of a language written with every parameter set to `value`. */
function everyMessage(locale: (typeof LOCALES)[number], value: number): Array<[string, string]> {
  const t = translator(locale);
  return Object.entries(CATALOGUES.en).map(([key, message]) => {
    const params = Object.fromEntries([...placeholdersOf(message)].map((name) => [name, value]));
    return [key, t.text({ key: key as MessageKey, params })];
  });
}

/** The noun forms that must never follow the number 1 (or a round million, in Spanish and Portuguese). */
const WRONG_AFTER_ONE: Readonly<Record<(typeof LOCALES)[number], RegExp>> = {
  en: /\b1 (credits|jobs|requests|songs|rows|seconds)\b/,
  de: /\b1 (Credits|Anfragen|Songs|Zeilen|Sekunden)\b/,
  'es-ES': /\b1 (créditos|pedidos|peticiones|canciones|filas|segundos)\b/,
  'pt-BR': /\b1 (créditos|pedidos|músicas|linhas|segundos)\b/,
};

describe.each(LOCALES)('counted nouns in %s', (locale) => {
  it('are singular after 1, in every message and for every number in it', () => {
    const wrong = everyMessage(locale, 1)
      .map(([key, text]) => [key, text.replaceAll('*', '')] as const)
      .filter(([, text]) => WRONG_AFTER_ONE[locale].test(text))
      .map(([key, text]) => `${key}: ${text}`);
    expect(wrong).toEqual([]);
  });

  it('take the form for round millions where the language has one', () => {
    if (!new Intl.PluralRules(locale).resolvedOptions().pluralCategories.includes('many')) return;
    const million = new Intl.NumberFormat(locale).format(1_000_000);
    const wrong = everyMessage(locale, 1_000_000)
      .map(([key, text]) => [key, text.replaceAll('*', '')] as const)
      .filter(([, text]) => text.includes(`${million} créditos`) || text.includes(`${million} pedidos`) || text.includes(`${million} segundos`))
      .map(([key, text]) => `${key}: ${text}`);
    expect(wrong).toEqual([]);
  });
});

describe('a counted parameter', () => {
  it('names a counted noun every language has, with its plural forms', () => {
    const wrong: string[] = [];
    for (const locale of LOCALES) {
      const catalogue = CATALOGUES[locale] as Record<string, Message>;
      for (const [key, message] of Object.entries(catalogue)) {
        const forms = isPlural(message) ? Object.values(message) : [message];
        for (const [, unit] of forms.flatMap((form) => [...(form as string).matchAll(/\{\w+:(\w+)\}/g)])) {
          if (!isPlural(catalogue[`unit.${unit}`] ?? '')) wrong.push(`${locale} ${key}: no plural unit.${unit}`);
        }
      }
    }
    expect(wrong).toEqual([]);
  });

  it('writes the number with its noun, in the form its number needs', () => {
    const en = translator('en');
    expect(en('refusal.insufficientCredits', { balance: 1, cost: 5 })).toContain('This server has 1 credit and this costs 5.');
    expect(en('refusal.insufficientCredits', { balance: 1234, cost: 5 })).toContain('This server has 1,234 credits and this costs 5.');
    expect(translator('de')('creditsAdmin.usageLine', { user: '1', spent: 1, jobs: 1 })).toBe('• <@1>: 1 Credit für 1 Anfrage');
    expect(translator('es-ES')('creditsAdmin.usageLine', { user: '1', spent: 1_000_000, jobs: 2 })).toBe('• <@1>: 1.000.000 de créditos en 2 pedidos');
    expect(translator('pt-BR')('creditsAdmin.usageLine', { user: '1', spent: 3, jobs: 1 })).toBe('• <@1>: 3 créditos em 1 pedido');
  });
});

describe('a month', () => {
  // The last half hour of November in UTC is already December east of Greenwich: the month is the UTC one.
  const lateNovember = new Date(Date.UTC(2026, 10, 30, 23, 30));

  it.each([
    ['en', 'November 2026'],
    ['de', 'November 2026'],
    ['es-ES', 'noviembre de 2026'],
    ['pt-BR', 'novembro de 2026'],
  ] as const)('is written in words in %s', (locale, expected) => {
    expect(translator(locale).month(lateNovember)).toBe(expected);
  });

  it.each([
    ['en', 'Nov 30, 2026'],
    ['de', '30.11.2026'],
    ['es-ES', '30 nov 2026'],
    ['pt-BR', '30 de nov. de 2026'],
  ] as const)('names its day the %s way where Discord’s timestamps do not render', (locale, expected) => {
    expect(translator(locale).day(lateNovember)).toBe(expected);
  });

  it('reads in words wherever a month is shown', () => {
    const usage = { spent: 3, count: 2, mySpent: 1, myJobs: 1, month: translator('es-ES').month(lateNovember) };
    expect(translator('es-ES')('credits.used', usage)).toBe('Gastado en noviembre de 2026: 3 créditos en 2 pedidos (tú: 1 en 1)');
  });
});
