/**
 * The order files start in: longest first, so that no long file starts last and keeps one worker
 * busy while the other waits. Vitest orders by the last run's durations when it has them; on a
 * fresh clone it has only file sizes, and a scenario file's size is mostly in the
 * `*.scenarios.ts` it imports (voice.test.ts is a few lines, and runs a minute), which counts here.
 */
import { readFileSync, statSync } from 'node:fs';
import path from 'node:path';
import { BaseSequencer, type TestSpecification } from 'vitest/node';

function weight(file: string): number {
  const text = readFileSync(file, 'utf8');
  const scenarios = [...text.matchAll(/from '(\.\/[\w.-]+\.scenarios)\.js'/g)].map((match) => path.resolve(path.dirname(file), `${match[1]}.ts`));
  return text.length + scenarios.reduce((sum, imported) => sum + statSync(imported).size, 0);
}

export default class LongestFirst extends BaseSequencer {
  override async sort(files: TestSpecification[]): Promise<TestSpecification[]> {
    const timed = files.every((spec) => this.ctx.cache.getFileTestResults(`${spec.project.name}:${path.relative(this.ctx.config.root, spec.moduleId)}`));
    if (timed) return super.sort(files);
    const weights = new Map(files.map((spec) => [spec.moduleId, weight(spec.moduleId)]));
    return [...files].sort((a, b) => weights.get(b.moduleId)! - weights.get(a.moduleId)!);
  }
}
