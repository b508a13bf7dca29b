/**
 * The song scenarios (./songs.scenarios.ts) with interactions POSTed to the bot's
 * `/interactions` (INTERACTIONS=http) and answered in the HTTP response: no handler may care
 * which way its interaction came.
 */
import { songScenarios } from './songs.scenarios.js';

songScenarios('http');
