/** The voice scenarios (./voice.scenarios.ts) with interactions POSTed to the bot's `/interactions` (INTERACTIONS=http), in one process. */
import { voiceScenarios } from './voice.scenarios.js';

voiceScenarios({ interactions: 'http' });
