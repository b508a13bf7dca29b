/* global URL */
/**
 * Messages as Discord draws them: grouped headers, the "used /song" line, markdown content,
 * embeds, media players for every audio and video link, attachments, buttons and selects,
 * the ephemeral note and the "thinking" placeholder. The list is updated in place, keyed by
 * message id, so a song that is playing keeps playing while other messages arrive.
 */
import { append, avatar, h, icon } from './dom.js';
import { findLinks, renderInline, renderMarkdown } from './markdown.js';
import { dayKey, dayLabel, formatTimestamp, fullDate, messageTime } from './time.js';

const EPHEMERAL = 64;
const LOADING = 128;
/** Discord starts a new header after 7 minutes, even for the same author. */
const GROUP_WINDOW_MS = 7 * 60 * 1000;

/**
 * What rendering needs from the page:
 * `{ currentUserId, md, nameColour(userId), onButton(message, button, element),
 *    onSelect(message, select, values, element), onDismiss(messageId),
 *    sku(skuId) → { name, price } | undefined, onPremium(message, button, element) }`.
 * @typedef {object} MessageContext
 */

// ---------------------------------------------------------------- the list

/**
 * Renders `messages` (visible, oldest first) into `container` below `welcome`, reusing the
 * nodes of messages that did not change. `sig(message)` is a string that changes with the
 * message (and with whatever else its rendering depends on).
 */
export function renderMessageList(container, messages, welcome, ctx, sig) {
  const items = [{ key: 'welcome', sig: welcome.sig, build: welcome.build }];
  let previous;
  for (const message of messages) {
    const date = new Date(message.timestamp);
    if (!previous || dayKey(date) !== dayKey(new Date(previous.timestamp))) {
      const label = dayLabel(date);
      items.push({ key: `day-${dayKey(date)}`, sig: label, build: () => dayDivider(label) });
    }
    const grouped = groupsWith(previous, message);
    items.push({ key: message.id, sig: `${sig(message)}|${grouped}`, build: () => renderMessage(message, grouped, ctx) });
    previous = message;
  }
  reconcile(container, items);
}

/** Whether `message` continues `previous`'s group (no new avatar and name). */
function groupsWith(previous, message) {
  if (!previous || previous.author.id !== message.author.id) return false;
  // Every answer to an interaction starts with its own header on Discord.
  if (message.interaction_metadata || replyLine(message) || message.failure) return false;
  return Date.parse(message.timestamp) - Date.parse(previous.timestamp) < GROUP_WINDOW_MS;
}

function dayDivider(label) {
  return h('div', { class: 'day-divider', role: 'separator' }, h('span', { text: label }));
}

const rendered = new WeakMap();

/** Puts `items` ({ key, sig, build }) in order in `container`, rebuilding only changed ones. */
function reconcile(container, items) {
  const previous = rendered.get(container) ?? new Map();
  const next = new Map();
  items.forEach((item, index) => {
    const old = previous.get(item.key);
    let node = old?.node;
    if (!old || old.sig !== item.sig) {
      node = item.build();
      if (old) {
        adoptMedia(old.node, node);
        old.node.replaceWith(node);
      }
    }
    next.set(item.key, { sig: item.sig, node });
    if (container.children[index] !== node) container.insertBefore(node, container.children[index] ?? null);
  });
  for (const [key, entry] of previous) if (!next.has(key)) entry.node.remove();
  rendered.set(container, next);
}

/** Moves the old node's players into the new one when their source is the same: playback goes on. */
function adoptMedia(oldNode, newNode) {
  const players = new Map([...oldNode.querySelectorAll('audio, video')].map((player) => [`${player.tagName} ${player.getAttribute('src')}`, player]));
  for (const player of newNode.querySelectorAll('audio, video')) {
    const old = players.get(`${player.tagName} ${player.getAttribute('src')}`);
    if (old) player.replaceWith(old);
  }
}

// ---------------------------------------------------------------- one message

/** The user behind "@alice used /song", when the message answers a slash command. */
function replyLine(message) {
  const user = message.usedBy ?? (message.interaction_metadata?.type === 2 ? message.interaction_metadata.user : undefined);
  return user ? { user, command: message.command } : undefined;
}

function isEphemeral(message) {
  return Boolean(message.ephemeral || (message.flags & EPHEMERAL));
}

function mentionsUser(message, userId) {
  return new RegExp(`<@!?${userId}>`).test(message.content ?? '');
}

function renderMessage(message, grouped, ctx) {
  const ephemeral = isEphemeral(message);
  const reply = replyLine(message);
  const classes = ['message', grouped ? 'grouped' : 'first', reply && 'has-reply', ephemeral && 'ephemeral', mentionsUser(message, ctx.currentUserId) && 'mentioned'];
  const root = h('article', {
    class: classes.filter(Boolean).join(' '),
    'data-testid': 'message',
    'data-message-id': message.id,
    'data-ephemeral': ephemeral ? 'true' : undefined,
  });
  const date = new Date(message.timestamp);
  return append(root, [
    reply ? renderReplyLine(reply, ctx) : null,
    grouped
      ? h('time', { class: 'message-gutter-time', datetime: message.timestamp, title: fullDate(date), text: formatTimestamp(date, 't') })
      : avatar(message.author, 40),
    grouped ? null : renderHeader(message, ctx),
    h('div', { class: 'message-body' }, renderBody(message, ctx)),
    ephemeral ? renderEphemeralNote(message, ctx) : null,
  ]);
}

function renderReplyLine({ user, command }, ctx) {
  const name = h('span', { class: 'reply-user', text: `@${user.global_name ?? user.username}` });
  const colour = ctx.nameColour(user.id);
  if (colour) name.style.color = colour;
  // One inline run of text, so that it reads (and copies) as "@you used /song".
  const words = h('span', { class: 'reply-words' }, name, ' used ', h('span', { class: 'reply-command', text: command ? `/${command}` : 'a command' }));
  return h('div', { class: 'reply-line' }, avatar(user, 16), words);
}

function renderHeader(message, ctx) {
  const date = new Date(message.timestamp);
  const name = h('span', { class: 'author-name', text: message.author.global_name || message.author.username });
  const colour = ctx.nameColour(message.author.id);
  if (colour) name.style.color = colour;
  return h(
    'h3',
    { class: 'message-header' },
    name,
    message.author.bot ? h('span', { class: 'app-tag', text: 'APP' }) : null,
    h('time', { class: 'message-time', datetime: message.timestamp, title: fullDate(date), text: messageTime(date) }),
  );
}

function renderBody(message, ctx) {
  if (message.failure) return renderFailure(message.failure);
  if (message.flags & LOADING) return renderThinking(message);
  const edited = message.edited_timestamp ? h('span', { class: 'edited', title: fullDate(new Date(message.edited_timestamp)), text: ' (edited)' }) : null;
  const links = mediaLinks(message);
  const linked = new Set(links.map((link) => link.url));
  return [
    message.content ? h('div', { class: 'message-content' }, renderMarkdown(message.content, ctx.md), edited) : null,
    (message.embeds ?? []).map((embed) => renderEmbed(embed, ctx)),
    links.map(renderMediaLink),
    (message.attachments ?? []).filter((attachment) => !linked.has(attachment.url)).map(renderAttachment),
    renderComponents(message, ctx),
  ];
}

function renderThinking(message) {
  const dots = h('span', { class: 'thinking-dots', 'aria-hidden': 'true' }, h('span'), h('span'), h('span'));
  return h('div', { class: 'thinking', 'data-testid': 'thinking' }, `${message.author.username} is thinking`, dots);
}

/** A local message for a failed interaction, like Discord's "The application did not respond". */
function renderFailure(failure) {
  return h(
    'div',
    { class: 'failure' },
    h('div', { class: 'failure-title' }, icon('warning', 16), h('span', { text: failure.title })),
    h('div', { class: 'failure-detail', text: failure.detail }),
  );
}

function renderEphemeralNote(message, ctx) {
  return h(
    'div',
    { class: 'ephemeral-note', 'data-testid': 'ephemeral-note' },
    icon('eye', 16),
    h('span', { text: 'Only you can see this' }),
    h('span', { class: 'dot', text: '•' }),
    h('button', { type: 'button', class: 'link-button', text: 'Dismiss message', onclick: () => ctx.onDismiss(message.id) }),
  );
}

// ---------------------------------------------------------------- embeds

function safeUrl(url) {
  return typeof url === 'string' && /^https?:\/\//i.test(url) ? url : undefined;
}

function colourOf(embed) {
  return typeof embed.color === 'number' ? `#${embed.color.toString(16).padStart(6, '0')}` : '#1e1f22';
}

function renderEmbed(embed, ctx) {
  const thumbnail = safeUrl(embed.thumbnail?.url);
  const node = h(
    'div',
    { class: `embed${thumbnail ? ' has-thumbnail' : ''}` },
    embed.author?.name ? renderEmbedAuthor(embed.author) : null,
    embed.title ? renderEmbedTitle(embed, ctx) : null,
    embed.description ? h('div', { class: 'embed-description' }, renderMarkdown(embed.description, ctx.md)) : null,
    embed.fields?.length ? renderFields(embed.fields, ctx) : null,
    safeUrl(embed.image?.url) ? h('a', { class: 'embed-image', href: embed.image.url, target: '_blank', rel: 'noopener noreferrer' }, h('img', { src: embed.image.url, alt: '' })) : null,
    thumbnail ? h('img', { class: 'embed-thumbnail', src: thumbnail, alt: '' }) : null,
    embed.footer?.text || embed.timestamp ? renderEmbedFooter(embed) : null,
  );
  node.style.setProperty('--embed-colour', colourOf(embed));
  return node;
}

function renderEmbedAuthor(author) {
  const name = safeUrl(author.url)
    ? h('a', { href: author.url, target: '_blank', rel: 'noopener noreferrer', text: author.name })
    : h('span', { text: author.name });
  return h('div', { class: 'embed-author' }, safeUrl(author.icon_url) ? h('img', { src: author.icon_url, alt: '' }) : null, name);
}

function renderEmbedTitle(embed, ctx) {
  const title = renderInline(embed.title, ctx.md);
  return safeUrl(embed.url)
    ? h('a', { class: 'embed-title', href: embed.url, target: '_blank', rel: 'noopener noreferrer' }, title)
    : h('div', { class: 'embed-title' }, title);
}

/** Inline fields share a row, up to three; a field that is not inline takes a row. */
function renderFields(fields, ctx) {
  const rows = [];
  for (const field of fields) {
    const row = rows.at(-1);
    if (field.inline && row?.inline && row.fields.length < 3) row.fields.push(field);
    else rows.push({ inline: Boolean(field.inline), fields: [field] });
  }
  const cells = rows.flatMap((row) =>
    row.fields.map((field) => {
      const cell = h(
        'div',
        { class: 'embed-field' },
        h('div', { class: 'embed-field-name' }, renderInline(field.name, ctx.md)),
        h('div', { class: 'embed-field-value' }, renderMarkdown(field.value, ctx.md)),
      );
      cell.style.gridColumn = `span ${12 / row.fields.length}`;
      return cell;
    }),
  );
  return h('div', { class: 'embed-fields' }, cells);
}

function renderEmbedFooter(embed) {
  const parts = [embed.footer?.text, embed.timestamp ? messageTime(new Date(embed.timestamp)) : undefined].filter(Boolean);
  return h(
    'div',
    { class: 'embed-footer' },
    safeUrl(embed.footer?.icon_url) ? h('img', { src: embed.footer.icon_url, alt: '' }) : null,
    h('span', { text: parts.join(' • ') }),
  );
}

// ---------------------------------------------------------------- media and attachments

const AUDIO_FILE = /\.(mp3|m4a|wav|ogg|oga|opus|flac|aac)$/i;
const VIDEO_FILE = /\.(mp4|webm|mov|m4v)$/i;
const MEDIA_ICONS = { audio: 'note', video: 'video', file: 'file' };

function fileName(url) {
  try {
    return decodeURIComponent(new URL(url).pathname.split('/').pop() ?? '');
  } catch {
    return '';
  }
}

function mediaKindOf(url, contentType = '') {
  const name = fileName(url);
  if (contentType.startsWith('audio/') || AUDIO_FILE.test(name)) return 'audio';
  if (contentType.startsWith('video/') || VIDEO_FILE.test(name)) return 'video';
  if (contentType.startsWith('image/')) return 'image';
  return undefined;
}

/**
 * Every audio and video link of a message, once each, in reading order: the content, then
 * each embed's url, description and fields, then link buttons. `[{ url, kind, label }]`.
 */
function mediaLinks(message) {
  const candidates = [...findLinks(message.content)];
  for (const embed of message.embeds ?? []) {
    if (embed.url) candidates.push({ url: embed.url, text: embed.title });
    candidates.push(...findLinks(embed.description));
    for (const field of embed.fields ?? []) candidates.push(...findLinks(field.value).map((link) => ({ ...link, text: link.text ?? field.name })));
  }
  for (const row of message.components ?? []) {
    for (const component of row.components ?? []) if (component.url) candidates.push({ url: component.url, text: component.label });
  }
  const seen = new Set();
  const links = [];
  for (const { url, text } of candidates) {
    const kind = safeUrl(url) ? mediaKindOf(url) : undefined;
    if ((kind !== 'audio' && kind !== 'video') || seen.has(url)) continue;
    seen.add(url);
    links.push({ url, kind, label: text });
  }
  return links;
}

function mediaHead(kind, label, name, url, size) {
  return h(
    'div',
    { class: 'media-head' },
    icon(MEDIA_ICONS[kind], 18),
    h('a', { class: 'media-name', href: url, target: '_blank', rel: 'noopener noreferrer', text: label || name || url }),
    label && name ? h('span', { class: 'media-file', text: name }) : null,
    size !== undefined ? h('span', { class: 'media-file', text: formatSize(size) }) : null,
  );
}

function player(kind, url) {
  return h(kind, { class: `player player-${kind}`, controls: true, preload: 'metadata', src: url, playsinline: kind === 'video' ? true : undefined });
}

/** An audio or video link as a player, labelled with the link's text and file name. */
function renderMediaLink({ url, kind, label }) {
  return h('div', { class: `media media-${kind}` }, mediaHead(kind, label, fileName(url), url), player(kind, url));
}

function renderAttachment(attachment) {
  const url = safeUrl(attachment.url);
  if (!url) return null;
  const kind = mediaKindOf(url, attachment.content_type);
  if (kind === 'image') {
    return h('a', { class: 'attachment-image', href: url, target: '_blank', rel: 'noopener noreferrer' }, h('img', { src: url, alt: attachment.filename }));
  }
  return h(
    'div',
    { class: `media media-${kind ?? 'file'}` },
    mediaHead(kind ?? 'file', attachment.filename, undefined, url, attachment.size),
    kind ? player(kind, url) : null,
  );
}

function formatSize(bytes) {
  if (bytes < 1024) return `${bytes} bytes`;
  if (bytes < 1024 * 1024) return `${(bytes / 1024).toFixed(2)} KB`;
  return `${(bytes / 1024 / 1024).toFixed(2)} MB`;
}

// ---------------------------------------------------------------- components

const ROW = 1;
const BUTTON = 2;
const STRING_SELECT = 3;
const LINK_STYLE = 5;
const PREMIUM_STYLE = 6;

function renderComponents(message, ctx) {
  const rows = (message.components ?? []).filter((row) => row.type === ROW);
  if (rows.length === 0) return null;
  return h(
    'div',
    { class: 'components' },
    rows.map((row) =>
      h(
        'div',
        { class: 'action-row' },
        (row.components ?? []).map((component) => {
          if (component.type === BUTTON) return renderButton(message, component, ctx);
          if (component.type === STRING_SELECT) return renderSelect(message, component, ctx);
          return null;
        }),
      ),
    ),
  );
}

/** A premium button as Discord draws it: a shop icon, the SKU's name and its price; it opens Discord's checkout. */
function renderPremiumButton(message, button, ctx) {
  const sku = ctx.sku(button.sku_id);
  const node = h(
    'button',
    { type: 'button', class: 'btn btn-6', 'data-testid': 'premium-button', disabled: button.disabled || !sku },
    icon('shop', 16),
    h('span', { class: 'btn-label', text: sku?.name ?? 'Unknown item' }),
    sku ? h('span', { class: 'btn-price', text: sku.price }) : null,
  );
  node.addEventListener('click', () => ctx.onPremium(message, button, node));
  return node;
}

function renderButton(message, button, ctx) {
  if (button.style === PREMIUM_STYLE) return renderPremiumButton(message, button, ctx);
  const emoji = button.emoji?.name && !button.emoji.id ? h('span', { class: 'btn-emoji', text: button.emoji.name }) : null;
  const label = button.label ? h('span', { class: 'btn-label', text: button.label }) : null;
  if (button.style === LINK_STYLE) {
    const url = safeUrl(button.url);
    const children = [emoji, label, icon('external', 16)];
    return url && !button.disabled
      ? h('a', { class: 'btn btn-5', 'data-testid': 'button', href: url, target: '_blank', rel: 'noopener noreferrer', title: url }, children)
      : h('button', { type: 'button', class: 'btn btn-5', 'data-testid': 'button', disabled: true }, children);
  }
  const node = h('button', { type: 'button', class: `btn btn-${button.style ?? 2}`, 'data-testid': 'button', disabled: button.disabled }, emoji, label);
  node.addEventListener('click', () => ctx.onButton(message, button, node));
  return node;
}

/** A string select; with more than one value allowed, a Send button confirms the choice. */
function renderSelect(message, select, ctx) {
  const multiple = (select.max_values ?? 1) > 1;
  const options = (select.options ?? []).map((option) =>
    h('option', { value: option.value, selected: option.default, title: option.description }, option.emoji?.name && !option.emoji.id ? `${option.emoji.name} ` : '', option.label),
  );
  const hasDefault = (select.options ?? []).some((option) => option.default);
  const placeholder = multiple ? null : h('option', { value: '', disabled: true, selected: !hasDefault, hidden: true, text: select.placeholder ?? 'Make a selection' });
  const node = h('select', { class: 'select', 'data-testid': 'select', multiple, disabled: select.disabled, 'aria-label': select.placeholder ?? 'Make a selection' }, placeholder, options);
  const chosen = () => [...node.selectedOptions].map((option) => option.value).filter(Boolean);
  if (!multiple) {
    node.addEventListener('change', () => ctx.onSelect(message, select, chosen(), node));
    return node;
  }
  const send = h('button', { type: 'button', class: 'btn btn-1', text: 'Send', onclick: () => ctx.onSelect(message, select, chosen(), send) });
  return h('div', { class: 'select-multiple' }, node, send);
}
