/** The moderation scenarios (./moderation.scenarios.ts) with interactions POSTed to the bot's `/interactions` (INTERACTIONS=http). */
import { moderationScenarios } from './moderation.scenarios.js';

moderationScenarios('http');
