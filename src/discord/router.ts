/**
 * The one `interactionCreate` handler: opens the interaction's answer with a budget (respond.ts),
 * hands the interaction to its command, button or modal, and turns every failure into a
 * friendly ephemeral answer in one place.
 */
import type { ButtonHandler, Command, GuildAutocomplete, MessageCommand, ModalHandler, SelectHandler } from './command.js';
import type { InGuild, InteractionPort, RepliablePort } from './interaction-port.js';
import type { BaseCommandContext, CommandContext } from './context.js';
import { decodeCustomId, type CustomIdAction } from '../discord-rest/custom-ids.js';
import { Refusal, isExpected, isGoneInteraction, offersPurchase, userComponentsFor, userMessageFor, type Shop } from './errors.js';
import { loggableError } from '../logger.js';
import { noteOffer } from './premium-buttons.js';
import { fitsDefinition, readArgs } from './options.js';
import { RequestTakenError } from '../pipeline/requests.js';
import { localText, translator, type Translator } from '../i18n/index.js';
import { answerPrivately, closeAnswer, firstAnswerOf, openAnswer, sendPrivateNote, type AcknowledgementKind } from './respond.js';
import { countInteraction } from './outcomes.js';
import { entitlementNotice } from './entitlement-notice.js';
import { purchaseNotice, type PurchaseAdded } from '../premium/purchases.js';

/** Discord shows at most 25 autocomplete choices. */
const MAX_CHOICES = 25;

/** Takes an interaction through the port: discord.js's own over the gateway, one built from the payload over HTTP. */
export type InteractionRouter = (interaction: InteractionPort) => Promise<void>;

export function createInteractionRouter(context: BaseCommandContext, commands: readonly Command[]): InteractionRouter {
  const byName = new Map<string, Command>();
  const buttons = new Map<CustomIdAction, ButtonHandler>();
  const modals = new Map<CustomIdAction, ModalHandler>();
  const selects = new Map<CustomIdAction, SelectHandler>();
  const messageCommands = new Map<string, MessageCommand>();
  for (const command of commands) {
    if (byName.has(command.definition.name)) throw new Error(`two commands named ${command.definition.name}`);
    byName.set(command.definition.name, command);
    for (const messageCommand of command.messageCommands ?? []) {
      if (messageCommands.has(messageCommand.definition.name)) throw new Error(`two message commands named ${messageCommand.definition.name}`);
      messageCommands.set(messageCommand.definition.name, messageCommand);
    }
    register(buttons, command.buttons, 'button');
    register(modals, command.modals, 'modal');
    register(selects, command.selects, 'select');
  }

  return async function routeInteraction(interaction: InteractionPort): Promise<void> {
    const logger = context.logger.child({
      interactionId: interaction.id,
      interactionType: interaction.type,
      guildId: interaction.guildId,
      channelId: interaction.channelId,
      userId: interaction.user.id,
      ...(interaction.isChatInputCommand() || interaction.isAutocomplete() || interaction.isMessageContextMenuCommand() ? { command: interaction.commandName } : {}),
      ...(interaction.isButton() || interaction.isStringSelectMenu() || interaction.isModalSubmit() ? { customId: interaction.customId } : {}),
    });
    const t = translator(interaction.locale);
    const handlerContext: CommandContext = { ...context, logger, t, guildT: translator(interaction.guildLocale) };
    const started = performance.now();
    const done = context.frontFirst?.begin();
    let thrown: { error: unknown } | undefined;
    // Packs this interaction put into the server: the buyer is told once the interaction is answered.
    let added: PurchaseAdded[] = [];
    const open = (kind: AcknowledgementKind) =>
      openAnswer(interaction as RepliablePort, kind, {
        budgetMs: context.settings.answerBudgetMs,
        receivedAt: started,
        onDeferred: (error) =>
          error === undefined
            ? logger.info({ budgetMs: context.settings.answerBudgetMs }, 'no decision within the answer budget; deferred')
            : logger.warn({ err: loggableError(error, [interaction.token ?? '']) }, 'could not defer the answer'),
      });

    try {
      if (!interaction.inGuild()) {
        if (interaction.isAutocomplete()) {
          await interaction.respond([]);
          return;
        }
        throw new Refusal('not_in_guild', localText('refusal.notInGuild'));
      }

      if (interaction.isChatInputCommand()) {
        const command = byName.get(interaction.commandName);
        if (!command) throw new Refusal('not_found', localText('refusal.commandGone'));
        // An older copy of the command in the member's app (or a forged payload): nothing of it is read, nothing spent.
        if (!fitsDefinition(command.definition, interaction.options.data)) throw new Refusal('invalid_input', localText('refusal.commandOutdated'));
        const args = readArgs(interaction.options.data);
        await open(command.acknowledge(args));
        added = await notePurchases(interaction, handlerContext);
        await command.execute(interaction, args, handlerContext);
        // Discord shows "The application did not respond" to a handler that returned without a word.
        if (!interaction.replied && !interaction.deferred && firstAnswerOf(interaction)?.first === 'open') {
          throw new Refusal('not_found', localText('refusal.commandGone'));
        }
      } else if (interaction.isMessageContextMenuCommand()) {
        const command = messageCommands.get(interaction.commandName);
        if (!command) throw new Refusal('not_found', localText('refusal.commandGone'));
        await open(command.acknowledge);
        added = await notePurchases(interaction, handlerContext);
        await command.execute(interaction, handlerContext);
      } else if (interaction.isAutocomplete()) {
        const command = byName.get(interaction.commandName);
        // A member the server's moderators blocked is offered nothing (looked up only where there is something to offer).
        const choices =
          command?.autocomplete && !(await blockedHere(interaction, handlerContext)) ? await command.autocomplete(interaction as GuildAutocomplete, handlerContext) : [];
        await interaction.respond(choices.slice(0, MAX_CHOICES));
      } else if (interaction.isButton()) {
        const id = decodeCustomId(interaction.customId);
        const handler = id && buttons.get(id.action);
        if (!id || !handler) throw new Refusal('not_found', localText('refusal.buttonGone'));
        await open(handler.acknowledge);
        added = await notePurchases(interaction, handlerContext);
        await handler.execute(interaction, id, handlerContext);
      } else if (interaction.isStringSelectMenu()) {
        const id = decodeCustomId(interaction.customId);
        const handler = id && selects.get(id.action);
        if (!id || !handler) throw new Refusal('not_found', localText('refusal.menuGone'));
        await open(handler.acknowledge);
        added = await notePurchases(interaction, handlerContext);
        await handler.execute(interaction, id, handlerContext);
      } else if (interaction.isModalSubmit()) {
        const id = decodeCustomId(interaction.customId);
        const handler = id && modals.get(id.action);
        if (!id || !handler) throw new Refusal('not_found', localText('refusal.formGone'));
        await open(handler.acknowledge);
        added = await notePurchases(interaction, handlerContext);
        await handler.execute(interaction, id, handlerContext);
      }
      logger.debug({ durationMs: Math.round(performance.now() - started), firstAnswer: firstAnswerOf(interaction) }, 'interaction handled');
    } catch (error) {
      thrown = { error };
      await answerFailure(interaction, error, logger, Math.round(performance.now() - started), t, context);
    } finally {
      done?.();
      closeAnswer(interaction);
      countInteraction(context.metrics, interaction, thrown);
      const first = firstAnswerOf(interaction);
      // Buttons that update their message defer at once by design: only answers that wait for a decision count.
      const decided = first?.kind === 'public' || first?.kind === 'ephemeral';
      if (decided && first.ms !== undefined && first.first !== 'open') context.metrics?.firstAnswer.observe({ how: first.first }, first.ms / 1000);
    }
    if (added.length > 0) await tellBuyer(interaction as RepliablePort, added, handlerContext);
  };
}

/** Whether the server's moderators block the member behind this interaction. */
async function blockedHere(interaction: InteractionPort, context: CommandContext): Promise<boolean> {
  return interaction.guildId !== null && (await context.guilds.memberBlockOf(interaction.guildId, interaction.user.id)) !== undefined;
}

/**
 * Discord lists the member's entitlements on every interaction: a pack bought but not yet
 * seen is received, and one waiting for this server goes in before the command, button, menu
 * or form spends.
 */
async function notePurchases(interaction: InteractionPort & InGuild, context: CommandContext): Promise<PurchaseAdded[]> {
  const held = [...interaction.entitlements.values()].map(entitlementNotice);
  if (!context.purchases || held.length === 0) return [];
  return context.purchases.noteInteraction({ userId: interaction.user.id, guildId: interaction.guildId, entitlements: held }).catch((err: unknown) => {
    context.logger.warn({ err }, "could not take the member's purchases into account");
    return [];
  });
}

/**
 * Tells the buyer in private what their packs added to this server, after the interaction's
 * own answer; where no follow-up can be sent (the interaction showed a form, or its answer
 * failed), by direct message.
 */
async function tellBuyer(interaction: RepliablePort, added: readonly PurchaseAdded[], context: CommandContext): Promise<void> {
  for (const purchase of added) {
    const answered = interaction.replied || interaction.deferred;
    const told = answered && (await sendPrivateNote(interaction, { content: purchaseNotice(context.t, purchase) }).then(() => true, (err: unknown) => {
      context.logger.warn({ err: loggableError(err, [interaction.token]), entitlementId: purchase.entitlementId }, 'could not tell the buyer of their purchase in private');
      return false;
    }));
    if (!told) await context.purchases?.tellDirectly(purchase);
  }
}

function register<H>(into: Map<CustomIdAction, H>, handlers: Partial<Record<CustomIdAction, H>> | undefined, what: string): void {
  for (const [action, handler] of Object.entries(handlers ?? {}) as Array<[CustomIdAction, H]>) {
    if (into.has(action)) throw new Error(`two ${what} handlers for ${action}`);
    into.set(action, handler);
  }
}

/**
 * Logs the failure (with the interaction id, never its token) and tells the member in
 * private. Never throws: an interaction that expired or was already answered is only logged.
 */
async function answerFailure(
  interaction: InteractionPort,
  error: unknown,
  logger: CommandContext['logger'],
  durationMs: number,
  t: Translator,
  context: Pick<CommandContext, 'purchases' | 'credits' | 'logger'>,
): Promise<void> {
  if (error instanceof RequestTakenError) {
    logger.info({ jobId: error.jobId, durationMs }, 'interaction accepted by another process; left to it');
    return;
  }
  const err = loggableError(error, [interaction.token ?? '']);
  if (isGoneInteraction(error)) logger.warn({ err, durationMs }, 'interaction expired before it was answered');
  else if (isExpected(error)) logger.info({ err: { name: err.name, message: err.message }, durationMs }, 'interaction refused');
  else logger.error({ err, durationMs }, 'interaction failed');

  const shop = await shopFor(interaction, error, context);
  const message = userMessageFor(error, t, shop);
  if (message === undefined) return;
  const answered = interaction.isAutocomplete()
    ? interaction.responded
      ? Promise.resolve()
      : interaction.respond([])
    : answerPrivately(interaction as RepliablePort, { content: message, components: userComponentsFor(error, t, shop) });
  const told = await answered.then(
    () => true,
    (secondError: unknown) => {
      logger.warn({ err: loggableError(secondError, [interaction.token ?? '']) }, 'could not tell the member about a failure');
      return false;
    },
  );
  // The Buy buttons were shown here: a pack bought next goes to this server.
  if (told && interaction.inGuild() && offersPurchase(error, shop)) noteOffer(context.purchases, interaction.user.id, interaction.guildId, logger, interaction.locale);
}

/** What the member may be offered with a refusal for too few credits: read only on that path. */
async function shopFor(interaction: InteractionPort, error: unknown, context: Pick<CommandContext, 'purchases' | 'credits' | 'logger'>): Promise<Shop | undefined> {
  const catalog = context.purchases?.catalog;
  if (!catalog || !interaction.inGuild() || !offersPurchase(error, { catalog, subscribed: [] })) return undefined;
  const subscribed = await context.credits.liveSubscriptionSkus(interaction.guildId).catch((err: unknown) => {
    context.logger.warn({ err }, 'could not read the server’s plans; offering every product');
    return [];
  });
  return { catalog, subscribed };
}
