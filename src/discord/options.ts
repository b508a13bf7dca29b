/**
 * A command's arguments, typed from its definition. Definitions are written
 * `as const satisfies RESTPostAPIApplicationCommandsJSONBody`, so the handler's argument type
 * follows from them and is never written twice (the pattern Yuudachi uses).
 */
import { ApplicationCommandOptionType } from 'discord-api-types/v10';
import type { CommandOption, InteractionUser, OptionAttachment } from './interaction-port.js';

/** A channel or role option: the id and what the interaction resolved about it. */
export interface ResolvedChannel {
  readonly id: string;
  readonly type: number;
  readonly name: string | null;
}

export interface ResolvedRole {
  readonly id: string;
  readonly name: string;
}

interface OptionShape {
  readonly type: ApplicationCommandOptionType;
  readonly name: string;
  readonly required?: boolean;
  readonly choices?: readonly { readonly value: string | number }[];
  readonly options?: readonly OptionShape[];
}

type ValueOf<O extends OptionShape> = O extends { readonly choices: readonly { readonly value: infer V }[] }
  ? V
  : O['type'] extends ApplicationCommandOptionType.String
    ? string
    : O['type'] extends ApplicationCommandOptionType.Integer | ApplicationCommandOptionType.Number
      ? number
      : O['type'] extends ApplicationCommandOptionType.Boolean
        ? boolean
        : O['type'] extends ApplicationCommandOptionType.User
          ? InteractionUser
          : O['type'] extends ApplicationCommandOptionType.Channel
            ? ResolvedChannel
            : O['type'] extends ApplicationCommandOptionType.Role
              ? ResolvedRole
              : O['type'] extends ApplicationCommandOptionType.Attachment
                ? OptionAttachment
                : O['type'] extends ApplicationCommandOptionType.Mentionable
                  ? string
                  : never;

type Simplify<T> = { [K in keyof T]: T[K] } & {};

type BasicArgs<Options extends readonly OptionShape[]> = Simplify<
  { [O in Extract<Options[number], { readonly required: true }> as O['name']]: ValueOf<O> } & {
    [O in Exclude<Options[number], { readonly required: true }> as O['name']]?: ValueOf<O>;
  }
>;

type OptionsOf<T> = T extends { readonly options: infer O extends readonly OptionShape[] } ? O : readonly [];

type SubcommandArgs<O> = O extends { readonly type: ApplicationCommandOptionType.Subcommand; readonly name: infer N }
  ? { readonly subcommand: N; readonly options: BasicArgs<OptionsOf<O>> }
  : never;

type GroupArgs<O> = O extends { readonly type: ApplicationCommandOptionType.SubcommandGroup; readonly name: infer G; readonly options: infer S extends readonly OptionShape[] }
  ? SubcommandArgs<S[number]> & { readonly group: G }
  : never;

/**
 * `{ prompt: string; title?: string }`, or `{ subcommand: 'list'; options: {} } | …` for
 * commands with subcommands, and `{ group: 'blocklist'; subcommand: 'add'; options: … }` for
 * those in a group.
 */
export type CommandArgs<Definition> = Definition extends { readonly options: infer Options extends readonly OptionShape[] }
  ? Extract<Options[number], { readonly type: ApplicationCommandOptionType.Subcommand | ApplicationCommandOptionType.SubcommandGroup }> extends never
    ? BasicArgs<Options>
    : (SubcommandArgs<Options[number]> & { readonly group?: undefined }) | GroupArgs<Options[number]>
  : Record<string, never>;

function valueOf(option: CommandOption): unknown {
  switch (option.type) {
    case ApplicationCommandOptionType.User:
      return option.user;
    case ApplicationCommandOptionType.Channel:
      return option.channel
        ? { id: option.channel.id, type: option.channel.type, name: 'name' in option.channel ? option.channel.name : null }
        : { id: String(option.value), type: -1, name: null };
    case ApplicationCommandOptionType.Role:
      return option.role ? { id: option.role.id, name: option.role.name } : { id: String(option.value), name: '' };
    case ApplicationCommandOptionType.Attachment:
      return option.attachment;
    case ApplicationCommandOptionType.String:
      // Postgres text cannot hold U+0000: a lookup or a search with one would fail, not find nothing.
      return typeof option.value === 'string' ? option.value.replaceAll('\u0000', '') : option.value;
    default:
      return option.value;
  }
}

function collect(options: readonly CommandOption[] | undefined): Record<string, unknown> {
  const args: Record<string, unknown> = {};
  for (const option of options ?? []) {
    const value = valueOf(option);
    if (value !== undefined && value !== null) args[option.name] = value;
  }
  return args;
}

/** Whether the value Discord sent is of the option's type (and, for ids, resolved). */
function valueFits(option: CommandOption): boolean {
  switch (option.type) {
    case ApplicationCommandOptionType.String:
      return typeof option.value === 'string';
    case ApplicationCommandOptionType.Integer:
      return Number.isSafeInteger(option.value);
    case ApplicationCommandOptionType.Number:
      return typeof option.value === 'number' && Number.isFinite(option.value);
    case ApplicationCommandOptionType.Boolean:
      return typeof option.value === 'boolean';
    // Handlers take a user and an attachment as discord.js resolved them; a channel or a role may be its id alone.
    case ApplicationCommandOptionType.User:
      return option.user !== undefined;
    case ApplicationCommandOptionType.Role:
    case ApplicationCommandOptionType.Channel:
    case ApplicationCommandOptionType.Mentionable:
      return typeof option.value === 'string';
    case ApplicationCommandOptionType.Attachment:
      return option.attachment !== undefined;
    default:
      return false;
  }
}

/**
 * Whether the options Discord sent fit the command as this version defines it: one subcommand
 * of this command when it has subcommands, every option known and of its type, none twice, the
 * required ones there. A member's app with an older copy of the command sends what does not
 * fit (an option since renamed, a subcommand since removed), and so does a forged payload;
 * handlers read `args` as their definition types them, so such a payload never reaches one.
 */
export function fitsDefinition(definition: { readonly options?: readonly OptionShape[] }, data: readonly CommandOption[]): boolean {
  const declared = definition.options ?? [];
  const subcommands = declared.filter(
    (option) => option.type === ApplicationCommandOptionType.Subcommand || option.type === ApplicationCommandOptionType.SubcommandGroup,
  );
  if (subcommands.length > 0) {
    const given = data[0];
    const subcommand = subcommands.find((option) => option.name === given?.name && option.type === given.type);
    return data.length === 1 && subcommand !== undefined && fitsDefinition(subcommand, given?.options ?? []);
  }
  const seen = new Set<string>();
  for (const option of data) {
    const shape = declared.find((candidate) => candidate.name === option.name);
    if (!shape || shape.type !== option.type || seen.has(option.name) || !valueFits(option)) return false;
    seen.add(option.name);
  }
  return declared.every((option) => option.required !== true || seen.has(option.name));
}

/**
 * Reads the options of a chat input interaction into the shape `CommandArgs` describes.
 * Values are what Discord sent: every text still goes through a zod schema before use.
 */
export function readArgs<Definition>(data: readonly CommandOption[]): CommandArgs<Definition> {
  const first = data[0];
  if (first?.type === ApplicationCommandOptionType.SubcommandGroup) {
    const subcommand = first.options?.[0];
    return { group: first.name, subcommand: subcommand?.name, options: collect(subcommand?.options) } as unknown as CommandArgs<Definition>;
  }
  if (first?.type === ApplicationCommandOptionType.Subcommand) {
    return { subcommand: first.name, options: collect(first.options) } as unknown as CommandArgs<Definition>;
  }
  return collect(data) as unknown as CommandArgs<Definition>;
}
