/** The song scenarios (./songs.scenarios.ts) with interactions over the gateway. */
import { songScenarios } from './songs.scenarios.js';

songScenarios('gateway');
