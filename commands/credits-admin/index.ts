/**
 * `/credits-admin`: moderators manage their server's credits; grant, take, allowance and
 * account are the bot owners'. One file per subcommand (freeze/unfreeze and grant/take share
 * theirs); this file puts them together and checks who may run which.
 */
import {
  InteractionContextType,
  PermissionFlagsBits,
  type APIApplicationCommandSubcommandOption,
  type RESTPostAPIApplicationCommandsJSONBody,
} from 'discord-api-types/v10';
import { loadCaller, requireModerator, requireOwner } from '../../src/discord/caller.js';
import { answerInPlace } from '../../src/discord/respond.js';
import { defineCommand } from '../../src/discord/command.js';
import { english } from '../../src/i18n/index.js';
import { account } from './account.js';
import { alert } from './alert.js';
import { allowance, allowanceButtons } from './allowance.js';
import { freeze, unfreeze } from './freeze.js';
import { grant, take } from './grant.js';
import { history, historyButtons } from './history.js';
import type { Subcommand } from './subcommand.js';
import { usage } from './usage.js';
import { userLimit } from './user-limit.js';

const subcommands = [usage, history, userLimit, freeze, unfreeze, alert, grant, take, allowance, account] as const;
const byName = new Map<string, Subcommand>(subcommands.map((subcommand) => [subcommand.definition.name, subcommand as unknown as Subcommand]));

export const definition = {
  name: 'credits-admin',
  description: english('command.credits-admin.description'),
  contexts: [InteractionContextType.Guild],
  dm_permission: false,
  default_member_permissions: String(PermissionFlagsBits.ManageGuild),
  // Each subcommand types its own options from its own definition; here they are only listed.
  options: subcommands.map((subcommand) => subcommand.definition) as unknown as APIApplicationCommandSubcommandOption[],
} as const satisfies RESTPostAPIApplicationCommandsJSONBody;

export default defineCommand({
  definition,
  acknowledge: () => 'ephemeral',
  async execute(interaction, args, context) {
    const subcommand = byName.get(args.subcommand);
    if (!subcommand) throw new Error(`unknown /credits-admin subcommand ${args.subcommand}`);
    const caller = await loadCaller(interaction, context);
    // Discord's default permission can be overridden per guild: check again here.
    if (subcommand.ownersOnly) requireOwner(caller);
    else requireModerator(caller, { ownersToo: true });
    await subcommand.execute(args.options as never, {
      interaction,
      context,
      caller,
      reply: (content) => answerInPlace(interaction, { content }),
    });
  },
  buttons: { ...historyButtons, ...allowanceButtons },
});
