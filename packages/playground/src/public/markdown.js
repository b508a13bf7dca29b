/* global document */
/**
 * Discord's markdown, rendered into DOM nodes (never HTML strings): code blocks, quotes,
 * headings and lists, then inline bold, italics, underline, strike, code, links, mentions
 * and timestamps. It covers what bots write, not every corner of Discord's parser.
 */
import { h, icon } from './dom.js';
import { formatTimestamp, fullDate } from './time.js';

/**
 * What rendering needs from the page, e.g.
 * `{ userName(id), channelName(id), voiceChannelName(id), roleName(id), currentUserId, openChannel(id) }`.
 * @typedef {object} MarkdownContext
 */

/** Renders `text` into a fragment. */
export function renderMarkdown(text, ctx) {
  const fragment = document.createDocumentFragment();
  for (const block of parseBlocks(text)) fragment.append(renderBlock(block, ctx));
  return fragment;
}

/** Renders `text` with inline rules only: embed titles, field names. */
export function renderInline(text, ctx) {
  const fragment = document.createDocumentFragment();
  fragment.append(...parseInline(text, ctx));
  return fragment;
}

// ---------------------------------------------------------------- blocks

const FENCE = /```(?:([\w+#-]+)\n)?\n?([\s\S]*?)\n?```/g;

/** Splits text into code blocks and the text between them, then the text into lines' blocks. */
function parseBlocks(text) {
  const blocks = [];
  let last = 0;
  for (const match of text.matchAll(FENCE)) {
    blocks.push(...lineBlocks(text.slice(last, match.index)));
    blocks.push({ type: 'code', lang: match[1], text: match[2] });
    last = match.index + match[0].length;
  }
  blocks.push(...lineBlocks(text.slice(last)));
  return blocks;
}

const LINE_RULES = [
  { type: 'heading', re: /^(#{1,3}) (.+)$/ },
  { type: 'subtext', re: /^-# (.+)$/ },
  { type: 'item', re: /^\s*[-*] (.+)$/ },
  { type: 'quote', re: /^> ?(.*)$/ },
];

/** Groups lines: consecutive quote lines form one quote, consecutive items one list. */
function lineBlocks(text) {
  if (text === '') return [];
  const blocks = [];
  const lines = text.split('\n');
  for (let i = 0; i < lines.length; i += 1) {
    const line = lines[i];
    if (line.startsWith('>>> ')) {
      // Discord's multi-line quote: everything to the end of the text.
      blocks.push({ type: 'quote', text: [line.slice(4), ...lines.slice(i + 1)].join('\n') });
      break;
    }
    const rule = LINE_RULES.find((candidate) => candidate.re.test(line));
    const match = rule?.re.exec(line);
    const previous = blocks.at(-1);
    if (!rule) {
      if (previous?.type === 'text') previous.text += `\n${line}`;
      else blocks.push({ type: 'text', text: line });
    } else if (rule.type === 'quote') {
      if (previous?.type === 'quote') previous.text += `\n${match[1]}`;
      else blocks.push({ type: 'quote', text: match[1] });
    } else if (rule.type === 'item') {
      if (previous?.type === 'list') previous.items.push(match[1]);
      else blocks.push({ type: 'list', items: [match[1]] });
    } else if (rule.type === 'heading') {
      blocks.push({ type: 'heading', level: match[1].length, text: match[2] });
    } else {
      blocks.push({ type: 'subtext', text: match[1] });
    }
  }
  return blocks;
}

function renderBlock(block, ctx) {
  switch (block.type) {
    case 'code':
      return h('pre', { class: 'md-codeblock' }, h('code', { text: block.text, dataset: block.lang ? { lang: block.lang } : {} }));
    case 'quote':
      return h('blockquote', { class: 'md-quote' }, renderMarkdown(block.text, ctx));
    case 'heading':
      return h(`h${block.level}`, { class: 'md-heading' }, parseInline(block.text, ctx));
    case 'subtext':
      return h('small', { class: 'md-subtext' }, parseInline(block.text, ctx));
    case 'list':
      return h('ul', { class: 'md-list' }, block.items.map((item) => h('li', {}, parseInline(item, ctx))));
    default:
      return h('span', { class: 'md-text' }, parseInline(block.text, ctx));
  }
}

// ---------------------------------------------------------------- inline

/** Links end before trailing punctuation, as Discord's do. */
const URL_SOURCE = String.raw`https?:\/\/[^\s<]*[^\s<.,:;"')\]!?]`;
const MASKED_LINK = String.raw`\[([^\[\]]+)\]\(<?(https?:\/\/[^\s<>()]+)>?\)`;

/**
 * Inline rules, tried in order at each position. `first` lists the characters a match can start
 * with, so plain text is skipped quickly. `render` returns a node or a string.
 */
const INLINE_RULES = [
  // Discord's escape: a backslash shows the next sign as typed (\_ \* \~ \` \| \> \# \- \\ …), never a letter, digit or space.
  { first: '\\', re: /\\([^0-9A-Za-z\s])/y, render: (m) => m[1] },
  { first: '`', re: /(`+)([\s\S]*?[^`])\1(?!`)/y, render: (m) => h('code', { class: 'md-code', text: m[2].trim() || m[2] }) },
  { first: '[', re: new RegExp(MASKED_LINK, 'y'), render: (m, ctx) => link(m[2], parseInline(m[1], ctx)) },
  { first: '<', re: /<(https?:\/\/[^\s>]+)>/y, render: (m) => link(m[1], m[1]) },
  { first: 'h', re: new RegExp(URL_SOURCE, 'y'), render: (m) => link(m[0], m[0]) },
  { first: '<', re: /<@!?(\d+)>/y, render: (m, ctx) => userMention(m[1], ctx) },
  { first: '<', re: /<@&(\d+)>/y, render: (m, ctx) => h('span', { class: 'mention', text: `@${ctx.roleName(m[1]) ?? 'deleted-role'}` }) },
  { first: '<', re: /<#(\d+)>/y, render: (m, ctx) => channelMention(m[1], ctx) },
  { first: '<', re: /<t:(-?\d{1,13})(?::([tTdDfFR]))?>/y, render: (m) => timestamp(Number(m[1]), m[2] ?? 'f') },
  // In what these enclose, an escaped sign (`\*`) is one character: it never closes them.
  { first: '*', re: /\*\*((?:\\[\s\S]|[^\\])+?)\*\*(?!\*)/y, render: (m, ctx) => h('strong', {}, parseInline(m[1], ctx)) },
  { first: '_', re: /__((?:\\[\s\S]|[^\\])+?)__(?!_)/y, render: (m, ctx) => h('u', {}, parseInline(m[1], ctx)) },
  { first: '~', re: /~~((?:\\[\s\S]|[^\\])+?)~~/y, render: (m, ctx) => h('s', {}, parseInline(m[1], ctx)) },
  { first: '*', re: /\*(?=[^\s*])((?:\\[\s\S]|[^\\])+?)(?<!\s)\*(?!\*)/y, render: (m, ctx) => h('em', {}, parseInline(m[1], ctx)) },
  // Underscores inside words (snake_case) are not italics: the rule needs a word boundary.
  { first: '_', re: /_(?=[^_\s])((?:\\[\s\S]|[^\\])+?)(?<![\s_])_(?!\w)/y, wordStart: true, render: (m, ctx) => h('em', {}, parseInline(m[1], ctx)) },
  { first: '\n', re: /\n/y, render: () => h('br') },
];

/** Parses inline markdown into an array of nodes and strings. */
function parseInline(text, ctx) {
  const out = [];
  let plain = '';
  let i = 0;
  while (i < text.length) {
    const match = matchRule(text, i);
    if (!match) {
      plain += text[i];
      i += 1;
      continue;
    }
    if (plain) out.push(plain);
    plain = '';
    out.push(match.rule.render(match.m, ctx));
    i += match.m[0].length;
  }
  if (plain) out.push(plain);
  return out;
}

function matchRule(text, i) {
  const char = text[i];
  for (const rule of INLINE_RULES) {
    if (!rule.first.includes(char)) continue;
    if (rule.wordStart && i > 0 && /\w/.test(text[i - 1])) continue;
    rule.re.lastIndex = i;
    const m = rule.re.exec(text);
    if (m) return { rule, m };
  }
  return undefined;
}

/** Only http(s) links become anchors; they open in a new tab, as Discord's do. */
function link(url, children) {
  if (!/^https?:\/\//i.test(url)) return typeof children === 'string' ? children : h('span', {}, children);
  return h('a', { class: 'md-link', href: url, target: '_blank', rel: 'noopener noreferrer', title: url }, children);
}

function userMention(id, ctx) {
  const name = ctx.userName(id);
  const self = id === ctx.currentUserId;
  return h('span', { class: self ? 'mention mention-self' : 'mention', text: `@${name ?? 'unknown-user'}`, dataset: { userId: id } });
}

function channelMention(id, ctx) {
  const voice = ctx.voiceChannelName?.(id);
  // A voice channel shows its speaker and name, as Discord shows it.
  if (voice) return h('span', { class: 'mention mention-voice', 'data-testid': 'voice-mention' }, icon('speaker', 16), voice);
  const name = ctx.channelName(id);
  if (!name) return h('span', { class: 'mention', text: '#unknown' });
  return h('button', { type: 'button', class: 'mention mention-channel', text: `#${name}`, onclick: () => ctx.openChannel(id) });
}

function timestamp(unix, style) {
  const date = new Date(unix * 1000);
  const node = h('span', { class: 'md-timestamp', title: fullDate(date), text: formatTimestamp(date, style) });
  // Relative times are refreshed every few seconds by the page.
  if (style === 'R') node.dataset.relative = String(unix);
  return node;
}

// ---------------------------------------------------------------- links, for media players

const LINK_IN_TEXT = new RegExp(`${MASKED_LINK}|<?(${URL_SOURCE})>?`, 'g');

/** Every http(s) link in `text`, in order: `[{ url, text }]` (text is a masked link's label). */
export function findLinks(text) {
  if (!text) return [];
  return [...text.matchAll(LINK_IN_TEXT)].map((m) => (m[2] ? { url: m[2], text: m[1] } : { url: m[3], text: undefined }));
}
