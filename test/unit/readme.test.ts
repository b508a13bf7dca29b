import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { CONFIG_VARIABLES } from '../../src/config.js';

const root = path.resolve(import.meta.dirname, '../..');
const readme = readFileSync(path.join(root, 'README.md'), 'utf8');
const configuration = readFileSync(path.join(root, 'docs/configuration.md'), 'utf8');
const envExample = readFileSync(path.join(root, '.env.example'), 'utf8');
const ciScript = readFileSync(path.join(root, '.ci/run'), 'utf8');

describe('README', () => {
  it('stays short: at most 200 lines', () => {
    expect(readme.split('\n').length).toBeLessThanOrEqual(200);
  });

  it('docs/configuration.md documents exactly the variables src/config.ts reads', () => {
    const documented = [...configuration.matchAll(/^\| `([A-Z_]+)` \|/gm)].map((match) => match[1]);
    expect(documented.length).toBeGreaterThan(0);
    expect([...documented].sort()).toEqual([...CONFIG_VARIABLES].sort());
  });

  it('.env.example mentions every variable', () => {
    for (const name of CONFIG_VARIABLES) expect(envExample).toMatch(new RegExp(`^#? ?${name}=`, 'm'));
  });

  /** The first command block under a `## ` heading that starts with `heading`. */
  const firstCommand = (heading: string) => new RegExp(`\n## ${heading}[^\n]*\n[^\`]*\`\`\`sh\n([^\n]+)\n\`\`\``).exec(readme)?.[1];

  it('opens with the try-it, test-it and run-it commands', () => {
    expect(firstCommand('Try it')).toBe('npm ci && npm run playground');
    expect(firstCommand('Test it')).toBe('npm ci && npm test');
    expect(readme.indexOf('## Try it')).toBeLessThan(readme.indexOf('## Test it'));
    expect(readme.indexOf('## Test it')).toBeLessThan(readme.indexOf('## Run it on your Discord server'));
  });

  it("CI runs the README's test command", () => {
    expect(firstCommand('Test it')).toBe('npm ci && npm test');
    expect(ciScript).toMatch(/^npm ci$/m);
    expect(ciScript).toMatch(/^npm test$/m);
  });

  it('names only npm scripts that exist, here and in docs/', () => {
    const scripts = Object.keys(JSON.parse(readFileSync(path.join(root, 'package.json'), 'utf8')).scripts);
    const pages = [readme, ...readdirSync(path.join(root, 'docs'), { recursive: true, encoding: 'utf8' })
      .filter((name) => name.endsWith('.md'))
      .map((name) => readFileSync(path.join(root, 'docs', name), 'utf8'))];
    const named = pages.flatMap((page) => [...page.matchAll(/`npm run ([a-z:-]+)/g)].map((match) => match[1]));
    expect(named).toContain('playground');
    for (const name of named) expect(scripts).toContain(name);
  });
});
