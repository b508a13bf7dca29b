/**
 * The contract every file in `commands/` implements, owned by the Discord layer that runs
 * them: a command's definition (as Discord registers it), how the router acknowledges it, its
 * handler, and optionally its autocomplete and the buttons and modals that belong to it.
 */
import type { RESTPostAPIChatInputApplicationCommandsJSONBody, RESTPostAPIContextMenuApplicationCommandsJSONBody } from 'discord-api-types/v10';
import type { AutocompletePort, ButtonPort, ChatInputPort, InGuild, MessageCommandPort, ModalSubmitPort, StringSelectPort } from './interaction-port.js';
import type { CommandContext } from './context.js';
import type { CustomId, CustomIdAction } from '../discord-rest/custom-ids.js';
import type { CommandArgs } from './options.js';
import type { AcknowledgementKind } from './respond.js';

export type { CommandContext } from './context.js';

/**
 * Commands run only in guilds (`contexts: [0]`), so the router hands on guild interactions only,
 * through the interaction port (interaction-port.ts), whichever way they came.
 */
export type GuildChatInput = ChatInputPort & InGuild;
export type GuildAutocomplete = AutocompletePort & InGuild;
export type GuildButton = ButtonPort & InGuild;
export type GuildModalSubmit = ModalSubmitPort & InGuild;
export type GuildStringSelect = StringSelectPort & InGuild;
export type GuildMessageCommand = MessageCommandPort & InGuild;

/** An autocomplete choice: Discord shows `name` and sends back `value`. */
export interface AutocompleteChoice {
  readonly name: string;
  readonly value: string | number;
}

/** How the router answers Discord before the handler runs (see {@link AcknowledgementKind}). */
export type Acknowledgement = AcknowledgementKind;

export type ChatInputDefinition = RESTPostAPIChatInputApplicationCommandsJSONBody;

export interface Command<Definition extends ChatInputDefinition = ChatInputDefinition> {
  readonly definition: Definition;
  /** Decided from the options alone: no database, no upstream call. */
  acknowledge(args: CommandArgs<Definition>): 'public' | 'ephemeral';
  execute(interaction: GuildChatInput, args: CommandArgs<Definition>, context: CommandContext): Promise<void>;
  /** Choices for the focused option; the router answers with at most 25. */
  autocomplete?(interaction: GuildAutocomplete, context: CommandContext): Promise<readonly AutocompleteChoice[]>;
  /** Buttons this command's results carry, by custom-id action. */
  readonly buttons?: Partial<Record<CustomIdAction, ButtonHandler>>;
  /** Modals this command opens, by custom-id action. */
  readonly modals?: Partial<Record<CustomIdAction, ModalHandler>>;
  /** String select menus on this command's messages, by custom-id action. */
  readonly selects?: Partial<Record<CustomIdAction, SelectHandler>>;
  /** Message commands that belong with this one (Discord's "Apps" menu on a message), registered beside it. */
  readonly messageCommands?: readonly MessageCommand[];
}

export type MessageCommandDefinition = RESTPostAPIContextMenuApplicationCommandsJSONBody;

/** A command of the "Apps" menu on a message: it acts on that message (`interaction.targetMessage`). */
export interface MessageCommand {
  readonly definition: MessageCommandDefinition;
  readonly acknowledge: Acknowledgement;
  execute(interaction: GuildMessageCommand, context: CommandContext): Promise<void>;
}

export interface ButtonHandler {
  readonly acknowledge: Acknowledgement;
  execute(interaction: GuildButton, id: CustomId, context: CommandContext): Promise<void>;
}

/** A string select menu; the picked values are in `interaction.values`. */
export interface SelectHandler {
  readonly acknowledge: Acknowledgement;
  execute(interaction: GuildStringSelect, id: CustomId, context: CommandContext): Promise<void>;
}

export interface ModalHandler {
  readonly acknowledge: 'public' | 'ephemeral';
  execute(interaction: GuildModalSubmit, id: CustomId, context: CommandContext): Promise<void>;
}

/** Keeps the definition's literal type, so `args` in `execute` is derived from it. */
export function defineCommand<const Definition extends ChatInputDefinition>(command: Command<Definition>): Command<Definition> {
  return command;
}
