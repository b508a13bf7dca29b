/**
 * Just enough PromQL to evaluate the alert rules in deploy/prometheus/alerts.yml against
 * scraped samples, as Prometheus would at one instant: selectors with `=`, `!=`, `=~`, `!~`
 * matchers, `[range]` under `rate()`, `time()`, `sum`/`max`/`min`/`count` with `by`, the
 * arithmetic operators, comparisons (filtering), `and`, and one-to-one vector matching on all
 * labels. Anything else throws, so a rule written with more PromQL than this knows fails its
 * test instead of being read wrongly.
 *
 * `rate(x[r])` is the increase between two scrapes (`previous` and `current`) per second: no
 * extrapolation, and a series seen only once has none, as in Prometheus.
 */

export type Labels = Readonly<Record<string, string>>;
export interface Sample {
  /** With `__name__`. */
  readonly labels: Labels;
  readonly value: number;
}
export interface Scrape {
  /** Unix time, seconds. */
  readonly at: number;
  readonly samples: readonly Sample[];
}
export interface Instant {
  readonly current: Scrape;
  readonly previous?: Scrape;
}

type Vector = Sample[];
type Value = { kind: 'scalar'; value: number } | { kind: 'vector'; samples: Vector } | { kind: 'range'; name: string; matchers: Matcher[] };
interface Matcher {
  readonly label: string;
  readonly op: '=' | '!=' | '=~' | '!~';
  readonly value: string;
}

/** Prometheus's text exposition as samples, each given `extra` labels (a scrape's `job` and `instance`). */
export function parseExposition(text: string, extra: Labels = {}): Sample[] {
  const samples: Sample[] = [];
  for (const line of text.split('\n')) {
    if (line === '' || line.startsWith('#')) continue;
    const match = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})? (\S+)(?: \d+)?$/.exec(line);
    if (!match) throw new Error(`not an exposition line: ${line}`);
    const labels: Record<string, string> = { ...extra, __name__: match[1]! };
    for (const pair of (match[2] ?? '').matchAll(/([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"/g)) {
      labels[pair[1]!] = pair[2]!.replace(/\\(.)/g, (_all, c: string) => (c === 'n' ? '\n' : c));
    }
    samples.push({ labels, value: parseValue(match[3]!) });
  }
  return samples;
}

function parseValue(text: string): number {
  if (/^[+]?inf$/i.test(text)) return Number.POSITIVE_INFINITY;
  if (/^-inf$/i.test(text)) return Number.NEGATIVE_INFINITY;
  if (/^nan$/i.test(text)) return Number.NaN;
  return Number(text);
}

/** The samples an alert rule's expression returns at this instant: each one a firing alert (before its `for`). */
export function evaluate(expr: string, at: Instant): Vector {
  const result = new Parser(expr, at).parse();
  if (result.kind !== 'vector') throw new Error(`${expr} is not an instant vector`);
  return result.samples;
}

const TOKEN = /\s*(?:(\d+(?:\.\d+)?(?:e[+-]?\d+)?)(?![a-zA-Z0-9.])|(\d+[smhd])|([a-zA-Z_:][a-zA-Z0-9_:]*)|("(?:[^"\\]|\\.)*")|(==|!=|<=|>=|=~|!~|[-+*/<>=(){}[\],]))/y;
type Token = { kind: 'number' | 'duration' | 'ident' | 'string' | 'op'; text: string };

function tokenize(expr: string): Token[] {
  const tokens: Token[] = [];
  TOKEN.lastIndex = 0;
  while (TOKEN.lastIndex < expr.length) {
    if (/^\s*$/.test(expr.slice(TOKEN.lastIndex))) break;
    const at = TOKEN.lastIndex;
    const match = TOKEN.exec(expr);
    if (!match) throw new Error(`cannot read PromQL at ${JSON.stringify(expr.slice(at, at + 20))}`);
    const [, number, duration, ident, string, op] = match;
    if (number !== undefined) tokens.push({ kind: 'number', text: number });
    else if (duration !== undefined) tokens.push({ kind: 'duration', text: duration });
    else if (ident !== undefined) tokens.push({ kind: 'ident', text: ident });
    else if (string !== undefined) tokens.push({ kind: 'string', text: JSON.parse(string) as string });
    else tokens.push({ kind: 'op', text: op! });
  }
  return tokens;
}

const AGGREGATIONS = new Set(['sum', 'max', 'min', 'count']);
const COMPARISONS = new Set(['==', '!=', '<', '>', '<=', '>=']);

class Parser {
  readonly #tokens: Token[];
  #at = 0;

  constructor(
    readonly expr: string,
    readonly instant: Instant,
  ) {
    this.#tokens = tokenize(expr);
  }

  parse(): Value {
    const value = this.#binary(0);
    if (this.#at < this.#tokens.length) this.#fail(`unexpected ${this.#tokens[this.#at]!.text}`);
    return value;
  }

  #fail(why: string): never {
    throw new Error(`${why} in ${this.expr}`);
  }

  #peek(): Token | undefined {
    return this.#tokens[this.#at];
  }

  #take(text?: string): Token {
    const token = this.#tokens[this.#at];
    if (!token || (text !== undefined && token.text !== text)) this.#fail(`expected ${text ?? 'more'}`);
    this.#at += 1;
    return token!;
  }

  /** Precedence climbing: and (0) < comparisons (1) < + - (2) < * / (3). */
  #binary(minLevel: number): Value {
    let left = this.#unary();
    for (;;) {
      const token = this.#peek();
      const level = token === undefined ? -1 : levelOf(token);
      if (level < minLevel) return left;
      this.#take();
      const right = this.#binary(level + 1);
      left = apply(token!.text, left, right, this.expr);
    }
  }

  #unary(): Value {
    if (this.#peek()?.text === '-') {
      this.#take();
      const value = this.#unary();
      return apply('*', { kind: 'scalar', value: -1 }, value, this.expr);
    }
    return this.#primary();
  }

  #primary(): Value {
    const token = this.#take();
    if (token.kind === 'number') return { kind: 'scalar', value: Number(token.text) };
    if (token.text === '(') {
      const inner = this.#binary(0);
      this.#take(')');
      return inner;
    }
    if (token.kind !== 'ident') this.#fail(`unexpected ${token.text}`);
    if (AGGREGATIONS.has(token.text)) return this.#aggregation(token.text);
    if (this.#peek()?.text === '(') return this.#call(token.text);
    return this.#selector(token.text);
  }

  #labelList(): string[] {
    this.#take('(');
    const labels: string[] = [];
    while (this.#peek()?.text !== ')') {
      labels.push(this.#take().text);
      if (this.#peek()?.text === ',') this.#take(',');
    }
    this.#take(')');
    return labels;
  }

  #aggregation(op: string): Value {
    const grouping = (): string[] | undefined => {
      if (this.#peek()?.text !== 'by') return undefined;
      this.#take('by');
      return this.#labelList();
    };
    let by = grouping();
    this.#take('(');
    const inner = this.#binary(0);
    this.#take(')');
    by ??= grouping();
    if (inner.kind !== 'vector') this.#fail(`${op} needs an instant vector`);
    const groups = new Map<string, { labels: Labels; values: number[] }>();
    for (const sample of (inner as { samples: Vector }).samples) {
      const labels = Object.fromEntries((by ?? []).filter((name) => sample.labels[name] !== undefined).map((name) => [name, sample.labels[name]!]));
      const key = signature(labels);
      const group = groups.get(key) ?? { labels, values: [] };
      group.values.push(sample.value);
      groups.set(key, group);
    }
    const fold = (values: number[]): number => {
      if (op === 'count') return values.length;
      if (op === 'sum') return values.reduce((a, b) => a + b, 0);
      // max and min skip NaN unless every value is NaN, as Prometheus does.
      const numbers = values.filter((value) => !Number.isNaN(value));
      if (numbers.length === 0) return Number.NaN;
      return op === 'max' ? Math.max(...numbers) : Math.min(...numbers);
    };
    return { kind: 'vector', samples: [...groups.values()].map((group) => ({ labels: group.labels, value: fold(group.values) })) };
  }

  #call(name: string): Value {
    this.#take('(');
    const args: Value[] = [];
    while (this.#peek()?.text !== ')') {
      args.push(this.#binary(0));
      if (this.#peek()?.text === ',') this.#take(',');
    }
    this.#take(')');
    if (name === 'time' && args.length === 0) return { kind: 'scalar', value: this.instant.current.at };
    if (name === 'rate' && args.length === 1 && args[0]!.kind === 'range') return this.#rate(args[0]!);
    return this.#fail(`the function ${name}/${args.length} is not known here`);
  }

  #selector(name: string): Value {
    const matchers: Matcher[] = [];
    if (this.#peek()?.text === '{') {
      this.#take('{');
      while (this.#peek()?.text !== '}') {
        const label = this.#take().text;
        const op = this.#take().text;
        if (op !== '=' && op !== '!=' && op !== '=~' && op !== '!~') this.#fail(`unexpected matcher ${op}`);
        const value = this.#take();
        if (value.kind !== 'string') this.#fail('a matcher needs a quoted value');
        matchers.push({ label, op, value: value.text });
        if (this.#peek()?.text === ',') this.#take(',');
      }
      this.#take('}');
    }
    if (this.#peek()?.text === '[') {
      this.#take('[');
      if (this.#take().kind !== 'duration') this.#fail('a range needs a duration');
      this.#take(']');
      return { kind: 'range', name, matchers };
    }
    return { kind: 'vector', samples: select(this.instant.current.samples, name, matchers) };
  }

  #rate(range: Extract<Value, { kind: 'range' }>): Value {
    const { current, previous } = this.instant;
    if (!previous) this.#fail('rate() needs two scrapes');
    const before = new Map(select(previous!.samples, range.name, range.matchers).map((sample) => [signature(sample.labels), sample.value]));
    const seconds = current.at - previous!.at;
    const samples: Vector = [];
    for (const sample of select(current.samples, range.name, range.matchers)) {
      const was = before.get(signature(sample.labels));
      if (was === undefined) continue;
      // A counter that went down was reset: it counted from 0 since.
      const increase = sample.value >= was ? sample.value - was : sample.value;
      samples.push({ labels: withoutName(sample.labels), value: increase / seconds });
    }
    return { kind: 'vector', samples };
  }
}

function levelOf(token: Token): number {
  if (token.kind === 'ident' && token.text === 'and') return 0;
  if (token.kind !== 'op') return -1;
  if (COMPARISONS.has(token.text)) return 1;
  if (token.text === '+' || token.text === '-') return 2;
  if (token.text === '*' || token.text === '/') return 3;
  return -1;
}

function select(samples: readonly Sample[], name: string, matchers: readonly Matcher[]): Vector {
  return samples.filter(
    (sample) =>
      sample.labels['__name__'] === name &&
      matchers.every(({ label, op, value }) => {
        const actual = sample.labels[label] ?? '';
        if (op === '=') return actual === value;
        if (op === '!=') return actual !== value;
        const matches = new RegExp(`^(?:${value})$`).test(actual);
        return op === '=~' ? matches : !matches;
      }),
  );
}

function withoutName(labels: Labels): Labels {
  const { __name__: _name, ...rest } = labels;
  return rest;
}

function signature(labels: Labels): string {
  return JSON.stringify(Object.entries(withoutName(labels)).sort(([a], [b]) => a.localeCompare(b)));
}

function compute(op: string, a: number, b: number): number | boolean {
  switch (op) {
    case '+':
      return a + b;
    case '-':
      return a - b;
    case '*':
      return a * b;
    case '/':
      return a / b;
    case '==':
      return a === b;
    case '!=':
      return a !== b;
    case '<':
      return a < b;
    case '>':
      return a > b;
    case '<=':
      return a <= b;
    default:
      return a >= b;
  }
}

function apply(op: string, left: Value, right: Value, expr: string): Value {
  if (left.kind === 'range' || right.kind === 'range') throw new Error(`a range outside rate() in ${expr}`);
  const comparison = COMPARISONS.has(op);
  if (op === 'and') {
    if (left.kind !== 'vector' || right.kind !== 'vector') throw new Error(`and needs two vectors in ${expr}`);
    const keys = new Set(right.samples.map((sample) => signature(sample.labels)));
    return { kind: 'vector', samples: left.samples.filter((sample) => keys.has(signature(sample.labels))) };
  }
  if (left.kind === 'scalar' && right.kind === 'scalar') {
    if (comparison) throw new Error(`a comparison of two scalars needs bool in ${expr}`);
    return { kind: 'scalar', value: compute(op, left.value, right.value) as number };
  }
  // Comparisons filter, keeping the vector side's sample; arithmetic drops the metric name.
  const pairs: Array<{ labels: Labels; a: number; b: number; kept: number }> = [];
  if (left.kind === 'vector' && right.kind === 'scalar') {
    for (const sample of left.samples) pairs.push({ labels: sample.labels, a: sample.value, b: right.value, kept: sample.value });
  } else if (left.kind === 'scalar' && right.kind === 'vector') {
    for (const sample of right.samples) pairs.push({ labels: sample.labels, a: left.value, b: sample.value, kept: sample.value });
  } else if (left.kind === 'vector' && right.kind === 'vector') {
    const byKey = new Map(right.samples.map((sample) => [signature(sample.labels), sample]));
    for (const sample of left.samples) {
      const other = byKey.get(signature(sample.labels));
      if (other) pairs.push({ labels: sample.labels, a: sample.value, b: other.value, kept: sample.value });
    }
  }
  const samples: Vector = [];
  for (const { labels, a, b, kept } of pairs) {
    const result = compute(op, a, b);
    if (comparison) {
      if (result === true) samples.push({ labels, value: kept });
    } else {
      samples.push({ labels: withoutName(labels), value: result as number });
    }
  }
  return { kind: 'vector', samples };
}
