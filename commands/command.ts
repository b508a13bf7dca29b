/**
 * The shape of a command file: its definition (as Discord registers it), how the router
 * acknowledges it, its handler, and optionally its autocomplete and the buttons and modals
 * that belong to it.
 */
import type { RESTPostAPIChatInputApplicationCommandsJSONBody } from 'discord-api-types/v10';
import type {
  ApplicationCommandOptionChoiceData,
  AutocompleteInteraction,
  ButtonInteraction,
  ChatInputCommandInteraction,
  ModalSubmitInteraction,
} from 'discord.js';
import type { CommandContext } from '../src/discord/context.js';
import type { CustomId, CustomIdAction } from '../src/discord/custom-ids.js';
import type { CommandArgs } from '../src/discord/options.js';

export type { CommandContext } from '../src/discord/context.js';

/** Commands run only in guilds (`contexts: [0]`), so the router hands on guild interactions only. */
export type GuildChatInput = ChatInputCommandInteraction<'cached' | 'raw'>;
export type GuildAutocomplete = AutocompleteInteraction<'cached' | 'raw'>;
export type GuildButton = ButtonInteraction<'cached' | 'raw'>;
export type GuildModalSubmit = ModalSubmitInteraction<'cached' | 'raw'>;

/**
 * How the router answers Discord before the handler touches the database: `public` and
 * `ephemeral` defer a reply; `update` defers an update of the message the button sits on;
 * `modal` leaves the first answer to the handler, which must open a modal at once.
 */
export type Acknowledgement = 'public' | 'ephemeral' | 'update' | 'modal';

export type ChatInputDefinition = RESTPostAPIChatInputApplicationCommandsJSONBody;

export interface Command<Definition extends ChatInputDefinition = ChatInputDefinition> {
  readonly definition: Definition;
  /** Decided from the options alone: no database, no upstream call. */
  acknowledge(args: CommandArgs<Definition>): 'public' | 'ephemeral';
  execute(interaction: GuildChatInput, args: CommandArgs<Definition>, context: CommandContext): Promise<void>;
  /** Choices for the focused option; the router answers with at most 25. */
  autocomplete?(interaction: GuildAutocomplete, context: CommandContext): Promise<readonly ApplicationCommandOptionChoiceData[]>;
  /** Buttons this command's results carry, by custom-id action. */
  readonly buttons?: Partial<Record<CustomIdAction, ButtonHandler>>;
  /** Modals this command opens, by custom-id action. */
  readonly modals?: Partial<Record<CustomIdAction, ModalHandler>>;
}

export interface ButtonHandler {
  readonly acknowledge: Acknowledgement;
  execute(interaction: GuildButton, id: CustomId, context: CommandContext): Promise<void>;
}

export interface ModalHandler {
  readonly acknowledge: 'public' | 'ephemeral';
  execute(interaction: GuildModalSubmit, id: CustomId, context: CommandContext): Promise<void>;
}

/** Keeps the definition's literal type, so `args` in `execute` is derived from it. */
export function defineCommand<const Definition extends ChatInputDefinition>(command: Command<Definition>): Command<Definition> {
  return command;
}
