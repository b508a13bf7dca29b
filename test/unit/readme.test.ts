import { execFileSync } from 'node:child_process';
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

  /** The lines of the first sh block under a `## ` heading that starts with `heading`, comments left out. */
  const commands = (heading: string) =>
    (new RegExp(`\n## ${heading}[^\n]*\n[^\`]*\`\`\`sh\n([^\`]+)\`\`\``).exec(readme)?.[1] ?? '').split('\n').filter((line) => line !== '' && !line.startsWith('#'));

  it('opens with the try-it, test-it and run-it commands, each line doing its own set-up', () => {
    expect(commands('Try it')).toEqual([
      'apt-get update && apt-get install -y redis-server && npm ci && npm run playground',
      'brew install redis && npm ci && npm run playground',
    ]);
    expect(commands('Test it')).toEqual([
      'apt-get update && apt-get install -y redis-server chromium postgresql caddy && npm ci && npm test',
      'brew install redis postgresql@17 caddy && brew install --cask google-chrome && npm ci && npm test',
    ]);
    expect(readme.indexOf('## Try it')).toBeLessThan(readme.indexOf('## Test it'));
    expect(readme.indexOf('## Test it')).toBeLessThan(readme.indexOf('## Run it on your Discord server'));
  });

  it("CI runs the README's test line as written, last", () => {
    // .ci/run's own reading of the README, run here.
    const readmeLine = /^readme_line\(\) \{\n[\s\S]*?\n\}$/m.exec(ciScript)?.[0];
    expect(readmeLine).toBeDefined();
    const read = execFileSync('bash', ['-c', `${readmeLine}\nreadme_line 'Test it'`], { cwd: root, encoding: 'utf8' }).trim();
    expect(read).toBe(commands('Test it')[0]);
    expect(ciScript).toMatch(/^test_line="\$\(readme_line 'Test it'\)"$/m);
    const lines = ciScript.trimEnd().split('\n');
    expect(lines.at(-1)).toBe('DEBIAN_FRONTEND=noninteractive bash -c "$test_line"');
  });

  it('names only npm scripts that exist, here and in docs/', () => {
    const scripts = Object.keys(JSON.parse(readFileSync(path.join(root, 'package.json'), 'utf8')).scripts);
    const pages = [readme, ...readdirSync(path.join(root, 'docs'), { recursive: true, encoding: 'utf8' })
      .filter((name) => name.endsWith('.md'))
      .map((name) => readFileSync(path.join(root, 'docs', name), 'utf8'))];
    const named = pages.flatMap((page) => [...page.matchAll(/`npm run ([a-z0-9:-]+)/g)].map((match) => match[1]));
    expect(named).toContain('playground');
    for (const name of named) expect(scripts).toContain(name);
  });
});
