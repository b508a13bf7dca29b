import { randomBytes } from 'node:crypto';
import { EventEmitter } from 'node:events';
import type { IncomingMessage } from 'node:http';
import type { Duplex } from 'node:stream';
import { WebSocketServer, WebSocket } from 'ws';
import type { RawData } from 'ws';
import {
  GatewayCloseCodes,
  GatewayDispatchEvents,
  GatewayIntentBits,
  GatewayOpcodes,
} from 'discord-api-types/v10';
import type { APIInteraction, ApplicationFlags, GatewayReadyDispatchData } from 'discord-api-types/v10';
import type { Logger } from 'pino';
import type { EmulatorStore } from './store.js';
import type { StoreDispatch } from './store/records.js';
import type { VoiceRequester } from './voice/states.js';

const HISTORY_LIMIT = 1_000;

/** IDENTIFY's `shard` (absent: `[0, 1]`), or undefined when it is not a valid `[shard_id, num_shards]`. */
function readShard(value: unknown): [number, number] | undefined {
  if (value === undefined) return [0, 1];
  if (!Array.isArray(value) || value.length !== 2) return undefined;
  const [id, count] = value as unknown[];
  if (!Number.isInteger(id) || !Number.isInteger(count)) return undefined;
  const [shardId, shards] = [id as number, count as number];
  return shards >= 1 && shardId >= 0 && shardId < shards ? [shardId, shards] : undefined;
}

/**
 * Whether a guild's events go to a shard: Discord's `(guild_id >> 22) % num_shards`. Events of no
 * guild (DMs among them) go to shard 0.
 */
export function onShard(guildId: string | undefined | null, [shardId, shards]: readonly [number, number]): boolean {
  if (guildId === undefined || guildId === null) return shardId === 0;
  return Number((BigInt(guildId) >> 22n) % BigInt(shards)) === shardId;
}
/** The code the emulator drops connections with: Discord's "unknown error", after which clients resume. */
export const RESUMABLE_CLOSE_CODE = GatewayCloseCodes.UnknownError;

interface DispatchFrame {
  op: GatewayOpcodes.Dispatch;
  t: string;
  s: number;
  d: unknown;
}

interface Session {
  id: string;
  seq: number;
  intents: number;
  /** `[shard_id, num_shards]` from IDENTIFY: the guilds whose events this session gets. */
  shard: [number, number];
  history: DispatchFrame[];
  connection: Connection | undefined;
}

interface Connection {
  ws: WebSocket;
  session: Session | undefined;
}

/** Counters a test can assert on. */
export interface GatewayStats {
  connections: number;
  identifies: number;
  /** IDENTIFYs refused for coming too soon in their max_concurrency bucket. */
  identifiesRefused: number;
  resumes: number;
  heartbeats: number;
  heartbeatAcks: number;
  invalidSessions: number;
}

export interface GatewayOptions {
  store: EmulatorStore;
  botToken: string;
  applicationId: string;
  heartbeatIntervalMs: number;
  logger: Logger;
  /** Records something a client did that Discord's gateway would refuse or ignore. */
  onFinding: (message: string, details: string[]) => void;
  /** IDENTIFYs allowed per window in each bucket `shard_id % maxConcurrency` (`session_start_limit.max_concurrency`). */
  maxConcurrency: number;
  /** Discord's 5 s; 0: no limit. */
  identifyWindowMs: number;
  resumeUrl: () => string;
  /** Update Voice State (op 4) from an identified session. */
  onVoiceStateUpdate?: (requester: VoiceRequester, d: unknown) => void;
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/**
 * Discord's gateway: JSON encoding, no compression. HELLO, IDENTIFY → READY and GUILD_CREATE,
 * heartbeats with ACKs, RESUME with replay, and dispatches routed to each session's shard.
 */
export class Gateway {
  readonly #wss = new WebSocketServer({ noServer: true });
  readonly #sessions = new Map<string, Session>();
  readonly #connections = new Set<Connection>();
  readonly #options: GatewayOptions;
  /** Emits `identify`, `ready`, `resumed`, `heartbeat`, `closed`. */
  readonly events = new EventEmitter();
  readonly stats: GatewayStats = { connections: 0, identifies: 0, identifiesRefused: 0, resumes: 0, heartbeats: 0, heartbeatAcks: 0, invalidSessions: 0 };
  /** When each max_concurrency bucket last let a shard identify (ms since epoch). */
  readonly #identifiedAt = new Map<number, number>();
  /** False during an outage: new connections are refused (HTTP 503 on the upgrade). */
  #available = true;

  constructor(options: GatewayOptions) {
    this.#options = options;
    this.events.setMaxListeners(0);
    options.store.events.on('dispatch', (event: StoreDispatch) => this.#onStoreDispatch(event));
  }

  /** Number of sessions that identified and received their guilds. */
  get readySessions(): number {
    return this.#sessions.size;
  }

  /** Takes over an HTTP upgrade on a gateway path; returns false for other paths. */
  handleUpgrade(request: IncomingMessage, socket: Duplex, head: Buffer): boolean {
    const url = new URL(request.url ?? '/', 'http://emulator.invalid');
    if (url.pathname !== '/gateway' && url.pathname !== '/gateway/resume') return false;
    if (!this.#available) {
      socket.end('HTTP/1.1 503 Service Unavailable\r\nConnection: close\r\nContent-Length: 0\r\n\r\n');
      return true;
    }
    this.#wss.handleUpgrade(request, socket, head, (ws) => this.#onConnection(ws, url));
    return true;
  }

  #onConnection(ws: WebSocket, url: URL): void {
    const connection: Connection = { ws, session: undefined };
    this.#connections.add(connection);
    this.stats.connections += 1;
    ws.on('close', () => {
      this.#connections.delete(connection);
      if (connection.session?.connection === connection) connection.session.connection = undefined;
      this.events.emit('closed');
    });
    ws.on('error', (error) => this.#options.logger.warn({ err: error }, 'gateway socket error'));

    const version = url.searchParams.get('v');
    if (version !== '10') {
      this.#options.onFinding(`gateway connection asked for API version ${version ?? '(none)'}; the emulator speaks v10`, [url.search]);
      ws.close(GatewayCloseCodes.InvalidAPIVersion, 'Invalid API version');
      return;
    }
    const encoding = url.searchParams.get('encoding') ?? 'json';
    if (encoding !== 'json') {
      this.#options.onFinding(`gateway connection asked for encoding "${encoding}"; only json is emulated`, [url.search]);
      ws.close(GatewayCloseCodes.DecodeError, 'Unsupported encoding');
      return;
    }
    const compress = url.searchParams.get('compress');
    if (compress) {
      this.#options.onFinding(`gateway connection asked for compress=${compress}; the emulator sends uncompressed text frames`, []);
    }
    ws.on('message', (raw, isBinary) => this.#onMessage(connection, raw, isBinary));
    this.#send(connection, { op: GatewayOpcodes.Hello, d: { heartbeat_interval: this.#options.heartbeatIntervalMs }, s: null, t: null });
  }

  #send(connection: Connection, payload: unknown): void {
    if (connection.ws.readyState === WebSocket.OPEN) connection.ws.send(JSON.stringify(payload));
  }

  #onMessage(connection: Connection, raw: RawData, isBinary: boolean): void {
    let payload: unknown;
    try {
      if (isBinary) throw new Error('binary frame');
      payload = JSON.parse(raw.toString());
    } catch {
      this.#options.onFinding('gateway client sent a frame that is not JSON text', []);
      connection.ws.close(GatewayCloseCodes.DecodeError, 'Error while decoding payload.');
      return;
    }
    if (!isRecord(payload) || typeof payload.op !== 'number') {
      connection.ws.close(GatewayCloseCodes.DecodeError, 'Error while decoding payload.');
      return;
    }
    const d = payload.d;
    switch (payload.op) {
      case GatewayOpcodes.Heartbeat:
        this.stats.heartbeats += 1;
        this.#send(connection, { op: GatewayOpcodes.HeartbeatAck });
        this.stats.heartbeatAcks += 1;
        this.events.emit('heartbeat');
        return;
      case GatewayOpcodes.Identify:
        this.#identify(connection, d);
        return;
      case GatewayOpcodes.Resume:
        this.#resume(connection, d);
        return;
      case GatewayOpcodes.PresenceUpdate:
      case GatewayOpcodes.VoiceStateUpdate:
      case GatewayOpcodes.RequestGuildMembers:
        if (!connection.session) {
          connection.ws.close(GatewayCloseCodes.NotAuthenticated, 'Not authenticated.');
          return;
        }
        if (payload.op === GatewayOpcodes.RequestGuildMembers) this.#requestMembers(connection.session, d);
        if (payload.op === GatewayOpcodes.VoiceStateUpdate) {
          const session = connection.session;
          this.#options.onVoiceStateUpdate?.(
            { sessionId: session.id, intents: session.intents, reply: (t, data) => this.#dispatchTo(session, t, data) },
            d,
          );
        }
        return;
      default:
        this.#options.onFinding(`gateway client sent unknown opcode ${payload.op}`, []);
        connection.ws.close(GatewayCloseCodes.UnknownOpcode, 'Unknown opcode.');
    }
  }

  #identify(connection: Connection, d: unknown): void {
    if (connection.session) {
      connection.ws.close(GatewayCloseCodes.AlreadyAuthenticated, 'Already authenticated.');
      return;
    }
    const data = isRecord(d) ? d : {};
    if (data.token !== this.#options.botToken) {
      connection.ws.close(GatewayCloseCodes.AuthenticationFailed, 'Authentication failed.');
      return;
    }
    if (typeof data.intents !== 'number') {
      this.#options.onFinding('IDENTIFY without intents', []);
      connection.ws.close(GatewayCloseCodes.InvalidIntents, 'Invalid intent(s).');
      return;
    }
    const shard = readShard(data.shard);
    if (!shard) {
      this.#options.onFinding(`IDENTIFY with an invalid shard ${JSON.stringify(data.shard)}`, []);
      connection.ws.close(GatewayCloseCodes.InvalidShard, 'Invalid shard.');
      return;
    }
    // Discord lets max_concurrency shards identify per 5 s, one per bucket `shard_id % max_concurrency`;
    // an IDENTIFY too soon in its bucket gets an Invalid Session (not resumable), and the client waits and tries again.
    const bucket = shard[0] % this.#options.maxConcurrency;
    const last = this.#identifiedAt.get(bucket);
    const now = Date.now();
    if (last !== undefined && now - last < this.#options.identifyWindowMs) {
      // Not a finding: a restarted process cannot know when the one before it identified, and
      // Discord's answer is this very Invalid Session, after which the client tries again.
      this.stats.identifiesRefused += 1;
      this.#options.logger.info({ shard, bucket }, 'IDENTIFY within the window of another in its max_concurrency bucket; Invalid Session');
      this.#send(connection, { op: GatewayOpcodes.InvalidSession, d: false, s: null, t: null });
      return;
    }
    this.#identifiedAt.set(bucket, now);
    const session: Session = {
      id: randomBytes(16).toString('hex'),
      seq: 0,
      intents: data.intents,
      shard,
      history: [],
      connection,
    };
    connection.session = session;
    this.stats.identifies += 1;
    this.events.emit('identify');
    const store = this.#options.store;
    const ready: GatewayReadyDispatchData = {
      v: 10,
      user: store.botUser,
      guilds: [...store.guilds.values()].filter((guild) => !guild.botRemoved && onShard(guild.id, shard)).map(({ id }) => ({ id, unavailable: true })),
      session_id: session.id,
      resume_gateway_url: this.#options.resumeUrl(),
      shard,
      application: { id: this.#options.applicationId, flags: 0 as ApplicationFlags, flags_new: '0' },
    };
    this.#dispatchTo(session, GatewayDispatchEvents.Ready, ready);
    for (const guild of store.guilds.values()) {
      if (guild.botRemoved || !onShard(guild.id, shard)) continue;
      this.#dispatchTo(session, GatewayDispatchEvents.GuildCreate, store.guildCreatePayload(guild, this.#hasMembersIntent(session), this.#hasVoiceIntent(session)));
    }
    this.#sessions.set(session.id, session);
    this.events.emit('ready');
  }

  #resume(connection: Connection, d: unknown): void {
    const data = isRecord(d) ? d : {};
    const session = typeof data.session_id === 'string' ? this.#sessions.get(data.session_id) : undefined;
    if (!session || data.token !== this.#options.botToken || typeof data.seq !== 'number') {
      this.stats.invalidSessions += 1;
      this.#send(connection, { op: GatewayOpcodes.InvalidSession, d: false, s: null, t: null });
      return;
    }
    const previous = session.connection;
    if (previous && previous !== connection) {
      previous.session = undefined;
      previous.ws.close(RESUMABLE_CLOSE_CODE, 'Session resumed elsewhere');
    }
    session.connection = connection;
    connection.session = session;
    const seq = data.seq;
    for (const frame of session.history) if (frame.s > seq) this.#send(connection, frame);
    this.stats.resumes += 1;
    this.#dispatchTo(session, GatewayDispatchEvents.Resumed, {});
    this.events.emit('resumed');
  }

  #requestMembers(session: Session, d: unknown): void {
    const data = isRecord(d) ? d : {};
    const guild = typeof data.guild_id === 'string' ? this.#options.store.guilds.get(data.guild_id) : undefined;
    if (!guild) return;
    const wanted = Array.isArray(data.user_ids) ? new Set(data.user_ids.map(String)) : undefined;
    const query = typeof data.query === 'string' ? data.query.toLowerCase() : '';
    const store = this.#options.store;
    const members = [...guild.members.values()]
      .filter((member) => (wanted ? wanted.has(member.userId) : (store.users.get(member.userId)?.username ?? '').toLowerCase().startsWith(query)))
      .map((member) => store.apiMember(guild, member));
    this.#dispatchTo(session, GatewayDispatchEvents.GuildMembersChunk, {
      guild_id: guild.id,
      members,
      chunk_index: 0,
      chunk_count: 1,
      ...(wanted ? { not_found: [...wanted].filter((id) => !guild.members.has(id)) } : {}),
      ...(data.nonce !== undefined ? { nonce: data.nonce } : {}),
    });
  }

  #hasVoiceIntent(session: Session): boolean {
    return (session.intents & GatewayIntentBits.GuildVoiceStates) !== 0;
  }

  #hasMembersIntent(session: Session): boolean {
    return (session.intents & GatewayIntentBits.GuildMembers) !== 0;
  }

  #dispatchTo(session: Session, t: string, d: unknown): void {
    session.seq += 1;
    const frame: DispatchFrame = { op: GatewayOpcodes.Dispatch, t, s: session.seq, d };
    session.history.push(frame);
    if (session.history.length > HISTORY_LIMIT) session.history.shift();
    if (session.connection) this.#send(session.connection, frame);
  }

  #onStoreDispatch(event: StoreDispatch): void {
    const guildId =
      event.guildId ??
      (event.t === GatewayDispatchEvents.GuildCreate ? String(event.d) : isRecord(event.d) && typeof event.d.guild_id === 'string' ? event.d.guild_id : undefined);
    let made: { d: unknown } | undefined;
    const data = () => (made ??= { d: typeof event.d === 'function' ? (event.d as () => unknown)() : event.d }).d;
    for (const session of this.#sessions.values()) {
      if ((session.intents & event.intent) === 0) continue;
      if (!onShard(guildId, session.shard)) continue;
      if (event.t === GatewayDispatchEvents.GuildCreate) {
        const guild = this.#options.store.guilds.get(String(event.d));
        if (guild) this.#dispatchTo(session, event.t, this.#options.store.guildCreatePayload(guild, this.#hasMembersIntent(session), this.#hasVoiceIntent(session)));
      } else {
        this.#dispatchTo(session, event.t, data());
      }
    }
  }

  /** Sends a dispatch to one session (false when it is gone), e.g. VOICE_SERVER_UPDATE to the session whose bot is in voice. */
  dispatchToSession(sessionId: string, t: GatewayDispatchEvents, d: unknown): boolean {
    const session = this.#sessions.get(sessionId);
    if (!session) return false;
    this.#dispatchTo(session, t, d);
    return true;
  }

  /**
   * Sends INTERACTION_CREATE to every session of the interaction's shard (interactions need no
   * intent): as on Discord, two sessions of one shard both get it.
   */
  dispatchInteraction(interaction: APIInteraction): void {
    const sessions = [...this.#sessions.values()].filter((session) => onShard(interaction.guild_id, session.shard));
    if (sessions.length === 0) {
      this.#options.logger.warn({ interactionId: interaction.id }, 'no gateway session to deliver the interaction to');
    }
    for (const session of sessions) this.#dispatchTo(session, GatewayDispatchEvents.InteractionCreate, interaction);
  }

  /**
   * Sends an event that needs no intent (ENTITLEMENT_*) to every session of the guild's shard
   * (shard 0 without a guild); returns how many sessions it went to.
   */
  dispatchToShard(t: GatewayDispatchEvents, d: unknown, guildId: string | undefined): number {
    const sessions = [...this.#sessions.values()].filter((session) => onShard(guildId, session.shard));
    for (const session of sessions) this.#dispatchTo(session, t, d);
    return sessions.length;
  }

  /** Closes every client connection with a resumable code; sessions stay and can be resumed. */
  dropConnections(code: number = RESUMABLE_CLOSE_CODE): number {
    let dropped = 0;
    for (const connection of this.#connections) {
      connection.ws.close(code, 'Connection dropped by the emulator');
      dropped += 1;
    }
    return dropped;
  }

  /**
   * A gateway outage: while unavailable, every connection is dropped with a resumable code and
   * new ones are refused; sessions stay, so a client that comes back afterwards can resume.
   */
  setAvailable(available: boolean): void {
    this.#available = available;
    if (!available) this.dropConnections();
  }

  /** Asks every client to heartbeat now (opcode 1 from the server). */
  requestHeartbeat(): void {
    for (const connection of this.#connections) this.#send(connection, { op: GatewayOpcodes.Heartbeat, d: null });
  }

  close(): void {
    for (const connection of this.#connections) connection.ws.terminate();
    this.#wss.close();
  }
}
