/**
 * What the router and the handlers read of an interaction and how they answer it: the part of
 * discord.js's interaction classes the bot uses, named here so that both transports run the
 * same handlers. Over the gateway the port is discord.js's own interaction (it has all of
 * this); over HTTP it is built from the raw payload and answers through @discordjs/core
 * (payload-interaction.ts). Why: docs/decisions/http-interactions-port.md
 */
import type { REST } from '@discordjs/rest';
import type {
  APIEmbed,
  APIMessageTopLevelComponent,
  APIModalInteractionResponseCallbackData,
  ApplicationCommandOptionType,
  ChannelType,
  InteractionType,
  Locale,
} from 'discord-api-types/v10';

/** Something a builder turns into its API form (discord.js's builders: rows, buttons, embeds, modals). */
export interface JSONEncodable<Value> {
  toJSON(): Value;
}

/** A file sent with an answer: its bytes and the name the member sees. */
export interface AnswerFile {
  readonly attachment: Buffer;
  readonly name: string;
}

/** A message as the bot answers with it; `flags` are Discord's message flags (Ephemeral, 64). */
export interface AnswerOptions {
  readonly content?: string;
  readonly embeds?: readonly (APIEmbed | JSONEncodable<APIEmbed>)[];
  readonly components?: readonly (APIMessageTopLevelComponent | JSONEncodable<APIMessageTopLevelComponent>)[];
  readonly files?: readonly AnswerFile[];
  readonly flags?: number;
  readonly allowedMentions?: { readonly parse?: readonly ('users' | 'roles' | 'everyone')[] };
}

/** The member who used the interaction. */
export interface InteractionUser {
  readonly id: string;
  readonly username: string;
}

/** A file attached to a command option, as Discord resolved it. */
export interface OptionAttachment {
  readonly id: string;
  readonly name: string;
  readonly url: string;
  readonly size: number;
  readonly contentType: string | null;
}

/** One option of a chat input command as Discord sent it, with what it resolved. */
export interface CommandOption {
  readonly name: string;
  readonly type: ApplicationCommandOptionType;
  readonly value?: string | number | boolean;
  readonly options?: readonly CommandOption[];
  readonly focused?: boolean;
  readonly user?: InteractionUser;
  readonly channel?: { readonly id: string; readonly type: number; readonly name?: string | null } | null;
  readonly role?: { readonly id: string; readonly name: string } | null;
  readonly attachment?: OptionAttachment;
}

/** An entitlement the member holds, as the interaction lists it. */
export interface InteractionEntitlement {
  readonly id: string;
  readonly skuId: string;
  readonly applicationId: string;
  readonly userId: string | null;
  readonly guildId: string | null;
  readonly consumed: boolean;
}

/**
 * The Discord client behind the interaction, as far as the handlers use it: the REST client
 * (webhook calls with the interaction's token), and the gateway's guild cache where there is one.
 */
export interface InteractionClient {
  readonly rest: REST;
  readonly guilds?: { readonly cache: ReadonlyMap<string, { readonly name: string }> };
  /** The gateway's channel cache (with the Guilds intent, every channel of the bot's guilds). */
  readonly channels?: { readonly cache: ReadonlyMap<string, { readonly id: string; readonly nsfw?: boolean }> };
}

/** An interaction from a guild (the router hands on no other). */
export interface InGuild {
  readonly guildId: string;
  readonly guildLocale: Locale;
}

/** What every interaction carries, and which kind it is. */
export interface InteractionPort {
  readonly id: string;
  readonly applicationId: string;
  /** The interaction's webhook token: never logged, never shown. */
  readonly token: string;
  readonly type: InteractionType;
  readonly guildId: string | null;
  readonly channelId: string | null;
  readonly locale: Locale;
  readonly guildLocale: Locale | null;
  readonly user: InteractionUser;
  /** The member's roles: ids as Discord sent them, or discord.js's role manager. */
  readonly member: { readonly roles: readonly string[] | { readonly cache: ReadonlyMap<string, unknown> } } | null;
  readonly memberPermissions: { has(permission: bigint): boolean } | null;
  /**
   * The channel the interaction ran in, as the interaction describes it (a thread knows its
   * parent). `nsfw`: age-restricted; a thread has no such flag of its own and follows its parent.
   */
  readonly channel: { readonly type: ChannelType; readonly parentId?: string | null; readonly nsfw?: boolean } | null;
  readonly createdAt: Date;
  /** The largest attachment the interaction's server takes, in bytes, when the interaction says. */
  readonly attachmentSizeLimit?: number;
  /** What the member holds of the application's SKUs (Discord lists them on every interaction). */
  readonly entitlements: ReadonlyMap<string, InteractionEntitlement>;
  readonly client: InteractionClient;
  inGuild(): this is InGuild;
  isChatInputCommand(): this is ChatInputPort;
  isAutocomplete(): this is AutocompletePort;
  isButton(): this is ButtonPort;
  isStringSelectMenu(): this is StringSelectPort;
  isModalSubmit(): this is ModalSubmitPort;
  isMessageContextMenuCommand(): this is MessageCommandPort;
}

/** An interaction the bot answers with a message (or a modal): everything but autocomplete. */
export interface RepliablePort extends InteractionPort {
  readonly replied: boolean;
  readonly deferred: boolean;
  readonly ephemeral: boolean | null;
  reply(options: AnswerOptions): Promise<unknown>;
  deferReply(options?: { readonly flags?: number }): Promise<unknown>;
  editReply(options: AnswerOptions): Promise<unknown>;
  followUp(options: AnswerOptions): Promise<{ readonly id: string }>;
  deleteReply(): Promise<void>;
}

/** A modal, opened as the first answer to a command or a component (never to a modal). */
export type ModalOptions = APIModalInteractionResponseCallbackData | JSONEncodable<APIModalInteractionResponseCallbackData>;

export interface ChatInputPort extends RepliablePort {
  readonly commandName: string;
  readonly options: { readonly data: readonly CommandOption[] };
  showModal(modal: ModalOptions): Promise<unknown>;
}

/** The message a message command (the "Apps" menu on a message) was used on, as Discord resolved it. */
export interface TargetMessage {
  readonly id: string;
  readonly author: { readonly id: string };
  readonly embeds: ReadonlyArray<{ readonly footer: { readonly text: string } | null }>;
}

export interface MessageCommandPort extends RepliablePort {
  readonly commandName: string;
  readonly targetMessage: TargetMessage;
  showModal(modal: ModalOptions): Promise<unknown>;
}

export interface AutocompletePort extends InteractionPort {
  readonly commandName: string;
  readonly responded: boolean;
  readonly options: {
    getFocused(full: true): { readonly name: string; readonly value: string };
    getFocused(full?: boolean): string;
  };
  respond(choices: readonly { readonly name: string; readonly value: string | number }[]): Promise<unknown>;
}

/** A button or a select menu on one of the bot's messages. */
export interface ComponentPort extends RepliablePort {
  readonly customId: string;
  /** The message the component sits on: its embeds' footers tell a result's job and language. */
  readonly message: { readonly id: string; readonly embeds: TargetMessage['embeds'] };
  deferUpdate(): Promise<unknown>;
  showModal(modal: ModalOptions): Promise<unknown>;
}

export type ButtonPort = ComponentPort;

export interface StringSelectPort extends ComponentPort {
  readonly values: readonly string[];
}

export interface ModalSubmitPort extends RepliablePort {
  readonly customId: string;
  /** The submitted fields by custom id; a field left empty may be missing. */
  readonly fields: { readonly fields: ReadonlyMap<string, { readonly value?: string } | object> };
  deferUpdate(): Promise<unknown>;
}
