/**
 * The layer rules in .dependency-cruiser.cjs, run as the depcruise command runs them on small
 * made-up trees: a file in a folder no layer names fails, and so does the Discord client outside the
 * Discord edge or an import across the line between the bot and its stand-in packages, while
 * the same imports in their place pass.
 */
import { mkdtemp, mkdir, rm, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { cruiseTree } from '../../support/depcruise.js';

const ROOT = path.resolve(import.meta.dirname, '../../..');
let tree: string | undefined;

interface Violation {
  rule: string;
  from: string;
  to: string;
}

/**
 * Writes `files` (path → source) into a fresh tree beside the real node_modules and lints it:
 * the violations, sorted by file, each of severity error (one fails `npm run lint`).
 */
async function lint(files: Record<string, string>): Promise<Violation[]> {
  tree = await mkdtemp(path.join(tmpdir(), 'layers-'));
  await symlink(path.join(ROOT, 'node_modules'), path.join(tree, 'node_modules'));
  await writeFile(path.join(tree, 'tsconfig.json'), JSON.stringify({ compilerOptions: { module: 'NodeNext', moduleResolution: 'NodeNext' } }));
  for (const [file, source] of Object.entries(files)) {
    await mkdir(path.dirname(path.join(tree, file)), { recursive: true });
    await writeFile(path.join(tree, file), source);
  }
  const folders = ['src', ...(Object.keys(files).some((file) => file.startsWith('packages/')) ? ['packages'] : [])];
  const result = await cruiseTree(tree, folders);
  for (const violation of result.summary.violations) expect(violation.rule.severity).toBe('error');
  return result.summary.violations
    .map((v) => ({ rule: v.rule.name, from: v.from, to: v.to }))
    .sort((a, b) => a.from.localeCompare(b.from) || a.rule.localeCompare(b.rule));
}

afterEach(async () => {
  if (tree) await rm(tree, { recursive: true, force: true });
  tree = undefined;
});

describe('the layer rules', { timeout: 60_000 }, () => {
  it('fail a file in a folder no layer names, whether it imports, is imported or stands alone', async () => {
    const violations = await lint({
      'src/credits/ledger.ts': "import { wallet } from '../wallets/wallet.js';\nexport const ledger = wallet;\n",
      'src/wallets/wallet.ts': 'export const wallet = 1;\n',
      'src/payments/charge.ts': "import { ledger } from '../credits/ledger.js';\nexport const charge = ledger;\n",
      'src/lonely/alone.ts': 'export const alone = 1;\n',
    });
    expect(violations).toEqual([
      { rule: 'imports-not-placed', from: 'src/credits/ledger.ts', to: 'src/wallets/wallet.ts' },
      { rule: 'not-placed-orphan', from: 'src/lonely/alone.ts', to: 'src/lonely/alone.ts' },
      { rule: 'not-placed', from: 'src/payments/charge.ts', to: 'src/credits/ledger.ts' },
    ]);
  });

  it('fail discord.js imported by credits, and pass it at the Discord edge', async () => {
    const violations = await lint({
      'src/credits/ledger.ts': "import { escapeMarkdown } from 'discord.js';\nexport const ledger = escapeMarkdown('x');\n",
      'src/db/pool.ts': "import { REST } from '@discordjs/rest';\nexport const rest = REST;\n",
      'src/discord/router.ts': "import { Client } from 'discord.js';\nexport const client = Client;\n",
      'src/discord-rest/rest.ts': "import { REST } from '@discordjs/rest';\nexport const rest = REST;\n",
    });
    expect(violations).toEqual([
      { rule: 'discord-client-outside-discord-edge', from: 'src/credits/ledger.ts', to: expect.stringMatching(/node_modules\/discord\.js\//) },
      { rule: 'discord-client-outside-discord-edge', from: 'src/db/pool.ts', to: expect.stringMatching(/node_modules\/@discordjs\/rest\//) },
    ]);
  });

  it('keep Discord\'s wire types out of credits, and the formatters to the shared text helpers', async () => {
    const violations = await lint({
      'src/credits/ledger.ts': "import type { APIEmbed } from 'discord-api-types/v10';\nexport type Ledger = APIEmbed;\n",
      'src/pipeline/render.ts': "import type { APIEmbed } from 'discord-api-types/v10';\nexport type Embed = APIEmbed;\n",
      'src/text.ts': "import { escapeMarkdown } from '@discordjs/formatters';\nexport const escape = escapeMarkdown;\n",
      'src/guilds/names.ts': "import { bold } from '@discordjs/formatters';\nexport const name = bold('x');\n",
    });
    expect(violations).toEqual([
      { rule: 'discord-wire-types-in-a-plain-layer', from: 'src/credits/ledger.ts', to: expect.stringMatching(/node_modules\/discord-api-types\//) },
      { rule: 'discord-formatters-outside-text-helpers', from: 'src/guilds/names.ts', to: expect.stringMatching(/node_modules\/@discordjs\/formatters\//) },
    ]);
  });

  it('keep the bot and the stand-in packages apart, letting the test world start the bot through its entry points', async () => {
    const violations = await lint({
      'src/credits/ledger.ts': 'export const ledger = 1;\n',
      'src/app.ts': "import { ledger } from './credits/ledger.js';\nexport const app = ledger;\n",
      'src/credits/uses-sim.ts': "import { sim } from '../../packages/music-api-sim/src/index.js';\nexport const uses = sim;\n",
      'packages/music-api-sim/src/index.ts': 'export const sim = 1;\n',
      'packages/discord-emulator/src/uses-bot.ts': "import { ledger } from '../../../src/credits/ledger.js';\nexport const uses = ledger;\n",
      'packages/test-world/src/world.ts':
        "import { app } from '../../../src/app.js';\nimport { ledger } from '../../../src/credits/ledger.js';\nexport const world = [app, ledger];\n",
    });
    expect(violations).toEqual([
      { rule: 'stand-in-imports-bot', from: 'packages/discord-emulator/src/uses-bot.ts', to: 'src/credits/ledger.ts' },
      { rule: 'world-reaches-into-bot', from: 'packages/test-world/src/world.ts', to: 'src/credits/ledger.ts' },
      { rule: 'bot-imports-stand-in', from: 'src/credits/uses-sim.ts', to: 'packages/music-api-sim/src/index.ts' },
    ]);
  });

  it('pass a tree where every file has its place', async () => {
    const violations = await lint({
      'src/credits/ledger.ts': "import { pool } from '../db/pool.js';\nexport const ledger = pool;\n",
      'src/db/pool.ts': 'export const pool = 1;\n',
    });
    expect(violations).toEqual([]);
  });
});
