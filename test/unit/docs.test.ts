import { execFileSync } from 'node:child_process';
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { codePaths, isStale, readResults, renderPerformance, type ResultFile } from '../../bench/render-docs.js';

const root = path.resolve(import.meta.dirname, '../..');
const read = (file: string) => readFileSync(path.join(root, file), 'utf8');

/** README.md and every page under docs/, as paths from the root. */
const pages = [
  'README.md',
  ...readdirSync(path.join(root, 'docs'), { recursive: true, encoding: 'utf8' })
    .filter((name) => name.endsWith('.md'))
    .map((name) => path.join('docs', name)),
];

/** Every folder under `top`, at any depth, as paths from the root; dependencies and dot-folders left out. */
function foldersUnder(top: string): string[] {
  if (!existsSync(path.join(root, top))) return [];
  return readdirSync(path.join(root, top), { recursive: true, encoding: 'utf8' })
    .map((name) => path.join(top, name))
    .filter((name) => !name.split(path.sep).some((part) => part === 'node_modules' || part.startsWith('.')))
    .filter((name) => statSync(path.join(root, name)).isDirectory())
    .map((name) => name.split(path.sep).join('/'));
}

/** The one exception to "every folder is named": src/i18n's language folders, named once as `src/i18n/<locale>/`. */
const isLocaleFolder = (folder: string) => /^src\/i18n\/[^/]+$/.test(folder);

describe('docs/architecture.md', () => {
  const architecture = read('docs/architecture.md');

  it('names every folder of src/ and packages/, at any depth (but the locale folders of src/i18n)', () => {
    const folders = [...foldersUnder('src'), ...foldersUnder('packages')].filter((folder) => !isLocaleFolder(folder));
    expect(folders).toContain('src/pipeline/processors');
    const missing = folders.filter((folder) => !architecture.includes(`\`${folder}/\``));
    expect(missing, 'folders missing from docs/architecture.md').toEqual([]);
    expect(architecture).toContain('`src/i18n/<locale>/`');
  });

  it('names the other top-level folders and their folders, and only folders that exist', () => {
    const tops = ['commands', 'migrations', 'test', 'bench', 'deploy', 'docs'];
    const children = tops.flatMap((top) => foldersUnder(top).filter((folder) => folder.split('/').length === 2));
    expect(children).toContain('test/unit');
    const missing = [...tops, ...children].filter((folder) => !architecture.includes(`\`${folder}/\``));
    expect(missing, 'folders missing from docs/architecture.md').toEqual([]);
    const named = [...architecture.matchAll(/`((?:src|packages|commands|migrations|test|bench|deploy|docs)(?:\/[\w.-]+)*)\/`/g)].map((match) => match[1]!);
    const gone = named.filter((folder) => !isLocaleFolder(folder) && !existsSync(path.join(root, folder)));
    expect(gone, 'folders in docs/architecture.md that do not exist').toEqual([]);
  });
});

/** GitHub's anchor for a heading: lower case, punctuation dropped, spaces to hyphens. */
const slug = (heading: string) =>
  heading
    .trim()
    .toLowerCase()
    .replace(/[^\p{L}\p{N}\s_-]/gu, '')
    .replace(/\s/g, '-');

function anchorsOf(markdown: string): Set<string> {
  const seen = new Map<string, number>();
  const anchors = new Set<string>();
  for (const [, heading] of withoutCode(markdown).matchAll(/^#{1,6} (.+)$/gm)) {
    const base = slug(heading!);
    const count = seen.get(base) ?? 0;
    seen.set(base, count + 1);
    anchors.add(count === 0 ? base : `${base}-${count}`);
  }
  return anchors;
}

const withoutCode = (markdown: string) => markdown.replace(/^```[\s\S]*?^```/gm, '');

describe('links in README.md and docs/', () => {
  it('point to files that exist, and to headings in them', () => {
    const broken: string[] = [];
    for (const page of pages) {
      const text = withoutCode(read(page)).replace(/`[^`\n]*`/g, '');
      const links = [...text.matchAll(/\]\(([^)\s]+)\)/g)].map((match) => match[1]!).filter((link) => !/^[a-z]+:/.test(link));
      for (const link of links) {
        const [target = '', anchor] = link.split('#');
        const file = target === '' ? page : path.join(path.dirname(page), target);
        if (!existsSync(path.join(root, file))) broken.push(`${page}: ${link}: no such file`);
        else if (anchor !== undefined && file.endsWith('.md') && !anchorsOf(read(file)).has(anchor)) broken.push(`${page}: ${link}: no such heading`);
      }
    }
    expect(broken).toEqual([]);
  });

  it("know a heading's anchor as GitHub makes it", () => {
    expect(anchorsOf('# Keeping `/metrics` private\n\n## Backups\n## Backups\n```\n# not a heading\n```\n')).toEqual(
      new Set(['keeping-metrics-private', 'backups', 'backups-1']),
    );
  });
});

describe('pages say what is, not when it came', () => {
  it('mention no issue number, closing note or session', () => {
    const found = pages.filter((page) => /issue [0-9]+|this session's|closing note/i.test(read(page)));
    expect(found).toEqual([]);
  });

  it('and neither does the code: src, commands, packages, test and bench', () => {
    const code = ['src', 'commands', 'packages', 'test', 'bench']
      .filter((top) => existsSync(path.join(root, top)))
      .flatMap((top) =>
        readdirSync(path.join(root, top), { recursive: true, encoding: 'utf8' })
          .map((name) => path.join(top, name))
          .filter((name) => /\.(ts|js|md|sql)$/.test(name) && !name.includes('node_modules'))
          .filter((name) => name !== path.join('test', 'unit', 'docs.test.ts')),
      );
    const found = code.filter((file) => /issue [0-9]+|this session's|closing note/i.test(read(file)));
    expect(found).toEqual([]);
  });
});

describe('docs/performance.md', () => {
  // Reading each result's staleness asks git about every benchmark's code paths: seconds on a busy machine.
  it('is what `npm run bench:docs` renders from bench/results/*.json', { timeout: 60_000 }, () => {
    expect(read('docs/performance.md')).toBe(renderPerformance(readResults()));
  });

  const file = (name: string, extra: Record<string, unknown>): ResultFile => ({
    file: `${name}.json`,
    data: { benchmark: name, date: '2026-01-02T03:04:05.000Z', machine: { cores: 2, cpu: 'cpu', memoryGiB: 4, node: 'v20', platform: 'linux' }, ...extra },
  });

  it('names the commit each file measured, or says it was not recorded', () => {
    const page = renderPerformance([
      file('accept', { commit: '0123456789abcdef0123456789abcdef01234567', commitDirty: false, jobsPerSecond: 151.25, met: true }),
      file('webhook', { results: { bot: { p99: 50 }, floor: { p99: 7 } }, met: false }),
    ]);
    expect(page).toContain('`bench/results/accept.json`: 2026-01-02 03:04 UTC, commit `0123456789ab`;');
    expect(page).toContain('`bench/results/webhook.json`: 2026-01-02 03:04 UTC, commit not recorded;');
    expect(page).toContain('151.3 jobs/s');
    expect(page).toMatch(/\| \[`webhook`\]\(#webhook\) \|.*p99 50 ms.*\| p99 7 ms \|.*\| no; 2026-01-02 \|/);
  });

  it('marks a file stale when git says its code changed since, or when it records no commit', () => {
    const commit = '0123456789abcdef0123456789abcdef01234567';
    const page = renderPerformance([
      { ...file('accept', { commit, jobsPerSecond: 151.25, met: true }), stale: false },
      { ...file('ledger', { commit }), stale: true },
      file('webhook', { results: { bot: { p99: 50 }, floor: { p99: 7 } }, met: false }),
    ]);
    expect(page).not.toMatch(/accept\.json`:[^\n]*Stale/);
    expect(page).toMatch(/ledger\.json`:[^\n]*\*\*Stale:\*\* the code on its path \(`test\/bench\/ledger\.ts`, `src\/credits`/);
    expect(page).toMatch(/webhook\.json`:[^\n]*\*\*Stale:\*\* without a commit/);
    expect(page).toMatch(/\| \[`ledger`\]\(#ledger\) \|[^|]*\| \*\*stale\*\*/);
  });

  it('asks git whether the code on a benchmark path changed after the measured commit', () => {
    const head = execFileSync('git', ['rev-parse', 'HEAD'], { encoding: 'utf8' }).trim();
    const changed = execFileSync('git', ['log', '-2', '--format=%H', '--', ...codePaths('ledger')], { encoding: 'utf8' }).trim().split('\n');
    expect(isStale(process.cwd(), 'ledger', head)).toBe(false);
    expect(isStale(process.cwd(), 'ledger', changed[1]!)).toBe(true);
    expect(isStale(process.cwd(), 'ledger', '')).toBe(true);
    expect(isStale(process.cwd(), 'ledger', 'f'.repeat(40))).toBe(true);
  });

  it("shows the webhook runs' median and worst, not their best", () => {
    const across = (median: number, worst: number) => ({ median, worst });
    const page = renderPerformance([
      file('webhook', {
        commit: '0123456789abcdef0123456789abcdef01234567',
        workload: { completions: 100, rate: 10, runs: 5, roles: ['gateway', 'worker', 'http'] },
        results: { bot: { p99: 1 }, floor: { p99: 1 } },
        acrossRuns: { bot: { p50: across(20, 30), p99: across(60, 140), max: across(80, 150) }, floor: { p50: across(2, 3), p99: across(6, 9), max: across(8, 9) }, undelivered: 0, byRun: [] },
        targets: [{ name: "worst run's p99", value: 140, target: '< 100 in every run', met: false }],
      }),
    ]);
    expect(page).toContain('p99 median 60 ms / 140 ms worst');
    expect(page).toContain('| the bot | 20 ms / 30 ms | 60 ms / 140 ms | 80 ms / 150 ms |');
    expect(page).toContain("no (missed: worst run's p99)");
  });

  it('renders the targets a file states', () => {
    const page = renderPerformance([file('newcomer', { targets: [{ name: 'rate', value: 12.345, target: '≥ 10/s', met: true }], met: true })]);
    expect(page).toContain('| rate | 12.35 | ≥ 10/s | yes |');
  });

  it('still shows a results file of a benchmark it does not know', () => {
    const page = renderPerformance([file('newcomer', { target: 'fast', perSecond: 1234.5, met: true })]);
    expect(page).toContain('## newcomer');
    expect(page).toContain('| perSecond | 1,234.5 |');
  });
});
