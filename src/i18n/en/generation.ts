/** Messages of the commands that make things: /song, /lyrics, /voice, /video, /download, /upload, /jobs, /library and Remix. */
import type { Section } from '../messages.js';

export const generation = {} as const satisfies Section;
