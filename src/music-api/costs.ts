/**
 * Credits each operation costs upstream, charged at submission and refunded by the service when
 * the task fails upstream. The table lives in src/music-api-spec.ts (the catalogue quotes the
 * prices too); the client and the ledger read it here, the simulator has its own reading.
 */
import { OPERATION_COSTS } from '../music-api-spec.js';

export { OPERATION_COSTS };

export type SpecOperation = keyof typeof OPERATION_COSTS;

/** Every operation that costs something, including the sonic persona song. */
export type CostedOperation = SpecOperation | 'personaSong';

/**
 * A guess: the spec gives no price for POST /api/v1/sonic/create (`persona_music`), so the
 * cost is configuration (PERSONA_SONG_COST). Ten credits, the price of a producer song, until
 * the real figure is known.
 */
export const DEFAULT_PERSONA_SONG_COST = 10;

/** Credits charged for one call of `operation`. */
export function creditCost(operation: CostedOperation, personaSongCost: number = DEFAULT_PERSONA_SONG_COST): number {
  return operation === 'personaSong' ? personaSongCost : OPERATION_COSTS[operation];
}
