import type { Translation } from '../messages.js';
import type { core as english } from '../en/core.js';

export const core: Translation<typeof english> = {
  'error.generic': 'Algo salió mal por nuestra parte. Inténtalo de nuevo en un momento.',
};
