/** Each guild's player changes run one after another; other guilds are not held up. */
import { describe, expect, it } from 'vitest';
import { GuildOrder } from '../../../src/voice/guild-order.js';
import { gate } from '../../support/gate.js';

describe("a guild's order", () => {
  it("runs one guild's work in the order it came, each after the last has settled, a failure included", async () => {
    const order = new GuildOrder();
    const seen: string[] = [];
    const first = gate();
    const a = order.run('g1', async () => {
      seen.push('a start');
      await first.promise;
      seen.push('a end');
      throw new Error('a failed');
    });
    const b = order.run('g1', async () => {
      seen.push('b');
      return 'b done';
    });
    await Promise.resolve();
    expect(seen).toEqual(['a start']);
    first.open();
    await expect(a).rejects.toThrow('a failed');
    await expect(b).resolves.toBe('b done');
    expect(seen).toEqual(['a start', 'a end', 'b']);
    await expect.poll(() => order.busy).toBe(0);
  });

  it("runs another guild's work while one guild waits", async () => {
    const order = new GuildOrder();
    const held = gate();
    const slow = order.run('g1', () => held.promise);
    await expect(order.run('g2', async () => 'other guild')).resolves.toBe('other guild');
    expect(order.busy).toBe(1);
    held.open();
    await slow;
  });
});
