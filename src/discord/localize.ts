/**
 * Command names and descriptions in every language of the catalogue (`name_localizations`,
 * `description_localizations`), from the keys `command.<path>.name|description` and
 * `command.<path>.choice.<value>`, `<path>` being the names joined by dots
 * (e.g. `command.settings.channels.add.description`).
 */
import type { RESTPostAPIChatInputApplicationCommandsJSONBody } from 'discord-api-types/v10';
import { CATALOGUES, DISCORD_LOCALES_OF, type AppLocale, type MessageKey } from '../i18n/index.js';

type Localizations = Record<string, string>;

interface Node {
  name: string;
  description?: string;
  options?: Node[];
  choices?: Array<{ name: string; value: string | number; name_localizations?: Localizations }>;
  name_localizations?: Localizations;
  description_localizations?: Localizations;
}

/** The catalogue keys a definition needs, each with the English text it must match (for tests). */
export function localizationKeys(definition: RESTPostAPIChatInputApplicationCommandsJSONBody): Array<{ key: string; english: string }> {
  const keys: Array<{ key: string; english: string }> = [];
  walk(definition as Node, `command.${definition.name}`, (key, text) => keys.push({ key, english: text }));
  return keys;
}

/** A copy of `definition` with its translations added. */
export function localizeCommand<D extends RESTPostAPIChatInputApplicationCommandsJSONBody>(definition: D): D {
  const copy = structuredClone(definition) as unknown as Node;
  localizeNode(copy, `command.${definition.name}`);
  return copy as unknown as D;
}

function localizeNode(node: Node, path: string): void {
  node.name_localizations = translations(`${path}.name`);
  if (node.description !== undefined) node.description_localizations = translations(`${path}.description`);
  for (const choice of node.choices ?? []) choice.name_localizations = translations(`${path}.choice.${choice.value}`);
  for (const option of node.options ?? []) localizeNode(option, `${path}.${option.name}`);
}

function walk(node: Node, path: string, visit: (key: string, english: string) => void): void {
  visit(`${path}.name`, node.name);
  if (node.description !== undefined) visit(`${path}.description`, node.description);
  for (const choice of node.choices ?? []) visit(`${path}.choice.${choice.value}`, choice.name);
  for (const option of node.options ?? []) walk(option, `${path}.${option.name}`, visit);
}

/** A message command's name in every language of the catalogue, from its key (`command.<name>.name`). */
export function localizedNames(key: MessageKey): Localizations {
  return translations(key);
}

function translations(key: string): Localizations {
  const out: Localizations = {};
  for (const [locale, codes] of Object.entries(DISCORD_LOCALES_OF) as Array<[Exclude<AppLocale, 'en'>, readonly string[]]>) {
    const text = CATALOGUES[locale][key as MessageKey];
    if (typeof text !== 'string') continue;
    for (const code of codes) out[code] = text;
  }
  return out;
}
