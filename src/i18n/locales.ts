/**
 * The languages the bot speaks, and how Discord's locale codes map onto them. English is the
 * source language and the fallback for every locale without a translation.
 */
export const LOCALES = ['en', 'es-ES', 'pt-BR', 'de'] as const;
export type AppLocale = (typeof LOCALES)[number];

/**
 * Discord's locale codes served by each translation, for `name_localizations` and
 * `description_localizations` (Discord lists its codes in its reference: `es-419` is Latin
 * American Spanish, which reads the Spanish translation better than the English one).
 */
export const DISCORD_LOCALES_OF: Readonly<Record<Exclude<AppLocale, 'en'>, readonly string[]>> = {
  'es-ES': ['es-ES', 'es-419'],
  'pt-BR': ['pt-BR'],
  de: ['de'],
};

const BY_DISCORD_LOCALE = new Map<string, AppLocale>(
  Object.entries(DISCORD_LOCALES_OF).flatMap(([locale, codes]) => codes.map((code) => [code, locale as AppLocale] as const)),
);

/** Our locale for a Discord locale code (a member's `locale`, a guild's `guild_locale`); English when there is no translation. */
export function resolveLocale(discordLocale: string | null | undefined): AppLocale {
  return (discordLocale && BY_DISCORD_LOCALE.get(discordLocale)) || 'en';
}

export function isAppLocale(value: unknown): value is AppLocale {
  return typeof value === 'string' && (LOCALES as readonly string[]).includes(value);
}
