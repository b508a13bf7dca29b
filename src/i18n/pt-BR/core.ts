import type { Translation } from '../messages.js';
import type { core as english } from '../en/core.js';

export const core: Translation<typeof english> = {
  'error.generic': 'Algo deu errado do nosso lado. Tente de novo daqui a pouco.',
};
