/**
 * `/notify when-done:`: a member's own choice of a direct message when a long job of theirs
 * ends (`NOTIFY_AFTER_SECONDS`), or the server's default (`/settings notify`).
 */
import { ApplicationCommandOptionType, InteractionContextType, type RESTPostAPIApplicationCommandsJSONBody } from 'discord-api-types/v10';
import { loadCaller } from '../src/discord/caller.js';
import { defineCommand } from '../src/discord/command.js';
import { answerInPlace } from '../src/discord/respond.js';
import { english } from '../src/i18n/index.js';

export const definition = {
  name: 'notify',
  description: english('command.notify.description'),
  contexts: [InteractionContextType.Guild],
  dm_permission: false,
  options: [
    {
      type: ApplicationCommandOptionType.String,
      name: 'when-done',
      description: english('command.notify.when-done.description'),
      required: true,
      choices: [
        { name: english('command.notify.when-done.choice.on'), value: 'on' },
        { name: english('command.notify.when-done.choice.off'), value: 'off' },
        { name: english('command.notify.when-done.choice.server'), value: 'server' },
      ],
    },
  ],
} as const satisfies RESTPostAPIApplicationCommandsJSONBody;

export default defineCommand({
  definition,
  acknowledge: () => 'ephemeral',
  async execute(interaction, args, context) {
    const caller = await loadCaller(interaction, context);
    const choice = args['when-done'];
    await context.guilds.setNotifyWhenDone(caller.guild.id, caller.member.userId, choice);
    const { t } = context;
    const answer =
      choice === 'on'
        ? t('notify.on', { seconds: context.settings.notifyAfterSeconds })
        : choice === 'off'
          ? t('notify.off')
          : caller.guild.notifyWhenDone
            ? t('notify.serverOn')
            : t('notify.serverOff');
    await answerInPlace(interaction, { content: answer });
  },
});
