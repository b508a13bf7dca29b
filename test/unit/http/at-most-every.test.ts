import { describe, expect, it } from 'vitest';
import { atMostEvery } from '../../../src/http/server.js';

describe('atMostEvery', () => {
  it('runs once per max age, one run at a time, and again at once after a failure', async () => {
    let now = 0;
    let runs = 0;
    let fail = false;
    let release: (() => void) | undefined;
    const refresh = atMostEvery(
      () => {
        runs += 1;
        return new Promise<void>((resolve, reject) => (release = () => (fail ? reject(new Error('down')) : resolve())));
      },
      10_000,
      () => now,
    );
    const first = refresh();
    const second = refresh();
    expect(runs).toBe(1);
    release!();
    await Promise.all([first, second]);

    now = 9_999;
    await refresh();
    expect(runs).toBe(1);

    now = 10_000;
    fail = true;
    const failing = refresh();
    release!();
    await expect(failing).rejects.toThrow('down');
    fail = false;
    const retry = refresh();
    expect(runs).toBe(3);
    release!();
    await retry;
  });
});
