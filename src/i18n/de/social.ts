import type { Translation } from '../messages.js';
import type { social as english } from '../en/social.js';

export const social: Translation<typeof english> = {
  'result.button.like': 'Gefällt mir · {likes}',
  'result.button.reroll': 'Neu würfeln',
  'result.field.rerollOf': 'Neu gewürfelt aus',
  'unit.likes': { one: '{count} Like', other: '{count} Likes' },
  'like.liked': 'Dir gefällt **{title}** (jetzt {likes:likes}). Drück noch einmal auf „Gefällt mir“, um es zurückzunehmen.',
  'like.unliked': '**{title}** gefällt dir nicht mehr (jetzt {likes:likes}).',
  'like.gone': 'Dieser Song kann kein „Gefällt mir“ bekommen: Er wurde entfernt oder ist kein Song dieses Servers.',
  'reroll.gone': 'Dieser Song kann nicht neu gewürfelt werden: Er wurde entfernt oder ist kein Song dieses Servers. `{/song}` macht einen neuen.',
  'reroll.voiceGone': 'Die Stimme, mit der dieser Song gesungen wurde, wurde gelöscht, daher kann er nicht neu gewürfelt werden. `{/song}` macht einen neuen.',
  'reroll.already': 'Deine neue Version dieses Songs ist schon unterwegs.',
};
