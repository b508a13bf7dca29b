import {
  ApplicationCommandOptionType,
  InteractionContextType,
  PermissionFlagsBits,
  type APIApplicationCommandOption,
} from 'discord-api-types/v10';
import { describe, expect, it } from 'vitest';
import { commandDefinitions, commands } from '../../../commands/index.js';

/** Discord's documented limits for chat input commands. */
const NAME = /^[-_'\p{L}\p{N}\p{sc=Deva}\p{sc=Thai}]{1,32}$/u;
const MAX_COMMANDS = 100;
const MAX_OPTIONS = 25;
const MAX_CHOICES = 25;
const MAX_TOTAL_CHARACTERS = 4000;
const MAX_STRING_LENGTH = 6000;

const length = (text: string) => [...text].length;

interface OptionLike {
  type: ApplicationCommandOptionType;
  name: string;
  description: string;
  required?: boolean;
  autocomplete?: boolean;
  choices?: ReadonlyArray<{ name: string; value: string | number }>;
  options?: readonly OptionLike[];
  min_length?: number;
  max_length?: number;
  min_value?: number;
  max_value?: number;
}

const asOptions = (options: readonly APIApplicationCommandOption[] | undefined) => (options ?? []) as unknown as readonly OptionLike[];

/** Names, descriptions and choice names and values, through every level. */
function characters(options: readonly OptionLike[]): number {
  return options.reduce(
    (sum, option) =>
      sum +
      length(option.name) +
      length(option.description) +
      (option.choices ?? []).reduce((total, choice) => total + length(choice.name) + length(String(choice.value)), 0) +
      characters(option.options ?? []),
    0,
  );
}

function problemsOf(options: readonly OptionLike[], path: string): string[] {
  const problems: string[] = [];
  if (options.length > MAX_OPTIONS) problems.push(`${path}: ${options.length} options`);
  const names = new Set<string>();
  let optionalSeen = false;
  const nested = options.filter(
    (option) => option.type === ApplicationCommandOptionType.Subcommand || option.type === ApplicationCommandOptionType.SubcommandGroup,
  );
  if (nested.length > 0 && nested.length !== options.length) problems.push(`${path}: subcommands mixed with options`);
  for (const option of options) {
    const at = `${path} ${option.name}`;
    if (!NAME.test(option.name) || option.name !== option.name.toLowerCase()) problems.push(`${at}: bad name`);
    if (names.has(option.name)) problems.push(`${at}: duplicate name`);
    names.add(option.name);
    if (length(option.description) < 1 || length(option.description) > 100) problems.push(`${at}: description length`);
    if (option.required) {
      if (optionalSeen) problems.push(`${at}: required option after an optional one`);
    } else {
      optionalSeen = true;
    }
    const choices = option.choices ?? [];
    if (choices.length > MAX_CHOICES) problems.push(`${at}: ${choices.length} choices`);
    if (choices.length > 0 && option.autocomplete) problems.push(`${at}: choices with autocomplete`);
    for (const choice of choices) {
      if (length(choice.name) < 1 || length(choice.name) > 100) problems.push(`${at}: choice name length`);
      if (typeof choice.value === 'string' && (length(choice.value) < 1 || length(choice.value) > 100)) {
        problems.push(`${at}: choice value length`);
      }
    }
    if (option.max_length !== undefined && (option.max_length < 1 || option.max_length > MAX_STRING_LENGTH)) {
      problems.push(`${at}: max_length out of range`);
    }
    if (option.min_value !== undefined && option.max_value !== undefined && option.min_value > option.max_value) {
      problems.push(`${at}: min_value above max_value`);
    }
    if (option.type === ApplicationCommandOptionType.Subcommand) {
      const inner = option.options ?? [];
      if (inner.some((child) => child.type === ApplicationCommandOptionType.Subcommand)) problems.push(`${at}: nested subcommand`);
      problems.push(...problemsOf(inner, at));
    }
  }
  return problems;
}

describe('command definitions', () => {
  it('stay within Discord’s count of commands and have unique names', () => {
    expect(commandDefinitions.length).toBeLessThanOrEqual(MAX_COMMANDS);
    const names = commandDefinitions.map((definition) => definition.name);
    expect(new Set(names).size).toBe(names.length);
  });

  it.each(commandDefinitions.map((definition) => [definition.name, definition] as const))(
    '/%s meets Discord’s limits',
    (_name, definition) => {
      expect(definition.name).toMatch(NAME);
      expect(definition.name).toBe(definition.name.toLowerCase());
      expect(length(definition.description)).toBeGreaterThanOrEqual(1);
      expect(length(definition.description)).toBeLessThanOrEqual(100);
      expect(problemsOf(asOptions(definition.options), `/${definition.name}`)).toEqual([]);
      const total = length(definition.name) + length(definition.description) + characters(asOptions(definition.options));
      expect(total).toBeLessThanOrEqual(MAX_TOTAL_CHARACTERS);
    },
  );

  it.each(commandDefinitions.map((definition) => [definition.name, definition] as const))('/%s is guild-only', (_name, definition) => {
    expect(definition.contexts).toEqual([InteractionContextType.Guild]);
    expect(definition.dm_permission).toBe(false);
  });

  it('gives the moderator commands Manage Server as their default permission, and no other command', () => {
    for (const definition of commandDefinitions) {
      const moderated = ['credits-admin', 'settings', 'moderation'].includes(definition.name);
      expect(definition.default_member_permissions, definition.name).toBe(
        moderated ? String(PermissionFlagsBits.ManageGuild) : undefined,
      );
    }
  });

  it('offers the commands and options the documentation names', () => {
    const shape = Object.fromEntries(
      commandDefinitions.map((definition) => [
        definition.name,
        asOptions(definition.options).map((option) =>
          option.type === ApplicationCommandOptionType.SubcommandGroup
            ? `${option.name}[${(option.options ?? []).map((sub) => `${sub.name}(${(sub.options ?? []).map((child) => child.name).join(',')})`).join(',')}]`
            : option.type === ApplicationCommandOptionType.Subcommand
              ? `${option.name}(${(option.options ?? []).map((child) => child.name).join(',')})`
              : option.name,
        ),
      ]),
    );
    expect(shape).toEqual({
      song: ['prompt', 'lyrics', 'title', 'model', 'instrumental', 'voice'],
      lyrics: ['prompt'],
      voice: ['create(audio,name)', 'list()', 'delete(voice)'],
      video: ['song'],
      download: ['song', 'format'],
      upload: ['audio', 'title'],
      credits: [],
      jobs: ['list()', 'show(id)', 'cancel(id)', 'rename(id,title)'],
      library: ['user', 'query', 'liked'],
      charts: ['period', 'by'],
      play: ['song'],
      queue: [],
      skip: [],
      pause: [],
      resume: [],
      stop: [],
      volume: ['level'],
      seek: ['to'],
      loop: ['mode'],
      shuffle: [],
      remove: ['position'],
      move: ['from', 'to'],
      clear: [],
      radio: ['user', 'query', 'stay', 'chart'],
      notify: ['when-done'],
      contest: ['start(theme,days,channel,max-entries,winner-role)', 'enter(song)', 'status()', 'end(cancel)'],
      help: [],
      'credits-admin': [
        'usage(user)',
        'history(user)',
        'user-limit(amount,role)',
        'freeze()',
        'unfreeze()',
        'alert(channel,below)',
        'grant(amount,reason)',
        'take(amount,reason)',
        'allowance(amount)',
        'account()',
      ],
      settings: [
        'show()',
        'channels(add,remove,reset)',
        'role(role)',
        'moderator-role(role)',
        'dj-role(role)',
        'default-model(model)',
        'cooldown(seconds)',
        'notify(when-done)',
        'visibility(mode)',
        'charts(channel,day,hour,timezone,off)',
        'safety(review-channel,clear-review-channel,use-automod,explicit-in-age-restricted-only)',
      ],
      moderation: ['blocklist[add(words,list),remove(words,list),list(list)]', 'block(member,days,reason)', 'unblock(member)', 'blocks()', 'reports()'],
    });
  });

  it('has a handler for every autocomplete option', () => {
    for (const command of commands) {
      const options = asOptions(command.definition.options).flatMap((option) => [option, ...(option.options ?? [])]);
      if (options.some((option) => option.autocomplete)) expect(command.autocomplete, command.definition.name).toBeTypeOf('function');
    }
  });
});
