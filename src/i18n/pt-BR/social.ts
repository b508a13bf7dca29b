import type { Translation } from '../messages.js';
import type { social as english } from '../en/social.js';

export const social: Translation<typeof english> = {
  'result.button.like': 'Curtir · {likes}',
  'result.button.reroll': 'Outra versão',
  'result.field.rerollOf': 'Outra versão de',
  'unit.likes': { one: '{count} curtida', many: '{count} de curtidas', other: '{count} curtidas' },
  'like.liked': 'Você curtiu **{title}** ({likes:likes} agora). Toque em Curtir de novo para desfazer.',
  'like.unliked': 'Você não curte mais **{title}** ({likes:likes} agora).',
  'like.gone': 'Esta música não pode ser curtida: foi removida, ou não é uma música deste servidor.',
  'reroll.gone': 'Não dá para fazer outra versão desta música: foi removida, ou não é uma música deste servidor. `{/song}` cria uma nova.',
  'reroll.voiceGone': 'A voz com que esta música foi cantada foi excluída, então não dá para fazer outra versão. `{/song}` cria uma nova.',
  'reroll.already': 'Sua outra versão desta música já está a caminho.',
};
