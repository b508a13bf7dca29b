/**
 * `npm run music-api:check`: the first thing an operator runs. Asks the music service for the
 * credit balance with the configured URL and key, and says what is wrong when that fails (and
 * when the model list offered is the spec's placeholders).
 */
import { exitWithError } from '../cli-support.js';
import { loadConfig, modelListNotice } from '../config.js';
import { MusicApiClient } from '../music-api/client.js';
import { MusicApiError } from '../music-api/errors.js';
import { english } from '../i18n/index.js';

try {
  const config = loadConfig({ require: ['musicApi'] });
  const notice = modelListNotice(config);
  if (notice !== undefined) console.warn(notice);
  const client = new MusicApiClient({
    baseUrl: config.musicApiUrl,
    apiKey: config.musicApiKey,
    models: config.musicModels,
    timeoutMs: config.musicApiTimeoutMs,
    personaSongCost: config.personaSongCost,
  });
  const balance = await client.getCredits();
  console.log(`music API at ${config.musicApiUrl}: ${balance.credits} credits, ${balance.extraCredits} extra credits`);
} catch (error) {
  if (error instanceof MusicApiError) {
    console.error(error.message);
    console.error(english.text(error.userText));
    if (error.detail !== undefined) console.error(`detail: ${error.detail}`);
    // Not process.exit(): stderr to a pipe is written asynchronously and would be cut off.
    process.exitCode = 1;
  } else {
    exitWithError(error);
  }
}
