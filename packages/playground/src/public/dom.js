/* global document */
/**
 * DOM building helpers. Everything on the page is built with createElement and textContent,
 * never from HTML strings: message text comes from the bot and from people, so it is untrusted.
 */

/**
 * `h('a', { class: 'link', href, onclick }, 'text', child)`: an element with attributes,
 * listeners (`on…`) and children (strings become text nodes; null/false are skipped).
 * `text` sets textContent; `value` is set as a property, after the children (for <select>).
 */
export function h(tag, props = {}, ...children) {
  const node = document.createElement(tag);
  for (const [key, value] of Object.entries(props)) {
    if (value === undefined || value === null || value === false || key === 'value') continue;
    if (key === 'class') node.className = value;
    else if (key === 'text') node.textContent = value;
    else if (key === 'dataset') Object.assign(node.dataset, value);
    else if (key.startsWith('on')) node.addEventListener(key.slice(2), value);
    else node.setAttribute(key, value === true ? '' : String(value));
  }
  append(node, children);
  if (props.value !== undefined) node.value = props.value;
  return node;
}

/** Appends children, flattening arrays and skipping empty ones. */
export function append(node, children) {
  for (const child of children.flat(Infinity)) {
    if (child === null || child === undefined || child === false) continue;
    node.append(typeof child === 'string' || typeof child === 'number' ? String(child) : child);
  }
  return node;
}

const SVG_NS = 'http://www.w3.org/2000/svg';

/** Icon paths (24×24 viewBox), drawn here so the page needs no icon font or image. */
const ICONS = {
  hash: 'M10.99 3.16A1 1 0 1 0 9 2.84L8.15 8H4a1 1 0 0 0 0 2h3.82l-.67 4H3a1 1 0 1 0 0 2h3.82l-.8 4.84a1 1 0 0 0 1.97.32L8.85 16h4.97l-.8 4.84a1 1 0 0 0 1.97.32l.86-5.16H20a1 1 0 1 0 0-2h-3.82l.67-4H21a1 1 0 1 0 0-2h-3.82l.8-4.84a1 1 0 1 0-1.97-.32L15.15 8h-4.97l.8-4.84ZM14.15 14l.67-4H9.85l-.67 4h4.97Z',
  eye: 'M12 5C5.648 5 1 12 1 12s4.648 7 11 7 11-7 11-7-4.648-7-11-7Zm0 12a5 5 0 1 1 0-10 5 5 0 0 1 0 10Zm0-8a3 3 0 1 0 0 6 3 3 0 0 0 0-6Z',
  external: 'M15 2a1 1 0 0 0 0 2h3.59l-6.3 6.3a1 1 0 1 0 1.42 1.4L20 5.42V9a1 1 0 1 0 2 0V3a1 1 0 0 0-1-1h-6ZM5 4a3 3 0 0 0-3 3v12a3 3 0 0 0 3 3h12a3 3 0 0 0 3-3v-5a1 1 0 1 0-2 0v5a1 1 0 0 1-1 1H5a1 1 0 0 1-1-1V7a1 1 0 0 1 1-1h5a1 1 0 1 0 0-2H5Z',
  plus: 'M12 2a10 10 0 1 0 0 20 10 10 0 0 0 0-20Zm1 11h4a1 1 0 1 0 0-2h-4V7a1 1 0 1 0-2 0v4H7a1 1 0 1 0 0 2h4v4a1 1 0 1 0 2 0v-4Z',
  chevron: 'M5.3 9.3a1 1 0 0 1 1.4 0l5.3 5.29 5.3-5.3a1 1 0 1 1 1.4 1.42l-6 6a1 1 0 0 1-1.4 0l-6-6a1 1 0 0 1 0-1.42Z',
  people: 'M14.5 8a3 3 0 1 0-2.7-4.3c-.2.4.06.86.44 1.12a5 5 0 0 1 2.14 3.08c.01.06.06.1.12.1ZM18.44 17.27c.15.43.54.73 1 .73h1.06c.83 0 1.5-.67 1.5-1.5a7.5 7.5 0 0 0-6.5-7.43c-.55-.08-.99.38-1.1.92-.06.3-.15.6-.26.87-.23.58-.05 1.3.47 1.63a9.53 9.53 0 0 1 3.83 4.78ZM12.5 9a3 3 0 1 1-6 0 3 3 0 0 1 6 0ZM2 20.5a7.5 7.5 0 0 1 15 0c0 .83-.67 1.5-1.5 1.5a.2.2 0 0 1-.2-.16c-.2-.96-.56-1.87-.88-2.54-.1-.23-.42-.15-.42.1v2.1a.5.5 0 0 1-.5.5h-8a.5.5 0 0 1-.5-.5v-2.1c0-.25-.31-.33-.42-.1-.32.67-.67 1.58-.88 2.54a.2.2 0 0 1-.2.16A1.5 1.5 0 0 1 2 20.5Z',
  file: 'M4 3a3 3 0 0 1 3-3h6.59a2 2 0 0 1 1.41.59l4.42 4.41A2 2 0 0 1 20 6.41V21a3 3 0 0 1-3 3H7a3 3 0 0 1-3-3V3Zm9 0v4a2 2 0 0 0 2 2h3v-.59L13.59 3H13Z',
  note: 'M21 3a1 1 0 0 0-1.24-.97l-11 2.75A1 1 0 0 0 8 5.75v9.8A3.5 3.5 0 1 0 10 18.5V9.53l9-2.25v6.27A3.5 3.5 0 1 0 21 16.5V3Z',
  video: 'M4 5a3 3 0 0 0-3 3v8a3 3 0 0 0 3 3h10a3 3 0 0 0 3-3v-1.4l3.45 2.3A1 1 0 0 0 22 16V8a1 1 0 0 0-1.55-.83L17 9.4V8a3 3 0 0 0-3-3H4Z',
  warning: 'M10.27 2.5a2 2 0 0 1 3.46 0l8.66 15a2 2 0 0 1-1.73 3H3.34a2 2 0 0 1-1.73-3l8.66-15ZM12 8a1 1 0 0 0-1 1v4a1 1 0 1 0 2 0V9a1 1 0 0 0-1-1Zm0 10a1.25 1.25 0 1 0 0-2.5 1.25 1.25 0 0 0 0 2.5Z',
  menu: 'M3 5a1 1 0 0 1 1-1h16a1 1 0 1 1 0 2H4a1 1 0 0 1-1-1Zm0 7a1 1 0 0 1 1-1h16a1 1 0 1 1 0 2H4a1 1 0 0 1-1-1Zm1 6a1 1 0 1 0 0 2h16a1 1 0 1 0 0-2H4Z',
  bot: 'M12 2a1 1 0 0 1 1 1v2h4a3 3 0 0 1 3 3v9a3 3 0 0 1-3 3H7a3 3 0 0 1-3-3V8a3 3 0 0 1 3-3h4V3a1 1 0 0 1 1-1ZM9 10.5a1.5 1.5 0 1 0 0 3 1.5 1.5 0 0 0 0-3Zm6 0a1.5 1.5 0 1 0 0 3 1.5 1.5 0 0 0 0-3ZM9 16a1 1 0 1 0 0 2h6a1 1 0 1 0 0-2H9ZM1 11a1 1 0 0 1 2 0v3a1 1 0 1 1-2 0v-3Zm21-1a1 1 0 0 0-1 1v3a1 1 0 1 0 2 0v-3a1 1 0 0 0-1-1Z',
  send: 'M3.4 2.2a1 1 0 0 0-1.33 1.24L4.6 11H13a1 1 0 1 1 0 2H4.6l-2.53 7.56a1 1 0 0 0 1.33 1.24l18-9a1 1 0 0 0 0-1.6l-18-9Z',
  speaker: 'M11 4.5a1 1 0 0 0-1.6-.8L5.67 6.5H3a1 1 0 0 0-1 1v9a1 1 0 0 0 1 1h2.67l3.73 2.8A1 1 0 0 0 11 19.5v-15Zm4.54 3.96a1 1 0 0 1 1.41 0 5 5 0 0 1 0 7.08 1 1 0 1 1-1.41-1.42 3 3 0 0 0 0-4.24 1 1 0 0 1 0-1.42Z',
  shop: 'M7 7V6a5 5 0 0 1 10 0v1h2.1a1 1 0 0 1 1 .9l1.2 13A2 2 0 0 1 19.3 23H4.7a2 2 0 0 1-2-2.1l1.2-13a1 1 0 0 1 1-.9H7Zm2 0h6V6a3 3 0 1 0-6 0v1Zm-1 3a1 1 0 1 0 2 0 1 1 0 0 0-2 0Zm6 0a1 1 0 1 0 2 0 1 1 0 0 0-2 0Z',
  close: 'M17.3 18.7a1 1 0 0 0 1.4-1.4L13.42 12l5.3-5.3a1 1 0 0 0-1.42-1.4L12 10.58l-5.3-5.3a1 1 0 0 0-1.4 1.42L10.58 12l-5.3 5.3a1 1 0 1 0 1.42 1.4L12 13.42l5.3 5.3Z',
};

/** An inline SVG icon from the table above. */
export function icon(name, size = 16) {
  const svg = document.createElementNS(SVG_NS, 'svg');
  svg.setAttribute('viewBox', '0 0 24 24');
  svg.setAttribute('width', String(size));
  svg.setAttribute('height', String(size));
  svg.setAttribute('aria-hidden', 'true');
  svg.classList.add('icon');
  const path = document.createElementNS(SVG_NS, 'path');
  path.setAttribute('fill', 'currentColor');
  path.setAttribute('fill-rule', 'evenodd');
  path.setAttribute('d', ICONS[name]);
  svg.append(path);
  return svg;
}

/** Discord's default avatar colours; which one a user gets depends on the id, as on Discord. */
const AVATAR_COLOURS = ['#5865f2', '#757e8a', '#3ba55c', '#faa61a', '#ed4245', '#eb459e'];

/** Colours the page gives by user id (its personas and the bot), ahead of the id's own. */
export const avatarColours = new Map();

/** A coloured circle with the name's initial (a robot for a bot), standing in for a profile picture. */
export function avatar(user, size = 40) {
  let index = 0;
  try {
    index = Number((BigInt(user.id) >> 22n) % BigInt(AVATAR_COLOURS.length));
  } catch {
    // Not a snowflake (a local message): the first colour.
  }
  const node = user.bot
    ? h('div', { class: 'avatar', 'aria-hidden': 'true' }, icon('bot', Math.round(size * 0.6)))
    : h('div', { class: 'avatar', 'aria-hidden': 'true', text: (user.username || '?').slice(0, 1).toUpperCase() });
  node.dataset.userId = user.id;
  node.style.setProperty('--avatar-colour', avatarColours.get(user.id) ?? AVATAR_COLOURS[index]);
  node.style.setProperty('--avatar-size', `${size}px`);
  return node;
}
