/** The chaos scenarios, in the order `npm run chaos` runs them (issue 13). */
import type { Scenario } from '../scenario.js';
import { fuzzedInteractions } from './fuzzed-interactions.js';
import { hostileHttp } from './hostile-http.js';
import { killedWorkers } from './killed-workers.js';
import { powerCut } from './power-cut.js';
import { twinGateways } from './twin-gateways.js';
import { unreliableService } from './unreliable-service.js';

export const SCENARIOS: readonly Scenario[] = [killedWorkers, unreliableService, hostileHttp, fuzzedInteractions, powerCut, twinGateways];
