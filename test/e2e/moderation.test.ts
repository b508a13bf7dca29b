/** The moderation scenarios (./moderation.scenarios.ts) with interactions over the gateway. */
import { moderationScenarios } from './moderation.scenarios.js';

moderationScenarios('gateway');
