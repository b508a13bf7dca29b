/**
 * The bot's commands registered with the Discord emulator from the test's own process: the same
 * configuration and the same call as `npm run deploy-commands` (src/scripts/deploy-commands.ts),
 * without a node process of its own to start. The end-to-end files that run the script itself
 * (production-entry, the test world's own test) keep it covered.
 */
import { applicationCommandDefinitions } from '../../commands/index.js';
import { loadConfig } from '../../src/config.js';
import { deployCommands, type DeployResult } from '../../src/discord/deploy.js';

/** Registers the commands as a bot process with `env` would: to DISCORD_DEV_GUILD_ID when set, else globally. */
export async function registerCommands(env: Readonly<Record<string, string>>): Promise<DeployResult> {
  return deployCommands(loadConfig({ env, require: ['discord'] }), applicationCommandDefinitions);
}
