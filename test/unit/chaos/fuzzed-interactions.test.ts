/**
 * The fuzzed-interactions scenario's own instruments: the seeded generator makes the same cases
 * again, and the ping check reads a message as Discord would (or the scenario's zero proves nothing).
 */
import { describe, expect, it } from 'vitest';
import { pingsOf, prng } from '../../chaos/scenarios/fuzzed-interactions.js';

describe('prng', () => {
  it('gives the same sequence for the same seed, another for another', () => {
    const draw = (seed: number) => {
      const random = prng(seed);
      return Array.from({ length: 5 }, () => random.int(1_000));
    };
    const a = prng(42);
    const b = prng(42);
    expect(Array.from({ length: 10 }, () => a.next())).toEqual(Array.from({ length: 10 }, () => b.next()));
    expect(draw(42)).not.toEqual(draw(43));
  });
});

describe('pingsOf', () => {
  it('pings every mention in content when allowed_mentions is left out', () => {
    expect(pingsOf({ content: 'hi <@1> <@!2> <@&3> @everyone' })).toEqual({ everyone: true, users: ['1', '2'], roles: ['3'] });
  });

  it('pings nothing with parse [], but the users and roles named in allowed_mentions', () => {
    expect(pingsOf({ content: '<@1> <@2> <@&3> @here', allowed_mentions: { parse: [] } })).toEqual({ everyone: false, users: [], roles: [] });
    expect(pingsOf({ content: '<@1> <@2> <@&3>', allowed_mentions: { parse: [], users: ['2'], roles: ['3'] } })).toEqual({ everyone: false, users: ['2'], roles: ['3'] });
    expect(pingsOf({ content: '<@1> @everyone', allowed_mentions: { parse: ['users', 'everyone'] } })).toEqual({ everyone: true, users: ['1'], roles: [] });
  });

  it('reads text displays as content and never embeds', () => {
    expect(pingsOf({ components: [{ type: 17, components: [{ type: 10, content: '<@5>' }] }] }).users).toEqual(['5']);
    expect(pingsOf({ embeds: [{ description: '<@5> @everyone' }] })).toEqual({ everyone: false, users: [], roles: [] });
  });
});
