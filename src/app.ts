/**
 * The composition root: builds the bot from its parts for the configured role and hands
 * each part what it needs. Nothing below this file reads configuration on its own.
 */
import type { Config } from './config.js';
import { connectDatabase } from './db/client.js';
import { runMigrations } from './db/migrate.js';
import type { Logger } from './logger.js';
import { startInfrastructure } from './services/infrastructure.js';

export interface App {
  stop(): Promise<void>;
}

export async function startApp(config: Config, logger: Logger): Promise<App> {
  const infrastructure = await startInfrastructure(config, logger);
  const { applied } = await runMigrations(infrastructure.databaseUrl);
  if (applied > 0) logger.info({ applied }, 'database migrated');
  const database = connectDatabase(infrastructure.databaseUrl);

  logger.info({ role: config.role }, 'bot started');
  return {
    async stop() {
      await database.close();
      await infrastructure.stop();
    },
  };
}
