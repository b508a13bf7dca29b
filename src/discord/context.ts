import type { Config } from '../config.js';
import type { DataFacades } from './data.js';
import type { Logger } from '../logger.js';
import type { Pipeline } from '../pipeline/pipeline.js';
import type { Translator } from '../i18n/index.js';
import type { Metrics } from '../metrics.js';
import type { FrontFirst } from '../pipeline/front-first.js';
import type { PendingChoices } from './pending-choices.js';
import type { VoiceControl } from '../voice/control.js';
import type { Purchases } from '../premium/purchases.js';
import type { AutomodRulesSource } from '../safety/automod.js';

/** The settings the handlers read: no tokens, keys or addresses. */
export type CommandSettings = Pick<Config, 'musicModels' | 'discordCdnUrls' | 'startingCredits' | 'answerBudgetMs' | 'packClaimMinutes' | 'botOwnerIds' | 'notifyAfterSeconds'>;

/** The handlers' settings out of the whole configuration: a copy, so that no handler can reach a token. */
export function commandSettings(config: Config): CommandSettings {
  const { musicModels, discordCdnUrls, startingCredits, answerBudgetMs, packClaimMinutes, botOwnerIds, notifyAfterSeconds } = config;
  return Object.freeze({ musicModels, discordCdnUrls, startingCredits, answerBudgetMs, packClaimMinutes, botOwnerIds, notifyAfterSeconds });
}

/**
 * What every command, autocomplete and button handler receives. The router hands each
 * interaction its own copy whose `logger` carries the interaction id and whose `t` and
 * `guildT` write in the member's and the guild's language.
 */
export interface CommandContext extends DataFacades {
  readonly settings: CommandSettings;
  readonly logger: Logger;
  readonly pipeline: Pipeline;
  /** The process's metrics, when it exports them (the router times its first answers). */
  readonly metrics?: Metrics;
  /** Where a command keeps its options while it asks the member which one they meant (absent: it lists the ids to type). */
  readonly pendingChoices?: PendingChoices;
  /** The way to the guilds' voice players (absent in tests that need none: the voice commands then say the player is unreachable). */
  readonly voice?: VoiceControl;
  /** Purchases through Discord, when the bot sells any (CREDIT_PACKS, SUBSCRIPTION_ALLOWANCES). */
  readonly purchases?: Purchases;
  /** The servers' Discord AutoMod rules (absent: none are read), for `/settings show`. */
  readonly automod?: AutomodRulesSource;
  /** Where the workers share this process: told of each interaction, so background work makes way. */
  readonly frontFirst?: FrontFirst;
  /** Writes in the member's language (the interaction's `locale`): replies, refusals, buttons, modals. */
  readonly t: Translator;
  /** Writes in the guild's language (`guild_locale`): messages to the channel. */
  readonly guildT: Translator;
}

/** What the entry points hand the gateway: the router adds the interaction's logger and languages. */
export type BaseCommandContext = Omit<CommandContext, 'logger' | 't' | 'guildT'> & Pick<CommandContext, 'logger'>;
