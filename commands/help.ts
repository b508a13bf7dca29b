/**
 * `/help`: what each command does and costs on this server, its balance, the member's own
 * limits, and whether they are a moderator. Only the member sees it.
 */
import { InteractionContextType, type RESTPostAPIApplicationCommandsJSONBody } from 'discord-api-types/v10';
import { getGuildCredits, spentToday } from '../src/credits/index.js';
import type { JobKind } from '../src/db/schema.js';
import { costOf, openCaller } from '../src/discord/caller.js';
import { defineCommand } from '../src/discord/command.js';
import { answerInPlace } from '../src/discord/respond.js';
import { effectiveDailyCap } from '../src/guilds/limits.js';
import { definition as creditsCommand } from './credits.js';
import { definition as creditsAdmin } from './credits-admin/index.js';
import { definition as download } from './download.js';
import { definition as jobs } from './jobs.js';
import { definition as library } from './library.js';
import { definition as lyrics } from './lyrics.js';
import { definition as settings } from './settings.js';
import { definition as song } from './song.js';
import { definition as upload } from './upload.js';
import { definition as video } from './video.js';
import { definition as voice } from './voice.js';

export const definition = {
  name: 'help',
  description: 'What each command does and costs here, this server’s balance, and your own limits.',
  contexts: [InteractionContextType.Guild],
  dm_permission: false,
} as const satisfies RESTPostAPIApplicationCommandsJSONBody;

/** The commands that spend credits, with the kind whose price they pay; the rest are free. */
const SPENDING: ReadonlyArray<{ readonly name: string; readonly description: string; readonly kind: JobKind }> = [
  { name: song.name, description: song.description, kind: 'song' },
  { name: lyrics.name, description: lyrics.description, kind: 'lyrics' },
  { name: `${voice.name} create`, description: 'A voice persona from a clear solo vocal recording.', kind: 'voice' },
  { name: video.name, description: video.description, kind: 'video' },
  { name: download.name, description: download.description, kind: 'download' },
  { name: upload.name, description: upload.description, kind: 'upload' },
];
/** Definitions carry the list price for Discord's command picker; here the server's own price stands beside the name. */
function withoutPrice(description: string): string {
  return description.replace(/\s*\(\d+ credits?\)\.?$/, '.');
}

const FREE = [creditsCommand, jobs, library, { name: `${voice.name} list`, description: 'This server’s voice personas.' }, definition];
const FOR_MODERATORS = [settings, creditsAdmin];

function credits(amount: number): string {
  return `${amount} credit${amount === 1 ? '' : 's'}`;
}

export default defineCommand({
  definition,
  acknowledge: () => 'ephemeral',
  async execute(interaction, _args, context) {
    const caller = await openCaller(interaction, context);
    const { guild, member } = caller;
    const [account, today] = await Promise.all([
      getGuildCredits(context.db, guild.id),
      spentToday(context.db, { guildId: guild.id, userId: member.userId, now: new Date() }),
    ]);
    const balance = account?.balance ?? guild.balance;
    const cap = account ? effectiveDailyCap(account, member.roleIds) : null;
    const personaCost = costOf(context, 'persona_song');

    const role = caller.isOwner
      ? 'You are one of the bot’s owners' + (caller.isModerator ? ' and a moderator here.' : '.')
      : caller.isModerator
        ? 'You are a moderator here: `/settings` and `/credits-admin` are yours.'
        : 'You are a member here.';
    const limits = [
      cap === null ? 'no daily limit' : `a daily limit of ${cap} credits (${today} used today; it resets at midnight UTC)`,
      caller.isModerator || guild.cooldownSeconds <= 0 ? 'no cooldown' : `a cooldown of ${guild.cooldownSeconds} s between requests`,
    ];
    const lines = [
      `**This server has ${balance} credits.**${account?.frozen ? ' Generation is **paused** by its moderators.' : ''}`,
      `${role} You have ${limits.join(' and ')}.`,
      '',
      '**Commands that spend the server’s credits**',
      ...SPENDING.map(({ name, description, kind }) => `\`/${name}\` · ${credits(costOf(context, kind))}: ${withoutPrice(description)}`),
      `A song with one of the server’s voices (\`/song voice:\`) costs ${credits(personaCost)}.`,
      '',
      '**Free**',
      ...FREE.map(({ name, description }) => `\`/${name}\`: ${description}`),
      ...(caller.isModerator || caller.isOwner ? ['', '**For moderators**', ...FOR_MODERATORS.map(({ name, description }) => `\`/${name}\`: ${description}`)] : []),
    ];
    await answerInPlace(interaction, { content: lines.join('\n').slice(0, 2000) });
  },
});
