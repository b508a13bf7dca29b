/**
 * The alert rules of deploy/prometheus/alerts.yml as tests read them, and the YAML subset they
 * are written in.
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';

export interface AlertRule {
  readonly alert: string;
  readonly expr: string;
  readonly for: string;
  readonly labels: Readonly<Record<string, string>>;
  readonly annotations: Readonly<Record<string, string>>;
}

const root = path.resolve(import.meta.dirname, '../..');

/** Every rule of every group, in file order. */
export function alertRules(): AlertRule[] {
  const file = parseYamlSubset(readFileSync(path.join(root, 'deploy/prometheus/alerts.yml'), 'utf8')) as { groups: Array<{ rules: AlertRule[] }> };
  return file.groups.flatMap((group) => group.rules);
}

/**
 * The YAML the rule file is written in: maps, lists of maps, plain and double-quoted strings
 * and `|` blocks. Anything else throws with its line number, so the file cannot drift into
 * YAML this reads differently from Prometheus. (No YAML package is a dependency of the bot.)
 */
export function parseYamlSubset(text: string): unknown {
  const raw = text.split('\n');
  const lines: Array<{ n: number; indent: number; content: string }> = [];
  for (const [index, line] of raw.entries()) {
    if (/^\s*(#.*)?$/.test(line)) continue;
    lines.push({ n: index + 1, indent: line.length - line.trimStart().length, content: line.trim() });
  }
  let at = 0;
  const fail = (n: number, why: string): never => {
    throw new Error(`alerts.yml line ${n}: ${why}`);
  };

  const scalar = (value: string, n: number): string => {
    if (value.startsWith('"')) {
      if (!/^"(?:[^"\\]|\\.)*"$/.test(value)) fail(n, 'unterminated or trailing text after a quoted string');
      return JSON.parse(value) as string;
    }
    if (/^[[\]{}&*!|>'%@`,?-]/.test(value) || /: |:$| #/.test(value)) fail(n, `write ${JSON.stringify(value)} in double quotes`);
    return value;
  };

  const block = (keyIndent: number, startLine: number): string => {
    const body: string[] = [];
    let index = startLine; // 0-based index into raw, the line after `key: |`
    while (index < raw.length && (raw[index]!.trim() === '' || raw[index]!.length - raw[index]!.trimStart().length > keyIndent)) body.push(raw[index++]!);
    while (body.length > 0 && body.at(-1)!.trim() === '') body.pop();
    const indent = Math.min(...body.filter((line) => line.trim() !== '').map((line) => line.length - line.trimStart().length));
    while (at < lines.length && lines[at]!.n <= index) at++;
    return body.map((line) => line.slice(indent)).join('\n') + '\n';
  };

  const node = (indent: number): unknown => (lines[at]!.content.startsWith('- ') ? list(indent) : map(indent));

  const map = (indent: number): Record<string, unknown> => {
    const out: Record<string, unknown> = {};
    while (at < lines.length && lines[at]!.indent === indent && !lines[at]!.content.startsWith('- ')) {
      const { n, content } = lines[at]!;
      const match = /^([A-Za-z_][\w-]*):(?: (.*))?$/.exec(content);
      if (!match) fail(n, 'expected `key: value`');
      const [, key, rest] = match!;
      if (key! in out) fail(n, `${key} given twice`);
      at++;
      if (rest === undefined || rest === '') {
        if (at >= lines.length || lines[at]!.indent <= indent) fail(n, `${key} has no value`);
        out[key!] = node(lines[at]!.indent);
      } else if (rest === '|') {
        out[key!] = block(indent, n);
      } else {
        out[key!] = scalar(rest, n);
      }
    }
    if (at < lines.length && lines[at]!.indent > indent) fail(lines[at]!.n, 'unexpected indentation');
    return out;
  };

  const list = (indent: number): unknown[] => {
    const out: unknown[] = [];
    while (at < lines.length && lines[at]!.indent === indent && lines[at]!.content.startsWith('- ')) {
      const line = lines[at]!;
      // `- key: value` opens a map whose keys line up with `key`.
      lines[at] = { n: line.n, indent: indent + 2, content: line.content.slice(2).trimStart() };
      out.push(map(indent + 2));
    }
    return out;
  };

  const top = map(0);
  if (at < lines.length) fail(lines[at]!.n, 'unexpected line');
  return top;
}
