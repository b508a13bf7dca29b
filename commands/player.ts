/**
 * The voice player's commands besides `/play` and `/radio`: `/queue`, `/skip`, `/stop`,
 * `/pause` and `/resume`, the controls (`/volume`, `/seek`, `/loop`, `/shuffle`, `/remove`,
 * `/move`, `/clear`), the now-playing message's buttons, and the one way every voice command
 * asks the guild's player (src/voice/control.ts finds the process that holds it).
 */
import { ApplicationCommandOptionType, InteractionContextType, type RESTPostAPIApplicationCommandsJSONBody } from 'discord-api-types/v10';
import type { RepliablePort } from '../src/discord/interaction-port.js';
import { memberOf } from '../src/discord/caller.js';
import { defineCommand, type ButtonHandler, type Command } from '../src/discord/command.js';
import type { CommandContext } from '../src/discord/context.js';
import { Refusal } from '../src/discord/errors.js';
import { answerInPlace, answerPrivately } from '../src/discord/respond.js';
import { english, localText, resolveLocale, type MessageKey } from '../src/i18n/index.js';
import type { PlayerOp } from '../src/voice/player-requests.js';
import { REFUSAL_TEXTS } from '../src/pipeline/refusal-texts.js';
import { isPlayerButton } from '../src/voice/player.js';
import { parseTimestamp, VOLUME_RANGE } from '../src/voice/rules.js';

/**
 * Sends `action` to the guild's player and answers with what it says: in place (public or
 * private, as the command was acknowledged), or to the member alone for a refusal.
 */
export async function askPlayer(interaction: RepliablePort, context: CommandContext, action: PlayerOp): Promise<void> {
  if (!interaction.guildId) throw new Refusal('not_in_guild', localText('refusal.notInGuild'));
  const block = await context.guilds.memberBlockOf(interaction.guildId, interaction.user.id);
  if (block) throw new Refusal('blocked_member', REFUSAL_TEXTS.blockedMember(block.until));
  if (!context.voice) throw new Refusal('not_allowed', localText('player.unreachable'));
  const reply = await context.voice.request({
    guildId: interaction.guildId,
    requester: {
      ...memberOf(interaction),
      channelId: interaction.channelId ?? '',
      parentChannelId: null,
      guildLocale: resolveLocale(interaction.guildLocale),
    },
    action,
  });
  const content = reply.lines.map((line) => context.t.text(line)).join('\n').slice(0, 2000);
  await (reply.private ? answerPrivately(interaction, { content }) : answerInPlace(interaction, { content }));
}

function simpleCommand(name: 'queue' | 'skip' | 'stop' | 'pause' | 'resume' | 'shuffle' | 'clear'): Command {
  const definition = {
    name,
    description: english(`command.${name}.description` satisfies MessageKey),
    contexts: [InteractionContextType.Guild],
    dm_permission: false,
  } as const satisfies RESTPostAPIApplicationCommandsJSONBody;
  return defineCommand({
    definition,
    acknowledge: () => 'public',
    async execute(interaction, _args, context) {
      await askPlayer(interaction, context, { op: name });
    },
  });
}

export const queue = simpleCommand('queue');
export const skip = simpleCommand('skip');
export const stop = simpleCommand('stop');
export const pause = simpleCommand('pause');
export const resume = simpleCommand('resume');
export const shuffle = simpleCommand('shuffle');
export const clear = simpleCommand('clear');

/** Positions in the queue, as `/queue` numbers them. */
const POSITION = { type: ApplicationCommandOptionType.Integer, required: true, min_value: 1, max_value: 10_000 } as const;

export const volume = defineCommand({
  definition: {
    name: 'volume',
    description: english('command.volume.description'),
    contexts: [InteractionContextType.Guild],
    dm_permission: false,
    options: [{ type: ApplicationCommandOptionType.Integer, name: 'level', description: english('command.volume.level.description'), required: true, min_value: VOLUME_RANGE.min, max_value: VOLUME_RANGE.max }],
  } as const satisfies RESTPostAPIApplicationCommandsJSONBody,
  acknowledge: () => 'public',
  async execute(interaction, args, context) {
    await askPlayer(interaction, context, { op: 'volume', level: args.level });
  },
});

export const seek = defineCommand({
  definition: {
    name: 'seek',
    description: english('command.seek.description'),
    contexts: [InteractionContextType.Guild],
    dm_permission: false,
    options: [{ type: ApplicationCommandOptionType.String, name: 'to', description: english('command.seek.to.description'), required: true, max_length: 12 }],
  } as const satisfies RESTPostAPIApplicationCommandsJSONBody,
  acknowledge: () => 'public',
  async execute(interaction, args, context) {
    const seconds = parseTimestamp(args.to);
    if (seconds === undefined) throw new Refusal('invalid_input', localText('player.control.badTime'));
    await askPlayer(interaction, context, { op: 'seek', seconds });
  },
});

export const loop = defineCommand({
  definition: {
    name: 'loop',
    description: english('command.loop.description'),
    contexts: [InteractionContextType.Guild],
    dm_permission: false,
    options: [
      {
        type: ApplicationCommandOptionType.String,
        name: 'mode',
        description: english('command.loop.mode.description'),
        required: true,
        choices: [
          { name: english('command.loop.mode.choice.off'), value: 'off' },
          { name: english('command.loop.mode.choice.song'), value: 'song' },
          { name: english('command.loop.mode.choice.queue'), value: 'queue' },
        ],
      },
    ],
  } as const satisfies RESTPostAPIApplicationCommandsJSONBody,
  acknowledge: () => 'public',
  async execute(interaction, args, context) {
    const mode = args.mode === 'song' || args.mode === 'queue' ? args.mode : 'off';
    await askPlayer(interaction, context, { op: 'loop', mode });
  },
});

export const remove = defineCommand({
  definition: {
    name: 'remove',
    description: english('command.remove.description'),
    contexts: [InteractionContextType.Guild],
    dm_permission: false,
    options: [{ ...POSITION, name: 'position', description: english('command.remove.position.description') }],
  } as const satisfies RESTPostAPIApplicationCommandsJSONBody,
  acknowledge: () => 'public',
  async execute(interaction, args, context) {
    await askPlayer(interaction, context, { op: 'remove', position: args.position });
  },
});

export const move = defineCommand({
  definition: {
    name: 'move',
    description: english('command.move.description'),
    contexts: [InteractionContextType.Guild],
    dm_permission: false,
    options: [
      { ...POSITION, name: 'from', description: english('command.move.from.description') },
      { ...POSITION, name: 'to', description: english('command.move.to.description') },
    ],
  } as const satisfies RESTPostAPIApplicationCommandsJSONBody,
  acknowledge: () => 'public',
  async execute(interaction, args, context) {
    await askPlayer(interaction, context, { op: 'move', from: args.from, to: args.to });
  },
});

/** Pause/resume, skip and stop on the now-playing message: the message is edited by the player, the member told privately. */
export const playerButtons = {
  player: {
    acknowledge: 'ephemeral',
    async execute(interaction, id, context) {
      if (!isPlayerButton(id.subject)) throw new Refusal('not_found', localText('refusal.buttonGone'));
      await askPlayer(interaction, context, { op: id.subject });
    },
  },
} as const satisfies Record<'player', ButtonHandler>;
