/**
 * Messages of the bot's core: refusals, errors, acknowledgements and results, used by
 * src/discord, src/pipeline and the services. English is the source: every other language
 * translates these keys (see ../README.md).
 */
import type { Section } from '../messages.js';

export const core = {
  'error.generic': 'Something went wrong on our side. Please try again in a moment.',
} as const satisfies Section;
