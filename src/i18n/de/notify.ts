import type { Translation } from '../messages.js';
import type { notify as english } from '../en/notify.js';

export const notify: Translation<typeof english> = {
  'command.notify.name': 'notify',
  'command.notify.when-done.name': 'wenn-fertig',
  'command.settings.notify.name': 'benachrichtigen',
  'command.settings.notify.when-done.name': 'wenn-fertig',
  'command.settings.notify.description': 'Ob Mitglieder eine DN bekommen, wenn ein langer Auftrag endet (jeder wählt mit /notify).',
  'command.settings.notify.when-done.description': 'An: Mitglieder werden benachrichtigt, außer sie schalten es ab. Aus: nur wer es wünscht.',
  'settings.notifyOn': 'Direktnachricht, wenn ein langer Auftrag endet: an, außer ein Mitglied hat es mit `/notify` abgeschaltet',
  'settings.notifyOff': 'Direktnachricht, wenn ein langer Auftrag endet: nur für Mitglieder, die es mit `/notify` wünschen',
  'command.notify.description': 'Eine Direktnachricht bekommen, wenn ein langer Auftrag von dir endet, oder nicht mehr.',
  'command.notify.when-done.description': 'An, aus oder wie der Server es festlegt.',
  'command.notify.when-done.choice.on': 'An',
  'command.notify.when-done.choice.off': 'Aus',
  'command.notify.when-done.choice.server': 'Wie der Server es festlegt',
  'help.playerControls': '{commands}: die Steuerung des Players (Lautstärke, eine Stelle im Song, Wiederholen, Mischen, und in der Warteschlange entfernen, verschieben oder leeren).',
  'notify.on': 'Du bekommst eine Direktnachricht, wenn ein Auftrag von dir endet, der länger als {seconds:seconds} dauert.',
  'notify.off': 'Du bekommst keine Direktnachrichten, wenn deine Aufträge enden.',
  'notify.serverOn': 'Du folgst der Wahl des Servers: eine Direktnachricht, wenn ein langer Auftrag von dir endet.',
  'notify.serverOff': 'Du folgst der Wahl des Servers: keine Direktnachrichten, wenn Aufträge enden.',
  'notify.dm.ready': '**{title}** ist fertig in <#{channel}>: {link}',
  'notify.dm.failed': '**{title}** endete ohne Ergebnis in <#{channel}>: {link}',
  'notify.dm.private': '**{title}** ist beendet: sieh es dir mit `{/jobs show id:}{id}` in <#{channel}> an.',
};
