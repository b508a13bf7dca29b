/**
 * The blocklist page: the server's blocked words and phrases, added in a box (commas or lines)
 * and removed by ticking them, as `/moderation blocklist` does, through the same service and
 * parser (`parseBlockedWords`), its audit rows marked `source: "dashboard"`.
 */
import { z } from 'zod';
import { BLOCKED_ENTRY_MAX, parseBlockedWords } from '../guilds/blocklist.js';
import { localText } from '../i18n/index.js';
import { html, type Html } from './html.js';
import { actionUrl, csrfField, defineGuildPage, type ActionNotice, type GuildPageContext } from './pages.js';

const PATH = 'blocklist';
const invalid: ActionNotice = { kind: 'error', text: localText('dashboard.settings.invalid') };
const refused: ActionNotice = { kind: 'error', text: localText('refusal.moderatorOnly') };

export const BLOCKLIST_FORMS = {
  add: z.object({ words: z.string().max(4_000) }),
  remove: z.array(z.string().min(1).max(BLOCKED_ENTRY_MAX)).min(1).max(500),
} as const;

export const blocklistPage = defineGuildPage<readonly string[]>({
  path: PATH,
  titleKey: 'dashboard.page.blocklist',
  access: 'moderator',
  load: (ctx) => ctx.data.guilds.listBlockedWords(ctx.guildId),
  render: renderBlocklist,
  actions: {
    async add(form, ctx) {
      if (!ctx.viewer.isModerator) return refused;
      const parsed = BLOCKLIST_FORMS.add.safeParse(Object.fromEntries(form));
      if (!parsed.success) return invalid;
      const entries = parseBlockedWords(parsed.data.words);
      const { added, total } = await ctx.data.guilds.addBlockedWords({ guildId: ctx.guildId, actorId: ctx.viewer.userId, entries, source: 'dashboard' });
      return { kind: 'done', text: added.length === 0 ? localText('blocklist.addedNone') : localText('blocklist.added', { entries: added.join(', '), total }) };
    },
    async remove(form, ctx) {
      if (!ctx.viewer.isModerator) return refused;
      const parsed = BLOCKLIST_FORMS.remove.safeParse(form.getAll('entry'));
      if (!parsed.success) return invalid;
      const { removed, total } = await ctx.data.guilds.removeBlockedWords({ guildId: ctx.guildId, actorId: ctx.viewer.userId, entries: parsed.data, source: 'dashboard' });
      return { kind: 'done', text: removed.length === 0 ? localText('dashboard.blocklist.removedNone') : localText('blocklist.removed', { entries: removed.join(', '), total }) };
    },
  },
});

function renderBlocklist(entries: readonly string[], ctx: GuildPageContext): Html {
  const { t } = ctx;
  return html`<form class="card" method="post" action="${actionUrl(ctx, PATH, 'add')}" data-testid="form-blocklist-add">${csrfField(ctx)}
<h2>${t('dashboard.blocklist.addTitle')}</h2>
<label for="words">${t('dashboard.blocklist.words')}</label>
<textarea id="words" name="words" rows="3" maxlength="4000" required></textarea>
<p class="hint">${t('dashboard.blocklist.wordsHint')}</p>
<button type="submit">${t('dashboard.blocklist.addButton')}</button></form>
<form class="card" method="post" action="${actionUrl(ctx, PATH, 'remove')}" data-testid="form-blocklist-remove">${csrfField(ctx)}
<h2>${t('dashboard.blocklist.current', { count: entries.length })}</h2>
${entries.length === 0
  ? html`<p>${t('dashboard.blocklist.none')}</p>`
  : html`<fieldset><legend class="visually-hidden">${t('dashboard.blocklist.removeButton')}</legend>${entries.map(
      (entry) => html`<label><input type="checkbox" name="entry" value="${entry}"> ${entry}</label>`,
    )}</fieldset><button type="submit" class="secondary">${t('dashboard.blocklist.removeButton')}</button>`}
</form>`;
}
