/** The voice thread's entry: the engine's voice side (core.ts), spoken to through the parent port. */
import { parentPort } from 'node:worker_threads';
import { createVoiceCore } from './core.js';
import type { ToVoice } from './protocol.js';

if (!parentPort) throw new Error('the voice thread runs as a worker thread');
const port = parentPort;
const core = createVoiceCore((message) => port.postMessage(message));
port.on('message', (message: ToVoice | { type: 'close' }) => {
  if (message.type === 'close') {
    core.close();
    port.close();
    return;
  }
  core.receive(message);
});
port.postMessage({ type: 'ready' });
