/**
 * The voice gateway and its UDP socket on raw sockets: Hello, Identify checked against
 * VOICE_SERVER_UPDATE, Ready, IP discovery, Select Protocol, heartbeats with seq_ack, close
 * codes, and the findings for frames a client should not send. The TLS connection trusts the
 * emulator's certificate through NODE_EXTRA_CA_CERTS (see vitest.config.ts).
 */
import { createCipheriv } from 'node:crypto';
import { createSocket } from 'node:dgram';
import { once } from 'node:events';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { ChannelType, GatewayDispatchEvents, GatewayOpcodes } from 'discord-api-types/v10';
import { VoiceCloseCodes, VoiceOpcodes } from 'discord-api-types/voice/v8';
import { Events } from 'discord.js';
import type { Client } from 'discord.js';
import OpusScript from 'opusscript';
import WebSocket from 'ws';
import { startDiscordEmulator } from '@music-bot/discord-emulator';
import type { DiscordEmulator, EmulatorChannel, EmulatorGuild } from '@music-bot/discord-emulator';
import { voiceBot } from './support/voice-client.js';

let emu: DiscordEmulator;
let client: Client;
let guild: EmulatorGuild;
let voice: EmulatorChannel;

beforeAll(async () => {
  emu = await startDiscordEmulator({ voice: { dave: false } });
  guild = emu.createGuild({ name: 'Raw voice guild' });
  voice = emu.createChannel(guild.id, { name: 'Raw', type: ChannelType.GuildVoice });
  client = await voiceBot(emu);
});

afterAll(async () => {
  await client?.destroy();
  await emu?.close();
});

afterEach(async () => {
  client.guilds.cache.get(guild.id)?.shard.send({ op: GatewayOpcodes.VoiceStateUpdate, d: { guild_id: guild.id, channel_id: null, self_mute: false, self_deaf: false } });
  await expect.poll(() => emu.voiceMembers(voice.id)).toEqual([]);
  emu.clearRecords();
});

interface Grant {
  token: string;
  endpoint: string;
  sessionId: string;
}

/** Joins through the main gateway (op 4) and returns what VOICE_STATE_UPDATE and VOICE_SERVER_UPDATE said. */
async function grant(): Promise<Grant> {
  const seen: Partial<Grant> = {};
  const done = new Promise<Grant>((resolve) => {
    const onRaw = (packet: { t: string; d: Record<string, string> }): void => {
      if (packet.t === GatewayDispatchEvents.VoiceStateUpdate && packet.d.user_id === emu.botUser.id && packet.d.channel_id) seen.sessionId = packet.d.session_id;
      if (packet.t === GatewayDispatchEvents.VoiceServerUpdate) {
        seen.token = packet.d.token;
        seen.endpoint = packet.d.endpoint;
      }
      if (seen.sessionId && seen.token) {
        client.off(Events.Raw, onRaw);
        resolve(seen as Grant);
      }
    };
    client.on(Events.Raw, onRaw);
  });
  client.guilds.cache.get(guild.id)?.shard.send({ op: GatewayOpcodes.VoiceStateUpdate, d: { guild_id: guild.id, channel_id: voice.id, self_mute: false, self_deaf: false } });
  return done;
}

/** A voice gateway socket that collects what it receives. */
async function open(endpoint: string): Promise<{ ws: WebSocket; messages: Record<string, unknown>[]; closed: Promise<number> }> {
  const ws = new WebSocket(`wss://${endpoint}?v=8`);
  const messages: Record<string, unknown>[] = [];
  ws.on('message', (data, isBinary) => {
    if (!isBinary) messages.push(JSON.parse(data.toString()) as Record<string, unknown>);
  });
  const closed = new Promise<number>((resolve) => ws.on('close', (code) => resolve(code)));
  await once(ws, 'open');
  await expect.poll(() => messages[0]?.op).toBe(VoiceOpcodes.Hello);
  return { ws, messages, closed };
}

function send(ws: WebSocket, op: number, d: unknown): void {
  ws.send(JSON.stringify({ op, d }));
}

function identify(ws: WebSocket, g: Grant, overrides: Record<string, unknown> = {}): void {
  send(ws, VoiceOpcodes.Identify, { server_id: guild.id, user_id: emu.botUser.id, session_id: g.sessionId, token: g.token, max_dave_protocol_version: 0, ...overrides });
}

/** A voice gateway connection that has identified and been given Ready. */
async function identified(): Promise<Awaited<ReturnType<typeof open>>> {
  const g = await grant();
  const connection = await open(g.endpoint);
  identify(connection.ws, g);
  await expect.poll(() => connection.messages.find((m) => m.op === VoiceOpcodes.Ready)).toBeTruthy();
  return connection;
}

describe('the voice gateway', () => {
  it('says Hello (v8), and closes 4004 on a wrong token, 4003 before Identify, 4001 on an unknown opcode', async () => {
    const g = await grant();
    const first = await open(g.endpoint);
    expect(first.messages[0]).toMatchObject({ op: VoiceOpcodes.Hello, d: { v: 8, heartbeat_interval: expect.any(Number) } });
    identify(first.ws, g, { token: 'not-the-token' });
    expect(await first.closed).toBe(VoiceCloseCodes.AuthenticationFailed);

    const second = await open(g.endpoint);
    send(second.ws, VoiceOpcodes.Speaking, { speaking: 1, delay: 0, ssrc: 1 });
    expect(await second.closed).toBe(VoiceCloseCodes.NotAuthenticated);

    const third = await open(g.endpoint);
    identify(third.ws, g);
    await expect.poll(() => third.messages.find((m) => m.op === VoiceOpcodes.Ready)).toBeTruthy();
    send(third.ws, 42, {});
    expect(await third.closed).toBe(VoiceCloseCodes.UnknownOpcode);
    expect(emu.findings).toMatchObject([{ kind: 'voice-protocol', message: 'voice client sent unknown opcode 42' }]);
  });

  it('acknowledges heartbeats with their nonce; one without seq_ack is a finding', async () => {
    const g = await grant();
    const { ws, messages } = await open(g.endpoint);
    identify(ws, g);
    send(ws, VoiceOpcodes.Heartbeat, { t: 1234, seq_ack: 1 });
    await expect.poll(() => messages.find((m) => m.op === VoiceOpcodes.HeartbeatAck)).toMatchObject({ d: { t: 1234 } });
    expect(emu.findings).toEqual([]);
    send(ws, VoiceOpcodes.Heartbeat, { t: 99 });
    await expect.poll(() => messages.filter((m) => m.op === VoiceOpcodes.HeartbeatAck).length).toBe(2);
    expect(emu.findings).toMatchObject([{ message: expect.stringContaining('seq_ack') }]);
    ws.close();
  });

  it('gives Ready, answers IP discovery, describes the session; frames without Speaking or with another ssrc are findings', async () => {
    const { ws, messages, closed } = await identified();
    const ready = messages.find((m) => m.op === VoiceOpcodes.Ready) as { d: { ssrc: number; ip: string; port: number; modes: string[] }; seq: number };
    expect(ready.d).toMatchObject({ ip: '127.0.0.1', modes: ['aead_aes256_gcm_rtpsize'] });
    expect(ready.seq).toEqual(expect.any(Number));

    const udp = createSocket('udp4');
    await new Promise<void>((resolve) => udp.bind(0, '127.0.0.1', resolve));
    const replies: Buffer[] = [];
    udp.on('message', (message) => replies.push(message));
    const discovery = Buffer.alloc(74);
    discovery.writeUInt16BE(1, 0);
    discovery.writeUInt16BE(70, 2);
    discovery.writeUInt32BE(ready.d.ssrc, 4);
    udp.send(discovery, ready.d.port, ready.d.ip);
    await expect.poll(() => replies.length).toBe(1);
    const reply = replies[0] as Buffer;
    expect([reply.length, reply.readUInt16BE(0), reply.readUInt16BE(2), reply.readUInt32BE(4)]).toEqual([74, 2, 70, ready.d.ssrc]);
    expect(reply.subarray(8, reply.indexOf(0, 8)).toString()).toBe('127.0.0.1');
    expect(reply.readUInt16BE(72)).toBe(udp.address().port);

    send(ws, VoiceOpcodes.SelectProtocol, { protocol: 'udp', data: { address: '127.0.0.1', port: udp.address().port, mode: 'aead_aes256_gcm_rtpsize' } });
    await expect.poll(() => messages.find((m) => m.op === VoiceOpcodes.SessionDescription)).toBeTruthy();
    const description = messages.find((m) => m.op === VoiceOpcodes.SessionDescription) as { d: { secret_key: number[]; mode: string; dave_protocol_version: number } };
    expect(description.d).toMatchObject({ mode: 'aead_aes256_gcm_rtpsize', dave_protocol_version: 0 });
    expect(description.d.secret_key).toHaveLength(32);

    const key = Buffer.from(description.d.secret_key);
    const encoder = new OpusScript(48_000, 2, OpusScript.Application.AUDIO);
    const pcm = Buffer.alloc(960 * 2 * 2);
    for (let i = 0; i < 960; i += 1) {
      const sample = Math.round(8000 * Math.sin((2 * Math.PI * 440 * i) / 48_000));
      pcm.writeInt16LE(sample, i * 4);
      pcm.writeInt16LE(sample, i * 4 + 2);
    }
    const opus = encoder.encode(pcm, 960);
    encoder.delete();
    let counter = 0;
    const packet = (ssrc: number, sequence: number): Buffer => {
      const header = Buffer.alloc(12);
      header[0] = 0x80;
      header[1] = 120;
      header.writeUInt16BE(sequence, 2);
      header.writeUInt32BE(sequence * 960, 4);
      header.writeUInt32BE(ssrc, 8);
      counter += 1;
      const nonce = Buffer.alloc(12);
      nonce.writeUInt32BE(counter, 0);
      const cipher = createCipheriv('aes-256-gcm', key, nonce);
      cipher.setAAD(header);
      return Buffer.concat([header, cipher.update(opus), cipher.final(), cipher.getAuthTag(), nonce.subarray(0, 4)]);
    };
    // Frames for longer than the grace a frame gets to overtake Speaking (the emulator clock moved 20 ms a frame): a finding.
    for (let sequence = 1; sequence <= 20; sequence += 1) {
      udp.send(packet(ready.d.ssrc, sequence), ready.d.port, ready.d.ip);
      await expect.poll(() => emu.voiceReception(guild.id).frames).toBe(sequence);
      if (sequence === 1) expect(emu.findings).toEqual([]);
      emu.clock.advance(20);
    }
    expect(emu.findings).toMatchObject([{ kind: 'voice-protocol', message: 'voice frames sent without Speaking (op 5) set' }]);

    send(ws, VoiceOpcodes.Speaking, { speaking: 1, delay: 0, ssrc: ready.d.ssrc });
    await expect.poll(() => emu.voiceReception(guild.id).speaking).toBe(true);
    // While speaking, 150 ms without a frame is a gap; the intervals are kept.
    udp.send(packet(ready.d.ssrc, 21), ready.d.port, ready.d.ip);
    await expect.poll(() => emu.voiceReception(guild.id).frames).toBe(21);
    emu.clock.advance(150);
    udp.send(packet(ready.d.ssrc, 22), ready.d.port, ready.d.ip);
    await expect.poll(() => emu.voiceReception(guild.id).frames).toBe(22);
    const timed = emu.voiceReception(guild.id);
    expect(timed.gaps).toBe(1);
    expect(timed.intervalMaxMs).toBeGreaterThanOrEqual(150);
    // 19 intervals among the first 20 frames; Speaking began a new run at frame 21, so 20 → 21 is not measured.
    expect(timed.intervalsMs).toHaveLength(20);
    expect(timed.seconds).toBeCloseTo(0.44);
    expect(timed.rtpDiscontinuities).toBe(0);

    udp.send(packet(ready.d.ssrc + 7, 23), ready.d.port, ready.d.ip);
    await expect.poll(() => emu.findings.length).toBe(2);
    expect(emu.findings[1]?.message).toBe(`voice frame with ssrc ${ready.d.ssrc + 7}; Ready gave ${ready.d.ssrc}`);
    expect(emu.voiceReception(guild.id)).toMatchObject({ frames: 22, undecodable: 1 });
    // A frame that skips a sequence number (and its 960 samples) breaks the stream's 20 ms steps.
    udp.send(packet(ready.d.ssrc, 24), ready.d.port, ready.d.ip);
    await expect.poll(() => emu.voiceReception(guild.id).frames).toBe(23);
    expect(emu.voiceReception(guild.id).rtpDiscontinuities).toBe(1);

    // Leaving ends the voice session: 4014, which a client does not resume.
    client.guilds.cache.get(guild.id)?.shard.send({ op: GatewayOpcodes.VoiceStateUpdate, d: { guild_id: guild.id, channel_id: null, self_mute: false, self_deaf: false } });
    expect(await closed).toBe(VoiceCloseCodes.Disconnected);
    udp.close();
  });

  it('closes 4016 on a mode Ready did not offer', async () => {
    const { ws, closed } = await identified();
    send(ws, VoiceOpcodes.SelectProtocol, { protocol: 'udp', data: { address: '127.0.0.1', port: 5000, mode: 'xsalsa20_poly1305' } });
    expect(await closed).toBe(VoiceCloseCodes.UnknownEncryptionMode);
    expect(emu.findings).toMatchObject([{ message: expect.stringContaining('xsalsa20_poly1305') }]);
  });

  it('resumes with Resumed and replays what the client had not acknowledged', async () => {
    const g = await grant();
    const first = await open(g.endpoint);
    identify(first.ws, g);
    await expect.poll(() => first.messages.find((m) => m.op === VoiceOpcodes.Ready)).toBeTruthy();
    expect(emu.dropVoiceConnection(guild.id)).toBe(true);
    expect(await first.closed).toBe(VoiceCloseCodes.VoiceServerCrashed);
    const second = await open(g.endpoint);
    send(second.ws, VoiceOpcodes.Resume, { server_id: guild.id, session_id: g.sessionId, token: g.token, seq_ack: 0 });
    await expect.poll(() => second.messages.find((m) => m.op === VoiceOpcodes.Resumed)).toBeTruthy();
    // Ready (seq 1) was not acknowledged: it comes again before Resumed.
    expect(second.messages.slice(1).map((m) => m.op)).toEqual([VoiceOpcodes.Ready, VoiceOpcodes.Resumed]);
    const third = await open(g.endpoint);
    send(third.ws, VoiceOpcodes.Resume, { server_id: guild.id, session_id: g.sessionId, token: 'wrong', seq_ack: 1 });
    expect(await third.closed).toBe(VoiceCloseCodes.SessionNoLongerValid);
    second.ws.close();
  });

  it('closes 4009 when heartbeats stop for two intervals', async () => {
    // 300 ms intervals (a 600 ms deadline): a busy machine's stall of this process must not miss one for the socket that beats every 50 ms.
    const quick = await startDiscordEmulator({ voice: { dave: false, heartbeatIntervalMs: 300 } });
    try {
      const beating = await open(quick.voiceEndpoint);
      const silent = await open(quick.voiceEndpoint);
      const timer = setInterval(() => send(beating.ws, VoiceOpcodes.Heartbeat, { t: Date.now(), seq_ack: -1 }), 50);
      try {
        expect(await silent.closed).toBe(VoiceCloseCodes.SessionTimeout);
        // 40 acks of beats 50 ms apart: a deadline passed three times over, and the heartbeating socket stays open.
        await expect.poll(() => beating.messages.filter((m) => m.op === VoiceOpcodes.HeartbeatAck).length, { timeout: 15_000 }).toBeGreaterThan(40);
        expect(beating.ws.readyState).toBe(WebSocket.OPEN);
      } finally {
        clearInterval(timer);
        beating.ws.close();
      }
    } finally {
      await quick.close();
    }
  });
});
