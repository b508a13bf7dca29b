/**
 * The Node versions the project says it supports: the engines field's minimum runs every
 * production dependency installed here (so `npm ci` warns on none there), the README names the same minimum,
 * and the image's Node line is at or above it.
 */
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';

const root = path.resolve(import.meta.dirname, '../../..');
const read = (file: string) => readFileSync(path.join(root, file), 'utf8');

type Version = readonly [number, number, number];

function version(text: string): Version {
  // `x` or `*` in place of a part reads as that part left out: `10.x` is `10`.
  const parts = /^v?(\d+)(?:\.(\d+))?(?:\.(\d+))?$/.exec(text.trim().replace(/(\.[xX*])+$/, ''));
  if (!parts) throw new Error(`not a version: ${text}`);
  return [Number(parts[1]), Number(parts[2] ?? 0), Number(parts[3] ?? 0)];
}

function compare(a: Version, b: Version): number {
  return a[0] - b[0] || a[1] - b[1] || a[2] - b[2];
}

/**
 * Whether `v` satisfies an npm engines range: alternatives joined by `||`, each a list of
 * comparators (`>=`, `>`, `<=`, `<`, `=`, `^`, `~` or a bare version). Throws on other syntax,
 * so a range this cannot read fails the test instead of passing it.
 */
function satisfies(v: Version, range: string): boolean {
  return range.split('||').some((alternative) =>
    alternative.trim().replace(/(>=|<=|>|<|=|\^|~)\s+/g, '$1').split(/\s+/).every((comparator) => {
      const [, op = '', rest = ''] = /^(>=|<=|>|<|=|\^|~)?(.+)$/.exec(comparator) ?? [];
      const bound = version(rest);
      const order = compare(v, bound);
      if (op === '>=') return order >= 0;
      if (op === '>') return order > 0;
      if (op === '<=') return order <= 0;
      if (op === '<') return order < 0;
      if (op === '^') return order >= 0 && v[0] === bound[0] && (bound[0] > 0 || v[1] === bound[1]);
      if (op === '~') return order >= 0 && v[0] === bound[0] && v[1] === bound[1];
      // A bare or `=` version: the parts it names must match.
      const named = rest.replace(/(\.[xX*])+$/, '').split('.').length;
      return v.slice(0, named).every((part, index) => part === bound[index]);
    }),
  );
}

const pkg = JSON.parse(read('package.json')) as { engines: { node: string } };
const minimum = version(/^>=\s*(\S+)$/.exec(pkg.engines.node)?.[1] ?? 'none');
const lock = JSON.parse(read('package-lock.json')) as { packages: Record<string, { dev?: boolean; engines?: { node?: string } | string[] }> };

describe('supported Node versions', () => {
  it('reads npm ranges as npm does', () => {
    expect(satisfies([22, 12, 0], '>=22.12.0')).toBe(true);
    expect(satisfies([20, 19, 0], '>=22.12.0')).toBe(false);
    expect(satisfies([22, 12, 0], '^20.19.0 || ^22.13.0 || >=23.5.0')).toBe(false);
    expect(satisfies([22, 13, 0], '^20.19.0 || ^22.13.0 || >=23.5.0')).toBe(true);
    expect(satisfies([24, 0, 0], '^16 || ^18 || >=20')).toBe(true);
    expect(satisfies([23, 1, 0], '>= 18 < 23')).toBe(false);
    expect(satisfies([10, 4, 0], '10.x')).toBe(true);
    expect(satisfies([12, 0, 0], '8.x || 10.x')).toBe(false);
    expect(() => satisfies([22, 0, 0], '22 - 24')).toThrow(/not a version/);
  });

  it('runs every production dependency from the engines minimum, so npm warns on none there', () => {
    const unmet = Object.entries(lock.packages)
      // What npm installs on this platform: platform-only builds (a wasm32 one) are left out.
      .filter(([name, entry]) => name !== '' && !entry.dev && existsSync(path.join(root, name)))
      .filter(([, entry]) => entry.engines && !Array.isArray(entry.engines) && entry.engines.node)
      .filter(([, entry]) => !satisfies(minimum, (entry.engines as { node: string }).node))
      .map(([name, entry]) => `${name} wants ${(entry.engines as { node: string }).node}`);
    expect(unmet, `engines.node is ${pkg.engines.node}`).toEqual([]);
  });

  it('names the same minimum in the README, and the image runs a line at or above it', () => {
    expect(read('README.md')).toContain(`Node ${minimum[0]}.${minimum[1]} or newer`);
    const image = Number(/^ARG NODE_VERSION=(\d+)$/m.exec(read('Dockerfile'))?.[1]);
    expect(compare([image, 0, 0], [minimum[0], 0, 0])).toBeGreaterThanOrEqual(0);
  });
});
