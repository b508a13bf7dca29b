/**
 * `/credits-admin allowance`: the bot owners set the monthly allowance. One that would top the
 * balance up at once is confirmed first: the owner sees what it would add and chooses now or
 * next month. Why: docs/decisions/allowance-top-up-confirm.md
 */
import { ApplicationCommandOptionType } from 'discord-api-types/v10';
import { ActionRowBuilder, ButtonBuilder, ButtonStyle } from 'discord.js';
import { nextAllowanceTopUp, utcMonth, utcMonthStart } from '../../src/credits/index.js';
import { loadCaller, requireOwner, type Caller } from '../../src/discord/caller.js';
import type { ButtonHandler } from '../../src/discord/command.js';
import type { CommandContext } from '../../src/discord/context.js';
import { Refusal } from '../../src/discord/errors.js';
import { answerInPlace } from '../../src/discord/respond.js';
import { encodeCustomId } from '../../src/discord-rest/custom-ids.js';
import { english, localText, type Translator } from '../../src/i18n/index.js';
import { amountOption, MAX_AMOUNT } from './options.js';
import { defineSubcommand } from './subcommand.js';

const unixSeconds = (date: Date) => Math.floor(date.getTime() / 1000);

/** The second sentence of every answer: when the allowance next tops the balance up, and to what. */
function nextTopUpLine(t: Translator, allowance: number, balance: number, now: Date): string {
  return t('creditsAdmin.allowanceNext', { count: allowance, balance, at: unixSeconds(nextAllowanceTopUp(now)) });
}

/** Sets the allowance and, when `when` is `now`, applies it at once; answers with the balance it left. */
async function setAllowance(context: CommandContext, caller: Caller, amount: number, key: string, when: 'now' | 'next'): Promise<string> {
  const { t } = context;
  const now = new Date();
  const guildId = caller.guild.id;
  const outcome = await context.credits.setMonthlyAllowance({ guildId, amount, actorId: caller.member.userId, key, fromNextMonth: when === 'next', now });
  if (amount === 0) return t('creditsAdmin.allowanceOff');
  const applied = await context.credits.applyMonthlyAllowance(guildId, now);
  const set = t('creditsAdmin.allowanceOn', { count: outcome.monthlyAllowance, previous: outcome.previous });
  const toppedUp = applied.amount > 0 ? ` ${t('creditsAdmin.allowanceToppedUp', { before: applied.balance - applied.amount, balance: applied.balance })}` : '';
  return `${set}${toppedUp} ${nextTopUpLine(t, amount, applied.balance, now)}`;
}

function choiceButton(amount: number, when: 'now' | 'next', label: string, style: ButtonStyle): ButtonBuilder {
  return new ButtonBuilder().setCustomId(encodeCustomId({ action: 'allowance-set', subject: String(amount), arg: when })).setLabel(label).setStyle(style);
}

export const allowance = defineSubcommand({
  definition: {
    type: ApplicationCommandOptionType.Subcommand,
    name: 'allowance',
    description: english('command.credits-admin.allowance.description'),
    options: [amountOption(english('command.credits-admin.allowance.amount.description'), 0)],
  },
  ownersOnly: true,
  async execute({ amount }, { interaction, context, caller, reply }) {
    const now = new Date();
    const { balance, allowancePeriod } = caller.guild;
    // This month's allowance not yet applied, and this one would add credits: the owner chooses first.
    const wouldTopUpNow = amount > balance && allowancePeriod !== utcMonth(now);
    if (!wouldTopUpNow) return reply(await setAllowance(context, caller, amount, interaction.id, 'now'));

    const { t } = context;
    const take = await context.credits.latestTake(caller.guild.id, utcMonthStart(now));
    const lines = [t('creditsAdmin.allowanceConfirm', { count: amount, balance })];
    if (take) lines.push(t('creditsAdmin.allowanceUndoesTake', { taken: take.amount, at: unixSeconds(take.createdAt) }));
    lines.push(t('creditsAdmin.allowanceChoose', { at: unixSeconds(nextAllowanceTopUp(now)) }));
    await answerInPlace(interaction, {
      content: lines.join('\n'),
      components: [
        new ActionRowBuilder<ButtonBuilder>().addComponents(
          choiceButton(amount, 'now', t('creditsAdmin.allowanceNowButton', { count: amount }), ButtonStyle.Primary),
          choiceButton(amount, 'next', t('creditsAdmin.allowanceNextMonthButton'), ButtonStyle.Secondary),
        ),
      ],
    });
  },
});

export const allowanceButtons = {
  'allowance-set': {
    acknowledge: 'update',
    async execute(interaction, id, context) {
      const amount = Number(id.subject);
      if (!Number.isSafeInteger(amount) || amount < 1 || amount > MAX_AMOUNT || (id.arg !== 'now' && id.arg !== 'next')) {
        throw new Refusal('not_found', localText('creditsAdmin.buttonGone'));
      }
      const caller = await loadCaller(interaction, context);
      requireOwner(caller);
      const content = await setAllowance(context, caller, amount, interaction.id, id.arg);
      await interaction.editReply({ content, components: [], allowedMentions: { parse: [] } });
    },
  },
} as const satisfies Record<'allowance-set', ButtonHandler>;
