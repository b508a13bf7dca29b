/**
 * A server's own Discord AutoMod keyword rules, judged the way AutoMod judges a message: for
 * each enabled KEYWORD rule of the MESSAGE_SEND event, a keyword of its filter or one of its
 * regular expressions found in the text, outside anything its allow list names, unless the
 * member holds an exempt role or writes in an exempt channel. Keywords are case-insensitive,
 * whole words (or phrases) unless a `*` opens or closes them: `cat*` a word that starts with
 * it, `*cat` one that ends with it, `*cat*` anywhere. The allow list takes the same wildcards.
 *
 * Discord runs Rust's regular expressions, which cannot backtrack without end; JavaScript's
 * can. Patterns are compiled as JavaScript (Unicode, case-insensitive), a pattern that does
 * not compile, or that nests unbounded repetition, is left out, and all patterns of a check run
 * under a time budget (docs/decisions/automod-rules.md).
 */
import vm from 'node:vm';

/** What the bot reads of Discord's auto moderation rule object. */
export interface AutomodRuleRecord {
  readonly id: string;
  readonly name: string;
  readonly enabled: boolean;
  /** 1: MESSAGE_SEND. */
  readonly event_type: number;
  /** 1: KEYWORD. */
  readonly trigger_type: number;
  readonly trigger_metadata: {
    readonly keyword_filter?: readonly string[];
    readonly regex_patterns?: readonly string[];
    readonly allow_list?: readonly string[];
  };
  readonly exempt_roles: readonly string[];
  readonly exempt_channels: readonly string[];
}

/** Who writes, and where: what the exemptions are about. */
export interface AutomodAuthor {
  readonly roleIds: readonly string[];
  readonly channelId: string;
  /** A thread's channel, or a channel's category: a rule exempting it exempts what is inside. */
  readonly parentChannelId?: string | null;
}

/** The rule that matched: its id and name, for the moderators' log. */
export interface AutomodHit {
  readonly ruleId: string;
  readonly ruleName: string;
}

export interface AutomodRules {
  /** The keyword rules that apply (enabled, on messages sent). */
  readonly size: number;
  /**
   * The first of `texts` (by its label) that a rule which applies to `author` matches, with
   * the rule; undefined when none does.
   */
  match<Label extends string>(texts: ReadonlyArray<readonly [Label, string | undefined]>, author: AutomodAuthor): (AutomodHit & { readonly label: Label }) | undefined;
  /** Patterns left out: not JavaScript, nesting unbounded repetition, or past the time budget once. */
  readonly skippedPatterns: number;
}

/** Whether a guild's AutoMod rules judge its requests, and if not, why. */
export type AutomodState =
  | { readonly status: 'in_use'; readonly rules: AutomodRules }
  /** The bot lacks Manage Server there: Discord answered 403. */
  | { readonly status: 'missing_permission' }
  /** Discord could not be asked (an error, a timeout, or the bot is not in the guild): requests are not blocked by AutoMod meanwhile. */
  | { readonly status: 'unavailable' };

export interface AutomodRulesSource {
  /** The guild's state at `version` (its row's `automodVersion`): read from Discord when this process has no fresh one. */
  rulesFor(guildId: string, version: number): Promise<AutomodState>;
}

const KEYWORD = 1;
const MESSAGE_SEND = 1;
/**
 * The time every pattern of one check may take together, at most: far above what a sane pattern
 * takes on a 6,000-character prompt, so a busy machine does not trip it.
 */
export const REGEX_BUDGET_MS = 250;
/** Checks in a row a rule's patterns may run out of time before they are left out for good. */
export const TIMEOUTS_BEFORE_DROP = 3;

/** Letters, marks and digits make words; anything else (spaces, punctuation) ends one. */
const WORD = '[\\p{L}\\p{M}\\p{N}]';
const escape = (text: string): string => text.replace(/[.*+?^${}()|[\]\\/-]/g, '\\$&');

/** A keyword (or allowed word) with its wildcards as a regular expression source. */
function keywordSource(keyword: string): string | undefined {
  const trimmed = keyword.trim();
  const open = trimmed.startsWith('*');
  const close = trimmed.length > 1 && trimmed.endsWith('*');
  const core = trimmed.slice(open ? 1 : 0, close ? -1 : undefined).trim();
  if (core === '') return undefined;
  const body = core.split(/\s+/u).map(escape).join('\\s+');
  return `${open ? '' : `(?<!${WORD})`}${body}${close ? '' : `(?!${WORD})`}`;
}

/** Spans of `text` the expression finds, overlapping ones included. */
function spans(expression: RegExp, text: string): Array<[number, number]> {
  const found: Array<[number, number]> = [];
  expression.lastIndex = 0;
  for (let m = expression.exec(text); m !== null; m = expression.exec(text)) {
    found.push([m.index, m.index + m[0].length]);
    expression.lastIndex = m.index + 1;
  }
  return found;
}

/**
 * Whether the pattern repeats without bound something that itself repeats without bound
 * (`(a+)+`, `(a*)*`, `(x+y?)*`): the shape that makes a backtracking engine take exponential time.
 */
export function nestsUnboundedRepetition(pattern: string): boolean {
  // Per open group (the whole pattern first): whether something inside repeats without bound.
  const groups: boolean[] = [false];
  // The atom just before: a group, and whether it repeats inside; undefined for anything else.
  let group: boolean | undefined;
  for (let i = 0; i < pattern.length; i += 1) {
    const char = pattern[i]!;
    let repeats: 'unbounded' | 'bounded' | undefined;
    if (char === '\\') {
      i += 1;
    } else if (char === '[') {
      // A class is one atom: skip to its end.
      for (i += 1; i < pattern.length && pattern[i] !== ']'; i += 1) if (pattern[i] === '\\') i += 1;
    } else if (char === '(') {
      groups.push(false);
    } else if (char === ')') {
      const inner = groups.length > 1 ? groups.pop()! : false;
      if (inner) groups[groups.length - 1] = true;
      group = inner;
      continue;
    } else if (char === '*' || char === '+') {
      repeats = 'unbounded';
    } else if (char === '{') {
      const counted = /^\{(\d*)(,(\d*))?\}/.exec(pattern.slice(i));
      if (counted) {
        i += counted[0].length - 1;
        const most = counted[2] === undefined ? Number(counted[1]) : counted[3] === '' ? Infinity : Number(counted[3]);
        repeats = most === Infinity ? 'unbounded' : most > 1 ? 'bounded' : undefined;
      }
    }
    if (repeats !== undefined && group === true) return true;
    if (repeats === 'unbounded') groups[groups.length - 1] = true;
    group = undefined;
  }
  return false;
}

/**
 * A Rust pattern as JavaScript: leading inline flags (`(?i)`, `(?s)`, `(?m)`) become flags,
 * always Unicode and case-insensitive. Undefined when JavaScript cannot compile it.
 */
export function compilePattern(pattern: string): RegExp | undefined {
  const inline = /^\(\?([imsux]+)\)/.exec(pattern);
  const flags = new Set(['g', 'i', 'u']);
  for (const flag of inline?.[1] ?? '') if (flag === 's' || flag === 'm') flags.add(flag);
  try {
    // Rust's named groups, `(?P<name>…)`, are JavaScript's `(?<name>…)`.
    const source = (inline ? pattern.slice(inline[0].length) : pattern).replace(/\(\?P</g, '(?<');
    return new RegExp(source, [...flags].join(''));
  } catch {
    return undefined;
  }
}

interface CompiledRule {
  readonly id: string;
  readonly name: string;
  readonly keywords: RegExp | undefined;
  readonly patterns: RegExp[];
  /** Checks in a row whose patterns ran out of time. */
  timeouts: number;
  readonly allowed: RegExp | undefined;
  readonly exemptRoles: ReadonlySet<string>;
  readonly exemptChannels: ReadonlySet<string>;
}

const alternation = (sources: Array<string | undefined>): RegExp | undefined => {
  const kept = sources.filter((source): source is string => source !== undefined);
  return kept.length === 0 ? undefined : new RegExp(kept.map((source) => `(?:${source})`).join('|'), 'giu');
};

/** Runs a guild's patterns on a text in a context of their own, so a runaway pattern can be stopped. */
const RUN_PATTERNS = new vm.Script(
  'patterns.map((pattern) => { const found = []; pattern.lastIndex = 0; for (let m = pattern.exec(text); m !== null; m = pattern.exec(text)) { found.push([m.index, m.index + m[0].length]); pattern.lastIndex = m.index + Math.max(1, m[0].length); } return found; })',
);

/** The guild's rules compiled once: the keyword rules that apply, their keywords, patterns and allowed words. */
export function compileAutomodRules(records: readonly AutomodRuleRecord[], options: { regexBudgetMs?: number } = {}): AutomodRules {
  const budget = options.regexBudgetMs ?? REGEX_BUDGET_MS;
  let skipped = 0;
  const rules: CompiledRule[] = records
    .filter((rule) => rule.enabled && rule.trigger_type === KEYWORD && rule.event_type === MESSAGE_SEND)
    .map((rule) => {
      const metadata = rule.trigger_metadata;
      const patterns: RegExp[] = [];
      for (const pattern of metadata.regex_patterns ?? []) {
        const compiled = nestsUnboundedRepetition(pattern) ? undefined : compilePattern(pattern);
        if (compiled) patterns.push(compiled);
        else skipped += 1;
      }
      return {
        id: rule.id,
        name: rule.name,
        keywords: alternation((metadata.keyword_filter ?? []).map(keywordSource)),
        patterns,
        timeouts: 0,
        allowed: alternation((metadata.allow_list ?? []).map(keywordSource)),
        exemptRoles: new Set(rule.exempt_roles),
        exemptChannels: new Set(rule.exempt_channels),
      };
    });
  const context = vm.createContext({ patterns: [] as RegExp[], text: '' });

  /**
   * Spans every pattern of `rule` finds in `text`. Past the budget the text is not judged by them
   * (the keywords still judge it); past it {@link TIMEOUTS_BEFORE_DROP} checks in a row, they are dropped.
   */
  const patternSpans = (rule: CompiledRule, text: string): Array<[number, number]> => {
    if (rule.patterns.length === 0) return [];
    context.patterns = rule.patterns;
    context.text = text;
    try {
      const found = (RUN_PATTERNS.runInContext(context, { timeout: budget }) as Array<Array<[number, number]>>).flat();
      rule.timeouts = 0;
      return found;
    } catch {
      rule.timeouts += 1;
      if (rule.timeouts >= TIMEOUTS_BEFORE_DROP) {
        skipped += rule.patterns.length;
        rule.patterns.length = 0;
      }
      return [];
    }
  };

  const matches = (rule: CompiledRule, text: string): boolean => {
    const found = [...(rule.keywords ? spans(rule.keywords, text) : []), ...patternSpans(rule, text)];
    if (found.length === 0) return false;
    const allowed = rule.allowed ? spans(rule.allowed, text) : [];
    return found.some(([start, end]) => !allowed.some(([from, to]) => from <= start && end <= to));
  };

  return {
    size: rules.length,
    get skippedPatterns() {
      return skipped;
    },
    match(texts, author) {
      const exempt = (rule: CompiledRule) =>
        rule.exemptChannels.has(author.channelId) ||
        (author.parentChannelId != null && rule.exemptChannels.has(author.parentChannelId)) ||
        author.roleIds.some((roleId) => rule.exemptRoles.has(roleId));
      const applying = rules.filter((rule) => !exempt(rule));
      for (const [label, text] of texts) {
        if (text === undefined || text === '') continue;
        const rule = applying.find((candidate) => matches(candidate, text));
        if (rule) return { label, ruleId: rule.id, ruleName: rule.name };
      }
      return undefined;
    },
  };
}

/** No rules: what a guild without AutoMod in use is judged by. */
export const NO_AUTOMOD_RULES: AutomodRules = compileAutomodRules([]);
