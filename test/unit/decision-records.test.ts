/** Every decision record reads in one sitting: a status and a date, at most about 500 words, and context, decision, consequences. */
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';

const folder = path.resolve(import.meta.dirname, '../../docs/decisions');
const records = readdirSync(folder).filter((name) => name.endsWith('.md'));
const read = (name: string) => readFileSync(path.join(folder, name), 'utf8');

/** Counted as `wc -w` counts: runs of characters between whitespace. */
const words = (text: string) => text.split(/\s+/).filter(Boolean).length;
const WORD_LIMIT = 550;
const SECTIONS = ['## Context', '## Decision', '## Consequences'];

function shapeProblems(name: string): string[] {
  const text = read(name);
  const problems: string[] = [];
  if (words(text) > WORD_LIMIT) problems.push(`${words(text)} words`);
  const headings = text.split('\n').filter((line) => line.startsWith('## '));
  for (const section of SECTIONS) if (!headings.includes(section)) problems.push(`no "${section}"`);
  return problems;
}

describe('decision records', () => {
  it.each(records)('%s has a status and its date near the top', (name) => {
    const top = read(name).split('\n').slice(0, 8);
    expect(top.some((line) => /^Status: (accepted|superseded by \[[^\]]+\]\([^)]+\.md\)),? .*\d{4}-\d{2}-\d{2}/.test(line))).toBe(true);
  });

  it.each(records)(`%s has at most ${WORD_LIMIT} words and the three sections`, (name) => {
    expect(shapeProblems(name)).toEqual([]);
  });
});
