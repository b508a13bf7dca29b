/**
 * 6. Fuzzed interactions: generated interaction payloads through the emulator, across every
 * registered command and subcommand, its buttons, menus and forms: options of the wrong type,
 * missing and extra options, 6,000-character and control-character strings, right-to-left
 * text and zalgo, `@everyone`, role and user mentions in prompts, lyrics and titles, unknown
 * commands, unknown or stale custom ids, buttons from another guild, and forms with changed
 * fields. The bot does not crash, spends no credit on an invalid request, answers every
 * interaction, and no message it sends can ping anyone but the member who asked.
 *
 * What a member can send goes through the emulator's checked ways (`runCommand`,
 * `clickButton`, `submitModal`, `autocomplete` in spirit); what Discord itself would never
 * send (a wrong option type, an unknown option, a custom id on no component, a moderator's
 * command from a member) goes through its deliberately unchecked `dispatchUnchecked`.
 *
 * The payloads come from a seeded generator: `CHAOS_SEED=<seed> npm run chaos --
 * fuzzed-interactions` makes the same cases again (the ids of guilds, members and jobs are
 * the run's own). A failing case is reported with the seed and its number.
 */
import { randomInt } from 'node:crypto';
import {
  ApplicationCommandOptionType,
  ComponentType,
  InteractionResponseType,
  InteractionType,
  MessageFlags,
  type APIApplicationCommand,
  type APIApplicationCommandOption,
} from 'discord-api-types/v10';
import type { EmulatorMessage, InteractionHandle, RecordedRequest } from '@music-bot/discord-emulator';
import { sleep, waitFor, type Place } from '@music-bot/test-world';
import { auditFigures, type Scenario } from '../scenario.js';
import type { ChaosWorld } from '../world.js';

const PREFIX = 'chaos fuzzed-interactions';
const LOCALES = ['en-US', 'en-GB', 'es-ES', 'es-419', 'pt-BR', 'de', 'fr', 'ja', 'ar', 'he'] as const;

// ---- the seeded generator ----

/** mulberry32: small, fast, and the same sequence for the same seed on every machine. */
export function prng(seed: number): Random {
  let state = seed >>> 0;
  const next = () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4_294_967_296;
  };
  const int = (below: number) => Math.floor(next() * below);
  return {
    next,
    int,
    chance: (p) => next() < p,
    pick: <T>(items: readonly T[]) => items[int(items.length)]!,
  };
}

export interface Random {
  next(): number;
  int(below: number): number;
  chance(p: number): boolean;
  pick<T>(items: readonly T[]): T;
}

/** Case `n`'s own generator: cases run side by side, so each draws from its own sequence. */
function caseRandom(seed: number, n: number): Random {
  return prng((seed ^ Math.imul(n + 1, 0x9e3779b9)) >>> 0);
}

/** A job id no job has, from the generator (not `randomUUID`: the case must come out the same again). */
function unknownJobId(random: Random): string {
  const hex = (length: number) => Array.from({ length }, () => random.int(16).toString(16)).join('');
  return `${hex(8)}-${hex(4)}-4${hex(3)}-a${hex(3)}-${hex(12)}`;
}

/** Who may be named in a text: the guild's other members, its roles, its channels. */
interface Targets {
  readonly otherUserIds: readonly string[];
  readonly roleIds: readonly string[];
  readonly channelIds: readonly string[];
}

const ZALGO_MARKS = Array.from({ length: 0x36f - 0x300 + 1 }, (_, i) => String.fromCodePoint(0x300 + i));

/** A piece of hostile text: mentions, right-to-left text, zalgo, control characters, markdown. */
function hostilePiece(random: Random, targets: Targets): string {
  switch (random.int(12)) {
    case 0:
      return random.pick(['@everyone', '@here', '@ everyone', '＠everyone']);
    case 1:
      return `<@${random.pick(targets.otherUserIds)}>`;
    case 2:
      return `<@!${random.pick(targets.otherUserIds)}>`;
    case 3:
      return `<@&${random.pick(targets.roleIds)}>`;
    case 4:
      return random.pick(['\u202eevil\u202c', 'مرحبا بالعالم', 'שלום עולם', '\u200f\u061c', '\u2067isolate\u2069']);
    case 5: {
      const base = random.pick(['zalgo', 'song', 'h̷e̷l̷p̷']);
      return [...base].map((char) => char + Array.from({ length: 1 + random.int(20) }, () => random.pick(ZALGO_MARKS)).join('')).join('');
    }
    case 6:
      return Array.from({ length: 1 + random.int(6) }, () => String.fromCharCode(random.pick([0, 1, 7, 8, 9, 10, 13, 27, 31, 127]))).join('');
    case 7:
      return random.pick(['\u200b', '\ufeff', '\u2028', '\u00ad', '\u180e']);
    case 8:
      return random.pick(['**bold**', '`code`', '```js\nx\n```', '[link](https://example.invalid)', '||spoiler||', '# title', '> quote', '-# small']);
    case 9:
      return `<#${random.pick(targets.channelIds)}> </song:1> <t:0:R>`;
    case 10:
      return random.pick(['🎵🎶', '👨‍👩‍👧‍👦', '🏳️‍🌈', '\u{1f600}'.repeat(10)]);
    default:
      return random.pick(['rainy night lofi', 'sea shanty', 'polka', 'x', 'ok']);
  }
}

/** A text of hostile pieces, at most `max` code points (never empty). */
function hostileText(random: Random, targets: Targets, max: number): string {
  const pieces = Array.from({ length: 1 + random.int(5) }, () => hostilePiece(random, targets));
  return [...pieces.join(' ')].slice(0, Math.max(1, max)).join('') || 'x';
}

/** 6,000 characters (Discord's most for a string option), or as many control characters. */
function hugeText(random: Random, targets: Targets): string {
  const unit = random.chance(0.5) ? hostilePiece(random, targets) : 'a';
  return [...unit.repeat(Math.ceil(6_000 / Math.max(1, [...unit].length)))].slice(0, 6_000).join('');
}

// ---- cases ----

interface Guild {
  readonly id: string;
  readonly channelId: string;
  readonly userIds: readonly string[];
  readonly roleId: string;
  /** The seed jobs' buttons and menus, on the bot's messages in this guild. */
  readonly components: Array<{ messageId: string; customId: string; type: ComponentType; values: string[] }>;
  readonly messageIds: string[];
  readonly songJobId: string | undefined;
  readonly lyricsJob: { id: string; userId: string } | undefined;
}

interface Case {
  readonly n: number;
  /** What was sent, for the report. */
  readonly what: string;
  /** The bot must refuse it: nothing may be spent on it. */
  readonly invalid: boolean;
  readonly userId: string;
  handles: InteractionHandle[];
}

type Sent = { handle: InteractionHandle; what: string; invalid: boolean };

interface Fuzzer {
  readonly seed: number;
  readonly random: Random;
  readonly world: ChaosWorld;
  readonly guilds: readonly Guild[];
  readonly commands: readonly APIApplicationCommand[];
}

const isSubcommand = (option: APIApplicationCommandOption) =>
  option.type === ApplicationCommandOptionType.Subcommand || option.type === ApplicationCommandOptionType.SubcommandGroup;

/** A value Discord would send for the option (in its type, its length, its range, its choices). */
function validValue(fuzz: Fuzzer, guild: Guild, targets: Targets, option: APIApplicationCommandOption): unknown {
  const { random } = fuzz;
  if ('choices' in option && option.choices && option.choices.length > 0) return random.pick<{ value: string | number }>(option.choices).value;
  switch (option.type) {
    case ApplicationCommandOptionType.String: {
      const max = 'max_length' in option && option.max_length !== undefined ? option.max_length : 6_000;
      return random.chance(0.1) ? hugeText(random, targets).slice(0, max) : hostileText(random, targets, max);
    }
    case ApplicationCommandOptionType.Integer:
    case ApplicationCommandOptionType.Number: {
      const min = 'min_value' in option && option.min_value !== undefined ? option.min_value : -1_000;
      const max = 'max_value' in option && option.max_value !== undefined ? option.max_value : 1_000_000;
      return random.pick([min, max, min + random.int(Math.max(1, Math.min(max - min, 1_000)))]);
    }
    case ApplicationCommandOptionType.Boolean:
      return random.chance(0.5);
    case ApplicationCommandOptionType.User:
    case ApplicationCommandOptionType.Mentionable:
      return random.pick(guild.userIds);
    case ApplicationCommandOptionType.Role:
      return random.pick([guild.roleId, guild.id]);
    case ApplicationCommandOptionType.Channel:
      return guild.channelId;
    default:
      return undefined;
  }
}

/** A value of another type than the option's. */
function wrongValue(random: Random, option: APIApplicationCommandOption): { type: ApplicationCommandOptionType; value: unknown } {
  // Another type than the option's: a string '12' for a string option would be a valid value, not a wrong one.
  const otherTypes: Array<{ type: ApplicationCommandOptionType; value: unknown }> = [
    { type: ApplicationCommandOptionType.String, value: random.pick(['true', '12', 'not a number', '']) },
    { type: ApplicationCommandOptionType.Integer, value: random.pick([0, -1, 2 ** 53, 42]) },
    { type: ApplicationCommandOptionType.Number, value: random.pick([0.5, -1e308, 3.14]) },
    { type: ApplicationCommandOptionType.Boolean, value: random.chance(0.5) },
    { type: ApplicationCommandOptionType.User, value: '1' },
    { type: ApplicationCommandOptionType.Attachment, value: '999' },
  ].filter((candidate) => candidate.type !== option.type);
  // The declared type is right, the value is not: what a broken client would send.
  const fits: Partial<Record<ApplicationCommandOptionType, (value: unknown) => boolean>> = {
    [ApplicationCommandOptionType.String]: (value) => typeof value === 'string',
    [ApplicationCommandOptionType.Integer]: (value) => typeof value === 'number',
    [ApplicationCommandOptionType.Number]: (value) => typeof value === 'number',
    [ApplicationCommandOptionType.Boolean]: (value) => typeof value === 'boolean',
  };
  const broken = [null, 7, false, 'text', ['a'], { a: 1 }].filter((value) => !(fits[option.type]?.(value) ?? false));
  const brokenValue = { type: option.type, value: random.pick(broken) };
  return random.pick([...otherTypes, brokenValue]);
}

const SPENDING = new Set(['song', 'lyrics']);

function targetsOf(guild: Guild, userId: string): Targets {
  return { otherUserIds: guild.userIds.filter((id) => id !== userId), roleIds: [guild.roleId, guild.id], channelIds: [guild.channelId] };
}

/** A prompt of a spending request: the audit matches jobs to the service's tasks by it, so it is the case's own. */
function spendingPrompt(fuzz: Fuzzer, n: number, targets: Targets): string {
  return `${PREFIX} ${n} ${hostileText(fuzz.random, targets, 900)}`;
}

/** One generated case: sends its interactions and says what they were. */
async function runCase(shared: Omit<Fuzzer, 'random'>, n: number): Promise<Case> {
  const fuzz: Fuzzer = { ...shared, random: caseRandom(shared.seed, n) };
  const { random, world, guilds } = fuzz;
  const guild = random.pick(guilds);
  const userId = random.pick(guild.userIds);
  const targets = targetsOf(guild, userId);
  const locale = random.pick(LOCALES);
  const place = { guildId: guild.id, channelId: guild.channelId, userId };
  const sent: Sent[] = [];
  const send = (what: string, invalid: boolean, act: () => InteractionHandle) => {
    sent.push({ handle: act(), what, invalid });
    return sent.at(-1)!.handle;
  };
  const kind = random.int(100);

  if (kind < 40) {
    // A registered command, as a member sends it or broken on purpose.
    const command = random.pick(fuzz.commands);
    let scope = command.options ?? [];
    const path: string[] = [];
    while (scope.some(isSubcommand)) {
      const sub = random.pick(scope.filter(isSubcommand));
      path.push(sub.name);
      scope = ('options' in sub ? sub.options : undefined) ?? [];
    }
    const [first, second] = path;
    const subcommandGroup = path.length === 2 ? first : undefined;
    const subcommand = path.length === 2 ? second : first;
    const moderatorOnly = command.default_member_permissions !== null && command.default_member_permissions !== undefined && command.default_member_permissions !== '0';
    const options: Array<{ name: string; type: ApplicationCommandOptionType; value: unknown }> = [];
    const attachments: Record<string, { filename: string; data: Buffer }> = {};
    const breakage: string[] = [];
    let invalid = moderatorOnly;
    for (const option of scope) {
      const required = 'required' in option && option.required === true;
      if (!required && random.chance(0.5)) continue;
      if (option.type === ApplicationCommandOptionType.Attachment) {
        attachments[option.name] = { filename: random.pick(['song.mp3', 'voice.wav', 'x.exe', `${hostileText(random, targets, 40)}.mp3`]), data: Buffer.from(hostileText(random, targets, 200)) };
        continue;
      }
      let value = validValue(fuzz, guild, targets, option);
      if (SPENDING.has(command.name) && option.name === 'prompt') value = spendingPrompt(fuzz, n, targets);
      options.push({ name: option.name, type: option.type, value });
    }
    const mode = random.int(10);
    if (mode === 0 && options.length > 0) {
      const at = random.int(options.length);
      const option = scope.find((candidate) => candidate.name === options[at]!.name)!;
      options[at] = { name: option.name, ...wrongValue(random, option) };
      breakage.push(`${option.name} of the wrong type`);
      invalid = true;
    } else if (mode === 1 && scope.some((option) => 'required' in option && option.required === true)) {
      const required = scope.filter((option) => 'required' in option && option.required === true).map((option) => option.name);
      const dropped = random.pick(required);
      const at = options.findIndex((option) => option.name === dropped);
      if (at >= 0) options.splice(at, 1);
      delete attachments[dropped];
      breakage.push(`without ${dropped}`);
      invalid = true;
    } else if (mode === 2) {
      options.push({ name: random.pick(['tempo', 'prompt2', 'voice', 'x'.repeat(32), 'ä']), type: ApplicationCommandOptionType.String, value: hostileText(random, targets, 100) });
      breakage.push('with an extra option');
      invalid = true;
    } else if (mode === 3) {
      const strings = scope.filter((option) => option.type === ApplicationCommandOptionType.String && !('choices' in option && option.choices));
      if (strings.length > 0) {
        const option = random.pick(strings);
        const value = hugeText(random, targets);
        const at = options.findIndex((candidate) => candidate.name === option.name);
        if (at >= 0) options[at] = { ...options[at]!, value };
        else options.push({ name: option.name, type: option.type, value });
        breakage.push(`${option.name} of 6,000 characters`);
        // Within Discord's own length (none set) a member can send it; the bot's own limits are lower.
        invalid = invalid || 'max_length' in option || SPENDING.has(command.name);
      }
    }
    const label = `/${[command.name, ...path].join(' ')} ${breakage.join(', ')}`.trim();
    const discordWouldSend = !moderatorOnly && (breakage.length === 0 || breakage.every((what) => what.endsWith('of 6,000 characters'))) && options.every((option) => {
      const definition = scope.find((candidate) => candidate.name === option.name);
      return !definition || !('max_length' in definition) || definition.max_length === undefined || [...String(option.value)].length <= definition.max_length;
    });
    // An empty or blank text is refused as a member would be; nothing else about a valid request is.
    const blank = options.some((option) => typeof option.value === 'string' && option.value.trim() === '');
    invalid = invalid || blank;
    if (discordWouldSend) {
      send(label, invalid, () =>
        world.emulator.runCommand({
          ...place,
          locale,
          name: command.name,
          ...(subcommandGroup ? { subcommandGroup } : {}),
          ...(subcommand ? { subcommand } : {}),
          options: Object.fromEntries(options.map((option) => [option.name, option.value as string | number | boolean])),
          attachments,
        }),
      );
    } else {
      // Discord would not send it (a wrong type, a missing option, a moderator's command from a member): the unchecked way.
      let leaf: unknown[] = options.map((option) => ({ name: option.name, type: option.type, value: option.value }));
      if (subcommand) leaf = [{ type: ApplicationCommandOptionType.Subcommand, name: subcommand, options: leaf }];
      if (subcommandGroup) leaf = [{ type: ApplicationCommandOptionType.SubcommandGroup, name: subcommandGroup, options: leaf }];
      send(`${label}${moderatorOnly ? ' by a member' : ''} (unchecked)`, invalid, () =>
        world.emulator.dispatchUnchecked({
          ...place,
          locale,
          type: InteractionType.ApplicationCommand,
          data: { id: command.id, name: command.name, type: 1, options: leaf },
        }),
      );
    }
  } else if (kind < 46) {
    // A command Discord no longer lists (a stale client) or never did, and a subcommand that is not there.
    const name = random.pick(['play', 'song2', 'admin', 'credits-admin', 'jobs', 'x'.repeat(32), 'ping']);
    const data = random.chance(0.5)
      ? { id: '1', name, type: 1, options: [{ type: 1, name: random.pick(['grant', 'nuke', 'list']), options: [] }] }
      : { id: '1', name, type: 1 };
    send(`unknown command /${name}`, true, () => world.emulator.dispatchUnchecked({ ...place, locale, type: InteractionType.ApplicationCommand, data }));
  } else if (kind < 56) {
    // Autocomplete with hostile text typed.
    const withAutocomplete = fuzz.commands.flatMap((command) =>
      flatten(command.options ?? []).filter(({ option }) => 'autocomplete' in option && option.autocomplete === true).map(({ option, path }) => ({ command, option, path })),
    );
    const { command, option, path } = random.pick(withAutocomplete);
    const value = random.chance(0.2) ? hugeText(random, targets) : hostileText(random, targets, 100);
    let leaf: unknown[] = [{ type: option.type, name: option.name, value, focused: true }];
    if (path[0]) leaf = [{ type: ApplicationCommandOptionType.Subcommand, name: path[0], options: leaf }];
    send(`autocomplete /${[command.name, ...path, option.name].join(' ')}`, true, () =>
      world.emulator.dispatchUnchecked({ ...place, locale, type: InteractionType.ApplicationCommandAutocomplete, data: { id: command.id, name: command.name, type: 1, options: leaf } }),
    );
  } else if (kind < 72) {
    // A button or menu of the seed results, as a member clicks it.
    const component = guild.components.length > 0 ? random.pick(guild.components) : undefined;
    if (!component) return { n, what: 'nothing to click', invalid: false, userId, handles: [] };
    if (component.type === ComponentType.StringSelect) {
      const values = component.values.length > 0 ? [random.pick(component.values)] : ['none'];
      send(`select ${component.customId.split(':')[0]}`, false, () =>
        world.emulator.selectOption({ messageId: component.messageId, customId: component.customId, userId, values, locale }),
      );
    } else {
      const handle = send(`click ${component.customId.split(':')[0]}`, false, () =>
        world.emulator.clickButton({ messageId: component.messageId, customId: component.customId, userId, locale }),
      );
      // A form opened: send it back as typed, or with its fields changed.
      const response = await handle.waitForResponse(5_000).catch(() => undefined);
      if (response?.type === InteractionResponseType.Modal) await submitForm(fuzz, n, guild, userId, handle, send);
    }
  } else if (kind < 90) {
    // A custom id on no component: unknown, stale, malformed, or a job of another guild.
    const other = guilds.filter((candidate) => candidate.id !== guild.id);
    const foreign = other.length > 0 ? random.pick(other) : undefined;
    const foreignIds = foreign?.components.map((component) => component.customId) ?? [];
    const unknownJob = unknownJobId(random);
    const customId = random.pick([
      ...(foreignIds.length > 0 ? [random.pick(foreignIds), random.pick(foreignIds), random.pick(foreignIds)] : []),
      ...(foreign?.songJobId ? [`remix:${foreign.songJobId}`, `video:${foreign.songJobId}`, `download:${foreign.songJobId}:mp3`, `show:${foreign.songJobId}`, `cancel:${foreign.songJobId}`] : []),
      ...(foreign?.lyricsJob ? [`make-song:${foreign.lyricsJob.id}`] : []),
      `video:${unknownJob}`,
      `download:${unknownJob}:flac`,
      `download:${guild.songJobId ?? unknownJob}:flac`,
      `show:${unknownJob}`,
      `cancel:${unknownJob}`,
      `remix:not-a-uuid`,
      `make-song:${unknownJob}`,
      `library-page:all:o${'A'.repeat(30)}:`,
      `library-page:<@${random.pick(targets.otherUserIds)}>:n:`,
      `history-page:all:abc`,
      `history-csv:all`,
      'song-video-123',
      'x'.repeat(100),
      `${hostileText(random, targets, 90)}`,
    ]);
    const messageId = random.pick(guild.messageIds);
    const select = random.chance(0.2);
    const foreignJob = Boolean(foreign && customId.includes(foreign.songJobId ?? '~') || (foreign?.lyricsJob && customId.includes(foreign.lyricsJob.id)));
    send(`${select ? 'select' : 'button'} with ${foreignJob ? "another guild's" : 'a stale'} custom id ${customId.slice(0, 40)} (unchecked)`, true, () =>
      world.emulator.dispatchUnchecked({
        ...place,
        locale,
        type: InteractionType.MessageComponent,
        messageId,
        data: select
          ? { custom_id: customId, component_type: ComponentType.StringSelect, values: [random.pick([unknownJob, guild.songJobId ?? unknownJob, foreign?.songJobId ?? unknownJob])] }
          : { custom_id: customId, component_type: ComponentType.Button },
      }),
    );
  } else {
    // A form submitted that the bot never opened for this member: stale, another guild's, fields changed.
    const other = guilds.filter((candidate) => candidate.id !== guild.id);
    const foreign = other.length > 0 ? random.pick(other) : undefined;
    const jobId = random.pick([guild.songJobId, foreign?.songJobId, unknownJobId(random)].filter((id): id is string => id !== undefined));
    const lyricsId = random.pick([guild.lyricsJob?.id, foreign?.lyricsJob?.id].filter((id): id is string => id !== undefined).concat([unknownJobId(random)]));
    const customId = random.pick([`remix-modal:${jobId}`, `make-song-modal:${lyricsId}`, `remix-modal:${jobId}:extra`, 'feedback-modal', 'remix-modal']);
    const fields = changedFields(fuzz, n, targets);
    // Any member may remix a song of the guild (an argument the bot did not write is ignored); lyrics become a song for their requester only.
    const own = (customId.startsWith('remix-modal:') && jobId === guild.songJobId) ||
      (customId.startsWith('make-song-modal:') && lyricsId === guild.lyricsJob?.id && userId === guild.lyricsJob.userId);
    send(`form ${customId.split(':')[0]} ${own ? '' : 'not ours '}with ${fields.what} (unchecked)`, !own || fields.invalid, () =>
      world.emulator.dispatchUnchecked({ ...place, locale, type: InteractionType.ModalSubmit, data: { custom_id: customId, components: fields.components } }),
    );
  }
  const invalid = sent.some((one) => one.invalid);
  return { n, what: sent.map((one) => one.what).join(' → '), invalid, userId, handles: sent.map((one) => one.handle) };
}

function flatten(options: readonly APIApplicationCommandOption[], path: string[] = []): Array<{ option: APIApplicationCommandOption; path: string[] }> {
  return options.flatMap((option) =>
    isSubcommand(option) ? flatten(('options' in option ? option.options : undefined) ?? [], [...path, option.name]) : [{ option, path }],
  );
}

/** The song form's fields (lyrics, style, title), as typed or changed: renamed, missing, extra, over-long, of the wrong shape. */
function changedFields(fuzz: Fuzzer, n: number, targets: Targets): { components: unknown[]; what: string; invalid: boolean } {
  const { random } = fuzz;
  const row = (customId: string, value: unknown) => ({ type: ComponentType.ActionRow, components: [{ type: ComponentType.TextInput, custom_id: customId, value }] });
  const typed = { lyrics: hostileText(random, targets, 3_000), style: spendingPrompt(fuzz, n, targets), title: hostileText(random, targets, 80) };
  switch (random.int(7)) {
    case 0:
      return { components: [row('lyrics', typed.lyrics), row('style', typed.style), row('title', typed.title)], what: 'its fields as typed', invalid: false };
    case 1:
      return { components: [row('prompt', typed.style), row('name', typed.title)], what: 'renamed fields', invalid: true };
    case 2:
      return { components: [], what: 'no fields', invalid: true };
    case 3:
      return { components: [row('style', typed.style), row('title', typed.title), row('extra', hostileText(random, targets, 100))], what: 'an extra field', invalid: false };
    case 4:
      return { components: [row('lyrics', hugeText(random, targets)), row('style', typed.style)], what: '6,000-character lyrics', invalid: true };
    case 5:
      return { components: [row('style', random.pick([42, null, true]))], what: 'a field of the wrong type', invalid: true };
    default:
      return {
        components: [{ type: ComponentType.Label, component: { type: ComponentType.TextInput, custom_id: 'style', value: typed.style } }, row('title', '   ')],
        what: 'a label layout and a blank title',
        invalid: false,
      };
  }
}

/** Answers a form the bot opened: as typed (through the checked way), or with its fields changed (unchecked). */
async function submitForm(fuzz: Fuzzer, n: number, guild: Guild, userId: string, opened: InteractionHandle, send: (what: string, invalid: boolean, act: () => InteractionHandle) => InteractionHandle): Promise<void> {
  const { random, world } = fuzz;
  const modal = opened.modal();
  if (!modal) return;
  const targets = targetsOf(guild, userId);
  if (random.chance(0.5)) {
    const fields: Record<string, string> = {};
    for (const id of ['lyrics', 'style', 'title']) if (JSON.stringify(modal.components).includes(`"custom_id":"${id}"`)) fields[id] = '';
    if ('style' in fields) fields['style'] = spendingPrompt(fuzz, n, targets);
    if ('lyrics' in fields && random.chance(0.5)) fields['lyrics'] = hostileText(random, targets, 3_000);
    if ('title' in fields && random.chance(0.5)) fields['title'] = hostileText(random, targets, 80);
    send(`submit ${modal.custom_id.split(':')[0]} as typed`, false, () => world.emulator.submitModal({ interaction: opened, fields }));
    return;
  }
  const fields = changedFields(fuzz, n, targets);
  send(`submit ${modal.custom_id.split(':')[0]} with ${fields.what} (unchecked)`, fields.invalid, () =>
    world.emulator.dispatchUnchecked({ guildId: guild.id, channelId: guild.channelId, userId, type: InteractionType.ModalSubmit, data: { custom_id: modal.custom_id, components: fields.components } }),
  );
}

// ---- what the bot sent: who it could ping ----

/** Who a message the bot sent can ping, by Discord's rules: content mentions ping unless `allowed_mentions` keeps them from it; embeds never ping. */
export function pingsOf(message: unknown): { everyone: boolean; users: string[]; roles: string[] } {
  const none = { everyone: false, users: [], roles: [] };
  if (typeof message !== 'object' || message === null) return none;
  const body = message as { content?: unknown; components?: unknown; allowed_mentions?: { parse?: string[]; users?: string[]; roles?: string[] }; flags?: number };
  const texts: string[] = [];
  if (typeof body.content === 'string') texts.push(body.content);
  // Text displays (components v2) are parsed for mentions as content is.
  const walk = (value: unknown): void => {
    if (Array.isArray(value)) value.forEach(walk);
    else if (typeof value === 'object' && value !== null) {
      const component = value as { type?: unknown; content?: unknown };
      if (component.type === ComponentType.TextDisplay && typeof component.content === 'string') texts.push(component.content);
      for (const [key, child] of Object.entries(value)) if (key !== 'content') walk(child);
    }
  };
  walk(body.components);
  const text = texts.join('\n');
  if (text === '') return none;
  const allowed = body.allowed_mentions;
  const parse = new Set(allowed === undefined ? ['users', 'roles', 'everyone'] : (allowed.parse ?? []));
  const users = [...text.matchAll(/<@!?(\d+)>/g)].map((match) => match[1]!).filter((id) => parse.has('users') || (allowed?.users ?? []).includes(id));
  const roles = [...text.matchAll(/<@&(\d+)>/g)].map((match) => match[1]!).filter((id) => parse.has('roles') || (allowed?.roles ?? []).includes(id));
  return { everyone: parse.has('everyone') && /@(everyone|here)/.test(text), users: [...new Set(users)], roles: [...new Set(roles)] };
}

/** The message part of a request the bot sent to Discord, if it writes one. */
function messageOf(request: RecordedRequest): unknown {
  const body = request.body as { type?: number; data?: unknown } | null;
  if (request.path.startsWith('/interactions/')) {
    return body && (body.type === InteractionResponseType.ChannelMessageWithSource || body.type === InteractionResponseType.UpdateMessage) ? body.data : undefined;
  }
  if (/^\/webhooks\/\d+\/[^/]+(\/messages\/[^/]+)?$/.test(request.path) || /^\/channels\/\d+\/messages(\/\d+)?$/.test(request.path)) {
    return request.method === 'POST' || request.method === 'PATCH' ? body : undefined;
  }
  return undefined;
}

const JOB_ID = /[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}/g;

// ---- the scenario ----

export const fuzzedInteractions: Scenario = {
  name: 'fuzzed-interactions',
  title: 'generated interactions: wrong types, missing and extra options, hostile text, stale ids, other guilds',
  async run(world, { quick }) {
    const seed = process.env.CHAOS_SEED === undefined ? randomInt(2 ** 31) : Number(process.env.CHAOS_SEED);
    const count = quick ? 60 : 1_000;
    const crashesBefore = world.crashes().length;
    const logsBefore = world.logLines().length;
    const seqBefore = world.emulator.requests.at(-1)?.seq ?? 0;
    const { rows: ledgerStart } = await world.db.query<{ last: string | null }>('select max(id)::text as last from credit_ledger');
    const ledgerBefore = ledgerStart[0]?.last ?? '0';

    // The guilds, a role in each to mention, and a song and lyrics in each whose buttons the members will click.
    const byGuild = new Map<string, Place[]>();
    for (const place of world.places) byGuild.set(place.guildId, [...(byGuild.get(place.guildId) ?? []), place]);
    const seeds = [...byGuild.values()].flatMap((places, g) => [
      { place: places[0]!, name: 'song', prompt: `${PREFIX} seed song ${g} <@${places[1]!.userId}> @everyone` },
      { place: places[1]!, name: 'lyrics', prompt: `${PREFIX} seed lyrics ${g} <@&${places[0]!.guildId}>` },
    ]);
    for (const { place, name, prompt } of seeds) world.emulator.runCommand({ ...place, name, options: { prompt } });
    await waitFor(
      'the seed jobs to be delivered',
      async () => {
        const { rows } = await world.db.query<{ done: number }>(
          `select count(*)::int as done from jobs where starts_with(request->>'prompt', $1) and delivery_state <> 'pending'`,
          [`${PREFIX} seed `],
        );
        return rows[0]!.done >= seeds.length;
      },
      { timeoutMs: 60_000, everyMs: 250 },
    ).catch(() => {});
    const { rows: seedJobs } = await world.db.query<{ id: string; guild_id: string; user_id: string; kind: string; state: string }>(
      `select id, guild_id, user_id, kind, state from jobs where starts_with(request->>'prompt', $1)`,
      [`${PREFIX} seed `],
    );
    const guilds: Guild[] = [...byGuild.entries()].map(([guildId, places]) => {
      const channelId = places[0]!.channelId;
      const role = world.emulator.createRole(guildId, { name: `Chaos fans ${guildId.slice(-4)}` });
      const messages = world.emulator.channelMessages(channelId, { includeEphemeral: true }).filter((message) => message.author.id === world.emulator.botUser.id);
      const components: Guild['components'] = [];
      for (const message of messages) collectComponents(message, components);
      const song = seedJobs.find((job) => job.guild_id === guildId && job.kind === 'song' && job.state === 'succeeded');
      const lyrics = seedJobs.find((job) => job.guild_id === guildId && job.kind === 'lyrics' && job.state === 'succeeded');
      return {
        id: guildId,
        channelId,
        userIds: places.map((place) => place.userId),
        roleId: role.id,
        components,
        messageIds: messages.filter((message) => !message.ephemeral).map((message) => message.id),
        songJobId: song?.id,
        lyricsJob: lyrics && { id: lyrics.id, userId: lyrics.user_id },
      };
    });
    const usable = guilds.filter((guild) => guild.messageIds.length > 0);
    if (usable.length === 0) throw new Error('no seed result reached any guild: nothing to click');

    // The cases, at a steady rate; each one's interactions are followed to their answers.
    const fuzz = { seed, world, guilds: usable, commands: world.emulator.registeredCommands() };
    const cases: Case[] = [];
    const notSent: string[] = [];
    const perSecond = 20;
    const started = performance.now();
    const running: Array<Promise<void>> = [];
    for (let n = 0; n < count; n += 1) {
      const wait = started + (n * 1000) / perSecond - performance.now();
      if (wait > 0) await sleep(wait);
      running.push(
        runCase(fuzz, n).then(
          (one) => void cases.push(one),
          (error: unknown) => void notSent.push(`case ${n}: ${(error as Error).message}`),
        ),
      );
    }
    await Promise.all(running);
    cases.sort((a, b) => a.n - b.n);
    const handles = cases.flatMap((one) => one.handles.map((handle) => ({ one, handle })));
    const responses = await Promise.all(handles.map(({ handle }) => handle.waitForResponse(10_000).then((response) => response, () => undefined)));

    const audit = await world.settleAndAudit({ prefix: PREFIX, timeoutMs: quick ? 60_000 : 180_000 });
    await sleep(1_000);
    const details: string[] = [];
    const where = (one: Case) => `case ${one.n} (seed ${seed}): ${one.what}`;

    // Every interaction answered: a first answer, and a deferral that was followed by something.
    let unanswered = 0;
    handles.forEach(({ one, handle }, i) => {
      const response = responses[i];
      const original = handle.original();
      const stillThinking = response?.type === InteractionResponseType.DeferredChannelMessageWithSource && original !== undefined && ((original.flags ?? 0) & MessageFlags.Loading) !== 0;
      const silentUpdate = response?.type === InteractionResponseType.DeferredMessageUpdate && handle.followUps.length === 0 && !world.emulator.requests.some((request) => request.seq > seqBefore && request.method === 'PATCH' && request.path.includes(handle.token));
      if (response === undefined || stillThinking || silentUpdate) {
        unanswered += 1;
        details.push(`unanswered: ${where(one)}: ${response === undefined ? 'no answer' : stillThinking ? 'deferred and never followed' : 'a deferred update with nothing after it'}`);
      }
    });

    // No credit moved for a request the bot had to refuse, or did refuse.
    const tokens = new Map(handles.map(({ one, handle }) => [handle.token, one]));
    const interactionIds = new Map(handles.map(({ one, handle }) => [handle.id, one]));
    const { rows: moved } = await world.db.query<{ id: string; key: string; kind: string; amount: number; job_id: string | null; token: string | null }>(
      `select l.id::text, l.key, l.kind, l.amount, l.job_id, j.interaction_token as token
         from credit_ledger l left join jobs j on j.id = l.job_id where l.id > $1::bigint order by l.id`,
      [ledgerBefore],
    );
    const spenders = new Set<Case>();
    let spentOnInvalid = 0;
    for (const row of moved) {
      const one = (row.token ? tokens.get(row.token) : undefined) ?? [...interactionIds.entries()].find(([id]) => row.key.includes(id))?.[1];
      if (!one) {
        if (row.job_id === null && row.key.startsWith('manual:')) {
          spentOnInvalid += 1;
          details.push(`spent on invalid: a manual movement of ${row.amount} (${row.kind}) no request of ours accounts for`);
        }
        continue;
      }
      const refused = one.handles.every((handle) => handle.response?.ephemeral === true && handle.followUps.every((message) => message.ephemeral));
      if (one.invalid || refused) {
        spentOnInvalid += 1;
        details.push(`spent on invalid: ${where(one)}: ${row.kind} ${row.amount}`);
      } else {
        spenders.add(one);
      }
    }

    // No message the bot sent can ping anyone but the member who asked.
    const { rows: jobUsers } = await world.db.query<{ id: string; user_id: string }>('select id, user_id from jobs');
    const userOfJob = new Map(jobUsers.map((row) => [row.id, row.user_id]));
    let foreignPings = 0;
    let messagesChecked = 0;
    for (const request of world.emulator.requests) {
      if (request.seq <= seqBefore || request.status >= 400) continue;
      const message = messageOf(request);
      if (message === undefined) continue;
      messagesChecked += 1;
      const pings = pingsOf(message);
      const one = (() => {
        const [, first, second] = request.path.split('/');
        return first === 'interactions' ? interactionIds.get(second ?? '') : first === 'webhooks' ? tokens.get(request.path.split('/')[3] ?? '') : undefined;
      })();
      const jobUser = [...JSON.stringify(message).matchAll(JOB_ID)].map((match) => userOfJob.get(match[0])).find((id) => id !== undefined);
      const requester = one?.userId ?? jobUser;
      const foreign = [...(pings.everyone ? ['@everyone/@here'] : []), ...pings.roles.map((id) => `role ${id}`), ...pings.users.filter((id) => id !== requester).map((id) => `user ${id}`)];
      if (foreign.length > 0) {
        foreignPings += 1;
        details.push(`foreign ping: ${request.method} ${request.route ?? request.path} ${one ? `for ${where(one)}` : ''} pings ${foreign.join(', ')}: ${JSON.stringify(message).slice(0, 300)}`);
      }
    }

    // Reported beside the figures: a request that ended in "something went wrong" rather than a refusal.
    const failures = world.logLines().slice(logsBefore).filter((line) => line.includes('"msg":"interaction failed"'));
    for (const line of failures.slice(0, 10)) {
      const entry = JSON.parse(line.slice(line.indexOf('{'))) as { interactionId?: string; err?: { message?: string } };
      const one = interactionIds.get(entry.interactionId ?? '');
      details.push(`failed (answered "something went wrong"): ${one ? where(one) : entry.interactionId}: ${entry.err?.message?.slice(0, 200)}`);
    }
    const { rows: open } = await world.db.query<{ id: string; kind: string; state: string; prompt: string | null }>(
      `select id, kind, state, left(request->>'prompt', 80) as prompt from jobs
        where starts_with(coalesce(request->>'prompt', ''), $1) and (state not in ('succeeded', 'failed', 'cancelled') or delivery_state = 'pending')`,
      [PREFIX],
    );
    for (const job of open) {
      const tasks = world.sim.listTasks().filter((task) => Object.values(task.body).some((value) => typeof value === 'string' && job.prompt !== null && value.startsWith(job.prompt)));
      details.push(`open job ${job.id}: ${job.kind} ${job.state}, the service's tasks: ${tasks.map((task) => task.state).join(', ') || 'none'}; prompt ${JSON.stringify(job.prompt)}`);
    }
    const figures = auditFigures(audit, world, crashesBefore);
    const invalidCases = cases.filter((one) => one.invalid).length;
    return {
      zero: { ...figures.zero, unanswered, spentOnInvalid, foreignPings },
      info: {
        ...figures.info,
        seed,
        cases: cases.length,
        interactions: handles.length,
        invalid: invalidCases,
        spending: spenders.size,
        messagesChecked,
        failed: failures.length,
        ...(notSent.length > 0 ? { notSent: notSent.length } : {}),
      },
      details: [...figures.details, ...details, ...notSent.map((line) => `not sent: ${line}`)],
    };
  },
};

function collectComponents(message: EmulatorMessage, into: Guild['components']): void {
  const walk = (value: unknown): void => {
    if (Array.isArray(value)) return value.forEach(walk);
    if (typeof value !== 'object' || value === null) return;
    const component = value as { type?: number; custom_id?: string; options?: Array<{ value: string }>; disabled?: boolean; components?: unknown; accessory?: unknown };
    if (typeof component.custom_id === 'string' && component.disabled !== true && (component.type === ComponentType.Button || component.type === ComponentType.StringSelect)) {
      into.push({ messageId: message.id, customId: component.custom_id, type: component.type, values: (component.options ?? []).map((option) => option.value) });
    }
    walk(component.components);
    walk(component.accessory);
  };
  walk(message.components);
}
