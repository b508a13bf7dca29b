/** Voice UDP packets: IP discovery, and RTP with Discord's `aead_aes256_gcm_rtpsize` transport encryption. */
import { createDecipheriv } from 'node:crypto';

/** The only transport mode the emulator offers; Discord prefers it, and clients choose from the offered list. */
export const AES256_GCM_RTPSIZE = 'aead_aes256_gcm_rtpsize';

/** Discord's Opus payload type. */
export const OPUS_PAYLOAD_TYPE = 120;
const DISCOVERY_LENGTH = 74;
const TAG_LENGTH = 16;
const NONCE_SUFFIX_LENGTH = 4;

/** The ssrc of an IP discovery request (type 1, length 70), or undefined when the packet is not one. */
export function discoveryRequestSsrc(packet: Buffer): number | undefined {
  if (packet.length !== DISCOVERY_LENGTH || packet.readUInt16BE(0) !== 1 || packet.readUInt16BE(2) !== 70) return undefined;
  return packet.readUInt32BE(4);
}

/** The discovery response: type 2, length 70, the ssrc, the address as seen (null-padded to 64 bytes), the port. */
export function discoveryResponse(ssrc: number, address: string, port: number): Buffer {
  const response = Buffer.alloc(DISCOVERY_LENGTH);
  response.writeUInt16BE(2, 0);
  response.writeUInt16BE(70, 2);
  response.writeUInt32BE(ssrc, 4);
  response.write(address, 8, 64, 'utf8');
  response.writeUInt16BE(port, 72);
  return response;
}

export interface RtpHeader {
  sequence: number;
  timestamp: number;
  ssrc: number;
  payloadType: number;
}

/** The header of an RTP packet (version 2), or undefined for anything else (keep-alives, RTCP). */
export function readRtpHeader(packet: Buffer): RtpHeader | undefined {
  if (packet.length < 12 || (packet[0]! & 0xc0) !== 0x80) return undefined;
  const payloadType = packet[1]! & 0x7f;
  // RTCP shares the first byte's layout; its packet types 200-204 show as 72-76 here.
  if (payloadType >= 72 && payloadType <= 76) return undefined;
  return { sequence: packet.readUInt16BE(2), timestamp: packet.readUInt32BE(4), ssrc: packet.readUInt32BE(8), payloadType };
}

/**
 * Opens an `aead_*_rtpsize` packet: the header (and an extension's 4-byte preamble) is the
 * additional data, the last 4 bytes are the nonce counter (zero-padded to 12), the tag ends the
 * ciphertext. Returns the payload without the extension body, or throws when it does not open.
 */
export function decryptAes256GcmRtpSize(packet: Buffer, key: Buffer): Buffer {
  const csrcCount = packet[0]! & 0x0f;
  const hasExtension = (packet[0]! & 0x10) !== 0;
  let aadLength = 12 + 4 * csrcCount;
  let extensionWords = 0;
  if (hasExtension) {
    if (packet.length < aadLength + 4) throw new Error('truncated header extension');
    extensionWords = packet.readUInt16BE(aadLength + 2);
    aadLength += 4;
  }
  const end = packet.length - NONCE_SUFFIX_LENGTH;
  if (end - aadLength < TAG_LENGTH) throw new Error('packet too short');
  const nonce = Buffer.alloc(12);
  packet.copy(nonce, 0, end);
  const decipher = createDecipheriv('aes-256-gcm', key, nonce);
  decipher.setAAD(packet.subarray(0, aadLength));
  decipher.setAuthTag(packet.subarray(end - TAG_LENGTH, end));
  const plain = Buffer.concat([decipher.update(packet.subarray(aadLength, end - TAG_LENGTH)), decipher.final()]);
  return extensionWords > 0 ? plain.subarray(extensionWords * 4) : plain;
}
