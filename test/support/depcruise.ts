/**
 * dependency-cruiser with the project's rules (.dependency-cruiser.cjs), run in this process on
 * the tree at `cwd` as `depcruise <folders> --config .dependency-cruiser.cjs` run there would.
 * The lint tests cruise many small trees: loading dependency-cruiser and TypeScript once, in the
 * test's process, costs a fraction of one command-line run per tree.
 */
import path from 'node:path';
import { cruise, type ICruiseOptions, type ICruiseResult } from 'dependency-cruiser';
import extractDepcruiseOptions from 'dependency-cruiser/config-utl/extract-depcruise-options';
import extractTSConfig from 'dependency-cruiser/config-utl/extract-ts-config';

const ROOT = path.resolve(import.meta.dirname, '../..');
let rules: Promise<ICruiseOptions> | undefined;

/** The cruise of `folders` (relative to `cwd`), paths in it relative to `cwd`; `collapse` as the command line's `--collapse`. */
export async function cruiseTree(cwd: string, folders: readonly string[], { collapse }: { collapse?: string } = {}): Promise<ICruiseResult> {
  const options = await (rules ??= extractDepcruiseOptions(path.join(ROOT, '.dependency-cruiser.cjs')));
  const tsConfigFile = options.tsConfig?.fileName;
  const result = await cruise(
    [...folders],
    { ...structuredClone(options), baseDir: cwd, ...(collapse !== undefined && { collapse }) },
    {},
    tsConfigFile ? { tsConfig: extractTSConfig(path.join(cwd, tsConfigFile)) } : {},
  );
  return result.output as ICruiseResult;
}
