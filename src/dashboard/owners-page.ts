/**
 * The bot owners' page of a server: grant or take credits with a reason, and the monthly
 * allowance, as `/credits-admin grant`, `take` and `allowance` do. Each form carries a key made
 * when the page was drawn: posting it twice (a double click, a reload) moves credits once.
 */
import { z } from 'zod';
import { MAX_MANUAL_AMOUNT, nextAllowanceTopUp } from '../credits/index.js';
import type { LoadedGuild } from '../guilds/settings.js';
import { localText } from '../i18n/index.js';
import { html, type Html } from './html.js';
import { randomToken } from './oauth.js';
import { actionUrl, csrfField, defineGuildPage, type ActionNotice, type GuildPageContext } from './pages.js';

const PATH = 'owners';
/** As `/credits-admin grant`'s reason option. */
export const MAX_REASON_LENGTH = 200;
const key = z.string().regex(/^[\w-]{16,64}$/);

export const OWNERS_FORMS = {
  move: z.object({
    direction: z.enum(['grant', 'take']),
    amount: z.coerce.number().int().min(1).max(MAX_MANUAL_AMOUNT),
    reason: z.string().trim().min(1).max(MAX_REASON_LENGTH),
    key,
  }),
  allowance: z.object({ amount: z.coerce.number().int().min(0).max(MAX_MANUAL_AMOUNT), when: z.enum(['now', 'next']), key }),
} as const;

const invalid: ActionNotice = { kind: 'error', text: localText('dashboard.settings.invalid') };

export const ownersPage = defineGuildPage<LoadedGuild>({
  path: PATH,
  titleKey: 'dashboard.page.owners',
  access: 'owner',
  load: (ctx) => ctx.data.guilds.loadGuild(ctx.guildId, { startingCredits: ctx.settings.startingCredits }),
  render: renderOwners,
  actions: {
    async move(form, ctx) {
      const parsed = OWNERS_FORMS.move.safeParse(Object.fromEntries(form));
      if (!parsed.success) return invalid;
      const { direction, amount, reason } = parsed.data;
      const movement = direction === 'grant' ? ctx.data.credits.grant : ctx.data.credits.take;
      const outcome = await movement({ guildId: ctx.guildId, amount, actorId: ctx.viewer.userId, reason, key: `dashboard:${parsed.data.key}`, source: 'dashboard' });
      if (outcome.replayed) return { kind: 'done', text: localText('dashboard.owners.alreadyDone') };
      return { kind: 'done', text: localText(direction === 'grant' ? 'creditsAdmin.granted' : 'creditsAdmin.taken', { count: amount, balance: outcome.balance }) };
    },
    async allowance(form, ctx) {
      const parsed = OWNERS_FORMS.allowance.safeParse(Object.fromEntries(form));
      if (!parsed.success) return invalid;
      const { amount, when } = parsed.data;
      const now = ctx.now;
      const outcome = await ctx.data.credits.setMonthlyAllowance({
        guildId: ctx.guildId,
        amount,
        actorId: ctx.viewer.userId,
        key: `dashboard:${parsed.data.key}`,
        fromNextMonth: when === 'next',
        now,
        source: 'dashboard',
      });
      if (outcome.replayed) return { kind: 'done', text: localText('dashboard.owners.alreadyDone') };
      if (amount === 0) return { kind: 'done', text: localText('creditsAdmin.allowanceOff') };
      // As the command: a new allowance due this month tops the balance up now.
      await ctx.data.credits.applyMonthlyAllowance(ctx.guildId, now);
      return { kind: 'done', text: localText('dashboard.owners.allowanceSet', { count: amount }) };
    },
  },
});

function renderOwners(guild: LoadedGuild, ctx: GuildPageContext): Html {
  const { t } = ctx;
  const form = (name: string, title: string, body: Html) =>
    html`<form class="card" method="post" action="${actionUrl(ctx, PATH, name)}" data-testid="form-${name}">${csrfField(ctx)}<input type="hidden" name="key" value="${randomToken(18)}"><h2>${title}</h2>${body}</form>`;
  return html`<section class="card"><h2>${t('dashboard.owners.balanceTitle')}</h2>
<p data-testid="balance">${t('dashboard.owners.balance', { count: guild.balance })}</p>
<p>${t('dashboard.owners.allowance', { count: guild.monthlyAllowance })}</p>
<p class="hint">${t('dashboard.owners.nextTopUp', { day: t.day(nextAllowanceTopUp(ctx.now)) })}</p></section>
<div class="grid">
${form('move', t('dashboard.owners.moveTitle'), html`<label for="direction">${t('dashboard.owners.direction')}</label>
<select id="direction" name="direction"><option value="grant">${t('dashboard.owners.grant')}</option><option value="take">${t('dashboard.owners.take')}</option></select>
<label for="move-amount">${t('dashboard.owners.amount')}</label>
<input id="move-amount" name="amount" type="number" inputmode="numeric" min="1" max="${MAX_MANUAL_AMOUNT}" required>
<label for="reason">${t('dashboard.owners.reason')}</label>
<input id="reason" name="reason" type="text" maxlength="${MAX_REASON_LENGTH}" required>
<button type="submit">${t('dashboard.owners.moveButton')}</button>`)}
${form('allowance', t('dashboard.owners.allowanceTitle'), html`<label for="allowance-amount">${t('dashboard.owners.allowanceAmount')}</label>
<input id="allowance-amount" name="amount" type="number" inputmode="numeric" min="0" max="${MAX_MANUAL_AMOUNT}" required value="${guild.monthlyAllowance}">
<label for="when">${t('dashboard.owners.when')}</label>
<select id="when" name="when"><option value="now">${t('dashboard.owners.whenNow')}</option><option value="next">${t('dashboard.owners.whenNext')}</option></select>
<button type="submit">${t('dashboard.save')}</button>`)}
</div>`;
}
