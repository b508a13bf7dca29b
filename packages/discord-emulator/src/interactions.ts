import { EventEmitter } from 'node:events';
import { ApplicationCommandType, ComponentType, InteractionType } from 'discord-api-types/v10';
import type { APIInteraction, APIInteractionDataResolved } from 'discord-api-types/v10';
import type { EmulatorClock } from './clock.js';
import type { CommandRegistry } from './commands.js';
import { DiscordErrors } from './errors.js';
import * as callback from './interactions/callback.js';
import { buildOptions, nestOptions } from './interactions/command-options.js';
import { findComponent, modalSubmission, plainSubmission } from './interactions/components.js';
import { interactionHandle } from './interactions/handle.js';
import { createInteraction } from './interactions/payload.js';
import { wireMessage } from './interactions/replies.js';
import type { NewInteraction } from './interactions/payload.js';
import type { InteractionContext, InteractionRecord } from './interactions/record.js';
import * as webhook from './interactions/webhooks.js';
import type { EmulatorStore } from './store.js';
import type { StoredChannel, StoredGuild, StoredMessage, Upload } from './store/records.js';
import type {
  AutocompleteInput,
  ClickButtonInput,
  InteractionHandle,
  RunCommandInput,
  RunMessageCommandInput,
  SelectOptionInput,
  SubmitModalInput,
  UncheckedInteractionInput,
} from './types.js';

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
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
  readonly #context: InteractionContext;

  constructor(options: InteractionRegistryOptions) {
    this.#options = options;
    this.#context = {
      store: options.store,
      clock: options.clock,
      applicationId: options.applicationId,
      events: this.events,
      version: (stored) => this.#version(stored),
    };
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
    const leaf = buildOptions(this.#store, guild, channel, input, command?.options, resolved, undefined);
    const options = nestOptions(leaf, input.subcommandGroup, input.subcommand);
    const hasResolved = Object.keys(resolved).length > 0;
    const data = {
      id: command?.id ?? this.#store.nextId(),
      name: input.name,
      type: ApplicationCommandType.ChatInput,
      ...(command?.guild_id ? { guild_id: command.guild_id } : {}),
      ...(options.length > 0 ? { options } : {}),
      ...(hasResolved ? { resolved } : {}),
    };
    return this.#create({ type: InteractionType.ApplicationCommand, guild, channel, userId: input.userId, data, locale: input.locale });
  }

  async autocomplete(input: AutocompleteInput & { guildId: string; channelId: string; userId: string }): Promise<unknown[]> {
    const { guild, channel } = this.#place(input.guildId, input.channelId);
    const command = this.#options.commands.findChatInput(guild.id, input.name);
    const resolved: APIInteractionDataResolved = {};
    const leaf = buildOptions(this.#store, guild, channel, { ...input, attachments: undefined }, command?.options, resolved, input.focused);
    const options = nestOptions(leaf, input.subcommandGroup, input.subcommand);
    const data = {
      id: command?.id ?? this.#store.nextId(),
      name: input.name,
      type: ApplicationCommandType.ChatInput,
      ...(command?.guild_id ? { guild_id: command.guild_id } : {}),
      options,
    };
    const handle = this.#create({ type: InteractionType.ApplicationCommandAutocomplete, guild, channel, userId: input.userId, data, locale: input.locale });
    const response = await handle.waitForResponse(input.timeoutMs);
    const choices = isRecord(response.data) && Array.isArray(response.data.choices) ? response.data.choices : [];
    return choices;
  }

  /**
   * A message command, as Discord sends it: `data.type` 3, the message in `target_id` and in
   * `resolved.messages`. Only a command the bot registered shows in the menu, and an ephemeral
   * message has no menu.
   */
  runMessageCommand(input: RunMessageCommandInput): InteractionHandle {
    const stored = this.#componentMessage(input.messageId);
    if (stored.ephemeral) throw new Error(`message ${input.messageId} is ephemeral: it has no Apps menu`);
    const { guild, channel } = this.#place(stored.guildId ?? '', stored.api.channel_id);
    const command = this.#options.commands.findMessageCommand(guild.id, input.name);
    if (!command) throw new Error(`the bot registered no message command named "${input.name}" for guild ${guild.id}`);
    const data = {
      id: command.id,
      name: command.name,
      type: ApplicationCommandType.Message,
      ...(command.guild_id ? { guild_id: command.guild_id } : {}),
      target_id: stored.api.id,
      resolved: { messages: { [stored.api.id]: wireMessage(stored) } },
    };
    return this.#create({ type: InteractionType.ApplicationCommand, guild, channel, userId: input.userId, data, locale: input.locale });
  }

  clickButton(input: ClickButtonInput): InteractionHandle {
    const stored = this.#componentMessage(input.messageId);
    const component = findComponent(stored.api.components, input.customId);
    if (!component || component.type !== ComponentType.Button) {
      throw new Error(`message ${input.messageId} has no button with custom_id "${input.customId}"`);
    }
    if (component.disabled === true) throw new Error(`button "${input.customId}" is disabled; a user cannot click it`);
    const { guild, channel } = this.#place(input.guildId ?? stored.guildId ?? '', stored.api.channel_id);
    return this.#create({
      type: InteractionType.MessageComponent,
      guild,
      channel,
      userId: input.userId,
      data: { custom_id: input.customId, component_type: ComponentType.Button },
      source: stored,
      locale: input.locale,
    });
  }

  selectOption(input: SelectOptionInput): InteractionHandle {
    const stored = this.#componentMessage(input.messageId);
    const component = findComponent(stored.api.components, input.customId);
    if (!component || component.type !== ComponentType.StringSelect) {
      throw new Error(`message ${input.messageId} has no string select with custom_id "${input.customId}"`);
    }
    const { guild, channel } = this.#place(stored.guildId ?? '', stored.api.channel_id);
    return this.#create({
      type: InteractionType.MessageComponent,
      guild,
      channel,
      userId: input.userId,
      data: { custom_id: input.customId, component_type: ComponentType.StringSelect, values: input.values },
      source: stored,
      locale: input.locale,
    });
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
    return this.#create({
      type: InteractionType.ModalSubmit,
      guild,
      channel,
      userId,
      data: { custom_id: customId, components },
      source,
      triggeredBy: trigger,
      locale: input.locale ?? (trigger?.payload as { locale?: string } | undefined)?.locale,
    });
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
    return this.#create({
      type: input.type,
      guild,
      channel,
      userId: input.userId,
      data: structuredClone(input.data),
      source,
      locale: input.locale,
      ...(input.entitlements && { entitlements: structuredClone(input.entitlements) }),
    });
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

  #create(input: NewInteraction): InteractionHandle {
    const record = createInteraction(this.#context, this.#options.attachmentSizeLimit, input);
    this.#byId.set(record.id, record);
    this.#byToken.set(record.token, record);
    this.#options.dispatch(record.payload);
    return interactionHandle(this.#context, record);
  }

  // ---- the bot's side: callback ----

  /** POST /interactions/{id}/{token}/callback */
  respond(id: string, token: string, body: unknown, uploads: Upload[], withResponse: boolean): { status: number; body?: unknown } {
    const record = this.#byId.get(id);
    if (!record || record.token !== token) throw DiscordErrors.unknownInteraction();
    return callback.respond(this.#context, record, body, uploads, withResponse);
  }

  // ---- the bot's side: webhook routes with the interaction token ----

  /** Finds the interaction behind `/webhooks/{application_id}/{token}`, with Discord's errors. */
  resolveWebhook(applicationId: string, token: string): InteractionRecord {
    if (applicationId !== this.#options.applicationId) throw DiscordErrors.unknownWebhook();
    const record = this.#byToken.get(token);
    if (!record) throw DiscordErrors.invalidWebhookToken();
    if (this.#options.clock.now() - record.createdAt > webhook.INTERACTION_TOKEN_LIFETIME_MS) throw DiscordErrors.invalidWebhookToken();
    return record;
  }

  getMessage(record: InteractionRecord, messageId: string): StoredMessage {
    return webhook.getMessage(this.#context, record, messageId);
  }

  editMessage(record: InteractionRecord, messageId: string, body: unknown, uploads: Upload[]): StoredMessage {
    return webhook.editMessage(this.#context, record, messageId, body, uploads);
  }

  deleteMessage(record: InteractionRecord, messageId: string): void {
    webhook.deleteMessage(this.#context, record, messageId);
  }

  /** POST /webhooks/{application_id}/{token}: a follow-up (the first one after a defer fills the placeholder). */
  followUp(record: InteractionRecord, body: unknown, uploads: Upload[]): StoredMessage {
    return webhook.followUp(this.#context, record, body, uploads);
  }
}
