/** The voice scenarios (./voice.scenarios.ts) with interactions over the gateway. */
import { voiceScenarios } from './voice.scenarios.js';

voiceScenarios({ interactions: 'gateway' });
