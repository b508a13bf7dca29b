/**
 * Credits each operation costs upstream, charged when the request is submitted and refunded
 * by the service when the task fails upstream. The one place these numbers live: the client,
 * the simulator and the bot's own ledger all read them from here.
 */

/** The spec's credit table, keyed by operation. */
export const OPERATION_COSTS = {
  /** POST /api/v1/producer/create */
  song: 10,
  /** POST /api/v1/producer/lyrics-create */
  lyrics: 1,
  /** POST /api/v1/producer/video-clip */
  video: 5,
  /** POST /api/v1/producer/upload */
  upload: 2,
  /** POST /api/v1/producer/download */
  download: 2,
  /** POST /api/v1/sonic/create-voice */
  voice: 4,
  /** GET /api/v1/producer/task/{id} and /api/v1/sonic/task/{id}: free for every task type. */
  poll: 0,
} as const satisfies Record<string, number>;

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
