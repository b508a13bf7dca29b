/* global document, window, FileReader, ResizeObserver, setTimeout, clearTimeout */
/**
 * The message box: a slash command typed as text, with Discord's popup of commands,
 * sub-commands, options and values above it (the bot's own autocomplete included), a line of
 * option chips, a file button per attachment option, and local checks before anything is sent.
 */
import { append, avatar, h, icon } from './dom.js';
import {
  OptionType,
  TYPE_LABELS,
  caretContext,
  commandLine,
  formatValue,
  leafOptions,
  needsPath,
  optionNames,
  parseCommandLine,
  pathChoices,
  readLine,
  typedOptions,
} from './commands.js';

const AUTOCOMPLETE_DELAY_MS = 150;
/** Content types for files the browser does not type itself. */
const CONTENT_TYPES = { mp3: 'audio/mpeg', wav: 'audio/wav', m4a: 'audio/mp4', ogg: 'audio/ogg', flac: 'audio/flac', mp4: 'video/mp4' };

/**
 * What the composer needs from the page:
 * `{ world() → { commands, users, bot, channels, roles }, channel() → { id, name },
 *    user() → { id, username }, autocomplete(body) → Promise<choices>,
 *    sendCommand(request, line) → Promise<boolean>,
 *    unavailable(name) → why the person may not use /name, or undefined }`.
 * @typedef {object} ComposerContext
 */

/** Builds the composer into `root` and returns `{ focus(), setText(text), refresh() }`. */
export function createComposer(root, ctx) {
  const textarea = h('textarea', { class: 'composer-input', 'data-testid': 'composer', rows: 1, spellcheck: 'false', 'aria-label': 'Message' });
  const slashButton = h('button', { type: 'button', class: 'composer-slash', title: 'Slash commands', 'aria-label': 'Slash commands' }, icon('plus', 24));
  // A phone's keyboard may have no Enter that sends: Discord's app has a send button there.
  const sendButton = h('button', { type: 'button', class: 'composer-send', 'data-testid': 'send-button', title: 'Send', 'aria-label': 'Send' }, icon('send', 20));
  const suggestions = h('div', { class: 'suggestions', 'data-testid': 'suggestions', role: 'listbox', hidden: true });
  const hints = h('div', { class: 'option-hints', 'data-testid': 'option-hints', hidden: true });
  const chips = h('div', { class: 'attachment-chips', hidden: true });
  const error = h('div', { class: 'composer-error', 'data-testid': 'composer-error', role: 'alert', hidden: true });
  const status = h('div', { class: 'composer-status', 'aria-live': 'polite' });
  root.append(
    h('div', { class: 'composer' }, suggestions, h('div', { class: 'composer-box' }, hints, chips, h('div', { class: 'composer-row' }, slashButton, textarea, sendButton))),
    h('div', { class: 'composer-footer' }, error, status),
  );

  /** Picked files by attachment option name, for the command in `filesFor`. */
  const files = new Map();
  let filesFor = '';
  /** Suggestions picked, by option name: the text shows `name`, `value` is sent (see parseCommandLine). */
  const chosen = new Map();
  /**
   * `explicit`: the person moved to an item (arrows, mouse) since the text last changed, the only
   * way Enter takes a value; `stale`: the items are the bot's answer to an earlier text.
   */
  const popup = { title: '', items: [], active: -1, context: undefined, dismissed: false, explicit: false, stale: false };
  const autocomplete = { timer: undefined, seq: 0, key: '', choices: undefined };
  let pending = 0;

  // -------------------------------------------------------------- what is typed

  function caret() {
    return textarea.selectionStart ?? textarea.value.length;
  }

  function world() {
    return ctx.world();
  }

  /** The whole text read: `{ analysis, segments }`, with no analysis until a command is known. */
  function wholeLine() {
    const read = readLine(textarea.value, world().commands);
    return read.analysis.command ? read : { analysis: undefined, segments: [] };
  }

  function update() {
    const context = caretContext(textarea.value.slice(0, caret()), world().commands);
    const { analysis, segments } = wholeLine();
    renderHints(analysis, segments, context);
    renderChips(analysis);
    updateSuggestions(context);
  }

  function setText(text) {
    textarea.value = text;
    textarea.setSelectionRange(text.length, text.length);
    popup.dismissed = false;
    popup.explicit = false;
    fitHeight();
    hideError();
    update();
  }

  /** The textarea grows with its text, up to half the window, as Discord's does. */
  function fitHeight() {
    textarea.style.height = 'auto';
    textarea.style.height = `${Math.min(textarea.scrollHeight, window.innerHeight / 2)}px`;
  }

  // -------------------------------------------------------------- option chips (hint bar)

  function describeOption(option) {
    const facts = [TYPE_LABELS[option.type]];
    if (option.required) facts.push('required');
    if (option.max_length !== undefined) facts.push(`up to ${option.max_length} characters`);
    if (option.min_value !== undefined || option.max_value !== undefined) facts.push(`${option.min_value ?? '…'} to ${option.max_value ?? '…'}`);
    return `${option.name} (${facts.join(', ')}): ${option.description}`;
  }

  function renderHints(analysis, segments, context) {
    hints.replaceChildren();
    hints.hidden = !analysis;
    if (!analysis) return;
    const line = h('span', { class: 'hint-command', text: commandLine(analysis) });
    if (!analysis.leaf) {
      const choices = pathChoices(analysis.node).map((choice) => choice.words.join(' '));
      hints.append(h('div', { class: 'hint-chips' }, line, h('span', { class: 'hint-text', text: `pick one: ${choices.join(', ')}` })));
      return;
    }
    const options = leafOptions(analysis);
    const given = new Set(segments.map((segment) => segment.name));
    for (const name of files.keys()) given.add(name);
    const focused = context.kind === 'value' ? context.option : undefined;
    const chipsRow = options.map((option) => {
      const classes = ['hint-chip', given.has(option.name) && 'filled', focused === option && 'current', option.required && 'required'];
      return h('span', { class: classes.filter(Boolean).join(' '), title: option.description, text: option.name });
    });
    // As Discord's pill: the name of the suggestion picked stands for the value sent.
    const picked = focused && chosen.get(focused.name);
    const pickedNow = picked && segments.some((segment) => segment.name === focused.name && segment.value === picked.name);
    const about = pickedNow ? `${focused.name}: ${picked.name} (picked from the list)` : focused ? describeOption(focused) : analysis.node.description;
    hints.append(h('div', { class: 'hint-chips' }, line, chipsRow), h('div', { class: 'hint-text', text: about }));
  }

  // -------------------------------------------------------------- attachment buttons

  function renderChips(analysis) {
    if (!analysis) {
      chips.hidden = true;
      return;
    }
    const key = commandLine(analysis);
    const options = leafOptions(analysis).filter((option) => option.type === OptionType.Attachment);
    if (key !== filesFor) {
      // Another command: its files and picks do not belong to this one.
      files.clear();
      chosen.clear();
      filesFor = key;
    }
    chips.hidden = options.length === 0;
    // Redrawn only when the command or a picked file changes, not at every key.
    const wanted = [key, ...options.map((option) => `${option.name}:${files.get(option.name)?.name ?? ''}`)].join('|');
    if (chips.dataset.rendered === wanted) return;
    chips.dataset.rendered = wanted;
    chips.replaceChildren(...options.map(attachmentChip));
  }

  function attachmentChip(option) {
    const file = files.get(option.name);
    const input = h('input', { type: 'file', class: 'visually-hidden', 'data-testid': `attachment-${option.name}` });
    input.addEventListener('change', () => {
      if (input.files?.[0]) files.set(option.name, input.files[0]);
      else files.delete(option.name);
      hideError();
      update();
      textarea.focus();
    });
    const remove = file
      ? h('button', {
          type: 'button',
          class: 'chip-remove',
          'aria-label': `Remove ${file.name}`,
          onclick: (event) => {
            event.preventDefault();
            files.delete(option.name);
            update();
          },
        }, icon('close', 14))
      : null;
    return h(
      'label',
      { class: `attachment-chip${file ? ' picked' : ''}`, title: option.description },
      icon('file', 16),
      h('span', { class: 'chip-name', text: option.name }, option.required ? h('span', { class: 'required-mark', text: '*' }) : null),
      h('span', { class: 'chip-file', text: file ? file.name : 'Choose a file…' }),
      remove,
      input,
    );
  }

  // -------------------------------------------------------------- the popup

  function updateSuggestions(context) {
    popup.context = context;
    cancelAutocomplete();
    if (popup.dismissed || context.kind === 'none' || document.activeElement !== textarea) return hideSuggestions();
    // A value picked from the list is settled, as Discord's pill is, until it is edited.
    if (context.kind === 'value' && chosen.get(context.option.name)?.name === context.partial.trim()) return hideSuggestions();
    if (context.kind === 'value' && context.option.autocomplete) return startAutocomplete(context);
    const { title, items } = itemsFor(context);
    showSuggestions(title, items, defaultActive(context, items));
  }

  /**
   * Which item Enter takes at first: the command, sub-command or option name being typed; never a
   * value (Enter sends a value as typed unless the person moves to a suggestion).
   */
  function defaultActive(context, items) {
    if (items.length === 0 || context.kind === 'value') return -1;
    if (context.kind === 'option') return context.partial && !context.inValue ? 0 : -1;
    return 0;
  }

  /** `name:` of the first option a picked command needs, which Discord opens at once; else nothing. */
  function firstRequired(node) {
    if (needsPath(node)) return '';
    const option = (node.options ?? []).find((candidate) => candidate.required && candidate.type !== OptionType.Attachment);
    return option ? `${option.name}:` : '';
  }

  /** Prefix matches first, then the rest that contain what was typed. */
  function filterByName(list, partial, nameOf) {
    const lower = partial.toLowerCase();
    const prefix = list.filter((item) => nameOf(item).toLowerCase().startsWith(lower));
    const inside = list.filter((item) => !prefix.includes(item) && nameOf(item).toLowerCase().includes(lower));
    return [...prefix, ...inside];
  }

  function itemsFor(context) {
    const { bot, commands } = world();
    switch (context.kind) {
      case 'command':
        return {
          title: context.partial ? `Commands matching /${context.partial}` : 'Commands',
          items: filterByName(commands, context.partial, (command) => command.name).map((command) => ({
            label: `/${command.name}`,
            detail: command.description,
            source: bot.username,
            avatar: bot,
            insert: `/${command.name} ${firstRequired(command)}`,
          })),
        };
      case 'path':
        return {
          title: `${commandLine(context.analysis)}: sub-commands`,
          items: filterByName(pathChoices(context.analysis.node), context.partial, (choice) => choice.words.join(' ')).map((choice) => ({
            label: `${commandLine(context.analysis)} ${choice.words.join(' ')}`,
            detail: choice.option.description,
            insert: `${choice.words.join(' ')} ${firstRequired(choice.option)}`,
          })),
        };
      case 'option': {
        const open = leafOptions(context.analysis).filter((option) => !context.used.has(option.name) && !(option.type === OptionType.Attachment && files.has(option.name)));
        const sorted = [...open.filter((option) => option.required), ...open.filter((option) => !option.required)];
        return {
          title: `${commandLine(context.analysis)}: options`,
          items: filterByName(sorted, context.partial, (option) => option.name).map((option) => ({
            label: option.name,
            tag: TYPE_LABELS[option.type],
            required: option.required,
            detail: option.description,
            insert: `${option.name}:`,
          })),
        };
      }
      case 'value':
        return { title: `${context.option.name}: ${TYPE_LABELS[context.option.type]}`, items: valueItems(context) };
      default:
        return { title: '', items: [] };
    }
  }

  /** Values offered for an option: its choices, true/false, members, channels or roles. */
  function valueItems(context) {
    const { option, partial } = context;
    const { users, bot, channels, roles } = world();
    const typed = partial.replace(/^[@#]/, '');
    const names = optionNames(context.analysis);
    const asItem = (label, value, detail) => ({ label, value, detail, insert: `${option.name}:${formatValue(value, names)} ` });
    const members = () => filterByName([...users, bot], typed, (user) => user.username).map((user) => asItem(`@${user.username}`, `@${user.username}`, user.description ?? 'the bot'));
    const roleItems = () => filterByName(roles, typed, (role) => role.name).map((role) => asItem(`@${role.name}`, `@${role.name}`, 'role'));
    if (option.choices?.length) return filterByName(option.choices, partial, (choice) => choice.name).map((choice) => asItem(choice.name, choice.name));
    switch (option.type) {
      case OptionType.Boolean:
        return filterByName(['true', 'false'], partial, (word) => word).map((word) => asItem(word, word));
      case OptionType.User:
        return members();
      case OptionType.Role:
        return roleItems();
      case OptionType.Mentionable:
        return [...members(), ...roleItems()];
      case OptionType.Channel:
        return filterByName(channels, typed, (channel) => channel.name).map((channel) => asItem(`#${channel.name}`, `#${channel.name}`, channel.topic));
      default:
        return [];
    }
  }

  // -------------------------------------------------------------- the bot's autocomplete

  function cancelAutocomplete() {
    clearTimeout(autocomplete.timer);
    autocomplete.seq += 1;
  }

  function startAutocomplete(context) {
    const { analysis, option, partial } = context;
    const group = analysis.path.find((part) => part.type === OptionType.SubCommandGroup);
    const sub = analysis.path.find((part) => part.type === OptionType.SubCommand);
    const body = {
      userId: ctx.user().id,
      channelId: ctx.channel().id,
      name: analysis.command.name,
      ...(group ? { subcommandGroup: group.name } : {}),
      ...(sub ? { subcommand: sub.name } : {}),
      options: typedOptions(analysis, wholeLine().segments, world(), option.name, chosen),
      focused: { name: option.name, value: partial },
    };
    const title = `${option.name}: choices from ${world().bot.username}`;
    // Moving the caret inside the same value asks again for nothing.
    const key = JSON.stringify(body);
    if (key === autocomplete.key && autocomplete.choices) return showChoices(context, title, autocomplete.choices);
    // The previous choices stay while the next ones load (no flicker at each key), dimmed, and
    // neither Enter nor the arrows take one: they answer an earlier text.
    if (suggestions.hidden || popup.title !== title) showSuggestions(title, [], -1, 'Loading…');
    else markStale();
    const seq = autocomplete.seq;
    autocomplete.timer = setTimeout(async () => {
      try {
        const choices = await ctx.autocomplete(body);
        if (seq !== autocomplete.seq) return;
        Object.assign(autocomplete, { key, choices });
        showChoices(context, title, choices);
      } catch (failure) {
        if (seq === autocomplete.seq) showSuggestions(title, [], -1, `No choices: ${failure.message}`);
      }
    }, AUTOCOMPLETE_DELAY_MS);
  }

  /** The bot's choices: the text shows a choice's name, as Discord does, and its value is sent. */
  function showChoices(context, title, choices) {
    const names = optionNames(context.analysis);
    const items = choices.map((choice) => ({
      label: choice.name,
      value: choice.value,
      insert: `${context.option.name}:${formatValue(choice.name, names)} `,
      choose: { option: context.option.name, name: choice.name, value: choice.value },
    }));
    showSuggestions(title, items, defaultActive(context, items), items.length ? undefined : 'No choices match what you typed; it is sent as typed.');
  }

  // -------------------------------------------------------------- drawing the popup

  function showSuggestions(title, items, active, note) {
    popup.title = title;
    popup.items = items;
    popup.active = active;
    popup.stale = false;
    suggestions.classList.remove('stale');
    if (items.length === 0 && !note) return hideSuggestions();
    suggestions.replaceChildren();
    append(suggestions, [
      h('div', { class: 'suggestions-title', text: title }),
      note ? h('div', { class: 'suggestions-note', 'data-testid': 'suggestions-note', text: note }) : null,
      items.map((item, index) => suggestionNode(item, index)),
    ]);
    suggestions.hidden = false;
    highlight();
  }

  function suggestionNode(item, index) {
    const node = h(
      'div',
      { class: 'suggestion', 'data-testid': 'suggestion', role: 'option', id: `suggestion-${index}` },
      item.avatar ? avatar(item.avatar, 20) : null,
      h('span', { class: 'suggestion-label', text: item.label }),
      item.tag ? h('span', { class: 'suggestion-tag', text: item.tag }) : null,
      item.required ? h('span', { class: 'suggestion-required', text: 'required' }) : null,
      item.detail ? h('span', { class: 'suggestion-detail', text: item.detail }) : null,
      item.source ? h('span', { class: 'suggestion-source', text: item.source }) : null,
    );
    // mousedown would take the focus from the textarea; the click accepts.
    node.addEventListener('mousedown', (event) => event.preventDefault());
    node.addEventListener('click', () => accept(item));
    node.addEventListener('mousemove', () => {
      if (popup.active !== index && !popup.stale) {
        popup.active = index;
        popup.explicit = true;
        highlight();
      }
    });
    return node;
  }

  function highlight() {
    suggestions.querySelectorAll('.suggestion').forEach((node, index) => {
      node.classList.toggle('active', index === popup.active);
      node.setAttribute('aria-selected', String(index === popup.active));
      if (index === popup.active) node.scrollIntoView({ block: 'nearest' });
    });
  }

  function hideSuggestions() {
    suggestions.hidden = true;
    popup.items = [];
    popup.active = -1;
  }

  function markStale() {
    popup.stale = true;
    popup.active = -1;
    suggestions.classList.add('stale');
    highlight();
  }

  function suggestionsOpen() {
    return !suggestions.hidden && popup.items.length > 0;
  }

  /**
   * Replaces what is being typed with the item: from the context's start to the end of the word,
   * or of the whole value for a value.
   */
  function accept(item) {
    const at = caret();
    const text = textarea.value;
    const context = popup.context;
    const start = context?.start ?? at;
    const segment = context?.kind === 'value' ? wholeLine().segments.find((candidate) => candidate.start === start) : undefined;
    // The rest of the word (or value) at the caret goes; an option name keeps its space before the next.
    const tail = segment ? text.slice(Math.max(at, segment.end)) : text.slice(at).replace(/^\S*/, '');
    const rest = item.insert.endsWith(' ') ? tail.replace(/^\s+/, '') : tail;
    if (item.choose) chosen.set(item.choose.option, { name: item.choose.name, value: item.choose.value });
    const before = text.slice(0, start) + item.insert;
    textarea.value = before + rest;
    textarea.setSelectionRange(before.length, before.length);
    textarea.focus();
    popup.dismissed = false;
    popup.explicit = false;
    fitHeight();
    hideError();
    update();
  }

  function move(step) {
    if (popup.stale) return;
    popup.explicit = true;
    const count = popup.items.length;
    popup.active = popup.active < 0 ? (step > 0 ? 0 : count - 1) : (popup.active + step + count) % count;
    highlight();
  }

  // -------------------------------------------------------------- errors and status

  function showError(message) {
    error.textContent = message;
    error.hidden = false;
  }

  function hideError() {
    error.hidden = true;
    error.textContent = '';
  }

  function setPending(change, line) {
    pending += change;
    status.textContent = pending > 0 ? `Sending ${line ?? 'your command'}…` : '';
  }

  // -------------------------------------------------------------- sending

  async function send() {
    const text = textarea.value;
    if (text.trim() === '') return;
    const { commands } = world();
    const parsed = parseCommandLine(text, commands, world(), files, chosen);
    if (parsed.error) return showError((parsed.unknownCommand && ctx.unavailable(parsed.unknownCommand)) || parsed.error);
    let attachments;
    try {
      attachments = await encodeFiles(parsed.files);
    } catch {
      return showError('The file could not be read; pick it again.');
    }
    const kept = { files: new Map(files), chosen: new Map(chosen), filesFor };
    files.clear();
    chosen.clear();
    setText('');
    setPending(1, parsed.line);
    const sent = await ctx.sendCommand({ ...parsed.request, ...(attachments ? { attachments } : {}) }, parsed.line);
    setPending(-1);
    // Discord keeps nothing of a failed command; giving the text back lets the person fix it.
    if (!sent && textarea.value === '') {
      for (const [name, file] of kept.files) files.set(name, file);
      for (const [name, pick] of kept.chosen) chosen.set(name, pick);
      filesFor = kept.filesFor;
      setText(text);
      // The popup would cover the failure note just posted.
      popup.dismissed = true;
      hideSuggestions();
    }
  }

  // -------------------------------------------------------------- placeholder

  /** From the fullest hint to the shortest; refresh() fills them in. */
  let placeholders = [];

  /**
   * The longest placeholder that fits the box on one line, as Discord's phone app shortens its
   * own: the full hint in a wide window, "Message #music" on a narrow phone.
   */
  function fitPlaceholder() {
    if (placeholders.length === 0) return;
    const style = window.getComputedStyle(textarea);
    const room = textarea.clientWidth - parseFloat(style.paddingLeft) - parseFloat(style.paddingRight);
    measure.font = style.font;
    textarea.placeholder = placeholders.find((text) => measure.measureText(text).width <= room) ?? placeholders.at(-1);
  }
  // Fitted again whenever the box changes width (a turned phone, a box not yet laid out).
  new ResizeObserver(fitPlaceholder).observe(textarea);

  // -------------------------------------------------------------- events

  textarea.addEventListener('input', () => {
    popup.dismissed = false;
    popup.explicit = false;
    hideError();
    fitHeight();
    update();
  });
  textarea.addEventListener('click', update);
  textarea.addEventListener('keyup', (event) => {
    if (['ArrowLeft', 'ArrowRight', 'Home', 'End'].includes(event.key)) update();
  });
  textarea.addEventListener('blur', () => setTimeout(() => document.activeElement !== textarea && hideSuggestions(), 0));
  textarea.addEventListener('focus', update);
  textarea.addEventListener('keydown', (event) => {
    if (event.isComposing) return;
    const open = suggestionsOpen();
    if (open && (event.key === 'ArrowDown' || event.key === 'ArrowUp')) {
      event.preventDefault();
      move(event.key === 'ArrowDown' ? 1 : -1);
    } else if (open && event.key === 'Tab') {
      event.preventDefault();
      if (!popup.stale) accept(popup.items[Math.max(popup.active, 0)]);
    } else if (event.key === 'Escape' && !suggestions.hidden) {
      event.preventDefault();
      popup.dismissed = true;
      hideSuggestions();
    } else if (event.key === 'Enter' && !event.shiftKey) {
      event.preventDefault();
      // A value is taken only when the person moved to it; else what is typed is sent, even if
      // the bot's choices for it have not arrived yet.
      const takes = open && popup.active >= 0 && !popup.stale && (popup.explicit || popup.context?.kind !== 'value');
      if (takes) accept(popup.items[popup.active]);
      else send();
    }
  });
  // mousedown would take the focus (and the phone's keyboard) from the textarea.
  sendButton.addEventListener('mousedown', (event) => event.preventDefault());
  sendButton.addEventListener('click', () => {
    hideSuggestions();
    send();
  });
  slashButton.addEventListener('click', () => {
    if (!textarea.value.trimStart().startsWith('/')) setText('/');
    textarea.focus();
  });

  return {
    focus: () => textarea.focus(),
    setText(text) {
      setText(text);
      textarea.focus();
    },
    /** Call when the commands, the user or the channel change. */
    refresh() {
      const [channel, username] = [ctx.channel().name, ctx.user().username];
      placeholders = [`Message #${channel} as @${username} — type / for the bot's commands`, `Message #${channel} as @${username}`, `Message #${channel}`];
      fitPlaceholder();
      autocomplete.key = '';
      update();
    },
  };
}

/** Measures text as the message box draws it. */
const measure = document.createElement('canvas').getContext('2d');

/** The picked files as the API wants them: `{ optionName: { filename, contentType, base64 } }`. */
async function encodeFiles(picked) {
  const entries = Object.entries(picked);
  if (entries.length === 0) return undefined;
  const encoded = await Promise.all(
    entries.map(async ([name, file]) => {
      const extension = file.name.split('.').pop()?.toLowerCase() ?? '';
      return [name, { filename: file.name, contentType: file.type || CONTENT_TYPES[extension] || 'application/octet-stream', base64: await base64Of(file) }];
    }),
  );
  return Object.fromEntries(encoded);
}

function base64Of(file) {
  return new Promise((resolve, reject) => {
    const reader = new FileReader();
    reader.onload = () => resolve(String(reader.result).split(',', 2)[1] ?? '');
    reader.onerror = () => reject(reader.error);
    reader.readAsDataURL(file);
  });
}
