/**
 * `/help`: what each command does and costs on this server, its balance, the member's own
 * limits, and whether they are a moderator. Only the member sees it.
 */
import { InteractionContextType, type RESTPostAPIApplicationCommandsJSONBody } from 'discord-api-types/v10';
import type { JobKind } from '../src/db/schema.js';
import { costOf, loadCaller } from '../src/discord/caller.js';
import { defineCommand } from '../src/discord/command.js';
import { answerInPlace, answerPrivately } from '../src/discord/respond.js';
import { CATALOGUES, english, type MessageKey, type Translator } from '../src/i18n/index.js';
import { noteOffer, offerLines, premiumRows, sellsAnything } from '../src/discord/premium-buttons.js';
import { definition as creditsCommand } from './credits.js';
import { definition as creditsAdmin } from './credits-admin/index.js';
import { definition as download } from './download.js';
import { definition as jobs } from './jobs.js';
import { definition as library } from './library.js';
import { definition as lyrics } from './lyrics.js';
import { definition as play } from './play.js';
import { definition as radio } from './radio.js';
import { definition as settings } from './settings.js';
import { definition as song } from './song.js';
import { definition as upload } from './upload.js';
import { definition as video } from './video.js';
import { definition as voice } from './voice.js';

export const definition = {
  name: 'help',
  description: english('command.help.description'),
  contexts: [InteractionContextType.Guild],
  dm_permission: false,
} as const satisfies RESTPostAPIApplicationCommandsJSONBody;

/** A command or subcommand by its path: its names, as in its catalogue keys `command.<path>.name|description`. */
type CommandPath = readonly [string, ...string[]];

/** The commands that spend credits, with the kind whose price they pay; the rest are free. */
const SPENDING: ReadonlyArray<{ readonly path: CommandPath; readonly kind: JobKind }> = [
  { path: [song.name], kind: 'song' },
  { path: [lyrics.name], kind: 'lyrics' },
  { path: [voice.name, 'create'], kind: 'voice' },
  { path: [video.name], kind: 'video' },
  { path: [download.name], kind: 'download' },
  { path: [upload.name], kind: 'upload' },
];
const FREE: readonly CommandPath[] = [[creditsCommand.name], [jobs.name], [library.name], [voice.name, 'list'], ['notify'], ['contest'], [definition.name]];
/** Listening together in voice: free too. */
const LISTENING: readonly CommandPath[] = [[play.name], [radio.name], ['queue'], ['skip'], ['pause'], ['resume'], ['stop']];
/** The player's controls, named together on one line: Discord cuts the help at 2,000 characters. */
const PLAYER_CONTROLS: readonly CommandPath[] = [['volume'], ['seek'], ['loop'], ['shuffle'], ['remove'], ['move'], ['clear']];
const FOR_MODERATORS: readonly CommandPath[] = [[settings.name], [creditsAdmin.name]];

/** A command's text in the member's language, from the keys its definition's localizations come from. */
function commandText(t: Translator, path: readonly string[], what: 'name' | 'description'): string {
  const key = `command.${path.join('.')}.${what}`;
  if (!(key in CATALOGUES.en)) return what === 'name' ? path.join(' ') : '';
  return t.text({ key: key as MessageKey });
}

/** `/voice create`, with each name as the member's Discord shows it. */
function commandName(t: Translator, path: CommandPath): string {
  return `/${path.map((_, depth) => commandText(t, path.slice(0, depth + 1), 'name')).join(' ')}`;
}

/** Descriptions carry the list price for Discord's command picker ("(10 credits)"); here the server's own price stands beside the name. */
function withoutPrice(description: string): string {
  return description.replace(/\s*\([^()]*\d[^()]*\)\s*\.?$/, '.');
}

const MESSAGE_LIMIT = 2_000;

/** The help's lines in messages of at most 2,000 characters, cut only between sections (at a blank line). */
function inMessages(lines: readonly string[]): string[] {
  const sections: string[] = [];
  let section: string[] = [];
  for (const line of [...lines, '']) {
    if (line !== '') {
      section.push(line);
    } else if (section.length > 0) {
      sections.push(section.join('\n'));
      section = [];
    }
  }
  const messages: string[] = [];
  for (const text of sections) {
    const last = messages.at(-1);
    if (last !== undefined && last.length + 2 + text.length <= MESSAGE_LIMIT) messages[messages.length - 1] = `${last}\n\n${text}`;
    else messages.push(text.slice(0, MESSAGE_LIMIT));
  }
  return messages;
}

export default defineCommand({
  definition,
  acknowledge: () => 'ephemeral',
  async execute(interaction, _args, context) {
    const caller = await loadCaller(interaction, context);
    const { guild, member } = caller;
    const { t } = context;
    const [account, today] = await Promise.all([
      context.credits.getGuildCredits(guild.id),
      context.credits.spentToday({ guildId: guild.id, userId: member.userId, now: new Date() }),
    ]);
    const balance = account?.balance ?? guild.balance;
    const cap = guild.dailyCap;

    const role = caller.isOwner
      ? t(caller.isModerator ? 'help.roleOwnerModerator' : 'help.roleOwner')
      : t(caller.isModerator ? 'help.roleModerator' : 'help.roleMember');
    const limits = t('help.limits', {
      dailyLimit: cap === null ? t('help.noDailyLimit') : t('help.dailyLimit', { count: cap, today }),
      cooldown: caller.isModerator || guild.cooldownSeconds <= 0 ? t('help.noCooldown') : t('help.cooldown', { seconds: guild.cooldownSeconds }),
    });
    const listed = (path: CommandPath) => `\`${commandName(t, path)}\`: ${commandText(t, path, 'description')}`;
    const lines = [
      `${t('help.balance', { count: balance })}${account?.frozen ? ` ${t('help.paused')}` : ''}`,
      `${role} ${limits}`,
      '',
      t('help.spendingHeading'),
      ...SPENDING.map(
        ({ path, kind }) =>
          `\`${commandName(t, path)}\` · ${t('help.price', { count: costOf(context, kind) })}: ${withoutPrice(commandText(t, path, 'description'))}`,
      ),
      t('help.personaSong', { option: commandText(t, [song.name, 'voice'], 'name'), count: costOf(context, 'persona_song') }),
      '',
      t('help.freeHeading'),
      ...FREE.map(listed),
      '',
      t('help.listeningHeading'),
      ...LISTENING.map(listed),
      t('help.playerControls', { commands: PLAYER_CONTROLS.map((path) => `\`${commandName(t, path)}\``).join(', ') }),
      ...(caller.isModerator || caller.isOwner ? ['', t('help.moderatorsHeading'), ...FOR_MODERATORS.map(listed)] : []),
    ];
    const { purchases } = context;
    // A plan the server holds is not offered again.
    const subscribed = sellsAnything(purchases?.catalog) ? await context.credits.liveSubscriptionSkus(guild.id) : [];
    const buyRows = sellsAnything(purchases?.catalog) ? premiumRows(purchases.catalog, { subscribed }) : [];
    // Under the balance, not at the end: the help is long, and Discord cuts it at 2,000 characters.
    if (buyRows.length > 0) lines.splice(2, 0, '', t('help.buy'), ...offerLines(purchases!.catalog, t, { subscribed }));
    // Discord takes 2,000 characters a message: whole sections go on in a second private message.
    const [first, ...more] = inMessages(lines);
    await answerInPlace(interaction, { content: first ?? '', components: buyRows });
    for (const content of more) await answerPrivately(interaction, { content });
    if (buyRows.length > 0) noteOffer(purchases, member.userId, guild.id, context.logger, interaction.locale);
  },
});
