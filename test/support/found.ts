/**
 * A check for `vi.waitFor`: the value, once it is there (neither undefined nor false), else an
 * error saying what is still awaited, which `vi.waitFor` reports if it gives up.
 */
export function found<T>(value: T | undefined | false, what: string | (() => string) = 'the condition'): T {
  if (value === undefined || value === false) throw new Error(`still waiting for ${typeof what === 'string' ? what : what()}`);
  return value;
}
