/**
 * The playground's web page and its small API: the page acts as a person in the emulated
 * Discord through the emulator's scripting API and hears the bot's messages over server-sent
 * events. Having no login, it answers only loopback or IP hosts, refuses cross-origin POSTs, sets a CSP.
 */
import { readFile } from 'node:fs/promises';
import { createServer, request as httpRequest, type IncomingMessage, type ServerResponse } from 'node:http';
import { isIP, type AddressInfo } from 'node:net';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { InteractionType, type APIApplicationCommandInteractionDataOption } from 'discord-api-types/v10';
import { z } from 'zod';
import type { Logger } from '../../../src/logger.js';
import type { DiscordEmulator, EmulatorMessage, InteractionHandle } from '@music-bot/discord-emulator';
import type { MusicApiSim } from '@music-bot/music-api-sim';
import type { MessageOrigin } from './history.js';
import { streamVoice } from './voice-stream.js';
import type { PlaygroundWorld } from './world.js';

const PUBLIC_DIR = fileURLToPath(new URL('./public/', import.meta.url));
const CONTENT_TYPES: Record<string, string> = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.svg': 'image/svg+xml',
  '.png': 'image/png',
};
/** Attachments arrive base64-encoded in JSON; Discord's own upload limit is 10 MiB. */
const MAX_BODY_BYTES = 32 * 1024 * 1024;
/** Discord gives a bot 3 s for its first answer; the emulator enforces it, the page waits a little longer. */
const ANSWER_WAIT_MS = 3_500;

/** Where the page listens unless told otherwise: this machine only. */
export const DEFAULT_HOST = '127.0.0.1';

/**
 * The page runs its own scripts and styles only, nothing inline. Images and media may come
 * from any http(s) address (an embed may show a picture from anywhere).
 */
const SECURITY_HEADERS: Readonly<Record<string, string>> = {
  'content-security-policy':
    "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data: http: https:; media-src 'self' http: https:; connect-src 'self'; " +
    "object-src 'none'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'",
  'x-content-type-options': 'nosniff',
  'referrer-policy': 'no-referrer',
};

/** 127.0.0.0/8, ::1 and localhost: only this machine reaches an address like these. */
export function isLoopback(host: string): boolean {
  const bare = host.replace(/^\[(.*)\]$/, '$1');
  return bare === 'localhost' || bare === '::1' || /^127(\.\d{1,3}){3}$/.test(bare);
}

const WILDCARDS = new Set(['0.0.0.0', '::', '[::]']);

/** `Host` as a browser that typed an address sends it; a domain name means some site's page (DNS rebinding). */
function addressedByAddress(hostHeader: string | undefined): boolean {
  if (!hostHeader) return false;
  const name = hostHeader.replace(/:\d+$/, '').replace(/^\[(.*)\]$/, '$1');
  return name === 'localhost' || isIP(name) !== 0;
}

export interface WebServer {
  /** e.g. `http://127.0.0.1:3000` */
  readonly origin: string;
  /** Serves `prefix/*` from `target` (GET and HEAD, ranges passed on): the simulator's media, the emulator's attachments. */
  proxyMedia(prefix: string, target: string): void;
  /** Connects the page to the running world; until then the API answers 503. */
  attach(parts: PageParts): void;
  close(): Promise<void>;
}

export interface PageParts {
  readonly emulator: DiscordEmulator;
  /** The simulated music service: the page holds and releases its tasks. */
  readonly sim: Pick<MusicApiSim, 'holdTasks' | 'tasksHeld'>;
  readonly world: PlaygroundWorld;
  readonly taskMs: number;
  /** The slash command behind each interaction the page started, by interaction id. */
  readonly origins: Map<string, MessageOrigin>;
  /** The bot's moderators' dashboard, e.g. `http://127.0.0.1:41234/dashboard`; without it the page shows no Dashboard link. */
  readonly dashboardUrl?: string;
}

/** What the page gets for each message: Discord's shape, without the bytes, with who may see it. */
interface PageMessage extends Omit<EmulatorMessage, 'attachments'> {
  attachments: Array<Omit<EmulatorMessage['attachments'][number], 'data'>>;
  visibleTo?: string;
  command?: string;
  usedBy?: { id: string; username: string };
}

class HttpError extends Error {
  constructor(
    readonly status: number,
    message: string,
  ) {
    super(message);
  }
}

const optionValue = z.union([z.string(), z.number(), z.boolean()]);
const place = { userId: z.string(), channelId: z.string() };
const commandPath = { name: z.string().min(1), subcommandGroup: z.string().optional(), subcommand: z.string().optional() };
const schemas = {
  command: z.object({
    ...place,
    ...commandPath,
    options: z.record(z.string(), optionValue).default({}),
    attachments: z.record(z.string(), z.object({ filename: z.string().min(1), contentType: z.string().optional(), base64: z.string() })).default({}),
  }),
  autocomplete: z.object({
    ...place,
    ...commandPath,
    options: z.record(z.string(), optionValue).default({}),
    focused: z.object({ name: z.string(), value: z.string() }),
  }),
  button: z.object({ userId: z.string(), messageId: z.string(), customId: z.string() }),
  select: z.object({ userId: z.string(), messageId: z.string(), customId: z.string(), values: z.array(z.string()) }),
  modal: z.object({ userId: z.string(), interactionId: z.string(), fields: z.record(z.string(), z.string()) }),
  voice: z.object({ userId: z.string(), join: z.boolean() }),
  purchase: z.object({ userId: z.string(), messageId: z.string(), skuId: z.string() }),
  role: z.object({ userId: z.string(), roleId: z.string(), give: z.boolean() }),
  hold: z.object({ held: z.boolean() }),
};

async function readJson(request: IncomingMessage): Promise<unknown> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of request) {
    size += (chunk as Buffer).length;
    if (size > MAX_BODY_BYTES) throw new HttpError(413, 'That file is too large for the playground (32 MB at most).');
    chunks.push(chunk as Buffer);
  }
  try {
    return JSON.parse(Buffer.concat(chunks).toString('utf8'));
  } catch {
    throw new HttpError(400, 'The request was not JSON.');
  }
}

function parse<T>(schema: z.ZodType<T>, body: unknown): T {
  const result = schema.safeParse(body);
  if (!result.success) throw new HttpError(400, `Bad request: ${result.error.issues.map((issue) => `${issue.path.join('.')} ${issue.message}`).join('; ')}`);
  return result.data;
}

function sendJson(response: ServerResponse, status: number, body: unknown): void {
  const text = JSON.stringify(body);
  response.writeHead(status, { 'content-type': 'application/json; charset=utf-8', 'cache-control': 'no-store' });
  response.end(text);
}

/** "voice create" for `/voice create`, as Discord's "used /voice create" line reads. */
function commandLineOf(payload: InteractionHandle['payload']): string | undefined {
  if (payload.type !== InteractionType.ApplicationCommand) return undefined;
  const words = [payload.data.name];
  let options = (payload.data as { options?: APIApplicationCommandInteractionDataOption[] }).options;
  for (;;) {
    const nested = options?.find((option) => option.type === 1 || option.type === 2) as
      | { name: string; options?: APIApplicationCommandInteractionDataOption[] }
      | undefined;
    if (!nested) break;
    words.push(nested.name);
    options = nested.options;
  }
  return words.join(' ');
}

export async function startWebServer(options: { port: number; host?: string; logger: Logger }): Promise<WebServer> {
  const { logger } = options;
  let parts: PageParts | undefined;
  const media: Array<{ prefix: string; target: URL }> = [];
  const streams = new Set<ServerResponse>();
  const listeners = new Set<() => void>();
  /** Interactions the bot answered with a modal, so the page can submit it. */
  const modals = new Map<string, InteractionHandle>();

  function pageMessage(message: EmulatorMessage): PageMessage {
    const { attachments, ...rest } = message;
    const origin = message.interaction_metadata?.id ? parts?.origins.get(message.interaction_metadata.id) : undefined;
    return {
      ...rest,
      attachments: attachments.map(({ data: _data, ...attachment }) => attachment),
      ...(message.ephemeral && message.interaction_metadata ? { visibleTo: message.interaction_metadata.user.id } : {}),
      ...(origin ?? {}),
    };
  }

  /** The people, with their roles and their permissions per channel (the page hides the commands they may not use, as Discord does). */
  function users(attached: PageParts) {
    const { emulator, world } = attached;
    return world.users.map((user) => ({
      ...user,
      roles: emulator.member(world.guild.id, user.id)?.roles ?? [],
      permissions: Object.fromEntries(world.channels.map((channel) => [channel.id, emulator.memberPermissions(channel.id, user.id).toString()])),
    }));
  }

  function state() {
    if (!parts) throw new HttpError(503, 'The playground is still starting.');
    const { emulator, world, taskMs, sim } = parts;
    return {
      bot: { id: emulator.botUser.id, username: emulator.botUser.username, bot: true },
      guild: world.guild,
      channels: world.channels,
      voiceChannel: { ...world.voiceChannel, members: emulator.voiceMembers(world.voiceChannel.id) },
      roles: world.roles,
      users: users(parts),
      // The address links name; the page swaps it for its own when opened through another (a forwarded port).
      origin,
      commands: emulator.registeredCommands(world.guild.id),
      // What premium buttons sell: the page draws them with the name and price, as Discord does.
      skus: world.skus,
      dashboard: parts.dashboardUrl !== undefined,
      messages: world.channels.flatMap((channel) => emulator.channelMessages(channel.id, { includeEphemeral: true }).map(pageMessage)),
      simulator: { taskMs, held: sim.tasksHeld() },
    };
  }

  function broadcast(event: string, data: unknown): void {
    const frame = `event: ${event}\ndata: ${JSON.stringify(data)}\n\n`;
    for (const stream of streams) stream.write(frame);
  }

  let voiceMembers = '';
  /** Who is in the voice channel, to every page, when it changed (the bot joins and leaves on its own). */
  function broadcastVoice(): void {
    if (!parts) return;
    const members = parts.emulator.voiceMembers(parts.world.voiceChannel.id);
    if (members.join() === voiceMembers) return;
    voiceMembers = members.join();
    broadcast('voice', { members });
  }

  function userName(userId: string): string {
    const user = parts?.world.users.find((candidate) => candidate.id === userId);
    if (!user) throw new HttpError(400, `There is no user ${userId} in the playground.`);
    return user.username;
  }

  /**
   * Runs a user's action in the emulator and waits for the bot's first answer. What a person
   * would see as an outcome (Discord's client refusing the input, a bot that does not answer)
   * is a 200 with `error`, not an HTTP failure: the request itself went fine.
   */
  async function act(start: () => InteractionHandle): Promise<unknown> {
    let handle: InteractionHandle;
    try {
      handle = start();
    } catch (error) {
      // The emulator refuses what Discord's client would not send (unknown option, missing value).
      return { error: (error as Error).message };
    }
    try {
      const response = await handle.waitForResponse(ANSWER_WAIT_MS);
      const modal = handle.modal();
      if (modal) modals.set(handle.id, handle);
      return { interactionId: handle.id, response: { type: response.type, ephemeral: response.ephemeral }, ...(modal ? { modal } : {}) };
    } catch {
      return {
        interactionId: handle.id,
        timedOut: true,
        error: `${parts?.emulator.botUser.username ?? 'The bot'} did not respond within 3 seconds, so Discord would show "The application did not respond".`,
      };
    }
  }

  async function api(route: string, request: IncomingMessage, response: ServerResponse): Promise<void> {
    if (route === 'state' && request.method === 'GET') return sendJson(response, 200, state());
    if (route === 'events' && request.method === 'GET') {
      if (!parts) throw new HttpError(503, 'The playground is still starting.');
      response.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-store', connection: 'keep-alive' });
      response.write(': connected\n\n');
      streams.add(response);
      request.once('close', () => streams.delete(response));
      return;
    }
    if (route === 'voice/audio' && request.method === 'GET') {
      if (!parts) throw new HttpError(503, 'The playground is still starting.');
      const stop = streamVoice(parts.emulator, parts.world.guild.id, response);
      listeners.add(stop);
      request.once('close', () => listeners.delete(stop));
      return;
    }
    if (request.method !== 'POST') throw new HttpError(404, 'No such API route.');
    if (!parts) throw new HttpError(503, 'The playground is still starting.');
    const { emulator, world } = parts;
    const body = await readJson(request);
    const guildId = world.guild.id;
    switch (route) {
      case 'interactions/command': {
        const input = parse(schemas.command, body);
        const username = userName(input.userId);
        const attachments = Object.fromEntries(
          Object.entries(input.attachments).map(([name, file]) => [name, { filename: file.filename, contentType: file.contentType, data: Buffer.from(file.base64, 'base64') }]),
        );
        const result = await act(() => {
          const handle = emulator.runCommand({ ...input, guildId, attachments });
          const command = commandLineOf(handle.payload);
          if (command) parts?.origins.set(handle.id, { command, usedBy: { id: input.userId, username } });
          return handle;
        });
        return sendJson(response, 200, result);
      }
      case 'interactions/autocomplete': {
        const input = parse(schemas.autocomplete, body);
        userName(input.userId);
        try {
          return sendJson(response, 200, { choices: await emulator.autocomplete({ ...input, guildId, timeoutMs: ANSWER_WAIT_MS }) });
        } catch (error) {
          return sendJson(response, 200, { choices: [], error: (error as Error).message });
        }
      }
      case 'interactions/button': {
        const input = parse(schemas.button, body);
        userName(input.userId);
        return sendJson(response, 200, await act(() => emulator.clickButton({ ...input, guildId })));
      }
      case 'interactions/select': {
        const input = parse(schemas.select, body);
        userName(input.userId);
        return sendJson(response, 200, await act(() => emulator.selectOption(input)));
      }
      case 'interactions/modal': {
        const input = parse(schemas.modal, body);
        userName(input.userId);
        const trigger = modals.get(input.interactionId);
        if (!trigger) return sendJson(response, 200, { error: 'That form belongs to an interaction the playground no longer knows; open it again.' });
        return sendJson(response, 200, await act(() => emulator.submitModal({ interaction: trigger, userId: input.userId, fields: input.fields })));
      }
      case 'purchase': {
        // A premium button: Discord's checkout, then an entitlement for the bot (no interaction).
        const input = parse(schemas.purchase, body);
        userName(input.userId);
        try {
          return sendJson(response, 200, { entitlement: emulator.clickPremiumButton({ ...input }) });
        } catch (error) {
          return sendJson(response, 200, { error: (error as Error).message });
        }
      }
      case 'voice': {
        const input = parse(schemas.voice, body);
        userName(input.userId);
        if (input.join) emulator.joinVoice(input.userId, world.voiceChannel.id);
        else emulator.leaveVoice(guildId, input.userId);
        broadcastVoice();
        return sendJson(response, 200, { members: emulator.voiceMembers(world.voiceChannel.id) });
      }
      case 'roles': {
        // As a moderator gives or takes a role in the server's settings: the bot hears GUILD_MEMBER_UPDATE.
        const input = parse(schemas.role, body);
        userName(input.userId);
        if (!world.roles.some((role) => role.id === input.roleId)) throw new HttpError(400, `There is no role ${input.roleId} in the playground.`);
        if (input.give) emulator.addMemberRole(guildId, input.userId, input.roleId);
        else emulator.removeMemberRole(guildId, input.userId, input.roleId);
        const people = users(parts);
        broadcast('members', { users: people });
        return sendJson(response, 200, { users: people });
      }
      case 'simulator/hold': {
        // The music service keeps what it is given (nothing ends) until released: the bot's queue fills behind it.
        const input = parse(schemas.hold, body);
        parts.sim.holdTasks(input.held);
        broadcast('simulator', { held: parts.sim.tasksHeld() });
        return sendJson(response, 200, { held: parts.sim.tasksHeld() });
      }
      default:
        throw new HttpError(404, 'No such API route.');
    }
  }

  /**
   * The page's Dashboard link: signs the persona in to the emulated Discord's web, then sends the
   * browser to the dashboard's sign-in, which lands on the server's pages as that persona.
   */
  function openDashboard(userId: string | null, response: ServerResponse): void {
    if (!parts) throw new HttpError(503, 'The playground is still starting.');
    if (parts.dashboardUrl === undefined) throw new HttpError(404, 'This playground runs without the dashboard.');
    if (userId === null) throw new HttpError(400, 'Say who opens the dashboard: /dashboard?as=<user id>.');
    userName(userId);
    parts.emulator.signInWeb(userId);
    const next = `/dashboard/g/${parts.world.guild.id}`;
    response.writeHead(302, { location: `${parts.dashboardUrl}/login?next=${encodeURIComponent(next)}`, 'cache-control': 'no-store' });
    response.end();
  }

  async function serveStatic(pathname: string, response: ServerResponse): Promise<void> {
    const file = path.join(PUBLIC_DIR, pathname === '/' ? 'index.html' : pathname);
    const type = CONTENT_TYPES[path.extname(file)];
    if (!file.startsWith(PUBLIC_DIR) || !type) throw new HttpError(404, 'Not found.');
    const body = await readFile(file).catch(() => {
      throw new HttpError(404, 'Not found.');
    });
    response.writeHead(200, { 'content-type': type, 'cache-control': 'no-cache' });
    response.end(body);
  }

  function proxy(request: IncomingMessage, response: ServerResponse, target: URL): void {
    if (request.method !== 'GET' && request.method !== 'HEAD') throw new HttpError(405, 'Media is read-only.');
    const upstream = httpRequest(target, { method: request.method, headers: request.headers.range ? { range: request.headers.range } : {} }, (answer) => {
      response.writeHead(answer.statusCode ?? 502, answer.headers);
      answer.pipe(response);
    });
    upstream.once('error', () => {
      if (!response.headersSent) sendJson(response, 502, { error: 'The music simulator or the emulated Discord is not answering.' });
      else response.destroy();
    });
    upstream.end();
  }

  const server = createServer((request, response) => {
    const url = new URL(request.url ?? '/', 'http://playground.invalid');
    for (const [name, value] of Object.entries(SECURITY_HEADERS)) response.setHeader(name, value);
    const handle = async () => {
      if (!addressedByAddress(request.headers.host)) throw new HttpError(403, 'Open the playground by its address, such as http://127.0.0.1:3000/.');
      const origin = request.headers.origin;
      if (request.method !== 'GET' && request.method !== 'HEAD' && origin !== undefined && origin !== `http://${request.headers.host}`) {
        throw new HttpError(403, 'Only the playground page itself may act in the playground.');
      }
      if (url.pathname.startsWith('/api/')) return api(url.pathname.slice('/api/'.length), request, response);
      if (url.pathname === '/dashboard' && request.method === 'GET') return openDashboard(url.searchParams.get('as'), response);
      const mount = media.find((entry) => url.pathname.startsWith(`${entry.prefix}/`));
      if (mount) return proxy(request, response, new URL(url.pathname.slice(mount.prefix.length) + url.search, mount.target));
      if (url.pathname === '/favicon.ico') return serveStatic('/favicon.svg', response);
      return serveStatic(url.pathname, response);
    };
    handle().catch((error: unknown) => {
      const status = error instanceof HttpError ? error.status : 500;
      if (status === 500) logger.error({ err: error, path: url.pathname }, 'playground request failed');
      if (!response.headersSent) sendJson(response, status, { error: error instanceof HttpError ? error.message : 'Something went wrong in the playground.' });
      else response.end();
    });
  });

  const host = options.host ?? DEFAULT_HOST;
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port, host.replace(/^\[(.*)\]$/, '$1'), () => {
      server.off('error', reject);
      resolve();
    });
  });
  // Listening everywhere, the page still names this machine's loopback: that address surely works here.
  const named = WILDCARDS.has(host) ? DEFAULT_HOST : isIP(host) === 6 ? `[${host}]` : host;
  const origin = `http://${named}:${(server.address() as AddressInfo).port}`;
  let unsubscribe: (() => void) | undefined;
  const keepAlive = setInterval(() => {
    for (const stream of streams) stream.write(': keep-alive\n\n');
  }, 15_000);
  keepAlive.unref();
  const voiceWatch = setInterval(broadcastVoice, 500);
  voiceWatch.unref();

  return {
    origin,
    proxyMedia(prefix, target) {
      media.push({ prefix, target: new URL(target.endsWith('/') ? target : `${target}/`) });
    },
    attach(attached) {
      parts = attached;
      const channelIds = new Set(attached.world.channels.map((channel) => channel.id));
      unsubscribe = attached.emulator.onMessage((message, change) => {
        if (channelIds.has(message.channel_id)) broadcast('message', { change, message: pageMessage(message) });
      });
    },
    async close() {
      clearInterval(keepAlive);
      clearInterval(voiceWatch);
      for (const stop of listeners) stop();
      unsubscribe?.();
      for (const stream of streams) stream.end();
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
