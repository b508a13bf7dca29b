/** Audio files a member might attach. */
export { sineWav } from '@music-bot/music-api-sim';

/** MPEG-1 layer III frames at 128 kbit/s, 44.1 kHz: 417 bytes and 1152 samples each (silence). */
export function silentMp3(seconds: number, options: { id3?: boolean } = {}): Buffer {
  const frames = Math.ceil((seconds * 44_100) / 1152);
  const frame = Buffer.alloc(417);
  frame.writeUInt32BE(0xfffb9000, 0);
  const id3 = options.id3 ? Buffer.from([0x49, 0x44, 0x33, 4, 0, 0, 0, 0, 0, 10, ...new Array<number>(10).fill(0)]) : Buffer.alloc(0);
  return Buffer.concat([id3, ...new Array<Buffer>(frames).fill(frame)]);
}
