/* global document, window, localStorage, EventSource, ResizeObserver, CSS, setInterval, setTimeout */
/**
 * The playground page: a Discord text channel in which the person acts as one of the
 * playground's users. It keeps the server's state (GET /api/state), follows it live
 * (server-sent events on /api/events), and turns commands, clicks and modal submits into
 * POSTs on /api/interactions/*.
 */
import { ApiError, getState, holdService, interact, purchase, setRole, setVoice } from './api.js';
import { createComposer } from './composer.js';
import { avatar, avatarColours, h, icon } from './dom.js';
import { renderMessageList } from './messages.js';
import { openModal, openPurchase } from './modal.js';
import { refreshRelativeTimes } from './time.js';

const STORAGE_KEYS = { user: 'playground.userId', channel: 'playground.channelId' };
const ROLE_LABELS = { member: 'member', moderator: 'moderator', owner: 'bot owner' };
/** Name colours, as a server's roles would give them. */
const ROLE_COLOURS = { owner: '#f0b232', moderator: '#3ba55c' };
const DEFAULT_TOPIC = 'Playground: everything here runs on this machine, no Discord and no paid key';
const EXAMPLES = ['/song prompt:rainy night lofi', '/lyrics prompt:the sea at night', '/library', '/help', '/credits', '/jobs list'];
/** Each persona's avatar colour, in the switcher's order, and the bot's: no two alike, whatever their ids. */
const PERSONA_COLOURS = ['#5865f2', '#ed4245', '#3ba55c', '#faa61a'];
const BOT_COLOUR = '#eb459e';
/** Discord's names of the permissions a command may require, for the sentence that says who may use it. */
const PERMISSION_NAMES = new Map([
  [1n << 3n, 'Administrator'],
  [1n << 5n, 'Manage Server'],
  [1n << 4n, 'Manage Channels'],
  [1n << 28n, 'Manage Roles'],
  [1n << 13n, 'Manage Messages'],
  [1n << 1n, 'Kick Members'],
  [1n << 2n, 'Ban Members'],
]);
const ADMINISTRATOR = 1n << 3n;
/** Where the member list no longer fits beside the messages (style.css hides it there). */
const NARROW = '(max-width: 1100px)';
const RELATIVE_REFRESH_MS = 5_000;
const RECONNECT_MS = 2_000;
const DISCORD_EPOCH = 1_420_070_400_000n;

const elements = {
  app: document.getElementById('app'),
  loading: document.getElementById('loading'),
  loadingText: document.getElementById('loading-text'),
  guildIcon: document.getElementById('guild-icon'),
  guildName: document.getElementById('guild-name'),
  dashboardLink: document.getElementById('dashboard-link'),
  channels: document.getElementById('channel-list'),
  userPanel: document.getElementById('user-panel'),
  header: document.getElementById('chat-header'),
  banner: document.getElementById('connection-banner'),
  scroller: document.getElementById('scroller'),
  list: document.getElementById('message-list'),
  members: document.getElementById('members'),
  composer: document.getElementById('composer-area'),
  jumpBar: document.getElementById('jump-bar'),
  jumpBarText: document.getElementById('jump-bar-text'),
  jumpBarButton: document.getElementById('jump-bar-button'),
  backdrop: document.getElementById('nav-backdrop'),
  voiceAudio: document.getElementById('voice-audio'),
};

const store = {
  /** The last GET /api/state (or `state` event). */
  state: undefined,
  userId: localStorage.getItem(STORAGE_KEYS.user),
  channelId: localStorage.getItem(STORAGE_KEYS.channel),
  /** id → { message, json, order }: server messages and local failure notes. */
  messages: new Map(),
  /** Ephemeral messages the person dismissed (Discord forgets them locally too). */
  dismissed: new Set(),
  /**
   * The newest message id when the page loaded: ephemeral messages up to it belong to an
   * earlier page, and a reload forgets them, as Discord's client does.
   */
  ephemeralCutoff: undefined,
  /** Messages that arrived below while the person read older ones (the "new messages" bar). */
  unseenBelow: 0,
  /** Channels with messages the person has not looked at. */
  unread: new Set(),
  /** Bumped when anything every message depends on changes (user, names): all are redrawn. */
  epoch: 0,
  localCount: 0,
  /** Message events that arrive while the state is being fetched, replayed after it. */
  buffered: undefined,
  stickToBottom: true,
};

// ------------------------------------------------------------------ lookups

function world() {
  const { users, bot, channels, roles } = store.state;
  return { commands: store.state.commands.filter((command) => mayUse(command)), users, bot, channels, roles };
}

/** A person's permissions in the current channel, as Discord computes them. */
function permissionsOf(user) {
  return BigInt(user?.permissions?.[store.channelId] ?? '0');
}

/**
 * Whether Discord would list `command` for the person: its `default_member_permissions` are all
 * theirs ("0": administrators only), or they are an administrator.
 */
function mayUse(command, user = currentUser()) {
  if (command.default_member_permissions === null || command.default_member_permissions === undefined) return true;
  const have = permissionsOf(user);
  const need = BigInt(command.default_member_permissions);
  if ((have & ADMINISTRATOR) !== 0n) return true;
  return need !== 0n && (have & need) === need;
}

/** Why the person cannot use /name (Discord would not list it for them), or undefined. */
function unavailable(name) {
  const command = store.state.commands.find((candidate) => candidate.name === name);
  if (!command || mayUse(command)) return undefined;
  const need = BigInt(command.default_member_permissions);
  const missing = [...PERMISSION_NAMES].filter(([bit]) => (need & bit) !== 0n && (permissionsOf(currentUser()) & bit) === 0n).map(([, label]) => label);
  const needs = missing.length > 0 ? `the ${missing.join(' and ')} permission${missing.length > 1 ? 's' : ''}` : 'a permission';
  const others = store.state.users.filter((user) => user.id !== store.userId && mayUse(command, user)).map((user) => user.username);
  const hint = others.length > 0 ? ` Act as ${others.join(' or ')} (bottom left) to try it.` : '';
  return `/${name} needs ${needs}, which @${currentUser().username} does not have, so Discord does not list it for them.${hint}`;
}

function currentUser() {
  return store.state.users.find((user) => user.id === store.userId);
}

function currentChannel() {
  return store.state.channels.find((channel) => channel.id === store.channelId);
}

function userById(id) {
  const { users, bot } = store.state;
  return id === bot.id ? bot : users.find((user) => user.id === id);
}

function nameColour(userId) {
  return ROLE_COLOURS[userById(userId)?.role];
}

function isVisible(message) {
  if (message.channel_id !== store.channelId || store.dismissed.has(message.id)) return false;
  if (!message.ephemeral) return true;
  return message.visibleTo === store.userId && !fromAnEarlierPage(message);
}

function fromAnEarlierPage(message) {
  return store.ephemeralCutoff !== undefined && /^\d+$/.test(message.id) && BigInt(message.id) <= store.ephemeralCutoff;
}

/** Snowflakes sort by time; local notes get one from the clock so they fall in place. */
function orderOf(message) {
  if (/^\d+$/.test(message.id)) return BigInt(message.id);
  return ((BigInt(Date.now()) - DISCORD_EPOCH) << 22n) + BigInt(store.localCount);
}

/**
 * Links name the address the playground printed; opened through another (a forwarded port, a
 * proxy), the page points them at its own, which surely reaches the same server.
 */
function reachable(message) {
  const printed = store.state?.origin;
  if (!printed || printed === window.location.origin) return message;
  return JSON.parse(JSON.stringify(message).replaceAll(`${printed}/`, `${window.location.origin}/`));
}

function keep(raw) {
  const message = reachable(raw);
  store.messages.set(message.id, { message, json: JSON.stringify(message), order: orderOf(message) });
}

// ------------------------------------------------------------------ state and events

function applyState(state) {
  store.state = state;
  if (store.ephemeralCutoff === undefined) {
    store.ephemeralCutoff = state.messages.reduce((newest, message) => (/^\d+$/.test(message.id) && BigInt(message.id) > newest ? BigInt(message.id) : newest), 0n);
  }
  avatarColours.clear();
  state.users.forEach((user, index) => avatarColours.set(user.id, PERSONA_COLOURS[index % PERSONA_COLOURS.length]));
  avatarColours.set(state.bot.id, BOT_COLOUR);
  if (!userById(store.userId) || store.userId === state.bot.id) store.userId = state.users[0]?.id;
  if (!currentChannel()) store.channelId = state.channels[0]?.id;
  for (const [id, entry] of store.messages) if (!entry.message.failure) store.messages.delete(id);
  for (const message of state.messages) keep(message);
  store.epoch += 1;
  elements.loading.hidden = true;
  elements.app.hidden = false;
  renderAll();
  followVoice();
}

function applyMessageEvent({ change, message }) {
  if (change === 'delete') store.messages.delete(message.id);
  else keep(message);
  const visibleElsewhere = message.channel_id !== store.channelId && (!message.ephemeral || message.visibleTo === store.userId);
  if (change === 'create' && visibleElsewhere) {
    store.unread.add(message.channel_id);
    renderChannels();
  }
  if (change === 'create' && !store.stickToBottom && isVisible(store.messages.get(message.id)?.message ?? message)) store.unseenBelow += 1;
  renderMessages();
  renderJumpBar();
}

async function loadState() {
  const buffered = [];
  store.buffered = buffered;
  try {
    applyState(await getState());
    for (const event of buffered) applyMessageEvent(event);
    showBanner(undefined);
  } catch (error) {
    if (store.state) showBanner(`Could not refresh: ${error.message}`);
    else elements.loadingText.textContent = error.message;
    setTimeout(loadState, RECONNECT_MS);
  } finally {
    if (store.buffered === buffered) store.buffered = undefined;
  }
}

/** Follows the server's events; every (re)connection starts with a fresh state. */
function connect() {
  const source = new EventSource('/api/events');
  source.addEventListener('open', () => loadState());
  source.addEventListener('message', (event) => {
    const data = JSON.parse(event.data);
    if (store.buffered) store.buffered.push(data);
    else if (store.state) applyMessageEvent(data);
  });
  source.addEventListener('state', (event) => applyState(JSON.parse(event.data)));
  source.addEventListener('voice', (event) => {
    if (!store.state) return;
    store.state.voiceChannel.members = JSON.parse(event.data).members;
    renderChannels();
    followVoice();
  });
  // A role given or taken (on this page or another): everyone's roles and permissions.
  source.addEventListener('members', (event) => {
    if (!store.state) return;
    store.state.users = JSON.parse(event.data).users;
    keepingTheView(() => {
      store.epoch += 1;
      renderAll();
    });
  });
  source.addEventListener('simulator', (event) => {
    if (!store.state) return;
    store.state.simulator = { ...store.state.simulator, ...JSON.parse(event.data) };
    renderChannels();
  });
  source.addEventListener('error', () => {
    if (store.state) showBanner('Lost the connection to the playground. Reconnecting…');
    // EventSource retries by itself unless the server refused (e.g. still starting).
    if (source.readyState === EventSource.CLOSED) setTimeout(connect, RECONNECT_MS);
  });
}

function showBanner(text) {
  elements.banner.hidden = !text;
  elements.banner.textContent = text ?? '';
}

// ------------------------------------------------------------------ acting as a person

/**
 * Acts as another person, keeping the view as it was: the channel, an open drawer or member
 * list, and the messages in sight (though the other person's private messages come and go).
 */
function switchUser(userId) {
  store.userId = userId;
  localStorage.setItem(STORAGE_KEYS.user, userId);
  keepingTheView(() => {
    store.epoch += 1;
    renderAll();
  });
  followVoice();
  elements.userPanel.querySelector('select')?.focus();
}

/**
 * Runs `redraw`, then scrolls so that the first message that starts in the view stays where it
 * was (or, should it be gone, the nearest one below it that is still there; else the one cut
 * by the view's top). At the bottom, it stays there.
 */
function keepingTheView(redraw) {
  const anchors = store.stickToBottom ? [] : messagesInView();
  redraw();
  if (store.stickToBottom) return;
  const view = elements.scroller.getBoundingClientRect();
  for (const { id, top } of anchors) {
    const node = elements.list.querySelector(`[data-message-id="${CSS.escape(id)}"]`);
    if (!node) continue;
    elements.scroller.scrollTop += node.getBoundingClientRect().top - view.top - top;
    break;
  }
  renderJumpBar();
}

/** Messages from the top of the view down, each with its top's distance below the view's top; the one cut by the top comes last. */
function messagesInView() {
  const view = elements.scroller.getBoundingClientRect();
  const below = [...elements.list.querySelectorAll('[data-testid=message]')]
    .map((node) => ({ id: node.dataset.messageId, box: node.getBoundingClientRect() }))
    .filter(({ box }) => box.bottom > view.top)
    .map(({ id, box }) => ({ id, top: box.top - view.top }));
  return [...below.filter(({ top }) => top >= 0), ...below.filter(({ top }) => top < 0)];
}

/** Gives the person `userId` the role, or takes it, as a moderator would in the server's settings. */
async function toggleRole(userId, roleId, give) {
  try {
    store.state.users = (await setRole(userId, roleId, give)).users;
  } catch (error) {
    showBanner(error.message);
  }
  keepingTheView(() => {
    store.epoch += 1;
    renderAll();
  });
}

/** Holds the simulated music service (nothing it is given ends) or lets it go on. */
async function toggleHold(held) {
  try {
    store.state.simulator = { ...store.state.simulator, ...(await holdService(held)) };
  } catch (error) {
    showBanner(error.message);
  }
  renderChannels();
}

function inVoice(userId = store.userId) {
  return store.state.voiceChannel.members.includes(userId);
}

/** The page hears the voice channel while the person it acts as is in it, as Discord's client would. */
function followVoice() {
  const audio = elements.voiceAudio;
  if (inVoice() && !audio.getAttribute('src')) {
    audio.src = `/api/voice/audio?t=${Date.now()}`;
    // Started by the click that joined; a reload needs one more click, as browsers require.
    audio.play().catch(() => showBanner('Click anywhere to hear the voice channel.'));
  } else if (!inVoice() && audio.getAttribute('src')) {
    audio.pause();
    audio.removeAttribute('src');
    audio.load();
  }
}

/** Joins or leaves the voice channel as the person the page acts as. */
async function toggleVoice() {
  const join = !inVoice();
  try {
    const { members } = await setVoice(store.userId, join);
    store.state.voiceChannel.members = members;
  } catch (error) {
    showBanner(error.message);
  }
  renderChannels();
  followVoice();
}

function switchChannel(channelId) {
  store.channelId = channelId;
  store.unread.delete(channelId);
  localStorage.setItem(STORAGE_KEYS.channel, channelId);
  elements.app.classList.remove('nav-open', 'members-open');
  jumpToPresent();
  renderAll();
  composer.focus();
}

/**
 * Shows a failed interaction as Discord does: a note from the app that only `user` sees, in
 * the channel where they acted.
 */
function addFailure(error, { user, channelId, command }) {
  const { bot } = store.state;
  store.localCount += 1;
  keep({
    id: `local-${store.localCount}`,
    channel_id: channelId,
    author: { id: bot.id, username: bot.username, global_name: null, bot: true },
    content: '',
    embeds: [],
    components: [],
    attachments: [],
    flags: 64,
    timestamp: new Date().toISOString(),
    edited_timestamp: null,
    ephemeral: true,
    visibleTo: user.id,
    ...(command ? { command, usedBy: { id: user.id, username: user.username } } : {}),
    failure: {
      title: error instanceof ApiError && error.status === 504 ? 'The application did not respond' : 'This interaction failed',
      detail: error.message,
    },
  });
  jumpToPresent();
  renderMessages();
}

/** Runs one interaction; opens the bot's modal if it answered with one. False when it failed. */
async function act(kind, body, command) {
  // Who acted where, as of now: the person may switch before the bot answers.
  const place = { user: currentUser(), channelId: store.channelId, command };
  // Sending a command brings the person to the present, as Discord does; a click keeps their place.
  if (kind === 'command') jumpToPresent();
  try {
    showAnswer(await interact(kind, { userId: place.user.id, ...body }), place.user.id);
    return true;
  } catch (error) {
    addFailure(error, place);
    return false;
  }
}

/** Opens the modal the bot answered with, if any; `userId` is who submits it. */
function showAnswer(answer, userId) {
  if (!answer.modal) return;
  openModal(answer.modal, async (fields) => {
    showAnswer(await interact('modal', { userId, interactionId: answer.interactionId, fields }), userId);
  });
}

/** Disables a button or select while the bot answers, with a spinner, as Discord does. */
async function whileBusy(element, work) {
  element.disabled = true;
  element.classList.add('busy');
  try {
    await work();
  } finally {
    element.disabled = false;
    element.classList.remove('busy');
  }
}

const messageContext = {
  get currentUserId() {
    return store.userId;
  },
  md: {
    get currentUserId() {
      return store.userId;
    },
    userName: (id) => userById(id)?.username,
    channelName: (id) => store.state.channels.find((channel) => channel.id === id)?.name,
    voiceChannelName: (id) => (store.state.voiceChannel.id === id ? store.state.voiceChannel.name : undefined),
    roleName: (id) => store.state.roles.find((role) => role.id === id)?.name,
    openChannel: (id) => switchChannel(id),
  },
  nameColour,
  onButton: (message, button, element) => whileBusy(element, () => act('button', { messageId: message.id, customId: button.custom_id })),
  sku: (skuId) => store.state.skus?.find((sku) => sku.id === skuId),
  // A premium button sends the bot no interaction: Discord's checkout opens, and a purchase makes an entitlement.
  onPremium(message, button) {
    const sku = store.state.skus?.find((candidate) => candidate.id === button.sku_id);
    if (!sku) return;
    const userId = store.userId;
    openPurchase(sku, () => purchase({ userId, messageId: message.id, skuId: sku.id }));
  },
  onSelect: (message, select, values, element) =>
    whileBusy(element, () => act('select', { messageId: message.id, customId: select.custom_id, values })),
  onDismiss(id) {
    if (store.messages.get(id)?.message.failure) store.messages.delete(id);
    else store.dismissed.add(id);
    renderMessages();
  },
};

const composer = createComposer(elements.composer, {
  world,
  channel: currentChannel,
  user: currentUser,
  autocomplete: async (body) => (await interact('autocomplete', body)).choices ?? [],
  sendCommand: (request, line) => act('command', { channelId: store.channelId, ...request }, line.slice(1)),
  unavailable,
});

// ------------------------------------------------------------------ drawing

function renderAll() {
  const channel = currentChannel();
  document.title = `#${channel.name} | ${store.state.guild.name} · playground`;
  renderGuild();
  renderChannels();
  renderHeader();
  renderUserPanel();
  renderMembers();
  renderMessages();
  composer.refresh();
}

function renderGuild() {
  const { name } = store.state.guild;
  elements.guildName.textContent = name;
  elements.guildIcon.textContent = name
    .split(/\s+/)
    .map((word) => word[0])
    .join('')
    .slice(0, 3);
  elements.guildIcon.title = name;
  // Where Discord puts Server Settings: the bot's dashboard, signed in as the persona acting now.
  const user = currentUser();
  elements.dashboardLink.hidden = !store.state.dashboard;
  elements.dashboardLink.href = `/dashboard?as=${encodeURIComponent(user.id)}`;
  elements.dashboardLink.title = `Open the bot's dashboard for ${name} as ${user.username}, in a new tab`;
}

function renderChannels() {
  const voice = store.state.voiceChannel;
  const listeners = voice.members.map((id) => (id === store.state.bot.id ? { ...store.state.bot, bot: true } : userById(id))).filter(Boolean);
  elements.channels.replaceChildren(
    h('div', { class: 'channel-category' }, icon('chevron', 12), h('span', { text: 'Text Channels' })),
    ...store.state.channels.map((channel) => {
      const active = channel.id === store.channelId;
      const classes = ['channel', active && 'active', !active && store.unread.has(channel.id) && 'unread'];
      return h(
        'button',
        { type: 'button', class: classes.filter(Boolean).join(' '), 'data-testid': 'channel', 'aria-current': active ? 'page' : undefined, onclick: () => switchChannel(channel.id) },
        icon('hash', 20),
        h('span', { class: 'channel-name', text: channel.name }),
      );
    }),
    h('div', { class: 'channel-category voice-category' }, icon('chevron', 12), h('span', { text: 'Voice Channels' })),
    h(
      'button',
      {
        type: 'button',
        class: `channel voice-channel${inVoice() ? ' active' : ''}`,
        'data-testid': 'voice-channel',
        title: inVoice() ? 'Leave the voice channel' : 'Join the voice channel to hear what the bot plays',
        onclick: () => void toggleVoice(),
      },
      icon('speaker', 20),
      h('span', { class: 'channel-name', text: voice.name }),
      h('span', { class: 'voice-action', text: inVoice() ? 'leave' : 'join' }),
    ),
    h(
      'div',
      { class: 'voice-members', 'data-testid': 'voice-members' },
      listeners.map((user) => h('div', { class: 'voice-member' }, avatar(user, 20), h('span', { text: user.username }))),
    ),
    holdSwitch(),
  );
}

/** The playground's own control, not Discord's: hold the music service, so a request waits its turn with Cancel. */
function holdSwitch() {
  const held = Boolean(store.state.simulator?.held);
  const input = h('input', {
    type: 'checkbox',
    class: 'hold-input',
    'data-testid': 'hold-service',
    checked: held,
    onchange: (event) => void toggleHold(event.target.checked),
  });
  return h(
    'div',
    { class: 'playground-controls' },
    h('div', { class: 'channel-category' }, icon('chevron', 12), h('span', { text: 'Playground' })),
    h(
      'label',
      { class: 'hold-switch', title: 'The music service keeps every task it is given until you let it go on' },
      input,
      h(
        'span',
        { class: 'hold-text' },
        h('span', { class: 'hold-title', text: 'Hold the music service' }),
        h('span', {
          class: 'hold-hint',
          'data-testid': 'hold-hint',
          text: held ? 'Nothing it is given finishes. Your next request of the same kind waits in the bot’s queue, with Cancel.' : 'Songs and the rest finish as usual.',
        }),
      ),
    ),
  );
}

function renderHeader() {
  const channel = currentChannel();
  elements.header.replaceChildren(
    h(
      'button',
      {
        type: 'button',
        class: 'header-button menu-button',
        'data-testid': 'menu-button',
        title: 'Channels and who you are',
        'aria-label': 'Channels',
        onclick: () => elements.app.classList.toggle('nav-open'),
      },
      icon('menu', 24),
    ),
    icon('hash', 24),
    h('h2', { class: 'chat-title', text: channel.name }),
    h('div', { class: 'chat-divider' }),
    h('div', { class: 'chat-topic', text: channel.topic ?? DEFAULT_TOPIC, title: channel.topic ?? DEFAULT_TOPIC }),
    h(
      'button',
      {
        type: 'button',
        class: 'header-button',
        title: 'Show or hide the member list',
        'aria-label': 'Member list',
        // A wide window shows the list beside the channel; a narrow one opens it over the messages.
        onclick: () => elements.app.classList.toggle(window.matchMedia(NARROW).matches ? 'members-open' : 'members-hidden'),
      },
      icon('people', 24),
    ),
  );
}

function renderUserPanel() {
  const user = currentUser();
  const select = h(
    'select',
    { id: 'user-switcher', class: 'user-switcher', 'data-testid': 'user-switcher', 'aria-label': 'Act as', title: 'Act as another person of the server', value: user.id },
    store.state.users.map((candidate) => h('option', { value: candidate.id, text: `${candidate.username} (${ROLE_LABELS[candidate.role] ?? candidate.role})` })),
  );
  select.addEventListener('change', () => switchUser(select.value));
  elements.userPanel.replaceChildren(
    h('div', { class: 'avatar-with-status' }, avatar(user, 32), h('span', { class: 'status-dot' })),
    h(
      'div',
      { class: 'user-panel-names' },
      h('label', { class: 'user-panel-caption', for: 'user-switcher', text: 'Acting as' }),
      h('div', { class: 'user-switcher-wrap' }, select, icon('chevron', 14)),
      h('div', { class: 'user-panel-role', text: user.description }),
    ),
  );
}

/** Who has the menu of their roles open in the member list, if anyone. */
let rolesOpenFor;

function memberRow(user, subtitle) {
  const name = h('span', { class: 'member-name', text: user.username });
  const colour = nameColour(user.id);
  if (colour) name.style.color = colour;
  const content = [
    h('div', { class: 'avatar-with-status' }, avatar(user, 32), h('span', { class: 'status-dot' })),
    h('div', { class: 'member-names' }, h('div', { class: 'member-line' }, name, user.bot ? h('span', { class: 'app-tag', text: 'APP' }) : null), h('div', { class: 'member-subtitle', text: subtitle })),
  ];
  const classes = `member${user.id === store.userId ? ' current' : ''}`;
  if (user.bot) return h('div', { class: classes, title: subtitle }, content);
  // A person's roles, given and taken here as a moderator would in the server's settings.
  const open = rolesOpenFor === user.id;
  return h(
    'div',
    { class: 'member-entry' },
    h(
      'button',
      {
        type: 'button',
        class: `${classes} member-button`,
        'data-testid': 'member',
        'data-user-id': user.id,
        'aria-expanded': open ? 'true' : 'false',
        title: `${subtitle}: click to give or take a role`,
        onclick: () => {
          rolesOpenFor = open ? undefined : user.id;
          renderMembers();
        },
      },
      content,
    ),
    open ? roleMenu(user) : null,
  );
}

function roleMenu(user) {
  return h(
    'div',
    { class: 'role-menu', 'data-testid': 'role-menu', role: 'group', 'aria-label': `Roles of ${user.username}` },
    h('div', { class: 'role-menu-title', text: 'Roles' }),
    store.state.roles.map((role) =>
      h(
        'label',
        { class: 'role-option' },
        h('input', {
          type: 'checkbox',
          'data-testid': 'role-toggle',
          'data-role-name': role.name,
          checked: user.roles?.includes(role.id),
          onchange: (event) => void toggleRole(user.id, role.id, event.target.checked),
        }),
        h('span', { class: 'role-dot' }),
        h('span', { text: role.name }),
      ),
    ),
    h('div', { class: 'role-menu-hint', text: 'As a moderator gives roles: the bot hears of it at once.' }),
  );
}

/** The line under a person's name: what they are, and their roles. */
function memberSubtitle(user) {
  const roles = (user.roles ?? []).map((id) => store.state.roles.find((role) => role.id === id)?.name).filter(Boolean);
  return roles.length > 0 ? `${user.description} · ${roles.map((name) => `@${name}`).join(' ')}` : user.description;
}

function renderMembers() {
  const { users, bot } = store.state;
  const groups = [
    ['Bot owner', users.filter((user) => user.role === 'owner')],
    ['Moderators', users.filter((user) => user.role === 'moderator')],
    ['Members', users.filter((user) => user.role === 'member')],
  ];
  elements.members.replaceChildren(
    ...groups
      .filter(([, list]) => list.length > 0)
      .flatMap(([title, list]) => [h('h3', { class: 'members-title', text: `${title} — ${list.length}` }), ...list.map((user) => memberRow(user, memberSubtitle(user)))]),
    h('h3', { class: 'members-title', text: 'Apps — 1' }),
    memberRow({ ...bot, bot: true }, 'makes songs, lyrics and videos'),
  );
}

/** Discord's start of the channel, with commands to try, so a newcomer knows what to type. */
function welcome() {
  const channel = currentChannel();
  const known = new Set(world().commands.map((command) => command.name));
  const examples = EXAMPLES.filter((example) => known.has(example.slice(1).split(' ')[0]));
  return {
    sig: `${channel.id}|${[...known].join()}`,
    build: () =>
      h(
        'div',
        { class: 'welcome', 'data-testid': 'welcome' },
        h('div', { class: 'welcome-icon' }, icon('hash', 44)),
        h('h1', { class: 'welcome-title', text: `Welcome to #${channel.name}!` }),
        h('p', {
          class: 'welcome-text',
          text: `This is the start of the #${channel.name} channel. Everything here runs on this machine: the bot itself, an emulated Discord and a simulated music service. No Discord account, no paid key.`,
        }),
        h('p', { class: 'welcome-text' }, 'Type ', h('code', { class: 'md-code', text: '/' }), ' in the message box below to see the bot’s commands, or try one (click to fill it in):'),
        h(
          'div',
          { class: 'welcome-examples' },
          examples.map((example) => h('button', { type: 'button', class: 'example', text: example, onclick: () => composer.setText(`${example} `) })),
        ),
      ),
  };
}

/** Discord's bar above the message box while the person reads older messages. */
function renderJumpBar() {
  const { scrollTop, scrollHeight, clientHeight } = elements.scroller;
  const away = scrollHeight - scrollTop - clientHeight;
  const show = !store.stickToBottom && (store.unseenBelow > 0 || away > clientHeight);
  elements.jumpBar.hidden = !show;
  if (!show) return;
  const count = store.unseenBelow;
  elements.jumpBarText.textContent = count > 0 ? `${count} new message${count === 1 ? '' : 's'} below` : 'You’re viewing older messages';
}

function jumpToPresent() {
  store.stickToBottom = true;
  store.unseenBelow = 0;
  scrollToBottom();
  renderJumpBar();
}

function renderMessages() {
  const visible = [...store.messages.values()]
    .filter((entry) => isVisible(entry.message))
    .sort((a, b) => (a.order < b.order ? -1 : a.order > b.order ? 1 : 0));
  const jsonOf = new Map(visible.map((entry) => [entry.message, entry.json]));
  renderMessageList(
    elements.list,
    visible.map((entry) => entry.message),
    welcome(),
    messageContext,
    (message) => `${store.epoch}|${jsonOf.get(message)}`,
  );
  if (store.stickToBottom) scrollToBottom();
}

// ------------------------------------------------------------------ scrolling

function scrollToBottom() {
  elements.scroller.scrollTop = elements.scroller.scrollHeight;
}

// Follow new messages only when the person was at the bottom, as Discord does.
elements.scroller.addEventListener('scroll', () => {
  const { scrollTop, scrollHeight, clientHeight } = elements.scroller;
  store.stickToBottom = scrollHeight - scrollTop - clientHeight < 48;
  if (store.stickToBottom) store.unseenBelow = 0;
  renderJumpBar();
});
elements.jumpBarButton.addEventListener('click', () => jumpToPresent());
elements.backdrop.addEventListener('click', () => elements.app.classList.remove('nav-open', 'members-open'));
// Escape closes what is open over the channel (a role menu, the drawer, the member list), as Discord's app does;
// a dialog or the composer's suggestions take it first.
document.addEventListener('keydown', (event) => {
  if (event.key !== 'Escape' || event.defaultPrevented || document.querySelector('[data-testid=modal], [data-testid=purchase-dialog]')) return;
  if (rolesOpenFor !== undefined) {
    rolesOpenFor = undefined;
    renderMembers();
  } else if (elements.app.classList.contains('nav-open') || elements.app.classList.contains('members-open')) {
    elements.app.classList.remove('nav-open', 'members-open');
  } else {
    return;
  }
  event.preventDefault();
});
// Images and players change heights after they load, and the composer grows with its hints:
// stay at the bottom through that.
const keepAtBottom = new ResizeObserver(() => store.stickToBottom && scrollToBottom());
keepAtBottom.observe(elements.list);
keepAtBottom.observe(elements.scroller);

// A page reloaded while in the voice channel may play only after a click.
document.addEventListener('click', () => {
  const audio = elements.voiceAudio;
  if (audio.getAttribute('src') && audio.paused) audio.play().then(() => showBanner(undefined), () => {});
});
setInterval(() => refreshRelativeTimes(elements.list), RELATIVE_REFRESH_MS);
connect();
