/**
 * Members first, where one process runs a front and the workers on one event loop: while
 * commands are arriving, background entries go `busyConcurrency` at a time (never none); once
 * the front has been quiet for `quietMs`, every waiting entry goes. Polls do not wait here: their
 * limiter spaces them. Why: docs/decisions/first-answer-path.md
 */
export interface FrontFirst {
  /** The front took an interaction; the returned function says it is done with it (call it once). */
  begin(): () => void;
  /** Waits for a background slot; the returned function gives it back (call it once). */
  acquire(): Promise<() => void>;
  /** Background entries holding a slot, and waiting for one (for tests and metrics). */
  readonly stats: () => { readonly inHand: number; readonly active: number; readonly waiting: number };
}

export interface FrontFirstOptions {
  /** How long after its last interaction the front counts as quiet. @defaultValue 50 ms */
  readonly quietMs?: number;
  /** Background entries at once while the front is busy. @defaultValue 2 */
  readonly busyConcurrency?: number;
  readonly now?: () => number;
  /** Told how many entries wait, whenever that changes (a gauge). */
  readonly observe?: (waiting: number) => void;
}

export function createFrontFirst(options: FrontFirstOptions = {}): FrontFirst {
  const quietMs = options.quietMs ?? 50;
  const busyConcurrency = Math.max(1, options.busyConcurrency ?? 2);
  const now = options.now ?? (() => performance.now());
  let inHand = 0;
  let lastBeganAt = Number.NEGATIVE_INFINITY;
  let active = 0;
  const waiting: Array<() => void> = [];
  let timer: NodeJS.Timeout | undefined;

  const busy = () => inHand > 0 || now() - lastBeganAt < quietMs;
  const observe = options.observe ?? (() => {});

  const release = () => {
    let released = false;
    return () => {
      if (released) return;
      released = true;
      active -= 1;
      pump();
    };
  };

  function pump(): void {
    const before = waiting.length;
    while (waiting.length > 0 && (active < busyConcurrency || !busy())) {
      active += 1;
      waiting.shift()!();
    }
    if (waiting.length !== before) observe(waiting.length);
    // Waiting only for the front to be quiet long enough: look again then. (With an
    // interaction in hand, its end pumps.)
    if (waiting.length > 0 && inHand === 0 && timer === undefined) {
      timer = setTimeout(
        () => {
          timer = undefined;
          pump();
        },
        Math.max(1, Math.ceil(lastBeganAt + quietMs - now())),
      );
      timer.unref();
    }
  }

  return {
    begin() {
      inHand += 1;
      lastBeganAt = now();
      let ended = false;
      return () => {
        if (ended) return;
        ended = true;
        inHand -= 1;
        if (inHand === 0) pump();
      };
    },
    acquire() {
      if (waiting.length === 0 && (active < busyConcurrency || !busy())) {
        active += 1;
        return Promise.resolve(release());
      }
      return new Promise((resolve) => {
        waiting.push(() => resolve(release()));
        observe(waiting.length);
        pump();
      });
    },
    stats: () => ({ inHand, active, waiting: waiting.length }),
  };
}

/** Runs `work` in a background slot of `gate`, or at once without one. */
export async function inBackgroundSlot<T>(gate: FrontFirst | undefined, work: () => Promise<T>): Promise<T> {
  if (!gate) return work();
  const done = await gate.acquire();
  try {
    return await work();
  } finally {
    done();
  }
}
