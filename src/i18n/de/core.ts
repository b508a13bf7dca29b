import type { Translation } from '../messages.js';
import type { core as english } from '../en/core.js';

export const core: Translation<typeof english> = {
  'error.generic': 'Bei uns ist etwas schiefgelaufen. Bitte versuche es gleich noch einmal.',
};
