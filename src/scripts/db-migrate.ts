/** `npm run db:migrate`: applies the committed migrations to DATABASE_URL or the embedded Postgres. */
import { exitWithError } from '../cli-support.js';
import { loadConfig } from '../config.js';
import { runMigrations } from '../db/migrate.js';
import { createLogger } from '../logger.js';
import { startInfrastructure } from '../embedded/infrastructure.js';

try {
  const config = loadConfig({ require: [] });
  const logger = createLogger({ level: config.logLevel === 'info' ? 'warn' : config.logLevel });
  const infrastructure = await startInfrastructure(config, logger, { redis: false });
  try {
    const { applied, online } = await runMigrations(infrastructure.databaseUrl, { lockTimeoutMs: config.migrationLockTimeoutMs, connectTimeoutMs: config.databaseConnectTimeoutMs });
    console.log(
      applied + online === 0 ? 'database schema is up to date' : `applied ${applied} migration(s)${online > 0 ? ` and ${online} online step(s)` : ''}`,
    );
  } finally {
    await infrastructure.stop();
  }
} catch (error) {
  exitWithError(error);
}
