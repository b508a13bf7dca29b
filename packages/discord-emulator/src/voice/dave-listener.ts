/**
 * DAVE as the emulator's voice server plays it: the emulator is the MLS external sender (it signs
 * Add proposals for the bot's key package), and a listening member, a real `@snazzah/davey`
 * session, commits them, welcomes the bot into the group and opens the bot's frames.
 */
import { createPrivateKey, generateKeyPairSync, sign, type KeyObject } from 'node:crypto';
import davey from '@snazzah/davey';
import { VoiceOpcodes } from 'discord-api-types/voice/v8';
import type { Logger } from 'pino';
import type { DaveListener, DaveState } from './dave.js';

/** DAVE protocol version 1: MLS ciphersuite 2 (P-256, AES-128-GCM, SHA-256), basic credentials. */
export const DAVE_PROTOCOL_VERSION = 1;
/** The last two bytes of a DAVE-encrypted frame. */
const DAVE_MAGIC = 0xfafa;
const PROPOSALS_APPEND = 0;
const AUDIO = 0;

// ---- TLS presentation language (RFC 9420 §2.1), the little MLS needs here ----

/** A variable-length vector: QUIC-style length (1, 2 or 4 bytes), then the bytes. */
function vector(bytes: Buffer): Buffer {
  const length = bytes.length;
  let prefix: Buffer;
  if (length < 0x40) prefix = Buffer.from([length]);
  else if (length < 0x4000) prefix = Buffer.from([0x40 | (length >> 8), length & 0xff]);
  else {
    prefix = Buffer.alloc(4);
    prefix.writeUInt32BE((0x80000000 | length) >>> 0);
  }
  return Buffer.concat([prefix, bytes]);
}

function uint16(value: number): Buffer {
  const out = Buffer.alloc(2);
  out.writeUInt16BE(value);
  return out;
}

function uint32(value: number): Buffer {
  const out = Buffer.alloc(4);
  out.writeUInt32BE(value);
  return out;
}

function uint64(value: bigint): Buffer {
  const out = Buffer.alloc(8);
  out.writeBigUInt64BE(value);
  return out;
}

const MLS10 = 1;
const WIRE_FORMAT_PUBLIC_MESSAGE = 1;
const SENDER_EXTERNAL = 2;
const CONTENT_PROPOSAL = 2;
const PROPOSAL_ADD = 1;
const CREDENTIAL_BASIC = 1;

/** The emulator as the group's external sender: a P-256 signing key and a basic credential. */
export class ExternalSender {
  readonly #privateKey: KeyObject;
  /** The serialized ExternalSender (signature key, credential), opcode 25's payload. */
  readonly package: Buffer;

  constructor() {
    const { privateKey, publicKey } = generateKeyPairSync('ec', { namedCurve: 'P-256' });
    this.#privateKey = createPrivateKey(privateKey.export({ format: 'pem', type: 'pkcs8' }));
    const jwk = publicKey.export({ format: 'jwk' });
    const point = Buffer.concat([Buffer.from([4]), Buffer.from(jwk.x ?? '', 'base64url'), Buffer.from(jwk.y ?? '', 'base64url')]);
    this.package = Buffer.concat([vector(point), uint16(CREDENTIAL_BASIC), vector(Buffer.from('discord-emulator'))]);
  }

  /** An MLSMessage (PublicMessage) carrying an Add proposal for `keyPackage`, signed by the external sender (index 0). */
  addProposal(groupId: Buffer, epoch: bigint, keyPackage: Buffer): Buffer {
    const content = Buffer.concat([
      vector(groupId),
      uint64(epoch),
      Buffer.from([SENDER_EXTERNAL]),
      uint32(0),
      vector(Buffer.alloc(0)),
      Buffer.from([CONTENT_PROPOSAL]),
      uint16(PROPOSAL_ADD),
      keyPackage,
    ]);
    const header = Buffer.concat([uint16(MLS10), uint16(WIRE_FORMAT_PUBLIC_MESSAGE)]);
    // FramedContentTBS for an external sender has no group context; SignWithLabel's label is "MLS 1.0 " + the name.
    const toBeSigned = Buffer.concat([header, content]);
    const signContent = Buffer.concat([vector(Buffer.from('MLS 1.0 FramedContentTBS')), vector(toBeSigned)]);
    const signature = sign('sha256', signContent, { key: this.#privateKey, dsaEncoding: 'der' });
    return Buffer.concat([header, content, vector(signature)]);
  }
}

export function createDaveListener(options: {
  guildId: string;
  channelId: string;
  botId: string;
  listenerId: string;
  send: (op: number, payload: Buffer) => void;
  sendJson: (op: number, d: unknown) => void;
  onFinding: (message: string, details: string[]) => void;
  logger: Logger;
}): DaveListener {
  const external = new ExternalSender();
  const groupId = uint64(BigInt(options.channelId));
  const session = new davey.DAVESession(DAVE_PROTOCOL_VERSION, options.listenerId, options.channelId);
  const state: DaveState = {
    listenerId: options.listenerId,
    keyPackages: 0,
    welcomes: 0,
    transitionId: 0,
    transitionsReady: 0,
    transitionsExecuted: 0,
    invalidCommitWelcomes: 0,
    ready: false,
    privacyCode: '',
    error: null,
  };

  /** The bot's key package: a new group of the listener and the bot, the bot welcomed into it. */
  function welcome(keyPackage: Buffer): void {
    session.reinit(DAVE_PROTOCOL_VERSION, options.listenerId, options.channelId);
    session.setExternalSender(external.package);
    const proposal = external.addProposal(groupId, 0n, keyPackage);
    const { commit, welcome: welcomeMessage } = session.processProposals(PROPOSALS_APPEND, vector(proposal), [options.botId]);
    if (!commit || !welcomeMessage) throw new Error('the listener made no commit and welcome for the bot');
    session.processCommit(commit);
    state.transitionId += 1;
    state.welcomes += 1;
    state.ready = session.ready;
    state.privacyCode = session.voicePrivacyCode;
    options.send(VoiceOpcodes.DaveMlsWelcome, Buffer.concat([uint16(state.transitionId), welcomeMessage]));
  }

  return {
    userId: options.listenerId,
    state,
    start() {
      options.send(VoiceOpcodes.DaveMlsExternalSender, external.package);
    },
    onBinary(op, payload) {
      if (op === VoiceOpcodes.DaveMlsKeyPackage) {
        state.keyPackages += 1;
        try {
          welcome(payload);
          state.error = null;
        } catch (error) {
          state.error = String(error);
          options.logger.warn({ err: error, guildId: options.guildId }, 'DAVE: the listener could not make a group with the bot');
          options.onFinding('DAVE key package (op 26) the listening member could not add to a group', [String(error)]);
        }
        return;
      }
      if (op === VoiceOpcodes.DaveMlsCommitWelcome) {
        // Only sent in answer to proposals (op 27), which the emulator never sends to the bot.
        options.onFinding('DAVE commit/welcome (op 28) without proposals to answer', []);
        return;
      }
      options.onFinding(`voice client sent binary opcode ${op}, which a client does not send`, []);
    },
    onJson(op, d) {
      if (op === VoiceOpcodes.DaveTransitionReady) {
        if (d.transition_id !== state.transitionId) {
          options.onFinding(`DAVE transition ready (op 23) for transition ${String(d.transition_id)}; the pending one is ${state.transitionId}`, []);
          return;
        }
        state.transitionsReady += 1;
        options.sendJson(VoiceOpcodes.DaveExecuteTransition, { transition_id: state.transitionId });
        state.transitionsExecuted += 1;
        return;
      }
      if (op === VoiceOpcodes.DaveMlsInvalidCommitWelcome) {
        // The bot asks for a new group: it reinitializes and sends a new key package.
        state.invalidCommitWelcomes += 1;
        options.logger.warn({ guildId: options.guildId, d }, 'DAVE: the bot could not use the welcome');
      }
    },
    decrypt(payload) {
      if (payload.length >= 2 && payload.readUInt16BE(payload.length - 2) === DAVE_MAGIC && session.ready) {
        try {
          return { frame: session.decrypt(options.botId, AUDIO, payload), encrypted: true };
        } catch {
          return null;
        }
      }
      return { frame: payload, encrypted: false };
    },
    close() {
      try {
        session.reset();
      } catch {
        // already reset
      }
    },
  };
}
