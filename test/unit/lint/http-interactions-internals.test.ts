/**
 * Interactions received over HTTP go through discord.js's public API and @discordjs/core only:
 * no underscore member, no `client.actions`, no `rest.post` replaced. Read over every module of
 * the Discord layer (src/discord/, commands/) the HTTP path loads, the handlers included, so a
 * helper it is split into is read too.
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';

const ROOT = path.resolve(import.meta.dirname, '../../..');
/** The endpoint, the receiver, and the handlers the receiver is given. */
const ENTRIES = ['src/http/interactions.ts', 'src/discord/http-interactions.ts', 'commands/index.ts'];
/** Where discord.js may be used at all (.dependency-cruiser.cjs): the rest of src/ never sees it. */
const DISCORD_LAYER = /^(src\/discord\/|commands\/)/;

const INTERNALS: ReadonlyArray<readonly [RegExp, string]> = [
  [/\._[a-z]/i, 'an underscore member'],
  [/\.actions\./, 'client.actions'],
  [/rest\.post\s*=(?!=)/, 'rest.post replaced'],
];

/** The entries and every module of the Discord layer they import, directly or not (type-only imports too). */
function modulesFrom(entries: readonly string[]): string[] {
  const seen = new Set<string>();
  const waiting = [...entries];
  while (waiting.length > 0) {
    const file = waiting.pop()!;
    if (seen.has(file)) continue;
    seen.add(file);
    const source = readFileSync(path.join(ROOT, file), 'utf8');
    for (const [, specifier] of source.matchAll(/from '(\.{1,2}\/[^']+)'/g)) {
      const target = path.relative(ROOT, path.resolve(path.dirname(path.join(ROOT, file)), specifier!.replace(/\.js$/, '.ts')));
      if (DISCORD_LAYER.test(target)) waiting.push(target);
    }
  }
  return [...seen].sort();
}

/** `file:line: what` for each line that reaches into discord.js's internals. */
function internalsIn(file: string): string[] {
  const lines = readFileSync(path.join(ROOT, file), 'utf8').split('\n');
  return lines.flatMap((line, index) => INTERNALS.filter(([pattern]) => pattern.test(line)).map(([, what]) => `${file}:${index + 1}: ${what}`));
}

describe('the HTTP interaction path', () => {
  it('is read from its entry points: the receiver, the router, the answers and the commands among its modules', () => {
    const modules = modulesFrom(ENTRIES);
    for (const file of ['src/discord/http-interactions.ts', 'src/discord/router.ts', 'src/discord/respond.ts', 'commands/song.ts']) expect(modules).toContain(file);
  });

  it("uses no underscore member or `actions` of discord.js, and leaves its REST client's methods alone", () => {
    expect(modulesFrom(ENTRIES).flatMap(internalsIn)).toEqual([]);
  });
});
