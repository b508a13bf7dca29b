import { randomBytes } from 'node:crypto';
import { EventEmitter } from 'node:events';
import {
  ApplicationCommandOptionType,
  ApplicationCommandType,
  ApplicationIntegrationType,
  ComponentType,
  InteractionContextType,
  InteractionResponseType,
  InteractionType,
  MessageFlags,
  MessageType,
} from 'discord-api-types/v10';
import type {
  APIApplicationCommandInteractionDataOption,
  APIApplicationCommandOption,
  APIInteraction,
  APIInteractionDataResolved,
  APIInteractionDataResolvedChannel,
  APIMessageInteractionMetadata,
  APIModalInteractionResponseCallbackData,
  APIModalSubmissionComponent,
  APIUser,
} from 'discord-api-types/v10';
import type { EmulatorClock } from './clock.js';
import type { CommandRegistry } from './commands.js';
import { DiscordErrors, FormErrors } from './errors.js';
import { checkAutocompleteChoices, checkMessagePayload, checkModal } from './limits.js';
import type { EmulatorStore } from './store.js';
import type { MessageWrite, StoredChannel, StoredGuild, StoredMessage, Upload } from './store/records.js';
import type {
  AttachmentInput,
  AutocompleteInput,
  ClickButtonInput,
  CommandOptionValue,
  EmulatorMessage,
  InteractionHandle,
  InteractionResponse,
  PlainOptionValue,
  RunCommandInput,
  SelectOptionInput,
  SubmitModalInput,
  UncheckedInteractionInput,
} from './types.js';

/** Discord's window for the initial response to an interaction. */
export const INITIAL_RESPONSE_WINDOW_MS = 3_000;
/** How long an interaction token can be used for edits and follow-ups. */
export const INTERACTION_TOKEN_LIFETIME_MS = 15 * 60_000;
/** Discord's default upload limit per attachment for bots (10 MiB). */
export const DEFAULT_ATTACHMENT_SIZE_LIMIT = 10 * 1024 * 1024;
const DEFAULT_WAIT_MS = 5_000;

const ALLOWED_RESPONSES: Record<InteractionType, readonly InteractionResponseType[]> = {
  [InteractionType.Ping]: [InteractionResponseType.Pong],
  [InteractionType.ApplicationCommand]: [
    InteractionResponseType.ChannelMessageWithSource,
    InteractionResponseType.DeferredChannelMessageWithSource,
    InteractionResponseType.Modal,
  ],
  [InteractionType.MessageComponent]: [
    InteractionResponseType.ChannelMessageWithSource,
    InteractionResponseType.DeferredChannelMessageWithSource,
    InteractionResponseType.DeferredMessageUpdate,
    InteractionResponseType.UpdateMessage,
    InteractionResponseType.Modal,
  ],
  [InteractionType.ApplicationCommandAutocomplete]: [InteractionResponseType.ApplicationCommandAutocompleteResult],
  [InteractionType.ModalSubmit]: [
    InteractionResponseType.ChannelMessageWithSource,
    InteractionResponseType.DeferredChannelMessageWithSource,
    InteractionResponseType.DeferredMessageUpdate,
    InteractionResponseType.UpdateMessage,
  ],
};

interface InteractionRecord {
  id: string;
  token: string;
  type: InteractionType;
  payload: APIInteraction;
  createdAt: number;
  guildId: string;
  channelId: string;
  user: APIUser;
  /** For components, and modals opened from one: the message the interaction came from. */
  sourceMessageId: string | undefined;
  /** Edit count of the original message when it became this interaction's original. */
  baselineVersion: number;
  response: InteractionResponse | undefined;
  originalMessageId: string | undefined;
  followUpIds: string[];
  modal: APIModalInteractionResponseCallbackData | undefined;
  /** The interaction whose modal this submit answers. */
  triggeredBy: InteractionRecord | undefined;
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** Waits until `check` yields a value, re-checking whenever `emitter` emits `event`. */
export function waitUntil<T>(emitter: EventEmitter, event: string, check: () => T | undefined, timeoutMs: number, what: string): Promise<T> {
  const immediate = check();
  if (immediate !== undefined) return Promise.resolve(immediate);
  return new Promise<T>((resolve, reject) => {
    const listener = (): void => {
      const value = check();
      if (value === undefined) return;
      cleanup();
      // Resolve after the current request has been answered and recorded.
      setImmediate(() => resolve(value));
    };
    const timer = setTimeout(() => {
      cleanup();
      reject(new Error(`timed out after ${timeoutMs} ms waiting for ${what}`));
    }, timeoutMs);
    const cleanup = (): void => {
      clearTimeout(timer);
      emitter.off(event, listener);
    };
    emitter.on(event, listener);
  });
}

export interface InteractionRegistryOptions {
  store: EmulatorStore;
  commands: CommandRegistry;
  clock: EmulatorClock;
  applicationId: string;
  attachmentSizeLimit: number;
  /** Sends INTERACTION_CREATE to the connected bot. */
  dispatch: (payload: APIInteraction) => void;
}

/**
 * Creates interactions on behalf of users and answers the bot's responses to them
 * with Discord's rules: one acknowledgement, within 3 seconds, token valid for 15 minutes.
 */
export class InteractionRegistry {
  readonly #byId = new Map<string, InteractionRecord>();
  readonly #byToken = new Map<string, InteractionRecord>();
  /** Emits `change` whenever a response, edit or follow-up arrives. */
  readonly events = new EventEmitter();
  readonly #options: InteractionRegistryOptions;
  readonly #messageVersions = new WeakMap<StoredMessage, number>();

  constructor(options: InteractionRegistryOptions) {
    this.#options = options;
    this.events.setMaxListeners(0);
    options.store.events.on('message', (stored: StoredMessage, kind: 'create' | 'update') => {
      if (kind === 'update') this.#messageVersions.set(stored, this.#version(stored) + 1);
      this.events.emit('change');
    });
    options.store.events.on('message-delete', () => this.events.emit('change'));
  }

  #version(stored: StoredMessage | undefined): number {
    return stored ? (this.#messageVersions.get(stored) ?? 0) : 0;
  }

  get #store(): EmulatorStore {
    return this.#options.store;
  }

  // ---- creating interactions (the user's side) ----

  runCommand(input: RunCommandInput & { guildId: string; channelId: string; userId: string }): InteractionHandle {
    const { guild, channel } = this.#place(input.guildId, input.channelId);
    const command = this.#options.commands.findChatInput(guild.id, input.name);
    const resolved: APIInteractionDataResolved = {};
    const leaf = this.#buildOptions(guild, channel, input, command?.options, resolved, undefined);
    const options = this.#nest(leaf, input.subcommandGroup, input.subcommand);
    const hasResolved = Object.keys(resolved).length > 0;
    const data = {
      id: command?.id ?? this.#store.nextId(),
      name: input.name,
      type: ApplicationCommandType.ChatInput,
      ...(command?.guild_id ? { guild_id: command.guild_id } : {}),
      ...(options.length > 0 ? { options } : {}),
      ...(hasResolved ? { resolved } : {}),
    };
    return this.#create(InteractionType.ApplicationCommand, guild, channel, input.userId, data, { locale: input.locale });
  }

  async autocomplete(input: AutocompleteInput & { guildId: string; channelId: string; userId: string }): Promise<unknown[]> {
    const { guild, channel } = this.#place(input.guildId, input.channelId);
    const command = this.#options.commands.findChatInput(guild.id, input.name);
    const resolved: APIInteractionDataResolved = {};
    const leaf = this.#buildOptions(guild, channel, { ...input, attachments: undefined }, command?.options, resolved, input.focused);
    const options = this.#nest(leaf, input.subcommandGroup, input.subcommand);
    const data = {
      id: command?.id ?? this.#store.nextId(),
      name: input.name,
      type: ApplicationCommandType.ChatInput,
      ...(command?.guild_id ? { guild_id: command.guild_id } : {}),
      options,
    };
    const handle = this.#create(InteractionType.ApplicationCommandAutocomplete, guild, channel, input.userId, data, { locale: input.locale });
    const response = await handle.waitForResponse(input.timeoutMs);
    const choices = isRecord(response.data) && Array.isArray(response.data.choices) ? response.data.choices : [];
    return choices;
  }

  clickButton(input: ClickButtonInput): InteractionHandle {
    const stored = this.#componentMessage(input.messageId);
    const component = findComponent(stored.api.components, input.customId);
    if (!component || component.type !== ComponentType.Button) {
      throw new Error(`message ${input.messageId} has no button with custom_id "${input.customId}"`);
    }
    if (component.disabled === true) throw new Error(`button "${input.customId}" is disabled; a user cannot click it`);
    const { guild, channel } = this.#place(input.guildId ?? stored.guildId ?? '', stored.api.channel_id);
    return this.#create(
      InteractionType.MessageComponent,
      guild,
      channel,
      input.userId,
      { custom_id: input.customId, component_type: ComponentType.Button },
      { source: stored, locale: input.locale },
    );
  }

  selectOption(input: SelectOptionInput): InteractionHandle {
    const stored = this.#componentMessage(input.messageId);
    const component = findComponent(stored.api.components, input.customId);
    if (!component || component.type !== ComponentType.StringSelect) {
      throw new Error(`message ${input.messageId} has no string select with custom_id "${input.customId}"`);
    }
    const { guild, channel } = this.#place(stored.guildId ?? '', stored.api.channel_id);
    return this.#create(
      InteractionType.MessageComponent,
      guild,
      channel,
      input.userId,
      { custom_id: input.customId, component_type: ComponentType.StringSelect, values: input.values },
      { source: stored, locale: input.locale },
    );
  }

  submitModal(input: SubmitModalInput): InteractionHandle {
    const trigger = input.interaction ? this.#byId.get(input.interaction.id) : undefined;
    if (input.interaction && !trigger) throw new Error(`unknown interaction ${input.interaction.id}`);
    const modal = trigger?.modal;
    if (trigger && !modal) throw new Error(`the bot did not answer interaction ${trigger.id} with a modal`);
    const guildId = input.guildId ?? trigger?.guildId;
    const channelId = input.channelId ?? trigger?.channelId;
    const userId = input.userId ?? trigger?.user.id;
    if (!guildId || !channelId || !userId) throw new Error('submitModal needs an interaction, or guildId, channelId and userId');
    const customId = input.customId ?? modal?.custom_id;
    if (!customId) throw new Error('submitModal needs the modal custom id');
    const { guild, channel } = this.#place(guildId, channelId);
    const components = modal ? modalSubmission(modal, input.fields) : plainSubmission(input.fields);
    const source = trigger?.sourceMessageId ? this.#store.messages.get(trigger.sourceMessageId) : undefined;
    return this.#create(
      InteractionType.ModalSubmit,
      guild,
      channel,
      userId,
      { custom_id: customId, components },
      { source, triggeredBy: trigger, locale: input.locale ?? (trigger?.payload as { locale?: string } | undefined)?.locale },
    );
  }

  /**
   * Sends `data` as it is, where every other way of acting checks it as Discord does: options
   * of the wrong type, unknown or missing options, a custom id on no component of the message,
   * modal fields the modal did not have. Only the place (guild, channel, member, message) is
   * checked; the bot's answers are held to Discord's rules as for any interaction.
   */
  dispatchUnchecked(input: UncheckedInteractionInput & { guildId: string; channelId: string; userId: string }): InteractionHandle {
    const { guild, channel } = this.#place(input.guildId, input.channelId);
    const source = input.messageId === undefined ? undefined : this.#componentMessage(input.messageId);
    if (input.type === InteractionType.MessageComponent && !source) throw new Error('a component interaction comes from a message: give messageId');
    if (source && source.api.channel_id !== channel.id) throw new Error(`message ${source.api.id} is not in channel ${channel.id}`);
    return this.#create(input.type, guild, channel, input.userId, structuredClone(input.data), { source, locale: input.locale });
  }

  #componentMessage(messageId: string): StoredMessage {
    const stored = this.#store.messages.get(messageId);
    if (!stored) throw new Error(`the emulator has no message ${messageId}`);
    return stored;
  }

  #place(guildId: string, channelId: string): { guild: StoredGuild; channel: StoredChannel } {
    const guild = this.#store.guild(guildId);
    const channel = this.#store.channel(channelId);
    if (channel.guildId !== guild.id) throw new Error(`channel ${channelId} is not in guild ${guildId}`);
    return { guild, channel };
  }

  #nest(
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
  #definitions(
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

  #buildOptions(
    guild: StoredGuild,
    channel: StoredChannel,
    input: {
      name: string;
      subcommandGroup?: string;
      subcommand?: string;
      options?: Record<string, CommandOptionValue>;
      attachments?: Record<string, AttachmentInput>;
    },
    registered: APIApplicationCommandOption[] | undefined,
    resolved: APIInteractionDataResolved,
    focused: { name: string; value: string } | undefined,
  ): APIApplicationCommandInteractionDataOption[] {
    const definitions = this.#definitions(registered, input);
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
      result.push({ name, type, value: this.#resolveValue(guild, channel, type, value, resolved) } as APIApplicationCommandInteractionDataOption);
    }
    for (const [name, file] of Object.entries(input.attachments ?? {})) {
      const type = typeOf(name, ApplicationCommandOptionType.Attachment);
      if (type !== ApplicationCommandOptionType.Attachment) throw new Error(`option "${name}" of /${input.name} is not an attachment option`);
      const data = typeof file.data === 'string' ? Buffer.from(file.data) : Buffer.from(file.data);
      const { data: _bytes, ...attachment } = this.#store.storeAttachment(channel.id, { filename: file.filename, contentType: file.contentType, data }, true);
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

  #resolveValue(
    guild: StoredGuild,
    channel: StoredChannel,
    type: ApplicationCommandOptionType,
    value: PlainOptionValue,
    resolved: APIInteractionDataResolved,
  ): PlainOptionValue {
    const id = String(value);
    const addUser = (): boolean => {
      const user = this.#store.users.get(id);
      if (!user) return false;
      (resolved.users ??= {})[id] = user;
      const member = guild.members.get(id);
      if (member) {
        const { user: _user, ...rest } = this.#store.interactionMember(guild, channel, id);
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
        const target = this.#store.channel(id);
        (resolved.channels ??= {})[id] = {
          id,
          type: target.type,
          name: target.name ?? '',
          permissions: this.#store.channelPermissions(guild, target, this.#store.botUser.id).toString(),
        } as APIInteractionDataResolvedChannel;
        return id;
      }
      default:
        return value;
    }
  }

  #create(
    type: InteractionType,
    guild: StoredGuild,
    channel: StoredChannel,
    userId: string,
    data: unknown,
    extra: { source?: StoredMessage; triggeredBy?: InteractionRecord; locale?: string },
  ): InteractionHandle {
    const store = this.#store;
    const member = store.interactionMember(guild, channel, userId);
    if (channel.thread && !store.canSeeThread(guild, channel, userId)) {
      throw new Error(`user ${userId} cannot see thread ${channel.id}: a private thread shows only to its members (and Manage Threads)`);
    }
    const id = store.nextId();
    const token = `emulator.${id}.${randomBytes(48).toString('base64url')}`;
    const channelPayload = {
      ...store.apiChannel(channel),
      permissions: store.channelPermissions(guild, channel, userId).toString(),
    };
    const payload = {
      id,
      application_id: this.#options.applicationId,
      type,
      data,
      guild_id: guild.id,
      guild: { id: guild.id, locale: guild.locale, features: [] },
      channel: channelPayload,
      channel_id: channel.id,
      member,
      token,
      version: 1,
      app_permissions: store.channelPermissions(guild, channel, store.botUser.id).toString(),
      locale: extra.locale ?? 'en-US',
      guild_locale: guild.locale,
      entitlements: [],
      authorizing_integration_owners: { [ApplicationIntegrationType.GuildInstall]: guild.id },
      context: InteractionContextType.Guild,
      attachment_size_limit: this.#options.attachmentSizeLimit,
      ...(extra.source ? { message: this.#wireMessage(extra.source) } : {}),
    } as APIInteraction;
    const record: InteractionRecord = {
      id,
      token,
      type,
      payload,
      createdAt: this.#options.clock.now(),
      guildId: guild.id,
      channelId: channel.id,
      user: member.user,
      sourceMessageId: extra.source?.api.id,
      baselineVersion: this.#version(extra.source),
      response: undefined,
      originalMessageId: undefined,
      followUpIds: [],
      modal: undefined,
      triggeredBy: extra.triggeredBy,
    };
    this.#byId.set(id, record);
    this.#byToken.set(token, record);
    this.#options.dispatch(payload);
    return this.#handle(record);
  }

  /** A stored message as Discord sends it (no emulator extras). */
  #wireMessage(stored: StoredMessage): StoredMessage['api'] {
    return structuredClone(stored.api);
  }

  // ---- the bot's side: callback ----

  /** POST /interactions/{id}/{token}/callback */
  respond(id: string, token: string, body: unknown, uploads: Upload[], withResponse: boolean): { status: number; body?: unknown } {
    const record = this.#byId.get(id);
    if (!record || record.token !== token) throw DiscordErrors.unknownInteraction();
    if (record.response) throw DiscordErrors.alreadyAcknowledged();
    const now = this.#options.clock.now();
    if (now - record.createdAt > INITIAL_RESPONSE_WINDOW_MS) throw DiscordErrors.unknownInteraction();
    const request = isRecord(body) ? body : {};
    const type = request.type as InteractionResponseType;
    const allowed = ALLOWED_RESPONSES[record.type].filter(
      (candidate) =>
        record.sourceMessageId !== undefined ||
        (candidate !== InteractionResponseType.DeferredMessageUpdate && candidate !== InteractionResponseType.UpdateMessage),
    );
    if (!allowed.includes(type)) {
      const errors = new FormErrors();
      errors.add(['type'], 'BASE_TYPE_CHOICES', `Value must be one of {${allowed.join(', ')}}.`);
      throw DiscordErrors.invalidFormBody(errors);
    }
    const data = request.data;
    const dataRecord = (isRecord(data) ? data : {}) as MessageWrite;
    const ephemeral = typeof dataRecord.flags === 'number' && (dataRecord.flags & MessageFlags.Ephemeral) !== 0;

    // Validate everything before changing anything.
    switch (type) {
      case InteractionResponseType.ChannelMessageWithSource: {
        const { errors, empty } = checkMessagePayload(data, { path: ['data'], fileCount: uploads.length });
        errors.throwIfAny();
        if (empty) throw DiscordErrors.emptyMessage();
        break;
      }
      case InteractionResponseType.UpdateMessage: {
        const source = this.#sourceMessage(record);
        checkMessagePayload(data, { path: ['data'], isEdit: true, existingFlags: source.api.flags ?? 0 }).errors.throwIfAny();
        break;
      }
      case InteractionResponseType.Modal:
        checkModal(data).throwIfAny();
        break;
      case InteractionResponseType.ApplicationCommandAutocompleteResult:
        checkAutocompleteChoices(data).throwIfAny();
        break;
      default:
        break;
    }

    let messageId: string | undefined;
    switch (type) {
      case InteractionResponseType.ChannelMessageWithSource:
        messageId = this.#createReply(record, dataRecord, uploads, ephemeral, false).api.id;
        break;
      case InteractionResponseType.DeferredChannelMessageWithSource:
        messageId = this.#createReply(record, { flags: dataRecord.flags }, [], ephemeral, true).api.id;
        break;
      case InteractionResponseType.DeferredMessageUpdate:
        messageId = this.#sourceMessage(record).api.id;
        break;
      case InteractionResponseType.UpdateMessage: {
        const source = this.#sourceMessage(record);
        this.#store.editMessage(source, dataRecord, uploads);
        messageId = source.api.id;
        break;
      }
      case InteractionResponseType.Modal:
        record.modal = data as APIModalInteractionResponseCallbackData;
        break;
      default:
        break;
    }
    if (messageId && record.originalMessageId === undefined) {
      record.originalMessageId = messageId;
      if (type !== InteractionResponseType.UpdateMessage && type !== InteractionResponseType.DeferredMessageUpdate) {
        record.baselineVersion = 0;
      }
    }
    record.response = { type, data: structuredClone(data), ephemeral, at: now };
    this.events.emit('change');

    if (!withResponse) return { status: 204 };
    const original = messageId ? this.#store.messages.get(messageId) : undefined;
    return {
      status: 200,
      body: {
        interaction: {
          id: record.id,
          type: record.type,
          ...(original
            ? {
                response_message_id: original.api.id,
                response_message_loading: ((original.api.flags ?? 0) & MessageFlags.Loading) !== 0,
                response_message_ephemeral: original.ephemeral,
              }
            : {}),
        },
        resource: { type, ...(original ? { message: this.#wireMessage(original) } : {}) },
      },
    };
  }

  #sourceMessage(record: InteractionRecord): StoredMessage {
    const source = record.sourceMessageId ? this.#store.messages.get(record.sourceMessageId) : undefined;
    if (!source) throw DiscordErrors.unknownMessage();
    return source;
  }

  #metadata(record: InteractionRecord): APIMessageInteractionMetadata {
    const base = {
      id: record.id,
      type: record.type,
      user: record.user,
      authorizing_integration_owners: { [ApplicationIntegrationType.GuildInstall]: record.guildId },
      ...(record.originalMessageId ? { original_response_message_id: record.originalMessageId } : {}),
    };
    if (record.type === InteractionType.MessageComponent) {
      return { ...base, interacted_message_id: record.sourceMessageId ?? '' } as APIMessageInteractionMetadata;
    }
    if (record.type === InteractionType.ModalSubmit && record.triggeredBy) {
      return { ...base, triggering_interaction_metadata: this.#metadata(record.triggeredBy) } as APIMessageInteractionMetadata;
    }
    return base as APIMessageInteractionMetadata;
  }

  #createReply(record: InteractionRecord, body: MessageWrite, uploads: Upload[], ephemeral: boolean, loading: boolean): StoredMessage {
    return this.#store.createMessage({
      channelId: record.channelId,
      author: this.#store.botUser,
      body,
      uploads,
      type: record.type === InteractionType.ApplicationCommand ? MessageType.ChatInputCommand : MessageType.Default,
      webhookId: this.#options.applicationId,
      applicationId: this.#options.applicationId,
      interactionMetadata: this.#metadata(record),
      interactionId: record.id,
      ephemeral,
      loading,
    });
  }

  // ---- the bot's side: webhook routes with the interaction token ----

  /** Finds the interaction behind `/webhooks/{application_id}/{token}`, with Discord's errors. */
  resolveWebhook(applicationId: string, token: string): InteractionRecord {
    if (applicationId !== this.#options.applicationId) throw DiscordErrors.unknownWebhook();
    const record = this.#byToken.get(token);
    if (!record) throw DiscordErrors.invalidWebhookToken();
    if (this.#options.clock.now() - record.createdAt > INTERACTION_TOKEN_LIFETIME_MS) throw DiscordErrors.invalidWebhookToken();
    return record;
  }

  #original(record: InteractionRecord): StoredMessage {
    if (!record.response) throw DiscordErrors.unknownWebhook();
    const stored = record.originalMessageId ? this.#store.messages.get(record.originalMessageId) : undefined;
    if (!stored) throw DiscordErrors.unknownMessage();
    return stored;
  }

  #owned(record: InteractionRecord, messageId: string): StoredMessage {
    if (messageId === '@original') return this.#original(record);
    const owned = messageId === record.originalMessageId || record.followUpIds.includes(messageId);
    const stored = owned ? this.#store.messages.get(messageId) : undefined;
    if (!stored) throw DiscordErrors.unknownMessage();
    return stored;
  }

  getMessage(record: InteractionRecord, messageId: string): StoredMessage {
    return this.#owned(record, messageId);
  }

  editMessage(record: InteractionRecord, messageId: string, body: unknown, uploads: Upload[]): StoredMessage {
    const stored = this.#owned(record, messageId);
    const { errors } = checkMessagePayload(body, { isEdit: true, existingFlags: stored.api.flags ?? 0 });
    errors.throwIfAny();
    this.#store.editMessage(stored, (isRecord(body) ? body : {}) as MessageWrite, uploads);
    this.events.emit('change');
    return stored;
  }

  deleteMessage(record: InteractionRecord, messageId: string): void {
    const stored = this.#owned(record, messageId);
    this.#store.deleteMessage(stored);
    this.events.emit('change');
  }

  /** POST /webhooks/{application_id}/{token}: a follow-up (the first one after a defer fills the placeholder). */
  followUp(record: InteractionRecord, body: unknown, uploads: Upload[]): StoredMessage {
    const response = record.response;
    if (
      !response ||
      response.type === InteractionResponseType.Modal ||
      response.type === InteractionResponseType.ApplicationCommandAutocompleteResult
    ) {
      throw DiscordErrors.unknownWebhook();
    }
    const { errors, empty } = checkMessagePayload(body, { fileCount: uploads.length });
    errors.throwIfAny();
    if (empty) throw DiscordErrors.emptyMessage();
    const write = (isRecord(body) ? body : {}) as MessageWrite;
    const original = record.originalMessageId ? this.#store.messages.get(record.originalMessageId) : undefined;
    let stored: StoredMessage;
    if (
      response.type === InteractionResponseType.DeferredChannelMessageWithSource &&
      original &&
      ((original.api.flags ?? 0) & MessageFlags.Loading) !== 0
    ) {
      // Discord fills the "thinking" placeholder with the first follow-up, keeping the defer's ephemerality.
      stored = this.#store.editMessage(original, write, uploads);
    } else {
      const ephemeral = typeof write.flags === 'number' && (write.flags & MessageFlags.Ephemeral) !== 0;
      stored = this.#createReply(record, write, uploads, ephemeral, false);
    }
    record.followUpIds.push(stored.api.id);
    this.events.emit('change');
    return stored;
  }

  // ---- handles ----

  #handle(record: InteractionRecord): InteractionHandle {
    const store = this.#store;
    const view = (id: string | undefined): EmulatorMessage | undefined => {
      const stored = id ? store.messages.get(id) : undefined;
      return stored ? store.publicMessage(stored) : undefined;
    };
    const originalId = (): string | undefined => record.originalMessageId ?? record.sourceMessageId;
    return {
      id: record.id,
      token: record.token,
      payload: record.payload,
      get response() {
        return record.response;
      },
      get followUps() {
        return record.followUpIds.flatMap((id) => {
          const message = view(id);
          return message ? [message] : [];
        });
      },
      original: () => view(originalId()),
      modal: () => record.modal,
      waitForResponse: (timeoutMs = DEFAULT_WAIT_MS) =>
        waitUntil(this.events, 'change', () => record.response, timeoutMs, `the response to interaction ${record.id}`),
      waitForEdit: (predicate = () => true, timeoutMs = DEFAULT_WAIT_MS) =>
        waitUntil(
          this.events,
          'change',
          () => {
            const id = originalId();
            const stored = id ? store.messages.get(id) : undefined;
            if (!stored || this.#version(stored) <= record.baselineVersion) return undefined;
            const message = store.publicMessage(stored);
            return predicate(message) ? message : undefined;
          },
          timeoutMs,
          `an edit of the original message of interaction ${record.id}`,
        ),
      waitForFollowUp: (predicate = () => true, timeoutMs = DEFAULT_WAIT_MS) =>
        waitUntil(
          this.events,
          'change',
          () => record.followUpIds.map((id) => view(id)).find((message) => message !== undefined && predicate(message)),
          timeoutMs,
          `a follow-up to interaction ${record.id}`,
        ),
    };
  }
}

function inferOptionType(value: PlainOptionValue): ApplicationCommandOptionType {
  if (typeof value === 'boolean') return ApplicationCommandOptionType.Boolean;
  if (typeof value === 'number') return Number.isInteger(value) ? ApplicationCommandOptionType.Integer : ApplicationCommandOptionType.Number;
  return ApplicationCommandOptionType.String;
}

interface ComponentLike {
  type?: unknown;
  custom_id?: unknown;
  disabled?: unknown;
  components?: unknown;
  accessory?: unknown;
  component?: unknown;
}

/** Depth-first search for a component by custom id (action rows, containers, sections, labels). */
export function findComponent(components: unknown, customId: string): ComponentLike | undefined {
  if (!Array.isArray(components)) return undefined;
  for (const component of components as ComponentLike[]) {
    if (!isRecord(component)) continue;
    if (component.custom_id === customId) return component;
    const nested =
      findComponent(component.components, customId) ??
      findComponent(component.accessory ? [component.accessory] : [], customId) ??
      findComponent(component.component ? [component.component] : [], customId);
    if (nested) return nested;
  }
  return undefined;
}

/** The submitted components, mirroring the layout (action rows or labels) of the modal the bot sent. */
function modalSubmission(modal: APIModalInteractionResponseCallbackData, fields: Record<string, string>): APIModalSubmissionComponent[] {
  const known = new Set<string>();
  const result: unknown[] = [];
  for (const component of modal.components as unknown[]) {
    if (!isRecord(component)) continue;
    if (component.type === ComponentType.ActionRow && Array.isArray(component.components)) {
      const inputs = component.components.filter(isRecord);
      result.push({
        type: ComponentType.ActionRow,
        ...(typeof component.id === 'number' ? { id: component.id } : {}),
        components: inputs.map((input) => {
          const customId = String(input.custom_id);
          known.add(customId);
          return { type: ComponentType.TextInput, ...(typeof input.id === 'number' ? { id: input.id } : {}), custom_id: customId, value: fields[customId] ?? '' };
        }),
      });
    } else if (component.type === ComponentType.Label && isRecord(component.component)) {
      const input = component.component;
      const customId = String(input.custom_id);
      known.add(customId);
      const submitted =
        input.type === ComponentType.TextInput
          ? { type: ComponentType.TextInput, custom_id: customId, value: fields[customId] ?? '' }
          : { type: input.type, custom_id: customId, values: fields[customId] ? [fields[customId]] : [] };
      result.push({
        type: ComponentType.Label,
        ...(typeof component.id === 'number' ? { id: component.id } : {}),
        component: { ...(typeof input.id === 'number' ? { id: input.id } : {}), ...submitted },
      });
    } else if (component.type === ComponentType.TextDisplay) {
      result.push({ type: ComponentType.TextDisplay, ...(typeof component.id === 'number' ? { id: component.id } : {}) });
    }
  }
  for (const field of Object.keys(fields)) {
    if (!known.has(field)) throw new Error(`the modal "${modal.custom_id}" has no input "${field}"`);
  }
  return result as APIModalSubmissionComponent[];
}

function plainSubmission(fields: Record<string, string>): APIModalSubmissionComponent[] {
  return Object.entries(fields).map(([customId, value]) => ({
    type: ComponentType.ActionRow,
    components: [{ type: ComponentType.TextInput, custom_id: customId, value }],
  })) as APIModalSubmissionComponent[];
}

