import type { Translation } from '../messages.js';
import type { generation as english } from '../en/generation.js';

export const generation: Translation<typeof english> = {};
