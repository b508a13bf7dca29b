import type { Translation } from '../messages.js';
import type { notify as english } from '../en/notify.js';

export const notify: Translation<typeof english> = {
  'command.notify.name': 'notify',
  'command.notify.when-done.name': 'al-terminar',
  'command.settings.notify.name': 'avisar',
  'command.settings.notify.when-done.name': 'al-terminar',
  'command.settings.notify.description': 'Si los miembros reciben un MD al terminar un trabajo largo suyo (cada uno elige con /notify).',
  'command.settings.notify.when-done.description': 'Sí: se avisa salvo que lo desactiven. No: solo a quienes lo pidan.',
  'settings.notifyOn': 'Mensaje directo al terminar un trabajo largo: sí, salvo que un miembro lo desactive con `/notify`',
  'settings.notifyOff': 'Mensaje directo al terminar un trabajo largo: solo para quienes lo pidan con `/notify`',
  'command.notify.description': 'Recibe un mensaje directo cuando termine un trabajo largo tuyo, o deja de recibirlo.',
  'command.notify.when-done.description': 'Sí, no, o como decida el servidor.',
  'command.notify.when-done.choice.on': 'Sí',
  'command.notify.when-done.choice.off': 'No',
  'command.notify.when-done.choice.server': 'Como decida el servidor',
  'help.playerControls': '{commands}: los controles del reproductor (volumen, un momento de la canción, repetir, mezclar, y quitar, mover o vaciar en la cola).',
  'notify.on': 'Recibirás un mensaje directo cuando termine un trabajo tuyo que tarde más de {seconds:seconds}.',
  'notify.off': 'No recibirás mensajes directos cuando terminen tus trabajos.',
  'notify.serverOn': 'Sigues la elección del servidor: un mensaje directo cuando termine un trabajo largo tuyo.',
  'notify.serverOff': 'Sigues la elección del servidor: sin mensajes directos cuando terminan los trabajos.',
  'notify.dm.ready': '**{title}** está listo en <#{channel}>: {link}',
  'notify.dm.failed': '**{title}** terminó sin resultado en <#{channel}>: {link}',
  'notify.dm.private': '**{title}** ha terminado: míralo con `{/jobs show id:}{id}` en <#{channel}>.',
};
