/** Waiting on the emulator's event emitters. */
import type { EventEmitter } from 'node:events';

/** Waits until `check` yields a value, re-checking whenever `emitter` emits `event`. */
export function waitUntil<T>(emitter: EventEmitter, event: string, check: () => T | undefined, timeoutMs: number, what: string): Promise<T> {
  const immediate = check();
  if (immediate !== undefined) return Promise.resolve(immediate);
  return new Promise<T>((resolve, reject) => {
    const listener = (): void => {
      const value = check();
      if (value === undefined) return;
      cleanup();
      // Resolve after the current request has been answered and recorded.
      setImmediate(() => resolve(value));
    };
    const timer = setTimeout(() => {
      cleanup();
      reject(new Error(`timed out after ${timeoutMs} ms waiting for ${what}`));
    }, timeoutMs);
    const cleanup = (): void => {
      clearTimeout(timer);
      emitter.off(event, listener);
    };
    emitter.on(event, listener);
  });
}
