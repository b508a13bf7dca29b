import { InteractionContextType, type RESTPostAPIApplicationCommandsJSONBody } from 'discord-api-types/v10';
import { ActionRowBuilder, ButtonBuilder, ButtonStyle } from 'discord.js';
import { allowanceInForce, nextAllowanceTopUp, utcMonthStart } from '../src/credits/index.js';
import type { EntitlementRow } from '../src/credits/index.js';
import { loadCaller } from '../src/discord/caller.js';
import type { ButtonHandler, GuildButton, GuildChatInput } from '../src/discord/command.js';
import type { CommandContext } from '../src/discord/context.js';
import { answerInPlace } from '../src/discord/respond.js';
import { defineCommand } from '../src/discord/command.js';
import { encodeCustomId } from '../src/discord-rest/custom-ids.js';
import { english, type Translator } from '../src/i18n/index.js';
import { BUTTONS_PER_ROW, MAX_ROWS, noteOffer, offerLines, premiumRows, sellsAnything } from '../src/discord/premium-buttons.js';
import type { ClaimResult } from '../src/premium/purchases.js';

export const definition = {
  name: 'credits',
  description: english('command.credits.description'),
  contexts: [InteractionContextType.Guild],
  dm_permission: false,
} as const satisfies RESTPostAPIApplicationCommandsJSONBody;

/** Rows kept for the member's own waiting packs; the Buy buttons take the rest. */
const PACK_ROWS = 2;

/** One line per waiting pack: when it was bought, and where it goes unless added here. */
function packLine(pack: EntitlementRow, context: CommandContext, interaction: GuildChatInput, now: Date): string {
  const { t } = context;
  const at = Math.floor(pack.createdAt.getTime() / 1000);
  if (!pack.defaultGuildId) return t('credits.packWaitingNowhere', { credits: pack.credits, at });
  const otherName = pack.defaultGuildId === interaction.guildId ? undefined : interaction.client.guilds?.cache.get(pack.defaultGuildId)?.name;
  const place =
    pack.defaultGuildId === interaction.guildId ? t('credits.packPlaceHere') : otherName ? `**${otherName}**` : t('credits.packPlaceOther');
  const due = new Date(pack.createdAt.getTime() + context.settings.packClaimMinutes * 60_000);
  return due > now
    ? t('credits.packWaiting', { credits: pack.credits, at, place, due: Math.floor(due.getTime() / 1000) })
    : t('credits.packWaitingSoon', { credits: pack.credits, at, place });
}

function claimButton(pack: EntitlementRow, t: Translator): ButtonBuilder {
  return new ButtonBuilder()
    .setCustomId(encodeCustomId({ action: 'pack-claim', subject: pack.id }))
    .setLabel(t('credits.addPackButton', { credits: pack.credits }))
    .setStyle(ButtonStyle.Success);
}

/** What a click on "Add to this server" did, for the buyer. */
function claimAnswer(outcome: ClaimResult, guildId: string, t: Translator): string {
  switch (outcome.status) {
    case 'claimed':
      return t('credits.packAdded', { credits: outcome.credits, balance: outcome.balance });
    case 'already':
      return outcome.guildId === guildId ? t('credits.packAlreadyHere') : t('credits.packAlreadyElsewhere');
    case 'refunded':
      return t('credits.packRefunded');
    case 'not_yours':
      return t('credits.packNotYours');
    case 'unknown':
      return t('credits.packUnknown');
  }
}

export default defineCommand({
  definition,
  acknowledge: () => 'ephemeral',
  async execute(interaction, _args, context) {
    const caller = await loadCaller(interaction, context);
    const now = new Date();
    const guildId = caller.guild.id;
    const userId = caller.member.userId;
    const { purchases } = context;
    const selling = sellsAnything(purchases?.catalog);
    const [credits, month, mine, today, packs, subscribed] = await Promise.all([
      context.credits.getGuildCredits(guildId),
      context.credits.guildUsage({ guildId, since: utcMonthStart(now) }),
      context.credits.usage({ guildId, userId, since: utcMonthStart(now) }),
      context.credits.spentToday({ guildId, userId, now }),
      purchases ? purchases.unclaimedPacks(userId) : Promise.resolve([]),
      selling ? context.credits.liveSubscriptionSkus(guildId, now) : Promise.resolve([]),
    ]);
    const balance = credits?.balance ?? caller.guild.balance;
    const cap = caller.guild.dailyCap;
    const canSpend = credits?.frozen ? 0 : Math.max(0, Math.min(balance, cap === null ? balance : cap - today));

    const { t } = context;
    const lines = [
      t('credits.balance', { balance }),
      credits && allowanceInForce(credits) > 0
        ? t('credits.allowance', { allowance: allowanceInForce(credits), at: Math.floor(nextAllowanceTopUp(now).getTime() / 1000) })
        : t('credits.noAllowance'),
      t('credits.used', { month: t.month(now), spent: month.spent, count: month.jobs, mySpent: mine.spent, myJobs: mine.jobs }),
      cap === null ? t('credits.canSpend', { canSpend }) : t('credits.canSpendCapped', { canSpend, cap, today }),
    ];
    if (credits?.frozen) lines.push(t('credits.paused'));

    // The member's own packs first: only the buyer sees them here, and only the buyer's click counts.
    const shownPacks = packs.slice(0, PACK_ROWS * BUTTONS_PER_ROW);
    const components: Array<ActionRowBuilder<ButtonBuilder>> = [];
    if (shownPacks.length > 0) {
      lines.push('', ...shownPacks.map((pack) => packLine(pack, context, interaction, now)));
      if (packs.length > shownPacks.length) lines.push(t('credits.packsMore', { count: packs.length - shownPacks.length }));
      for (let start = 0; start < shownPacks.length; start += BUTTONS_PER_ROW) {
        components.push(new ActionRowBuilder<ButtonBuilder>().addComponents(shownPacks.slice(start, start + BUTTONS_PER_ROW).map((pack) => claimButton(pack, t))));
      }
    }
    const buyRows = selling ? premiumRows(purchases!.catalog, { subscribed, maxRows: MAX_ROWS - components.length }) : [];
    if (buyRows.length > 0) lines.push('', ...offerLines(purchases!.catalog, t, { subscribed }));
    components.push(...buyRows);

    await answerInPlace(interaction, { content: lines.join('\n').slice(0, 2000), components });
    if (buyRows.length > 0) noteOffer(purchases, userId, guildId, context.logger, interaction.locale);
  },
  buttons: {
    'pack-claim': {
      acknowledge: 'ephemeral',
      async execute(interaction: GuildButton, id, context) {
        const { t, purchases } = context;
        if (!purchases) return answerInPlace(interaction, { content: t('credits.packUnknown') });
        const content = claimAnswer(await purchases.claim({ entitlementId: id.subject, userId: interaction.user.id, guildId: interaction.guildId }), interaction.guildId, t);
        await answerInPlace(interaction, { content });
      },
    },
  } satisfies Record<'pack-claim', ButtonHandler>,
});
