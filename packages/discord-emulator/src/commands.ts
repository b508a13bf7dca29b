import { ApplicationCommandType, ApplicationIntegrationType } from 'discord-api-types/v10';
import type { APIApplicationCommand, InteractionContextType, Permissions } from 'discord-api-types/v10';
import type { SnowflakeGenerator } from './snowflake.js';

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** The bot's registered application commands, global and per guild. */
export class CommandRegistry {
  readonly #global = new Map<string, APIApplicationCommand>();
  readonly #guild = new Map<string, Map<string, APIApplicationCommand>>();
  readonly #ids: SnowflakeGenerator;
  readonly #applicationId: string;

  constructor(ids: SnowflakeGenerator, applicationId: string) {
    this.#ids = ids;
    this.#applicationId = applicationId;
  }

  #scope(guildId: string | null): Map<string, APIApplicationCommand> {
    if (guildId === null) return this.#global;
    let scope = this.#guild.get(guildId);
    if (!scope) {
      scope = new Map();
      this.#guild.set(guildId, scope);
    }
    return scope;
  }

  list(guildId: string | null): APIApplicationCommand[] {
    return [...this.#scope(guildId).values()];
  }

  get(guildId: string | null, commandId: string): APIApplicationCommand | undefined {
    return this.#scope(guildId).get(commandId);
  }

  /** Replaces the whole list, keeping ids of commands whose name and type stay (as Discord does). */
  overwrite(guildId: string | null, bodies: unknown[]): APIApplicationCommand[] {
    const scope = this.#scope(guildId);
    const previous = [...scope.values()];
    scope.clear();
    for (const body of bodies) {
      if (!isRecord(body)) continue;
      const command = this.#build(guildId, body, previous);
      scope.set(command.id, command);
    }
    return this.list(guildId);
  }

  /** Creates, or updates the command with the same name and type. */
  upsert(guildId: string | null, body: Record<string, unknown>): { command: APIApplicationCommand; created: boolean } {
    const scope = this.#scope(guildId);
    const previous = [...scope.values()];
    const command = this.#build(guildId, body, previous);
    const created = !scope.has(command.id);
    scope.set(command.id, command);
    return { command, created };
  }

  delete(guildId: string | null, commandId: string): boolean {
    return this.#scope(guildId).delete(commandId);
  }

  /** The chat-input command a user would pick by name in this guild (guild commands first). */
  findChatInput(guildId: string | null, name: string): APIApplicationCommand | undefined {
    const matches = (command: APIApplicationCommand): boolean =>
      command.name === name && command.type === ApplicationCommandType.ChatInput;
    return (guildId ? this.list(guildId).find(matches) : undefined) ?? this.list(null).find(matches);
  }

  /** The message command (type 3) a user would pick by name in this guild's "Apps" menu (guild commands first). */
  findMessageCommand(guildId: string | null, name: string): APIApplicationCommand | undefined {
    const matches = (command: APIApplicationCommand): boolean => command.name === name && command.type === ApplicationCommandType.Message;
    return (guildId ? this.list(guildId).find(matches) : undefined) ?? this.list(null).find(matches);
  }

  #build(guildId: string | null, body: Record<string, unknown>, previous: APIApplicationCommand[]): APIApplicationCommand {
    const type = typeof body.type === 'number' ? (body.type as ApplicationCommandType) : ApplicationCommandType.ChatInput;
    const name = String(body.name ?? '');
    const kept = previous.find((command) => command.name === name && command.type === type);
    const permissions = body.default_member_permissions;
    return {
      ...(body as Partial<APIApplicationCommand>),
      id: kept?.id ?? this.#ids.next(),
      application_id: this.#applicationId,
      version: this.#ids.next(),
      type,
      name,
      description: typeof body.description === 'string' ? body.description : '',
      default_member_permissions:
        permissions === undefined || permissions === null ? null : (String(permissions) as Permissions),
      nsfw: body.nsfw === true,
      integration_types: Array.isArray(body.integration_types)
        ? (body.integration_types as ApplicationIntegrationType[])
        : [ApplicationIntegrationType.GuildInstall],
      contexts: Array.isArray(body.contexts) ? (body.contexts as InteractionContextType[]) : null,
      ...(guildId ? { guild_id: guildId } : {}),
    } as APIApplicationCommand;
  }
}
