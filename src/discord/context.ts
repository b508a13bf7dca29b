import type { Config } from '../config.js';
import type { Database } from '../db/client.js';
import type { Logger } from '../logger.js';
import type { MusicApiClient } from '../music-api/index.js';
import type { Pipeline } from '../pipeline/pipeline.js';

/**
 * What every command, autocomplete and button handler receives. The router hands each
 * interaction its own copy whose `logger` carries the interaction id.
 */
export interface CommandContext {
  readonly config: Config;
  readonly db: Database;
  readonly logger: Logger;
  readonly pipeline: Pipeline;
  /** For `/credits-admin account` (get-credits); generation goes through the pipeline. */
  readonly musicApi: MusicApiClient;
}
