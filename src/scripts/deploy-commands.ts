/** `npm run deploy-commands`: registers the slash commands globally, or to DISCORD_DEV_GUILD_ID. */
import { applicationCommandDefinitions } from '../../commands/index.js';
import { exitWithError } from '../cli-support.js';
import { loadConfig } from '../config.js';
import { deployCommands } from '../discord/deploy.js';

try {
  const config = loadConfig({ require: ['discord'] });
  const result = await deployCommands(config, applicationCommandDefinitions);
  const where = result.scope === 'guild' ? `to guild ${result.guildId}` : 'globally (may take up to an hour to show)';
  console.log(`registered ${result.names.length} commands ${where}: ${result.names.map((name) => `/${name}`).join(' ')}`);
} catch (error) {
  exitWithError(error);
}
