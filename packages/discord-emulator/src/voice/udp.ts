/**
 * The voice server's UDP socket, in this thread or on a thread of its own. On its own thread it
 * notes each packet's arrival there, so a busy event loop in the emulator's process (a
 * benchmark's load generator) delays the handling of a frame but not the time it was heard:
 * the frame intervals then measure the sender, not the listener.
 */
import { createSocket, type RemoteInfo } from 'node:dgram';
import { Worker } from 'node:worker_threads';

/** `lagMs`: how long ago the packet arrived (0 in this thread), for timing it by its arrival. */
export type PacketHandler = (packet: Buffer, remote: Pick<RemoteInfo, 'address' | 'port'>, lagMs: number) => void;

export interface VoiceUdp {
  /** Binds on `host`, an ephemeral port; resolves with the port. */
  bind(host: string): Promise<number>;
  send(packet: Buffer, port: number, address: string): void;
  close(): Promise<void>;
}

export function createVoiceUdp(options: { onPacket: PacketHandler; onError: (error: Error) => void; onThread: boolean }): VoiceUdp {
  return options.onThread ? udpOnThread(options) : udpHere(options);
}

function udpHere(options: { onPacket: PacketHandler; onError: (error: Error) => void }): VoiceUdp {
  const socket = createSocket('udp4');
  socket.on('message', (packet, remote) => options.onPacket(packet, remote, 0));
  socket.on('error', options.onError);
  return {
    bind: (host) => new Promise((resolve) => socket.bind(0, host, () => resolve(socket.address().port))),
    send: (packet, port, address) => socket.send(packet, port, address),
    close: () => new Promise((resolve) => socket.close(() => resolve())),
  };
}

/**
 * The thread's code, plain CommonJS (an eval'd worker inherits no TypeScript loader). The arrival
 * is process.hrtime's monotonic reading, the same clock in every thread of the process.
 */
const THREAD_CODE = `
const { parentPort } = require('node:worker_threads');
const socket = require('node:dgram').createSocket('udp4');
socket.on('message', (packet, remote) =>
  parentPort.postMessage({ type: 'packet', packet, address: remote.address, port: remote.port, at: process.hrtime.bigint() }));
socket.on('error', (error) => parentPort.postMessage({ type: 'error', message: error.message }));
parentPort.on('message', (message) => {
  if (message.type === 'bind') socket.bind(0, message.host, () => parentPort.postMessage({ type: 'bound', port: socket.address().port }));
  else if (message.type === 'send') socket.send(message.packet, message.port, message.address);
  else if (message.type === 'close') socket.close(() => parentPort.close());
});
`;

type FromThread =
  | { type: 'packet'; packet: Uint8Array; address: string; port: number; at: bigint }
  | { type: 'bound'; port: number }
  | { type: 'error'; message: string };

function udpOnThread(options: { onPacket: PacketHandler; onError: (error: Error) => void }): VoiceUdp {
  const worker = new Worker(THREAD_CODE, { eval: true });
  let bound: ((port: number) => void) | undefined;
  worker.on('message', (message: FromThread) => {
    if (message.type === 'packet') {
      const lagMs = Number(process.hrtime.bigint() - message.at) / 1e6;
      const packet = Buffer.from(message.packet.buffer, message.packet.byteOffset, message.packet.byteLength);
      options.onPacket(packet, { address: message.address, port: message.port }, lagMs);
    } else if (message.type === 'bound') bound?.(message.port);
    else options.onError(new Error(message.message));
  });
  worker.on('error', options.onError);
  return {
    bind: (host) =>
      new Promise((resolve) => {
        bound = resolve;
        worker.postMessage({ type: 'bind', host });
      }),
    send: (packet, port, address) => worker.postMessage({ type: 'send', packet, port, address }),
    close: async () => {
      const exited = new Promise<void>((resolve) => worker.once('exit', () => resolve()));
      worker.postMessage({ type: 'close' });
      await Promise.race([exited, new Promise<void>((resolve) => setTimeout(resolve, 1_000).unref())]);
      await worker.terminate();
    },
  };
}
