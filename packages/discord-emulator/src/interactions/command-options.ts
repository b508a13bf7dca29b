/** A chat-input command's options as Discord sends them: typed by the registered definition, with users, roles, channels and files resolved. */
import { ApplicationCommandOptionType } from 'discord-api-types/v10';
import type {
  APIApplicationCommandInteractionDataOption,
  APIApplicationCommandOption,
  APIInteractionDataResolved,
  APIInteractionDataResolvedChannel,
} from 'discord-api-types/v10';
import type { EmulatorStore } from '../store.js';
import type { StoredChannel, StoredGuild } from '../store/records.js';
import type { AttachmentInput, CommandOptionValue, PlainOptionValue } from '../types.js';

/** What a test names of the command being run and the values it gives. */
export interface CommandOptionsInput {
  name: string;
  subcommandGroup?: string;
  subcommand?: string;
  options?: Record<string, CommandOptionValue>;
  attachments?: Record<string, AttachmentInput>;
}

/** Wraps the leaf options in their subcommand and group, as Discord nests them. */
export function nestOptions(
  leaf: APIApplicationCommandInteractionDataOption[],
  group: string | undefined,
  subcommand: string | undefined,
): APIApplicationCommandInteractionDataOption[] {
  if (!subcommand) {
    if (group) throw new Error('a subcommand group needs a subcommand');
    return leaf;
  }
  const sub = { type: ApplicationCommandOptionType.Subcommand, name: subcommand, options: leaf } as APIApplicationCommandInteractionDataOption;
  if (!group) return [sub];
  return [{ type: ApplicationCommandOptionType.SubcommandGroup, name: group, options: [sub] } as APIApplicationCommandInteractionDataOption];
}

/** Finds the option definitions of the (sub)command being run, when the command is registered. */
function optionDefinitions(
  definitions: APIApplicationCommandOption[] | undefined,
  input: { name: string; subcommandGroup?: string; subcommand?: string },
): APIApplicationCommandOption[] | undefined {
  if (!definitions) return undefined;
  let scope: APIApplicationCommandOption[] = definitions;
  for (const [wanted, type] of [
    [input.subcommandGroup, ApplicationCommandOptionType.SubcommandGroup],
    [input.subcommand, ApplicationCommandOptionType.Subcommand],
  ] as const) {
    if (!wanted) continue;
    const found = scope.find((option) => option.name === wanted && option.type === type);
    if (!found) throw new Error(`command /${input.name} has no ${type === 1 ? 'subcommand' : 'group'} "${wanted}"`);
    // A subcommand without options has no `options` key at all.
    scope = ('options' in found ? (found.options ?? []) : []) as APIApplicationCommandOption[];
  }
  return scope;
}

/**
 * The options a member sends: checked and typed against the registered definitions when there
 * are any, with resolved users, roles, channels and uploaded files added to `resolved`.
 * `focused` is the option being typed into, for autocomplete.
 */
export function buildOptions(
  store: EmulatorStore,
  guild: StoredGuild,
  channel: StoredChannel,
  input: CommandOptionsInput,
  registered: APIApplicationCommandOption[] | undefined,
  resolved: APIInteractionDataResolved,
  focused: { name: string; value: string } | undefined,
): APIApplicationCommandInteractionDataOption[] {
  const definitions = optionDefinitions(registered, input);
  const typeOf = (name: string, fallback: ApplicationCommandOptionType): ApplicationCommandOptionType => {
    if (!definitions) return fallback;
    const definition = definitions.find((option) => option.name === name);
    if (!definition) throw new Error(`command /${input.name} has no option "${name}"`);
    return definition.type;
  };
  const result: APIApplicationCommandInteractionDataOption[] = [];
  for (const [name, given] of Object.entries(input.options ?? {})) {
    const value = typeof given === 'object' ? given.value : given;
    const type = typeOf(name, typeof given === 'object' ? given.type : inferOptionType(value));
    result.push({ name, type, value: resolveValue(store, guild, channel, type, value, resolved) } as APIApplicationCommandInteractionDataOption);
  }
  for (const [name, file] of Object.entries(input.attachments ?? {})) {
    const type = typeOf(name, ApplicationCommandOptionType.Attachment);
    if (type !== ApplicationCommandOptionType.Attachment) throw new Error(`option "${name}" of /${input.name} is not an attachment option`);
    const data = typeof file.data === 'string' ? Buffer.from(file.data) : Buffer.from(file.data);
    const { data: _bytes, ...attachment } = store.storeAttachment(
      channel.id,
      { filename: file.filename, contentType: file.contentType, data, ...(file.url !== undefined && { url: file.url }), ...(file.redirectTo !== undefined && { redirectTo: file.redirectTo }) },
      true,
    );
    (resolved.attachments ??= {})[attachment.id] = attachment;
    result.push({ name, type, value: attachment.id });
  }
  if (focused) {
    const type = typeOf(focused.name, ApplicationCommandOptionType.String);
    result.push({ name: focused.name, type, value: focused.value, focused: true } as APIApplicationCommandInteractionDataOption);
  }
  if (definitions && !focused) {
    for (const definition of definitions) {
      const required = 'required' in definition && definition.required === true;
      if (required && !result.some((option) => option.name === definition.name)) {
        throw new Error(`command /${input.name} needs option "${definition.name}"; Discord would not let a user send it without`);
      }
    }
  }
  return result;
}

function resolveValue(
  store: EmulatorStore,
  guild: StoredGuild,
  channel: StoredChannel,
  type: ApplicationCommandOptionType,
  value: PlainOptionValue,
  resolved: APIInteractionDataResolved,
): PlainOptionValue {
  const id = String(value);
  const addUser = (): boolean => {
    const user = store.users.get(id);
    if (!user) return false;
    (resolved.users ??= {})[id] = user;
    const member = guild.members.get(id);
    if (member) {
      const { user: _user, ...rest } = store.interactionMember(guild, channel, id);
      (resolved.members ??= {})[id] = rest;
    }
    return true;
  };
  const addRole = (): boolean => {
    const role = guild.roles.get(id);
    if (!role) return false;
    (resolved.roles ??= {})[id] = role;
    return true;
  };
  switch (type) {
    case ApplicationCommandOptionType.String:
      return String(value);
    case ApplicationCommandOptionType.Integer:
    case ApplicationCommandOptionType.Number:
      return Number(value);
    case ApplicationCommandOptionType.Boolean:
      return value === true || value === 'true';
    case ApplicationCommandOptionType.User:
      if (!addUser()) throw new Error(`no user ${id} for a user option`);
      return id;
    case ApplicationCommandOptionType.Role:
      if (!addRole()) throw new Error(`no role ${id} in guild ${guild.id}`);
      return id;
    case ApplicationCommandOptionType.Mentionable:
      if (!addUser() && !addRole()) throw new Error(`no user or role ${id}`);
      return id;
    case ApplicationCommandOptionType.Channel: {
      const target = store.channel(id);
      (resolved.channels ??= {})[id] = {
        id,
        type: target.type,
        name: target.name ?? '',
        permissions: store.channelPermissions(guild, target, store.botUser.id).toString(),
      } as APIInteractionDataResolvedChannel;
      return id;
    }
    default:
      return value;
  }
}

function inferOptionType(value: PlainOptionValue): ApplicationCommandOptionType {
  if (typeof value === 'boolean') return ApplicationCommandOptionType.Boolean;
  if (typeof value === 'number') return Number.isInteger(value) ? ApplicationCommandOptionType.Integer : ApplicationCommandOptionType.Number;
  return ApplicationCommandOptionType.String;
}

