/**
 * One `/credits-admin` subcommand: its part of the definition and its handler, in a file of
 * its own. Its arguments are typed from its own definition, as a whole command's are.
 */
import type { Caller } from '../../src/discord/caller.js';
import type { CommandContext } from '../../src/discord/context.js';
import type { CommandArgs } from '../../src/discord/options.js';
import type { GuildChatInput } from '../../src/discord/command.js';

interface SubcommandDefinition {
  readonly type: 1;
  readonly name: string;
  readonly description: string;
  readonly options?: readonly unknown[];
}

/** What a subcommand's handler works with; the caller's rights are checked before it runs. */
export interface SubcommandRun {
  readonly interaction: GuildChatInput;
  readonly context: CommandContext;
  readonly caller: Caller;
  /** Answers in place of the deferred ephemeral reply. */
  reply(content: string): Promise<void>;
}

export type SubcommandOptions<D> = CommandArgs<{ readonly options: readonly [D] }> extends { readonly options: infer O } ? O : never;

export interface Subcommand<D extends SubcommandDefinition = SubcommandDefinition> {
  readonly definition: D;
  /** Grant, take, allowance and account are the bot owners' alone; the rest moderators' too. */
  readonly ownersOnly: boolean;
  execute(options: SubcommandOptions<D>, run: SubcommandRun): Promise<void>;
}

export function defineSubcommand<const D extends SubcommandDefinition>(subcommand: Subcommand<D>): Subcommand<D> {
  return subcommand;
}
