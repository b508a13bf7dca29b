import type { Translation } from '../messages.js';
import type { notify as english } from '../en/notify.js';

export const notify: Translation<typeof english> = {
  'command.notify.name': 'notify',
  'command.notify.when-done.name': 'ao-terminar',
  'command.settings.notify.name': 'avisar',
  'command.settings.notify.when-done.name': 'ao-terminar',
  'command.settings.notify.description': 'Se os membros recebem uma DM quando um trabalho longo termina (cada um escolhe com /notify).',
  'command.settings.notify.when-done.description': 'Sim: avisa, a menos que o membro desative. Não: só quem pedir.',
  'settings.notifyOn': 'Mensagem direta quando um trabalho longo termina: sim, a menos que o membro desative com `/notify`',
  'settings.notifyOff': 'Mensagem direta quando um trabalho longo termina: só para quem pedir com `/notify`',
  'command.notify.description': 'Receba uma mensagem direta quando um trabalho longo seu terminar, ou pare de receber.',
  'command.notify.when-done.description': 'Sim, não, ou como o servidor decidir.',
  'command.notify.when-done.choice.on': 'Sim',
  'command.notify.when-done.choice.off': 'Não',
  'command.notify.when-done.choice.server': 'Como o servidor decidir',
  'help.playerControls': '{commands}: os controles do player (volume, um ponto da música, repetir, embaralhar, e remover, mover ou limpar na fila).',
  'notify.on': 'Você vai receber uma mensagem direta quando um trabalho seu que leve mais de {seconds:seconds} terminar.',
  'notify.off': 'Você não vai receber mensagens diretas quando seus trabalhos terminarem.',
  'notify.serverOn': 'Você segue a escolha do servidor: uma mensagem direta quando um trabalho longo seu terminar.',
  'notify.serverOff': 'Você segue a escolha do servidor: sem mensagens diretas quando os trabalhos terminam.',
  'notify.dm.ready': '**{title}** está pronto em <#{channel}>: {link}',
  'notify.dm.failed': '**{title}** terminou sem resultado em <#{channel}>: {link}',
  'notify.dm.private': '**{title}** terminou: veja com `{/jobs show id:}{id}` em <#{channel}>.',
};
