/** The chaos scenarios, in the order `npm run chaos` runs them. */
import type { Scenario } from '../scenario.js';
import { fuzzedInteractions } from './fuzzed-interactions.js';
import { hostileHttp } from './hostile-http.js';
import { killedWorkers } from './killed-workers.js';
import { postgresGone } from './postgres-gone.js';
import { purchases } from './purchases.js';
import { powerCut } from './power-cut.js';
import { powerCutAll } from './power-cut-all.js';
import { twinGateways } from './twin-gateways.js';
import { redisGone } from './redis-gone.js';
import { unreliableService } from './unreliable-service.js';

export const SCENARIOS: readonly Scenario[] = [killedWorkers, redisGone, postgresGone, unreliableService, hostileHttp, fuzzedInteractions, powerCut, twinGateways, purchases, powerCutAll];
