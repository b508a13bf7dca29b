/**
 * One message for the moderators when the bot joins a guild, in its system channel: who funds
 * the server, which channels to allow, the visibility setting. Posted once per guild, however
 * often the bot comes back (src/guilds/welcome.ts keeps the record), and only where it may post.
 */
import { PermissionFlagsBits, type Guild } from 'discord.js';
import type { CommandContext } from './context.js';
import { loggableError } from '../logger.js';
import { resolveLocale, translator, type Translator } from '../i18n/index.js';
import { escapeMarkdown } from '../text.js';

export type WelcomeOutcome = 'posted' | 'already_welcomed' | 'no_system_channel' | 'not_allowed_to_post' | 'failed';

const NEEDED = PermissionFlagsBits.ViewChannel | PermissionFlagsBits.SendMessages;

/** The welcome, in the language `t` writes (the guild's). */
export function welcomeText(options: { botName: string; startingCredits: number }, t: Translator): string {
  const funds = options.startingCredits > 0 ? t('welcome.startingCredits', { count: options.startingCredits }) : t('welcome.noCredits');
  return [
    t('welcome.thanks', { botName: escapeMarkdown(options.botName) }),
    '',
    t('welcome.stepsHeading'),
    t('welcome.funds', { funds }),
    t('welcome.channels'),
    t('welcome.visibility'),
  ].join('\n');
}

/** Welcomes a guild the bot has just joined; never throws. */
export async function welcomeGuild(guild: Guild, context: Pick<CommandContext, 'guilds' | 'settings' | 'logger'>): Promise<WelcomeOutcome> {
  const logger = context.logger.child({ guildId: guild.id });
  const channel = guild.systemChannel;
  if (!channel) {
    logger.debug('no welcome: the guild has no system channel');
    return 'no_system_channel';
  }
  const me = guild.members.me;
  if (!me || !channel.permissionsFor(me).has(NEEDED)) {
    logger.info({ channelId: channel.id }, 'no welcome: the bot may not post in the system channel');
    return 'not_allowed_to_post';
  }
  try {
    if (!(await context.guilds.claimWelcome(guild.id, channel.id))) {
      logger.debug('guild already welcomed');
      return 'already_welcomed';
    }
  } catch (error) {
    logger.warn({ err: loggableError(error) }, 'could not record the welcome');
    return 'failed';
  }
  try {
    await channel.send({
      // Posted to the channel, for everyone: in the guild's language.
      content: welcomeText(
        { botName: guild.client.user.username, startingCredits: context.settings.startingCredits },
        translator(resolveLocale(guild.preferredLocale)),
      ),
      allowedMentions: { parse: [] },
    });
    logger.info({ channelId: channel.id }, 'welcomed the guild');
    return 'posted';
  } catch (error) {
    logger.warn({ err: loggableError(error), channelId: channel.id }, 'could not post the welcome; a later join will try again');
    await context.guilds.releaseWelcome(guild.id).catch(() => {});
    return 'failed';
  }
}
