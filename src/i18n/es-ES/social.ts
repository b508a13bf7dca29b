import type { Translation } from '../messages.js';
import type { social as english } from '../en/social.js';

export const social: Translation<typeof english> = {
  'result.button.like': 'Me gusta · {likes}',
  'result.button.reroll': 'Otra versión',
  'result.field.rerollOf': 'Otra versión de',
  'unit.likes': { one: '{count} me gusta', many: '{count} de me gusta', other: '{count} me gusta' },
  'like.liked': 'Te gusta **{title}** ({likes:likes} ahora). Pulsa Me gusta otra vez para retirarlo.',
  'like.unliked': 'Ya no te gusta **{title}** ({likes:likes} ahora).',
  'like.gone': 'Esta canción no se puede marcar con me gusta: se eliminó, o no es una canción de este servidor.',
  'reroll.gone': 'No se puede hacer otra versión de esta canción: se eliminó, o no es una canción de este servidor. `{/song}` crea una nueva.',
  'reroll.voiceGone': 'La voz con la que se cantó esta canción se eliminó, así que no se puede hacer otra versión. `{/song}` crea una nueva.',
  'reroll.already': 'Tu otra versión de esta canción ya está en camino.',
};
