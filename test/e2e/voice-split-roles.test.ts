/**
 * The voice scenarios (./voice.scenarios.ts) with the roles apart: interactions POSTed to a
 * `ROLE=http` process, which reaches the player in the `ROLE=gateway` process through Redis;
 * songs are made by a `ROLE=worker` process. The restart restarts the gateway process.
 */
import { voiceScenarios } from './voice.scenarios.js';

voiceScenarios({ interactions: 'http', splitRoles: true });
