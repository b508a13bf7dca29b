/**
 * Registers the slash commands with Discord: to one guild when a development guild is
 * configured (instant), globally otherwise. One bulk overwrite, so commands removed from
 * `commands/` disappear from Discord too.
 */
import { API } from '@discordjs/core/http-only';
import { REST } from '@discordjs/rest';
import type { RESTPostAPIChatInputApplicationCommandsJSONBody, RESTPostAPIContextMenuApplicationCommandsJSONBody } from 'discord-api-types/v10';

/** What the bot registers: slash commands and message commands. */
export type DeployedDefinition = RESTPostAPIChatInputApplicationCommandsJSONBody | RESTPostAPIContextMenuApplicationCommandsJSONBody;
import type { Config } from '../config.js';

export interface DeployResult {
  readonly scope: 'global' | 'guild';
  readonly guildId: string | undefined;
  readonly names: readonly string[];
}

/** Guild commands take neither `contexts`, `integration_types` nor `dm_permission`. */
function forGuild(definition: DeployedDefinition): DeployedDefinition {
  const { contexts: _contexts, integration_types: _types, dm_permission: _dm, ...rest } = definition;
  return rest;
}

export async function deployCommands(
  config: Pick<Config, 'discordApiUrl' | 'discordToken' | 'discordApplicationId' | 'discordDevGuildId'>,
  definitions: readonly DeployedDefinition[],
): Promise<DeployResult> {
  const { applicationCommands } = new API(new REST({ api: config.discordApiUrl }).setToken(config.discordToken));
  const guildId = config.discordDevGuildId;
  const registered = guildId
    ? await applicationCommands.bulkOverwriteGuildCommands(config.discordApplicationId, guildId, definitions.map(forGuild))
    : await applicationCommands.bulkOverwriteGlobalCommands(config.discordApplicationId, [...definitions]);
  return { scope: guildId ? 'guild' : 'global', guildId, names: registered.map((command) => command.name) };
}
