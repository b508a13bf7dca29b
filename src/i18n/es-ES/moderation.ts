import type { Translation } from '../messages.js';
import type { moderation as english } from '../en/moderation.js';

export const moderation: Translation<typeof english> = {};
