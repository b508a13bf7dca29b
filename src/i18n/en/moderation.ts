/** Messages of /credits, /credits-admin, /settings, /help and the welcome. */
import type { Section } from '../messages.js';

export const moderation = {} as const satisfies Section;
