/**
 * The voice player stays a host that binds its parts: the lease, the requests, the messages,
 * the idle countdown, the guild's order and the removed-song drop each live in a module of
 * their own, with their own tests. A new job for the player goes into a part, not into it.
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { expect, it } from 'vitest';

const root = path.resolve(import.meta.dirname, '../../..');

it('keeps src/voice/player.ts under 250 lines', () => {
  const lines = readFileSync(path.join(root, 'src/voice/player.ts'), 'utf8').trimEnd().split('\n').length;
  expect(lines).toBeLessThan(250);
});
