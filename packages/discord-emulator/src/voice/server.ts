/**
 * The emulator's voice server: a voice gateway (version 8) over TLS WebSocket and a UDP socket on
 * 127.0.0.1. The bot identifies with the token of its VOICE_SERVER_UPDATE, discovers its address,
 * selects `aead_aes256_gcm_rtpsize`, says it speaks, and sends RTP; each guild's frames are opened,
 * checked and handed to that guild's {@link GuildReception}.
 */
import { randomBytes } from 'node:crypto';
import type { RemoteInfo } from 'node:dgram';
import { readFileSync } from 'node:fs';
import { createServer, type Server } from 'node:https';
import type { AddressInfo } from 'node:net';
import { fileURLToPath } from 'node:url';
import { VoiceCloseCodes, VoiceOpcodes } from 'discord-api-types/voice/v8';
import type { Logger } from 'pino';
import { WebSocket, WebSocketServer } from 'ws';
import type { RawData } from 'ws';
import type { DaveListener } from './dave.js';
import { GuildReception } from './reception.js';
import { createVoiceUdp, type VoiceUdp } from './udp.js';
import { AES256_GCM_RTPSIZE, decryptAes256GcmRtpSize, discoveryRequestSsrc, discoveryResponse, OPUS_PAYLOAD_TYPE, readRtpHeader } from './rtp.js';

/** The self-signed certificate the voice gateway serves (for localhost and 127.0.0.1): clients trust it with NODE_EXTRA_CA_CERTS. */
export const VOICE_CA_PATH = fileURLToPath(new URL('../../certs/voice-localhost.pem', import.meta.url));
const VOICE_KEY_PATH = fileURLToPath(new URL('../../certs/voice-localhost.key', import.meta.url));

export const VOICE_GATEWAY_VERSION = 8;
/** What Discord's voice servers ask for. */
const DEFAULT_VOICE_HEARTBEAT_MS = 13_750;
/** Server messages kept for a resume's replay (v8 buffered resume). */
const REPLAY_LIMIT = 200;
/** A frame may overtake the Speaking it follows (UDP against TLS); later than this, it is a finding. */
const SPEAKING_GRACE_MS = 250;

/** What VOICE_SERVER_UPDATE granted the bot for a guild: the voice gateway checks Identify against it. */
export interface VoiceGrant {
  guildId: string;
  channelId: string;
  userId: string;
  /** The bot's gateway session id (its voice state's session_id). */
  sessionId: string;
  token: string;
}

interface VoiceSession {
  grant: VoiceGrant;
  ssrc: number;
  ws: WebSocket | undefined;
  seq: number;
  replay: { seq: number; data: string | Buffer }[];
  mode: string | undefined;
  secretKey: Buffer | undefined;
  /** Where the bot's UDP packets come from (its IP discovery). */
  remote: string | undefined;
  speaking: boolean;
  /** Emulator clock time (monotonic) of the first frame heard while not speaking. */
  unspokenSince: number | undefined;
  reportedUnspoken: boolean;
  reportedWrongSsrc: boolean;
  reportedBadFrame: boolean;
  maxDaveProtocolVersion: number;
  daveProtocolVersion: number;
  dave: DaveListener | undefined;
  closed: boolean;
}

export interface VoiceServerOptions {
  logger: Logger;
  clockNow: () => number;
  /** The emulator clock's monotonic reading: frame arrivals and the Speaking grace are timed by it. */
  clockMonotonic: () => number;
  onFinding: (message: string, details: string[]) => void;
  /** Whether the bot may speak in the channel now (Speak permission). */
  canSpeak: (guildId: string, channelId: string) => boolean;
  /** The other users in the channel, for Clients Connect (op 11). */
  othersInChannel: (channelId: string, botId: string) => string[];
  heartbeatIntervalMs?: number;
  /** Decode Opus (default); off, frames are counted but not decoded (benchmarks). */
  decode: boolean;
  /** Receive UDP on a thread of its own, which times each frame's arrival (benchmarks). @defaultValue false */
  receiveOnThread?: boolean;
  /**
   * Creates the listening member's DAVE session. Set: DAVE is required, as on Discord (a client
   * without it is closed with 4017). Undefined: DAVE off, Session Description says version 0.
   */
  createDave?: (session: { guildId: string; channelId: string; botId: string; send: (op: number, payload: Buffer) => void; sendJson: (op: number, d: unknown) => void }) => DaveListener;
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

export class VoiceServer {
  readonly #options: VoiceServerOptions;
  readonly #https: Server;
  readonly #wss: WebSocketServer;
  readonly #udp: VoiceUdp;
  readonly #grants = new Map<string, VoiceGrant>();
  readonly #sessions = new Map<string, VoiceSession>();
  readonly #bySsrc = new Map<number, VoiceSession>();
  readonly #byRemote = new Map<string, VoiceSession>();
  readonly #receptions = new Map<string, GuildReception>();
  readonly #sockets = new Set<WebSocket>();
  readonly #refusedWithoutDave = new Set<string>();
  #nextSsrc = 1000 + Math.floor(Math.random() * 1000);
  #endpoint = '';
  #udpPort = 0;
  /** Counters: connections, identifies, resumes, heartbeats. */
  readonly stats = { connections: 0, identifies: 0, resumes: 0, heartbeats: 0 };

  constructor(options: VoiceServerOptions) {
    this.#options = options;
    this.#https = createServer({ cert: readFileSync(VOICE_CA_PATH), key: readFileSync(VOICE_KEY_PATH) });
    this.#wss = new WebSocketServer({ server: this.#https });
    this.#wss.on('connection', (ws, request) => this.#onConnection(ws, new URL(request.url ?? '/', 'https://voice.invalid')));
    this.#udp = createVoiceUdp({
      onThread: options.receiveOnThread ?? false,
      onPacket: (packet, remote, lagMs) => this.#onPacket(packet, remote, lagMs),
      onError: (error) => options.logger.warn({ err: error }, 'voice udp socket error'),
    });
  }

  async listen(host: string): Promise<void> {
    await new Promise<void>((resolve) => this.#https.listen(0, host, resolve));
    this.#udpPort = await this.#udp.bind('127.0.0.1');
    const address = this.#https.address() as AddressInfo;
    // The certificate names 127.0.0.1, ::1 and localhost: a wildcard address is advertised as 127.0.0.1.
    const advertised = address.address === '0.0.0.0' || address.address === '::' ? '127.0.0.1' : address.address;
    this.#endpoint = `${advertised.includes(':') ? `[${advertised}]` : advertised}:${address.port}`;
  }

  /** VOICE_SERVER_UPDATE's endpoint: host:port of the voice gateway, no scheme. */
  get endpoint(): string {
    return this.#endpoint;
  }

  reception(guildId: string): GuildReception {
    let reception = this.#receptions.get(guildId);
    if (!reception) {
      reception = new GuildReception(guildId, this.#options.decode, this.#options.clockMonotonic);
      this.#receptions.set(guildId, reception);
    }
    return reception;
  }

  /** The bot's max_dave_protocol_version from its last Identify in the guild (undefined: never identified). */
  maxDaveProtocolVersion(guildId: string): number | undefined {
    return this.#sessions.get(guildId)?.maxDaveProtocolVersion;
  }

  /** The DAVE listener of the guild's voice session, if DAVE was negotiated. */
  dave(guildId: string): DaveListener | undefined {
    return this.#sessions.get(guildId)?.dave;
  }

  /** Whether the guild has a voice session with its WebSocket open. */
  isConnected(guildId: string): boolean {
    const session = this.#sessions.get(guildId);
    return session !== undefined && !session.closed && session.ws?.readyState === WebSocket.OPEN;
  }

  /** A new grant (VOICE_SERVER_UPDATE) for the guild: the next Identify is checked against it. */
  grant(grant: VoiceGrant): void {
    this.#grants.set(grant.guildId, grant);
  }

  /**
   * The bot left voice in the guild, or got a new grant (`keepGrant`, after a move): the voice
   * session of an older grant is closed with 4014 Disconnected.
   */
  disconnect(guildId: string, keepGrant?: VoiceGrant): void {
    if (!keepGrant) this.#grants.delete(guildId);
    const session = this.#sessions.get(guildId);
    if (!session || session.grant === keepGrant) return;
    this.#endSession(session);
    session.ws?.close(VoiceCloseCodes.Disconnected, 'Disconnected');
  }

  /** Closes the guild's voice WebSocket with `code` (4015: the client should resume); the session stays. */
  drop(guildId: string, code: number = VoiceCloseCodes.VoiceServerCrashed): boolean {
    const session = this.#sessions.get(guildId);
    if (!session?.ws) return false;
    session.ws.close(code, 'Dropped by the emulator');
    return true;
  }

  /** A member joined (true) or left the channel of a guild's voice session: op 11 / op 13 to the bot. */
  memberChanged(guildId: string, channelId: string, userId: string, joined: boolean): void {
    const session = this.#sessions.get(guildId);
    if (!session || session.closed || session.grant.channelId !== channelId || !session.mode) return;
    if (joined) this.#sendJson(session, VoiceOpcodes.ClientsConnect, { user_ids: [userId] });
    else this.#sendJson(session, VoiceOpcodes.ClientDisconnect, { user_id: userId });
  }

  #endSession(session: VoiceSession): void {
    session.closed = true;
    this.#bySsrc.delete(session.ssrc);
    if (session.remote) this.#byRemote.delete(session.remote);
    if (this.#sessions.get(session.grant.guildId) === session) this.#sessions.delete(session.grant.guildId);
    const reception = this.#receptions.get(session.grant.guildId);
    if (reception) {
      reception.connected = false;
      reception.speaking = false;
      reception.channelId = null;
    }
    session.dave?.close();
  }

  #onConnection(ws: WebSocket, url: URL): void {
    this.stats.connections += 1;
    this.#sockets.add(ws);
    const state: { session: VoiceSession | undefined; heartbeatTimer?: NodeJS.Timeout } = { session: undefined };
    // A client that stops heartbeating for two intervals is closed with 4009 Session timeout.
    const interval = this.#options.heartbeatIntervalMs ?? DEFAULT_VOICE_HEARTBEAT_MS;
    const expectHeartbeat = (): void => {
      clearTimeout(state.heartbeatTimer);
      state.heartbeatTimer = setTimeout(() => ws.close(VoiceCloseCodes.SessionTimeout, 'Session timeout.'), interval * 2);
      state.heartbeatTimer.unref();
    };
    expectHeartbeat();
    ws.on('close', () => {
      clearTimeout(state.heartbeatTimer);
      this.#sockets.delete(ws);
      if (state.session?.ws === ws) state.session.ws = undefined;
    });
    ws.on('error', (error) => this.#options.logger.warn({ err: error }, 'voice gateway socket error'));
    const version = url.searchParams.get('v');
    if (version !== String(VOICE_GATEWAY_VERSION)) {
      this.#options.onFinding(`voice gateway connection asked for version ${version ?? '(none)'}; the emulator speaks v${VOICE_GATEWAY_VERSION}`, [url.search]);
    }
    ws.on('message', (raw, isBinary) => this.#onMessage(ws, state, raw, isBinary, expectHeartbeat));
    ws.send(JSON.stringify({ op: VoiceOpcodes.Hello, d: { v: VOICE_GATEWAY_VERSION, heartbeat_interval: this.#options.heartbeatIntervalMs ?? DEFAULT_VOICE_HEARTBEAT_MS } }));
  }

  /** Sends a sequenced JSON message (kept for a resume's replay). */
  #sendJson(session: VoiceSession, op: number, d: unknown): void {
    session.seq += 1;
    const data = JSON.stringify({ op, d, seq: session.seq });
    this.#keep(session, data);
    if (session.ws?.readyState === WebSocket.OPEN) session.ws.send(data);
  }

  /** Sends a binary message: sequence (uint16), opcode (uint8), payload. */
  #sendBinary(session: VoiceSession, op: number, payload: Buffer): void {
    session.seq += 1;
    const header = Buffer.alloc(3);
    header.writeUInt16BE(session.seq & 0xffff, 0);
    header.writeUInt8(op, 2);
    const data = Buffer.concat([header, payload]);
    this.#keep(session, data);
    if (session.ws?.readyState === WebSocket.OPEN) session.ws.send(data);
  }

  #keep(session: VoiceSession, data: string | Buffer): void {
    session.replay.push({ seq: session.seq, data });
    if (session.replay.length > REPLAY_LIMIT) session.replay.shift();
  }

  #onMessage(ws: WebSocket, state: { session: VoiceSession | undefined }, raw: RawData, isBinary: boolean, heartbeatSeen: () => void): void {
    const bytes = Array.isArray(raw) ? Buffer.concat(raw) : Buffer.isBuffer(raw) ? raw : Buffer.from(raw);
    if (isBinary) {
      if (!state.session || bytes.length < 1) {
        ws.close(VoiceCloseCodes.NotAuthenticated, 'Not authenticated.');
        return;
      }
      const op = bytes.readUInt8(0);
      const dave = state.session.dave;
      if (!dave) {
        this.#options.onFinding(`voice client sent binary opcode ${op} without a DAVE session`, []);
        return;
      }
      dave.onBinary(op, bytes.subarray(1));
      return;
    }
    let payload: unknown;
    try {
      payload = JSON.parse(bytes.toString('utf8'));
    } catch {
      this.#options.onFinding('voice client sent a frame that is not JSON', []);
      ws.close(VoiceCloseCodes.FailedToDecode, 'Failed to decode payload.');
      return;
    }
    if (!isRecord(payload) || typeof payload.op !== 'number') {
      this.#options.onFinding('voice client sent a payload without an opcode', []);
      ws.close(VoiceCloseCodes.FailedToDecode, 'Failed to decode payload.');
      return;
    }
    const d = isRecord(payload.d) ? payload.d : {};
    switch (payload.op) {
      case VoiceOpcodes.Heartbeat:
        heartbeatSeen();
        this.stats.heartbeats += 1;
        if (typeof d.seq_ack !== 'number') this.#options.onFinding('voice heartbeat without seq_ack (required since voice gateway v8)', [JSON.stringify(payload.d)]);
        ws.send(JSON.stringify({ op: VoiceOpcodes.HeartbeatAck, d: { t: d.t } }));
        return;
      case VoiceOpcodes.Identify:
        this.#identify(ws, state, d);
        return;
      case VoiceOpcodes.Resume:
        this.#resume(ws, state, d);
        return;
      default:
        break;
    }
    const session = state.session;
    if (!session) {
      ws.close(VoiceCloseCodes.NotAuthenticated, 'Not authenticated.');
      return;
    }
    switch (payload.op) {
      case VoiceOpcodes.SelectProtocol:
        this.#selectProtocol(session, d);
        return;
      case VoiceOpcodes.Speaking:
        this.#speaking(session, d);
        return;
      case VoiceOpcodes.DaveTransitionReady:
      case VoiceOpcodes.DaveMlsInvalidCommitWelcome:
        if (session.dave) session.dave.onJson(payload.op, d);
        else this.#options.onFinding(`voice client sent DAVE opcode ${payload.op} without a DAVE session`, []);
        return;
      default:
        this.#options.onFinding(`voice client sent unknown opcode ${payload.op}`, []);
        ws.close(VoiceCloseCodes.UnknownOpcode, 'Unknown opcode.');
    }
  }

  #identify(ws: WebSocket, state: { session: VoiceSession | undefined }, d: Record<string, unknown>): void {
    if (state.session) {
      ws.close(VoiceCloseCodes.AlreadyAuthenticated, 'Already authenticated.');
      return;
    }
    const missing = ['server_id', 'user_id', 'session_id', 'token'].filter((key) => typeof d[key] !== 'string');
    if (missing.length > 0) {
      this.#options.onFinding(`voice Identify without ${missing.join(', ')}`, []);
      ws.close(VoiceCloseCodes.FailedToDecode, 'Failed to decode payload.');
      return;
    }
    const grant = this.#grants.get(d.server_id as string);
    if (!grant) {
      ws.close(VoiceCloseCodes.ServerNotFound, 'Server not found.');
      return;
    }
    if (d.token !== grant.token || d.user_id !== grant.userId) {
      ws.close(VoiceCloseCodes.AuthenticationFailed, 'Authentication failed.');
      return;
    }
    if (d.session_id !== grant.sessionId) {
      ws.close(VoiceCloseCodes.SessionNoLongerValid, 'Session is no longer valid.');
      return;
    }
    if (d.max_dave_protocol_version !== undefined && !Number.isInteger(d.max_dave_protocol_version)) {
      this.#options.onFinding('voice Identify with a max_dave_protocol_version that is not an integer', [JSON.stringify(d.max_dave_protocol_version)]);
    }
    const maxDave = typeof d.max_dave_protocol_version === 'number' ? d.max_dave_protocol_version : 0;
    if (this.#options.createDave && maxDave < 1) {
      // Discord has required DAVE in guild voice channels since March 2026: a client without it is
      // refused (and @discordjs/voice rejoins at once, again and again: one finding per guild).
      if (!this.#refusedWithoutDave.has(grant.guildId)) this.#options.onFinding(`voice Identify with max_dave_protocol_version ${maxDave}: Discord requires DAVE (end-to-end encryption) in guild voice channels`, [`guild ${grant.guildId}`]);
      this.#refusedWithoutDave.add(grant.guildId);
      ws.close(VoiceCloseCodes.EndToEndEncryptionDAVEProtocolRequired, 'E2EE/DAVE protocol required.');
      return;
    }
    const previous = this.#sessions.get(grant.guildId);
    if (previous) {
      this.#endSession(previous);
      previous.ws?.close(VoiceCloseCodes.SessionNoLongerValid, 'Session replaced.');
    }
    const session: VoiceSession = {
      grant,
      ssrc: this.#nextSsrc++,
      ws,
      seq: 0,
      replay: [],
      mode: undefined,
      secretKey: undefined,
      remote: undefined,
      speaking: false,
      unspokenSince: undefined,
      reportedUnspoken: false,
      reportedWrongSsrc: false,
      reportedBadFrame: false,
      maxDaveProtocolVersion: maxDave,
      daveProtocolVersion: 0,
      dave: undefined,
      closed: false,
    };
    state.session = session;
    this.#sessions.set(grant.guildId, session);
    this.#bySsrc.set(session.ssrc, session);
    this.stats.identifies += 1;
    const reception = this.reception(grant.guildId);
    reception.channelId = grant.channelId;
    reception.speaking = false;
    this.#sendJson(session, VoiceOpcodes.Ready, { ssrc: session.ssrc, ip: '127.0.0.1', port: this.#udpPort, modes: [AES256_GCM_RTPSIZE] });
  }

  #resume(ws: WebSocket, state: { session: VoiceSession | undefined }, d: Record<string, unknown>): void {
    const session = typeof d.server_id === 'string' ? this.#sessions.get(d.server_id) : undefined;
    if (!session || session.closed || d.token !== session.grant.token) {
      ws.close(VoiceCloseCodes.SessionNoLongerValid, 'Session is no longer valid.');
      return;
    }
    if (d.session_id !== session.grant.sessionId) {
      ws.close(VoiceCloseCodes.SessionNoLongerValid, 'Session is no longer valid.');
      return;
    }
    if (typeof d.seq_ack !== 'number') this.#options.onFinding('voice Resume without seq_ack (required since voice gateway v8)', []);
    const previous = session.ws;
    session.ws = ws;
    state.session = session;
    if (previous && previous !== ws) previous.close(VoiceCloseCodes.SessionNoLongerValid, 'Session resumed elsewhere.');
    this.stats.resumes += 1;
    const seqAck = typeof d.seq_ack === 'number' ? d.seq_ack : session.seq;
    for (const message of session.replay) if (message.seq > seqAck) ws.send(message.data);
    ws.send(JSON.stringify({ op: VoiceOpcodes.Resumed, d: null }));
    session.speaking = false;
    this.reception(session.grant.guildId).speaking = false;
  }

  #selectProtocol(session: VoiceSession, d: Record<string, unknown>): void {
    const data = isRecord(d.data) ? d.data : {};
    if (d.protocol !== 'udp') {
      this.#options.onFinding(`voice Select Protocol with protocol ${JSON.stringify(d.protocol)}; Discord takes "udp"`, []);
      session.ws?.close(VoiceCloseCodes.UnknownProtocol, 'Unknown protocol.');
      return;
    }
    if (data.mode !== AES256_GCM_RTPSIZE) {
      this.#options.onFinding(`voice Select Protocol chose mode ${JSON.stringify(data.mode)}, which Ready did not offer`, [`offered: ${AES256_GCM_RTPSIZE}`]);
      session.ws?.close(VoiceCloseCodes.UnknownEncryptionMode, 'Unknown encryption mode.');
      return;
    }
    if (typeof data.address !== 'string' || typeof data.port !== 'number') {
      this.#options.onFinding('voice Select Protocol without data.address and data.port', [JSON.stringify(d)]);
    }
    session.mode = data.mode;
    session.secretKey = randomBytes(32);
    const createDave = this.#options.createDave;
    session.daveProtocolVersion = createDave && session.maxDaveProtocolVersion >= 1 ? 1 : 0;
    const reception = this.reception(session.grant.guildId);
    reception.connected = true;
    reception.encryptionMode = session.mode;
    reception.daveProtocolVersion = session.daveProtocolVersion;
    reception.startRun();
    this.#sendJson(session, VoiceOpcodes.SessionDescription, {
      audio_codec: 'opus',
      video_codec: null,
      media_session_id: randomBytes(16).toString('hex'),
      mode: session.mode,
      secret_key: [...session.secretKey],
      dave_protocol_version: session.daveProtocolVersion,
    });
    const others = this.#options.othersInChannel(session.grant.channelId, session.grant.userId);
    if (session.daveProtocolVersion > 0 && createDave) {
      session.dave = createDave({
        guildId: session.grant.guildId,
        channelId: session.grant.channelId,
        botId: session.grant.userId,
        send: (op, payload) => this.#sendBinary(session, op, payload),
        sendJson: (op, payload) => this.#sendJson(session, op, payload),
      });
      others.push(session.dave.userId);
    }
    if (others.length > 0) this.#sendJson(session, VoiceOpcodes.ClientsConnect, { user_ids: others });
    session.dave?.start();
  }

  #speaking(session: VoiceSession, d: Record<string, unknown>): void {
    if (typeof d.speaking !== 'number' || typeof d.ssrc !== 'number') {
      this.#options.onFinding('voice Speaking without a numeric speaking bitfield and ssrc', [JSON.stringify(d)]);
      return;
    }
    if (d.ssrc !== session.ssrc) {
      this.#options.onFinding(`voice Speaking for ssrc ${d.ssrc}; Ready gave ${session.ssrc}`, []);
    }
    const speaking = (d.speaking & 1) !== 0 || (d.speaking & 2) !== 0;
    const reception = this.reception(session.grant.guildId);
    if (speaking && !session.speaking) reception.startRun();
    session.speaking = speaking;
    session.unspokenSince = undefined;
    reception.speaking = speaking;
  }

  /** `lagMs`: how long ago the packet arrived (its UDP thread's reading): frames are timed by their arrival. */
  #onPacket(packet: Buffer, remote: Pick<RemoteInfo, 'address' | 'port'>, lagMs: number): void {
    // Read once, before any decryption: each later reading would count the work in between.
    const arrivedAt = this.#options.clockMonotonic() - lagMs;
    const heardAt = this.#options.clockNow() - lagMs;
    const remoteKey = `${remote.address}:${remote.port}`;
    const discoverySsrc = discoveryRequestSsrc(packet);
    if (discoverySsrc !== undefined) {
      const session = this.#bySsrc.get(discoverySsrc);
      if (!session) {
        this.#options.onFinding(`IP discovery for ssrc ${discoverySsrc}, which no voice session was given`, []);
        return;
      }
      if (session.remote) this.#byRemote.delete(session.remote);
      session.remote = remoteKey;
      this.#byRemote.set(remoteKey, session);
      this.#udp.send(discoveryResponse(discoverySsrc, remote.address, remote.port), remote.port, remote.address);
      return;
    }
    const header = readRtpHeader(packet);
    if (!header) return; // keep-alives and anything else that is not RTP
    const session = this.#byRemote.get(remoteKey) ?? this.#bySsrc.get(header.ssrc);
    if (!session || session.closed) return;
    const guildId = session.grant.guildId;
    const reception = this.reception(guildId);
    if (header.ssrc !== session.ssrc) {
      reception.dropped('undecodable');
      if (!session.reportedWrongSsrc) {
        session.reportedWrongSsrc = true;
        this.#options.onFinding(`voice frame with ssrc ${header.ssrc}; Ready gave ${session.ssrc}`, [`guild ${guildId}`]);
      }
      return;
    }
    if (!session.secretKey) {
      this.#options.onFinding('voice frame before Session Description', [`guild ${guildId}`]);
      return;
    }
    if (header.payloadType !== OPUS_PAYLOAD_TYPE && !session.reportedBadFrame) {
      session.reportedBadFrame = true;
      this.#options.onFinding(`voice frame with RTP payload type ${header.payloadType}; Discord's Opus is ${OPUS_PAYLOAD_TYPE}`, []);
    }
    if (!session.speaking) {
      const now = arrivedAt;
      session.unspokenSince ??= now;
      if (now - session.unspokenSince > SPEAKING_GRACE_MS && !session.reportedUnspoken) {
        session.reportedUnspoken = true;
        this.#options.onFinding('voice frames sent without Speaking (op 5) set', [`guild ${guildId}`, `ssrc ${session.ssrc}`]);
      }
    }
    let payload: Buffer;
    try {
      payload = decryptAes256GcmRtpSize(packet, session.secretKey);
    } catch (error) {
      reception.dropped('undecodable');
      if (!session.reportedBadFrame) {
        session.reportedBadFrame = true;
        this.#options.onFinding(`voice frame that does not open with the session's ${AES256_GCM_RTPSIZE} key`, [String(error)]);
      }
      return;
    }
    if (!this.#options.canSpeak(guildId, session.grant.channelId)) {
      reception.dropped('no-speak');
      return;
    }
    let opus = payload;
    let dave = false;
    if (session.dave) {
      const opened = session.dave.decrypt(payload);
      if (opened === null) {
        reception.dropped('undecodable');
        return;
      }
      opus = opened.frame;
      dave = opened.encrypted;
    }
    reception.frame(opus, header, heardAt, dave, arrivedAt);
  }

  async close(): Promise<void> {
    for (const session of [...this.#sessions.values()]) this.#endSession(session);
    for (const ws of this.#sockets) ws.terminate();
    for (const reception of this.#receptions.values()) reception.close();
    this.#wss.close();
    this.#https.closeAllConnections();
    await new Promise<void>((resolve) => this.#https.close(() => resolve()));
    await this.#udp.close();
  }
}
