/**
 * Slash commands typed as text, as Discord's client shows a filled-in command
 * (`/song prompt:rainy night lofi instrumental:true`): parsed, resolved against the registered
 * commands and checked before sending. No DOM here. See docs/decisions/playground-as-discord.md.
 */

export const OptionType = {
  SubCommand: 1,
  SubCommandGroup: 2,
  String: 3,
  Integer: 4,
  Boolean: 5,
  User: 6,
  Channel: 7,
  Role: 8,
  Mentionable: 9,
  Number: 10,
  Attachment: 11,
};

/** How an option's type reads in the hints. */
export const TYPE_LABELS = {
  3: 'text',
  4: 'whole number',
  5: 'true/false',
  6: 'user',
  7: 'channel',
  8: 'role',
  9: 'user or role',
  10: 'number',
  11: 'file',
};

// ---------------------------------------------------------------- tokens

/**
 * Splits a command line on spaces outside double quotes. Each token has its place in the text
 * (`start`, `end`), and either `word` (no colon before any quote) or `key` and `value`
 * (unquoted, `\"` unescaped). `quoted` says the value had quotes, `open` that the last quote is
 * not closed (the token then runs to the end of the text).
 */
export function tokenize(text) {
  const tokens = [];
  let i = 0;
  while (i < text.length) {
    if (/\s/.test(text[i])) {
      i += 1;
      continue;
    }
    const token = { start: i, quoted: false, open: false };
    let content = '';
    let colon = -1;
    let inQuote = false;
    for (; i < text.length; i += 1) {
      const char = text[i];
      if (!inQuote && /\s/.test(char)) break;
      if (char === '"') {
        inQuote = !inQuote;
        token.quoted = true;
      } else if (char === '\\' && inQuote && i + 1 < text.length) {
        i += 1;
        content += text[i];
      } else if (char === ':' && colon === -1 && !token.quoted) {
        colon = content.length;
        content += char;
      } else {
        content += char;
      }
    }
    token.end = i;
    token.open = inQuote;
    if (colon === -1) token.word = content;
    else {
      token.key = content.slice(0, colon).toLowerCase();
      token.value = content.slice(colon + 1);
    }
    tokens.push(token);
  }
  return tokens;
}

/**
 * A value as typed back into the text: bare, as Discord shows it, unless it would not read back
 * the same (it holds ` name:` of one of `names`, starts with a quote or has spaces at its ends).
 */
export function formatValue(value, names = new Set()) {
  const text = String(value);
  const bare = text !== '' && text === text.trim() && !text.startsWith('"') && [...keysIn(text)].every((key) => !names.has(key.name));
  return bare ? text : `"${text.replace(/["\\]/g, '\\$&')}"`;
}

// ---------------------------------------------------------------- commands and their paths

const isPath = (option) => option.type === OptionType.SubCommand || option.type === OptionType.SubCommandGroup;

/** Whether `node` (a command or a group) needs a sub-command (or group) next. */
export function needsPath(node) {
  return (node.options ?? []).some(isPath);
}

/** The sub-commands under `node`, flattened through groups: `[{ words, option }]`. */
export function pathChoices(node) {
  return (node.options ?? []).filter(isPath).flatMap((option) =>
    option.type === OptionType.SubCommand
      ? [{ words: [option.name], option }]
      : (option.options ?? []).map((sub) => ({ words: [option.name, sub.name], option: sub })),
  );
}

/**
 * Resolves `/name group sub` from the first tokens. Returns `{ name }` alone for an unknown
 * command, else `{ command, path, node, leaf, rest }`: `path` the options walked, `node` where it
 * stopped, `leaf` whether options come next, and `rest` the tokens after the path.
 */
export function analyse(tokens, commands) {
  const [first, ...rest] = tokens;
  const name = first?.word?.startsWith('/') ? first.word.slice(1).toLowerCase() : undefined;
  const command = name === undefined ? undefined : commands.find((candidate) => candidate.name === name);
  if (!command) return { name };
  const path = [];
  let node = command;
  let index = 0;
  while (needsPath(node) && rest[index]?.word !== undefined) {
    const word = rest[index].word.toLowerCase();
    const child = node.options.find((option) => isPath(option) && option.name === word);
    if (!child) break;
    path.push(child);
    node = child;
    index += 1;
  }
  return { command, path, node, leaf: !needsPath(node), rest: rest.slice(index) };
}

/** "/voice create": the command and its path as typed. */
export function commandLine(analysis) {
  return `/${[analysis.command.name, ...analysis.path.map((option) => option.name)].join(' ')}`;
}

/** The options the leaf takes (none until the sub-command is known). */
export function leafOptions(analysis) {
  return analysis.leaf ? (analysis.node.options ?? []) : [];
}

// ---------------------------------------------------------------- values

/**
 * The people, channels and roles option values refer to:
 * `{ users: [{id, username}], bot: {id, username}, channels: [{id, name}], roles: [{id, name}] }`.
 * @typedef {object} World
 */

function findUser(raw, world) {
  const id = /^<@!?(\d+)>$/.exec(raw)?.[1] ?? (/^\d{5,}$/.test(raw) ? raw : undefined);
  const people = [...world.users, world.bot];
  if (id) return people.find((user) => user.id === id);
  const name = raw.replace(/^@/, '').toLowerCase();
  return people.find((user) => user.username.toLowerCase() === name);
}

function findChannel(raw, world) {
  const id = /^<#(\d+)>$/.exec(raw)?.[1] ?? (/^\d{5,}$/.test(raw) ? raw : undefined);
  if (id) return world.channels.find((channel) => channel.id === id);
  const name = raw.replace(/^#/, '').toLowerCase();
  return world.channels.find((channel) => channel.name.toLowerCase() === name);
}

function findRole(raw, world) {
  const id = /^<@&(\d+)>$/.exec(raw)?.[1] ?? (/^\d{5,}$/.test(raw) ? raw : undefined);
  if (id) return world.roles.find((role) => role.id === id);
  const name = raw.replace(/^@/, '').toLowerCase();
  return world.roles.find((role) => role.name.toLowerCase() === name);
}

function names(list, prefix) {
  return list.map((item) => `${prefix}${item.username ?? item.name}`).join(', ');
}

function checkRange(option, number) {
  if (option.min_value !== undefined && number < option.min_value) return `must be at least ${option.min_value}`;
  if (option.max_value !== undefined && number > option.max_value) return `must be at most ${option.max_value}`;
  return undefined;
}

/** A choice by value, or by name as a convenience (Discord's list shows names). */
function pickChoice(option, raw) {
  const lower = raw.toLowerCase();
  return (
    option.choices.find((choice) => String(choice.value) === raw) ??
    option.choices.find((choice) => choice.name.toLowerCase() === lower || String(choice.value).toLowerCase() === lower)
  );
}

/**
 * Converts a typed value by the option's type: `{ value }`, or `{ error }` finishing the
 * sentence "<option> …".
 */
export function convertValue(option, raw, world) {
  if (option.choices?.length) {
    const choice = pickChoice(option, raw);
    return choice ? { value: choice.value } : { error: `must be one of: ${option.choices.map((c) => c.name).join(', ')}` };
  }
  switch (option.type) {
    case OptionType.String: {
      if (option.min_length !== undefined && raw.length < option.min_length) return { error: `needs at least ${option.min_length} characters` };
      if (option.max_length !== undefined && raw.length > option.max_length) return { error: `takes at most ${option.max_length} characters (this one has ${raw.length})` };
      return { value: raw };
    }
    case OptionType.Integer:
    case OptionType.Number: {
      const whole = option.type === OptionType.Integer;
      const number = Number(raw);
      if (raw.trim() === '' || !Number.isFinite(number) || (whole && !Number.isInteger(number))) {
        return { error: whole ? `must be a whole number, not "${raw}"` : `must be a number, not "${raw}"` };
      }
      const range = checkRange(option, number);
      return range ? { error: range } : { value: number };
    }
    case OptionType.Boolean: {
      const lower = raw.toLowerCase();
      return lower === 'true' || lower === 'false' ? { value: lower === 'true' } : { error: `must be true or false, not "${raw}"` };
    }
    case OptionType.User: {
      const user = findUser(raw, world);
      return user ? { value: user.id } : { error: `must be a member: ${names(world.users, '@')}` };
    }
    case OptionType.Channel: {
      const channel = findChannel(raw, world);
      return channel ? { value: channel.id } : { error: `must be a channel: ${names(world.channels, '#')}` };
    }
    case OptionType.Role: {
      const role = findRole(raw, world);
      return role ? { value: role.id } : { error: `must be a role: ${names(world.roles, '@')}` };
    }
    case OptionType.Mentionable: {
      const found = findUser(raw, world) ?? findRole(raw, world);
      return found ? { value: found.id } : { error: `must be a member or a role: ${names([...world.users, ...world.roles], '@')}` };
    }
    default:
      return { error: 'cannot be typed' };
  }
}

// ---------------------------------------------------------------- options as typed

const KEY = /([^\s:"]+):/y;

/** Every `name:` that starts a word in `text` from `from` on: `{ name, start, valueStart }`. */
function* keysIn(text, from = 0) {
  for (let i = from; i < text.length; i += 1) {
    if (i > 0 && !/\s/.test(text[i - 1])) continue;
    KEY.lastIndex = i;
    const match = KEY.exec(text);
    if (match) yield { name: match[1].toLowerCase(), start: i, valueStart: i + match[0].length };
  }
}

/** The first `name:` of a known option at or after `from`. */
function nextKey(text, from, names) {
  for (const key of keysIn(text, from)) if (names.has(key.name)) return key;
  return undefined;
}

/** Where the quote opened at `at` closes (a backslash escapes), or -1. */
function closingQuote(text, at) {
  for (let i = at + 1; i < text.length; i += 1) {
    if (text[i] === '\\') i += 1;
    else if (text[i] === '"') return i;
  }
  return -1;
}

const unescape = (text) => text.replace(/\\(.)/g, '$1');

/**
 * Splits `text` from `from` into the options typed, each running to the next `name:` of one of
 * `names`. Returns `{ leading, segments }`: `leading` the text before the first option, and per
 * option `{ name, start, valueStart, end, value, quoted, open }` (`end` before the spaces that
 * follow; `open`: a quote that is not closed, the value then runs to the end).
 */
export function optionSegments(text, from, names) {
  const segments = [];
  let key = nextKey(text, from, names);
  const leading = text.slice(from, key ? key.start : text.length);
  while (key) {
    const { name, start, valueStart } = key;
    const close = text[valueStart] === '"' ? closingQuote(text, valueStart) : -1;
    if (text[valueStart] === '"' && close === -1) {
      segments.push({ name, start, valueStart, end: text.length, value: unescape(text.slice(valueStart + 1)), quoted: true, open: true });
      break;
    }
    key = nextKey(text, close === -1 ? valueStart : close + 1, names);
    const raw = text.slice(valueStart, key ? key.start : text.length);
    const end = valueStart + raw.trimEnd().length;
    // A closed quote around the whole value is the playground's way to write it; else quotes are text.
    const quoted = close !== -1 && close + 1 === end;
    const value = quoted ? unescape(text.slice(valueStart + 1, close)) : raw.trim();
    segments.push({ name, start, valueStart, end, value, quoted, open: false });
  }
  return { leading, segments };
}

/** Where a leaf's options start: after the command and its path, or at the end. */
function optionsStart(text, tokens, analysis) {
  return tokens[1 + analysis.path.length]?.start ?? text.length;
}

/** The leaf's option names, for {@link optionSegments}. */
export function optionNames(analysis) {
  return new Set(leafOptions(analysis).map((option) => option.name));
}

/**
 * Reads a whole line: `{ analysis, leading, segments }` (see {@link analyse} and
 * {@link optionSegments}); no segments until the command and its path are known.
 */
export function readLine(text, commands) {
  const tokens = tokenize(text);
  const analysis = analyse(tokens, commands);
  if (!analysis.command || !analysis.leaf) return { analysis, leading: '', segments: [] };
  return { analysis, ...optionSegments(text, optionsStart(text, tokens, analysis), optionNames(analysis)) };
}

// ---------------------------------------------------------------- the whole line

function example(options) {
  const first = options.find((option) => option.type !== OptionType.Attachment) ?? options[0];
  return first ? ` ${first.name}:…` : '';
}

/**
 * The value to send for `raw`: a suggestion's value when `raw` is still the name it showed
 * (`chosen`: option name → `{ name, value }`, as the composer records what was picked), else
 * `raw` converted by the option's type. `{ value }` or `{ error }`.
 */
function valueFor(option, raw, world, chosen) {
  const picked = chosen?.get(option.name);
  if (picked && picked.name === raw) return { value: picked.value };
  return convertValue(option, raw, world);
}

/**
 * Parses and checks a whole line. `files` maps attachment option names to the picked File;
 * `chosen` the suggestions picked (see {@link valueFor}). Returns `{ error, unknownCommand? }`
 * (the name typed, when no command has it), or
 * `{ request: { name, subcommandGroup?, subcommand?, options }, files: { optionName: File }, line }`
 * ready to send.
 */
export function parseCommandLine(text, commands, world, files, chosen) {
  const trimmed = text.trim();
  if (!trimmed.startsWith('/')) {
    return { error: 'The playground sends slash commands: start with /, for example /song prompt:rainy night lofi.' };
  }
  const { analysis, leading, segments } = readLine(trimmed, commands);
  if (!analysis.command) return { error: `Unknown command /${analysis.name ?? ''}. Type / to see the commands.`, unknownCommand: analysis.name };
  const line = commandLine(analysis);
  if (!analysis.leaf) {
    const choices = pathChoices(analysis.node).map((choice) => choice.words.join(' '));
    const typed = analysis.rest[0]?.word;
    return typed !== undefined
      ? { error: `${line} has no sub-command "${typed}". Pick one of: ${choices.join(', ')}.` }
      : { error: `${line} needs a sub-command: ${choices.join(', ')}.` };
  }

  const definitions = leafOptions(analysis);
  const stray = leading.trim().split(/\s+/)[0];
  if (stray) {
    const key = /^([^\s:"]+):/.exec(stray)?.[1];
    const known = definitions.map((candidate) => candidate.name).join(', ');
    if (key) return { error: known ? `${line} has no option "${key}". Its options: ${known}.` : `${line} takes no options.` };
    return {
      error: known ? `"${stray}" is not an option. Write options as name:value, e.g. ${line}${example(definitions)}` : `${line} takes no options; "${stray}" is extra.`,
    };
  }
  const options = {};
  const seen = new Set();
  for (const segment of segments) {
    const option = definitions.find((candidate) => candidate.name === segment.name);
    if (seen.has(option.name)) return { error: `The option ${option.name} is given twice.` };
    seen.add(option.name);
    if (segment.open) return { error: `The quote after ${option.name}: is not closed.` };
    if (option.type === OptionType.Attachment) continue;
    if (segment.value === '' && !segment.quoted) return { error: `${option.name} needs a value.` };
    const converted = valueFor(option, segment.value, world, chosen);
    if (converted.error) return { error: `${option.name} ${converted.error}.` };
    options[option.name] = converted.value;
  }

  const picked = {};
  for (const option of definitions) {
    if (option.type === OptionType.Attachment) {
      if (files.has(option.name)) picked[option.name] = files.get(option.name);
      else if (option.required) return { error: `Pick a file for ${option.name} (the "${option.name}" button above the message box).` };
    } else if (option.required && !(option.name in options)) {
      return { error: `${line} needs ${option.name}: ${option.description}` };
    }
  }

  const group = analysis.path.find((option) => option.type === OptionType.SubCommandGroup);
  const sub = analysis.path.find((option) => option.type === OptionType.SubCommand);
  return {
    line,
    request: { name: analysis.command.name, ...(group ? { subcommandGroup: group.name } : {}), ...(sub ? { subcommand: sub.name } : {}), options },
    files: picked,
  };
}

/**
 * The other options' values, best effort, for an autocomplete request (Discord sends what is
 * filled in so far; values that do not convert yet are left out).
 */
export function typedOptions(analysis, segments, world, except, chosen) {
  const options = {};
  for (const segment of segments) {
    const option = leafOptions(analysis).find((candidate) => candidate.name === segment.name);
    if (!option || option.name === except || option.type === OptionType.Attachment) continue;
    const converted = valueFor(option, segment.value, world, chosen);
    if (!converted.error) options[option.name] = converted.value;
  }
  return options;
}

// ---------------------------------------------------------------- where the caret is

/**
 * What is being typed at the end of `before` (the text up to the caret):
 * - `{ kind: 'command', partial }` the command name;
 * - `{ kind: 'path', analysis, partial }` a sub-command;
 * - `{ kind: 'option', analysis, partial, used, inValue }` an option name (`inValue`: the word
 *   may as well be more of the previous option's value, so nothing is taken by default);
 * - `{ kind: 'value', analysis, option, partial }` an option's value;
 * - `{ kind: 'none' }`.
 * Each but 'none' has `start`, where the text being typed begins (what a suggestion replaces).
 */
export function caretContext(before, commands) {
  const tokens = tokenize(before);
  const last = tokens.at(-1);
  const typing = last !== undefined && last.end === before.length && (last.open || !/\s$/.test(before));
  const current = typing ? last : undefined;
  const start = current ? current.start : before.length;
  if (tokens.length === 0 || (tokens.length === 1 && current)) {
    const word = current?.word;
    return word?.startsWith('/') ? { kind: 'command', partial: word.slice(1).toLowerCase(), start } : { kind: 'none' };
  }
  const analysis = analyse(typing ? tokens.slice(0, -1) : tokens, commands);
  if (!analysis.command) return { kind: 'none' };
  if (!analysis.leaf) {
    if (analysis.rest.length > 0 || current?.key !== undefined) return { kind: 'none' };
    return { kind: 'path', analysis, partial: (current?.word ?? '').toLowerCase(), start };
  }
  const names = optionNames(analysis);
  const { segments } = optionSegments(before, optionsStart(before, tokens, analysis), names);
  const used = new Set(segments.map((segment) => segment.name));
  const word = /\S*$/.exec(before)[0];
  const optionContext = (inValue) =>
    word.includes(':') ? { kind: 'none' } : { kind: 'option', analysis, partial: word.toLowerCase(), used, inValue, start: before.length - word.length };
  const segment = segments.at(-1);
  if (!segment) return optionContext(false);
  const option = leafOptions(analysis).find((candidate) => candidate.name === segment.name);
  const value = { kind: 'value', analysis, option, start: segment.start };
  if (segment.open) return { ...value, partial: segment.value };
  // After a closed quote, the next option.
  if (segment.quoted) return optionContext(false);
  const typed = before.slice(segment.valueStart);
  // A word after the value that begins an option's name may be that option, or more of the value;
  // from three letters on, so that the value's own short words do not keep opening a list.
  const more =
    /\S\s+(\S+)$/.test(typed) && word.length >= 3 && !word.includes(':') && [...names].some((name) => !used.has(name) && name.startsWith(word.toLowerCase()));
  if (more) return optionContext(true);
  used.delete(segment.name);
  return { ...value, used, partial: typed.trimStart() };
}
