/**
 * The jobs table has one owner: src/pipeline/job-rows.ts and src/pipeline/transitions.ts
 * (and the schema and migrations that define it). The eslint rule in eslint.config.js fails
 * any other file that imports `jobs` from the schema; the rest of the schema stays open.
 */
import path from 'node:path';
import { ESLint } from 'eslint';
import { describe, expect, it } from 'vitest';

const ROOT = path.resolve(import.meta.dirname, '../../..');
const eslint = new ESLint({ cwd: ROOT });

/** The messages of the jobs-owner rule for `source` written at `file`. */
async function jobsOwnerErrors(file: string, source: string): Promise<string[]> {
  const [result] = await eslint.lintText(source, { filePath: path.join(ROOT, file) });
  return (result?.messages ?? []).filter((message) => message.ruleId === 'no-restricted-imports').map((message) => message.message);
}

describe('the jobs table\'s owner', { timeout: 60_000 }, () => {
  it('is the only module that may import it', async () => {
    const source = "import { jobs } from '../db/schema.js';\nexport const table = jobs;\n";
    expect(await jobsOwnerErrors('src/guilds/made-up.ts', source)).toEqual([expect.stringMatching(/job-rows\.ts/)]);
    expect(await jobsOwnerErrors('src/http/made-up.ts', "import { jobs as table } from '../db/schema.js';\nexport const t = table;\n")).toHaveLength(1);
    expect(await jobsOwnerErrors('commands/made-up.ts', "import { jobs } from '../src/db/schema.js';\nexport const t = jobs;\n")).toHaveLength(1);
    expect(await jobsOwnerErrors('src/pipeline/job-rows.ts', source)).toEqual([]);
    expect(await jobsOwnerErrors('src/pipeline/transitions.ts', source)).toEqual([]);
  });

  it('leaves the rest of the schema to everyone', async () => {
    const source = "import { guilds, type JobKind } from '../db/schema.js';\nexport const table: [typeof guilds, JobKind] = [guilds, 'song'];\n";
    expect(await jobsOwnerErrors('src/guilds/made-up.ts', source)).toEqual([]);
  });
});
