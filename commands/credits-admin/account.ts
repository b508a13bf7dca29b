import { ApplicationCommandOptionType } from 'discord-api-types/v10';
import { KIND_WORDS } from '../../src/pipeline/titles.js';
import { english, type Translator } from '../../src/i18n/index.js';
import { sellsAnything } from '../../src/discord/premium-buttons.js';
import { hasSales, type SalesReport } from '../../src/premium/sales.js';
import { defineSubcommand } from './subcommand.js';

export const account = defineSubcommand({
  definition: {
    type: ApplicationCommandOptionType.Subcommand,
    name: 'account',
    description: english('command.credits-admin.account.description'),
  },
  ownersOnly: true,
  async execute(_options, { context, caller, reply }) {
    // A check now, recorded like the hourly one: the next check compares with it.
    const account = await context.pipeline.checkAccount();
    const credits = await context.credits.getGuildCredits(caller.guild.id);
    const { t } = context;
    // Every figure is grouped as the member's language groups numbers, as the server's balance beside them is.
    const own =
      account.extraCredits > 0
        ? t('creditsAdmin.accountWithExtra', { credits: account.credits, extra: account.extraCredits })
        : t('creditsAdmin.account', { credits: account.credits });
    const lines = [credits ? `${own} ${t('creditsAdmin.accountGuildBalance', { balance: credits.balance })}` : own];
    if (account.previous === null || account.expected === null || account.drift === null || account.spentSince === null) {
      lines.push(t('creditsAdmin.accountBaseline'));
    } else {
      lines.push(
        t('creditsAdmin.accountExpected', {
          expected: account.expected,
          previous: account.previous.balance,
          at: String(Math.floor(account.previous.checkedAt.getTime() / 1000)),
          spent: account.spentSince,
        }),
      );
      const drift = t('creditsAdmin.accountDrift', { drift: signed(account.drift, t.locale) });
      if (account.drift < 0) lines.push(`${drift} ${t('creditsAdmin.accountDriftNegative')}`);
      else if (account.drift > 0) lines.push(`${drift} ${t('creditsAdmin.accountDriftPositive')}`);
      else lines.push(drift);
      const { uncertain } = account;
      if (uncertain.count > 0) {
        const named = uncertain.jobs.map((job) => `\`${job.id.slice(0, 8)}\` (${job.kind in KIND_WORDS ? t.text({ key: KIND_WORDS[job.kind as keyof typeof KIND_WORDS] }) : job.kind}, ${job.cost})`).join(', ');
        lines.push(t('creditsAdmin.accountUncertain', { count: uncertain.count, credits: uncertain.credits, jobs: named }));
      }
    }
    // Sales through Discord, when the bot sells anything or sold this month: refunds it could not take back included.
    const sales = await context.credits.salesReport();
    if (sellsAnything(context.purchases?.catalog) || hasSales(sales)) lines.push('', ...salesLines(sales, t));
    return reply(lines.join('\n'));
  },
});

/** The month's sales, beside what the music service charged in it, and the refunds. */
export function salesLines(sales: SalesReport, t: Translator): string[] {
  return [
    t('creditsAdmin.salesHeading', { month: t.month(sales.since) }),
    t('creditsAdmin.salesPacks', { count: sales.packs.count, credits: sales.packs.credits, waiting: sales.packs.waiting }),
    t('creditsAdmin.salesSubscriptions', { count: sales.subscriptions.live, credits: sales.subscriptions.credits }),
    t('creditsAdmin.salesVersusSpend', { sold: sales.sold, spent: sales.serviceCharged }),
    t('creditsAdmin.salesRefunds', { count: sales.refunds.count, taken: sales.refunds.taken, unrecovered: sales.refunds.unrecovered }),
  ];
}

/** `+5`, `-1,000`, `0`: the drift's sign is its meaning. */
function signed(value: number, locale: string): string {
  return new Intl.NumberFormat(locale, { signDisplay: 'exceptZero' }).format(value);
}
