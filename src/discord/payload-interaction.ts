/**
 * The interaction port (interaction-port.ts) over an interaction's raw payload, for
 * interactions Discord POSTs to the bot: read from the payload as Discord documents it, and
 * answered as discord.js answers, with the same rules (one first answer; edits and follow-ups
 * only after it). The first answer goes to `answerFirst` (the HTTP response); edits, follow-ups
 * and deletions go to Discord's webhook routes through @discordjs/core.
 */
import type { API } from '@discordjs/core/http-only';
import type { RawFile, REST } from '@discordjs/rest';
import {
  ApplicationCommandOptionType,
  ApplicationCommandType,
  ComponentType,
  InteractionResponseType,
  InteractionType,
  Locale,
  MessageFlags,
  PermissionFlagsBits,
  type APIApplicationCommandInteractionDataOption,
  type APIEmbed,
  type APIEntitlement,
  type APIInteraction,
  type APIInteractionDataResolved,
  type APIInteractionResponse,
  type APIMessage,
  type APIMessageComponentInteractionData,
  type APIModalSubmission,
} from 'discord-api-types/v10';
import type {
  AnswerOptions,
  AutocompletePort,
  ChatInputPort,
  CommandOption,
  ComponentPort,
  InGuild,
  InteractionEntitlement,
  JSONEncodable,
  ModalOptions,
  MessageCommandPort,
  ModalSubmitPort,
  StringSelectPort,
  TargetMessage,
} from './interaction-port.js';

/** Sends the interaction's first answer (Discord's callback) with the files it carries. */
export type AnswerFirst = (body: APIInteractionResponse, files: readonly RawFile[]) => Promise<void>;

export interface PayloadAnswering {
  readonly answerFirst: AnswerFirst;
  /** Where edits, follow-ups and deletions go (webhook routes, the interaction's token). */
  readonly api: API;
  /** The REST client behind `api`, for the handlers that call a webhook route themselves. */
  readonly rest: REST;
}

/** Discord's epoch, for the time a snowflake was made. */
const DISCORD_EPOCH = 1_420_070_400_000n;

function encoded<Value>(item: Value | JSONEncodable<Value>): Value {
  return typeof item === 'object' && item !== null && 'toJSON' in item && typeof item.toJSON === 'function' ? (item as JSONEncodable<Value>).toJSON() : (item as Value);
}

/** A message as the API takes it, and its files (named `files[n]`, listed as attachments). */
export function messageOf(options: AnswerOptions): { body: Record<string, unknown>; files: RawFile[] } {
  const files = (options.files ?? []).map((file) => ({ name: file.name, data: file.attachment }));
  const body = {
    ...(options.content !== undefined && { content: options.content }),
    ...(options.embeds && { embeds: options.embeds.map(encoded) }),
    ...(options.components && { components: options.components.map(encoded) }),
    ...(options.flags !== undefined && { flags: options.flags }),
    // Mentions are never pings unless asked for, as on the gateway's client.
    allowed_mentions: { parse: [...(options.allowedMentions?.parse ?? [])] },
    ...(files.length > 0 && { attachments: files.map((file, index) => ({ id: index, filename: file.name })) }),
  };
  return { body, files };
}

function optionsOf(options: readonly APIApplicationCommandInteractionDataOption[] | undefined, resolved: APIInteractionDataResolved | undefined): CommandOption[] {
  return (options ?? []).map((option) => {
    if (option.type === ApplicationCommandOptionType.Subcommand || option.type === ApplicationCommandOptionType.SubcommandGroup) {
      return { name: option.name, type: option.type, options: optionsOf(option.options, resolved) };
    }
    const value = option.value;
    const id = String(value);
    const user = option.type === ApplicationCommandOptionType.User ? resolved?.users?.[id] : undefined;
    const channel = option.type === ApplicationCommandOptionType.Channel ? resolved?.channels?.[id] : undefined;
    const role = option.type === ApplicationCommandOptionType.Role ? resolved?.roles?.[id] : undefined;
    const attachment = option.type === ApplicationCommandOptionType.Attachment ? resolved?.attachments?.[id] : undefined;
    return {
      name: option.name,
      type: option.type,
      value,
      ...('focused' in option && option.focused !== undefined && { focused: option.focused }),
      ...(user && { user: { id: user.id, username: user.username } }),
      ...(channel && { channel: { id: channel.id, type: channel.type, name: channel.name ?? null } }),
      ...(role && { role: { id: role.id, name: role.name } }),
      ...(attachment && {
        attachment: { id: attachment.id, name: attachment.filename, url: attachment.url, size: attachment.size, contentType: attachment.content_type ?? null },
      }),
    };
  });
}

function focusedIn(options: readonly CommandOption[]): CommandOption | undefined {
  for (const option of options) {
    if (option.focused) return option;
    const inner = option.options && focusedIn(option.options);
    if (inner) return inner;
  }
  return undefined;
}

/** The submitted text fields by custom id, whether in action rows or in labels. */
function fieldsOf(data: APIModalSubmission): Map<string, { readonly value?: string }> {
  const fields = new Map<string, { readonly value?: string }>();
  for (const top of data.components as ReadonlyArray<{ components?: unknown[]; component?: unknown }>) {
    for (const field of [...(top.components ?? []), ...(top.component ? [top.component] : [])] as Array<{ custom_id?: string; value?: unknown }>) {
      if (typeof field.custom_id === 'string') fields.set(field.custom_id, typeof field.value === 'string' ? { value: field.value } : {});
    }
  }
  return fields;
}

function entitlementOf(entitlement: APIEntitlement): InteractionEntitlement {
  return {
    id: entitlement.id,
    skuId: entitlement.sku_id,
    applicationId: entitlement.application_id,
    userId: entitlement.user_id ?? null,
    guildId: entitlement.guild_id ?? null,
    consumed: entitlement.consumed ?? false,
  };
}

/**
 * One interaction received over HTTP. Which members mean something depends on its kind (the
 * `is…` checks say which), as with discord.js's classes.
 */
export class PayloadInteraction implements ChatInputPort, AutocompletePort, ComponentPort, StringSelectPort, ModalSubmitPort, MessageCommandPort {
  readonly id: string;
  readonly applicationId: string;
  readonly token: string;
  readonly type: InteractionType;
  readonly guildId: string | null;
  readonly channelId: string | null;
  readonly locale: Locale;
  readonly guildLocale: Locale | null;
  readonly user: { readonly id: string; readonly username: string };
  readonly member: { readonly roles: readonly string[] } | null;
  readonly memberPermissions: { has(permission: bigint): boolean } | null;
  readonly channel: { readonly type: number; readonly parentId: string | null; readonly nsfw?: boolean } | null;
  readonly createdAt: Date;
  readonly attachmentSizeLimit?: number;
  readonly entitlements: ReadonlyMap<string, InteractionEntitlement>;
  readonly client: { readonly rest: REST };
  readonly commandName: string;
  readonly customId: string;
  readonly message: { readonly id: string; readonly embeds: TargetMessage['embeds'] };
  readonly values: readonly string[];
  readonly fields: { readonly fields: ReadonlyMap<string, { readonly value?: string }> };
  readonly options: ChatInputPort['options'] & AutocompletePort['options'];
  readonly targetMessage: TargetMessage;
  replied = false;
  deferred = false;
  responded = false;
  ephemeral: boolean | null = null;

  readonly #payload: APIInteraction;
  readonly #answering: PayloadAnswering;

  constructor(payload: APIInteraction, answering: PayloadAnswering) {
    this.#payload = payload;
    this.#answering = answering;
    this.id = payload.id;
    this.applicationId = payload.application_id;
    this.token = payload.token;
    this.type = payload.type;
    this.guildId = payload.guild_id ?? null;
    this.channelId = payload.channel?.id ?? payload.channel_id ?? null;
    this.locale = 'locale' in payload ? payload.locale : Locale.EnglishUS;
    this.guildLocale = payload.guild_locale ?? null;
    const user = payload.member?.user ?? payload.user;
    this.user = { id: user?.id ?? '', username: user?.username ?? '' };
    this.member = payload.member ? { roles: payload.member.roles } : null;
    const permissions = payload.member ? BigInt(payload.member.permissions) : undefined;
    this.memberPermissions =
      permissions === undefined
        ? null
        : { has: (permission) => (permissions & PermissionFlagsBits.Administrator) !== 0n || (permissions & permission) === permission };
    this.channel = payload.channel
      ? {
          type: payload.channel.type,
          parentId: ('parent_id' in payload.channel && payload.channel.parent_id) || null,
          ...('nsfw' in payload.channel && typeof payload.channel.nsfw === 'boolean' && { nsfw: payload.channel.nsfw }),
        }
      : null;
    this.createdAt = new Date(Number((BigInt(payload.id) >> 22n) + DISCORD_EPOCH));
    if ('attachment_size_limit' in payload && typeof payload.attachment_size_limit === 'number') this.attachmentSizeLimit = payload.attachment_size_limit;
    this.entitlements = new Map((payload.entitlements ?? []).map((entitlement) => [entitlement.id, entitlementOf(entitlement)]));
    this.client = { rest: answering.rest };

    const data = (payload.data ?? {}) as Partial<{
      name: string;
      options: APIApplicationCommandInteractionDataOption[];
      resolved: APIInteractionDataResolved & { messages?: Record<string, APIMessage> };
      custom_id: string;
      values: string[];
      target_id: string;
    }>;
    this.commandName = data.name ?? '';
    this.customId = data.custom_id ?? '';
    const message = 'message' in payload ? payload.message : undefined;
    this.message = { id: message?.id ?? '', embeds: footersOf(message?.embeds) };
    this.values = data.values ?? [];
    const target = data.target_id === undefined ? undefined : data.resolved?.messages?.[data.target_id];
    this.targetMessage = {
      id: target?.id ?? '',
      author: { id: target?.author.id ?? '' },
      embeds: footersOf(target?.embeds),
    };
    this.fields = { fields: payload.type === InteractionType.ModalSubmit ? fieldsOf(payload.data) : new Map() };
    const options = optionsOf(data.options, data.resolved);
    this.options = {
      data: options,
      getFocused: ((full?: boolean) => {
        const focused = focusedIn(options);
        if (!focused) throw new Error('no focused option');
        return full ? { name: focused.name, value: String(focused.value ?? '') } : String(focused.value ?? '');
      }) as AutocompletePort['options']['getFocused'],
    };
  }

  inGuild(): this is InGuild {
    return this.guildId !== null;
  }

  isChatInputCommand(): this is ChatInputPort {
    const payload = this.#payload;
    return payload.type === InteractionType.ApplicationCommand && payload.data.type === ApplicationCommandType.ChatInput;
  }

  isMessageContextMenuCommand(): this is MessageCommandPort {
    const payload = this.#payload;
    return payload.type === InteractionType.ApplicationCommand && payload.data.type === ApplicationCommandType.Message;
  }

  isAutocomplete(): this is AutocompletePort {
    return this.type === InteractionType.ApplicationCommandAutocomplete;
  }

  isButton(): this is ComponentPort {
    return this.#componentType() === ComponentType.Button;
  }

  isStringSelectMenu(): this is StringSelectPort {
    return this.#componentType() === ComponentType.StringSelect;
  }

  isModalSubmit(): this is ModalSubmitPort {
    return this.type === InteractionType.ModalSubmit;
  }

  #componentType(): ComponentType | undefined {
    const payload = this.#payload;
    return payload.type === InteractionType.MessageComponent ? (payload.data as APIMessageComponentInteractionData).component_type : undefined;
  }

  /** Claims the first answer, as discord.js does: a second one is a mistake of the caller's. */
  async #first(body: APIInteractionResponse, files: readonly RawFile[] = []): Promise<void> {
    if (this.replied || this.deferred || this.responded) throw new Error('the interaction has already been acknowledged');
    await this.#answering.answerFirst(body, files);
  }

  #answered(): void {
    if (!this.replied && !this.deferred) throw new Error('the interaction has not been answered yet');
  }

  async reply(options: AnswerOptions): Promise<void> {
    const { body, files } = messageOf(options);
    const first = this.#first({ type: InteractionResponseType.ChannelMessageWithSource, data: body }, files);
    this.replied = true;
    this.ephemeral = ((options.flags ?? 0) & MessageFlags.Ephemeral) !== 0;
    await first;
  }

  async deferReply(options: { readonly flags?: number } = {}): Promise<void> {
    const flags = (options.flags ?? 0) & MessageFlags.Ephemeral;
    const first = this.#first({ type: InteractionResponseType.DeferredChannelMessageWithSource, data: { flags } });
    this.deferred = true;
    this.ephemeral = flags !== 0;
    await first;
  }

  async deferUpdate(): Promise<void> {
    const first = this.#first({ type: InteractionResponseType.DeferredMessageUpdate });
    this.deferred = true;
    await first;
  }

  async showModal(modal: ModalOptions): Promise<void> {
    const first = this.#first({ type: InteractionResponseType.Modal, data: encoded(modal) });
    this.replied = true;
    await first;
  }

  async respond(choices: readonly { readonly name: string; readonly value: string | number }[]): Promise<void> {
    const first = this.#first({ type: InteractionResponseType.ApplicationCommandAutocompleteResult, data: { choices: [...choices] } });
    this.responded = true;
    await first;
  }

  async editReply(options: AnswerOptions): Promise<void> {
    this.#answered();
    const { body, files } = messageOf(options);
    await this.#answering.api.interactions.editReply(this.applicationId, this.token, { ...body, files });
  }

  async followUp(options: AnswerOptions): Promise<{ readonly id: string }> {
    this.#answered();
    const { body, files } = messageOf(options);
    return this.#answering.api.interactions.followUp(this.applicationId, this.token, { ...body, files });
  }

  async deleteReply(): Promise<void> {
    this.#answered();
    await this.#answering.api.interactions.deleteReply(this.applicationId, this.token);
  }
}

/** A message's embeds as the port shows them: their footers. */
function footersOf(embeds: readonly APIEmbed[] | undefined): TargetMessage['embeds'] {
  return (embeds ?? []).map((embed) => ({ footer: embed.footer ? { text: embed.footer.text } : null }));
}
