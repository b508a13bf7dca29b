import type { EmulatorClock } from './clock.js';

const DISCORD_EPOCH_MS = 1_420_070_400_000n;

/** Makes Discord-shaped ids whose timestamp part follows the emulator clock. */
export class SnowflakeGenerator {
  #last = 0n;
  readonly #clock: EmulatorClock;

  constructor(clock: EmulatorClock) {
    this.#clock = clock;
  }

  next(): string {
    const timestamp = BigInt(Math.floor(this.#clock.now())) - DISCORD_EPOCH_MS;
    // worker 1, process 1, then a counter: a plain increment keeps ids unique and ordered.
    let id = (timestamp << 22n) | (1n << 17n) | (1n << 12n);
    if (id <= this.#last) id = this.#last + 1n;
    this.#last = id;
    return id.toString();
  }
}

/** Milliseconds since the Unix epoch encoded in a snowflake. */
export function snowflakeTimestamp(id: string): number {
  return Number((BigInt(id) >> 22n) + DISCORD_EPOCH_MS);
}
