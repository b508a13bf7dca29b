/** Messages of "tell me when it is done": `/notify`, `/settings notify` and the direct message. */
import type { Section } from '../messages.js';

export const notify = {
  'command.notify.name': 'notify',
  'command.notify.when-done.name': 'when-done',
  'command.settings.notify.name': 'notify',
  'command.settings.notify.when-done.name': 'when-done',
  'command.settings.notify.description': 'Whether members get a DM when a long job of theirs ends (each may choose with /notify).',
  'command.settings.notify.when-done.description': 'On: members are told unless they turn it off. Off: only those who ask.',
  'settings.notifyOn': 'Direct message when a long job ends: on, unless a member turned it off with `/notify`',
  'settings.notifyOff': 'Direct message when a long job ends: only for members who ask with `/notify`',
  'command.notify.description': 'Get a direct message when a long job of yours ends, or stop getting one.',
  'command.notify.when-done.description': 'On, off, or as the server decides.',
  'command.notify.when-done.choice.on': 'On',
  'command.notify.when-done.choice.off': 'Off',
  'command.notify.when-done.choice.server': 'As the server decides',
  'help.playerControls': '{commands}: the player\'s controls (volume, a time in the song, loop, shuffle, and remove, move or clear in the queue).',
  'notify.on': 'You will get a direct message when a job of yours that takes longer than {seconds:seconds} ends.',
  'notify.off': 'You will not get direct messages when your jobs end.',
  'notify.serverOn': 'You follow the server\'s choice, which is to send you a direct message when a long job of yours ends.',
  'notify.serverOff': 'You follow the server\'s choice, which is not to send direct messages when jobs end.',
  'notify.dm.ready': '**{title}** is done in <#{channel}>: {link}',
  'notify.dm.failed': '**{title}** ended without a result in <#{channel}>: {link}',
  'notify.dm.private': '**{title}** has ended: see it with `{/jobs show id:}{id}` in <#{channel}>.',
} as const satisfies Section;
