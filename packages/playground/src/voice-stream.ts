/**
 * What the bot plays in the playground's voice channel, as the emulator hears it, sent to the
 * page as an endless WAV (48 kHz, 16-bit stereo) that an <audio> element plays live. Silence
 * fills the time the bot sends nothing, so the page's clock keeps running as a call's does.
 */
import type { ServerResponse } from 'node:http';
import type { DiscordEmulator } from '@music-bot/discord-emulator';

const SAMPLE_RATE = 48_000;
const CHANNELS = 2;
const BYTES_PER_SECOND = SAMPLE_RATE * CHANNELS * 2;
/** How far behind real time the stream runs: room for frames that arrive a little late. */
const LATENCY_MS = 300;
/** Audio waiting beyond this is dropped: a listener who fell behind catches up. */
const MAX_BUFFERED_MS = 2_000;
const TICK_MS = 50;

/** A WAV header whose sizes say "as long as it goes": players read it as a stream. */
function streamingWavHeader(): Buffer {
  const header = Buffer.alloc(44);
  header.write('RIFF', 0, 'ascii');
  header.writeUInt32LE(0xffffffff, 4);
  header.write('WAVE', 8, 'ascii');
  header.write('fmt ', 12, 'ascii');
  header.writeUInt32LE(16, 16);
  header.writeUInt16LE(1, 20); // PCM
  header.writeUInt16LE(CHANNELS, 22);
  header.writeUInt32LE(SAMPLE_RATE, 24);
  header.writeUInt32LE(BYTES_PER_SECOND, 28);
  header.writeUInt16LE(CHANNELS * 2, 32);
  header.writeUInt16LE(16, 34);
  header.write('data', 36, 'ascii');
  header.writeUInt32LE(0xffffffff, 40);
  return header;
}

/** Streams the guild's voice audio to `response` until the page closes it; returns the stop. */
export function streamVoice(emulator: DiscordEmulator, guildId: string, response: ServerResponse): () => void {
  response.writeHead(200, { 'content-type': 'audio/wav', 'cache-control': 'no-store' });
  response.write(streamingWavHeader());
  const waiting: Buffer[] = [];
  let waitingBytes = 0;
  const unsubscribe = emulator.onVoiceAudio(guildId, (pcm) => {
    const bytes = Buffer.from(pcm.buffer, pcm.byteOffset, pcm.byteLength);
    waiting.push(Buffer.from(bytes));
    waitingBytes += bytes.length;
    while (waitingBytes > (BYTES_PER_SECOND * MAX_BUFFERED_MS) / 1000) waitingBytes -= waiting.shift()!.length;
  });
  const started = performance.now() + LATENCY_MS;
  let sent = 0;
  const timer = setInterval(() => {
    const due = Math.floor(((performance.now() - started) / 1000) * SAMPLE_RATE) * CHANNELS * 2;
    let owed = due - sent;
    if (owed <= 0 || response.writableNeedDrain) return;
    const chunks: Buffer[] = [];
    while (owed > 0 && waiting.length > 0) {
      const head = waiting[0]!;
      const take = head.subarray(0, Math.min(owed, head.length));
      chunks.push(take);
      owed -= take.length;
      waitingBytes -= take.length;
      if (take.length === head.length) waiting.shift();
      else waiting[0] = head.subarray(take.length);
    }
    if (owed > 0) chunks.push(Buffer.alloc(owed));
    const chunk = Buffer.concat(chunks);
    sent += chunk.length;
    response.write(chunk);
  }, TICK_MS);
  const stop = () => {
    clearInterval(timer);
    unsubscribe();
    response.end();
  };
  response.once('close', stop);
  return stop;
}
