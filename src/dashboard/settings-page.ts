/**
 * The settings page: what `/settings` and the moderators' `/credits-admin` subcommands change,
 * with pickers that show the server's channel and role names. Every change goes through the
 * same service as the command (`changeSettings`, `setUserDailyCap`, `setLowBalanceAlert`,
 * `setFrozen`), whose rules refuse what the command would, and is in the audit log with
 * `source: "dashboard"`.
 */
import { z } from 'zod';
import { MAX_MANUAL_AMOUNT } from '../credits/index.js';
import { MAX_COOLDOWN_SECONDS, type LoadedGuild, type SettingsChange } from '../guilds/settings.js';
import { localText, type LocalText } from '../i18n/index.js';
import type { ChannelFact, RoleFact } from '../discord-rest/guild-reads.js';
import { html, type Html } from './html.js';
import { randomToken } from './oauth.js';
import { actionUrl, csrfField, defineGuildPage, type ActionNotice, type GuildPageContext } from './pages.js';

const PATH = 'settings';
const snowflake = z.string().regex(/^\d{17,20}$/);
const optionalSnowflake = z.union([z.literal(''), snowflake]).transform((value) => (value === '' ? null : value));
const count = (max: number) => z.coerce.number().int().min(0).max(max);
const key = z.string().regex(/^[\w-]{16,64}$/);

/** The forms' fields, checked before any service sees them; the services check their own rules again. */
export const SETTINGS_FORMS = {
  channels: z.object({ channel: z.array(snowflake).max(100) }),
  role: z.object({ which: z.enum(['member', 'moderator', 'dj']), role: optionalSnowflake }),
  model: z.object({ model: z.string().max(100) }),
  cooldown: z.object({ seconds: count(MAX_COOLDOWN_SECONDS) }),
  visibility: z.object({ visibility: z.enum(['public', 'private']) }),
  notify: z.object({ whenDone: z.enum(['on', 'off']) }),
  limit: z.object({ amount: count(MAX_MANUAL_AMOUNT), key }),
  alert: z.object({ channel: optionalSnowflake, below: count(MAX_MANUAL_AMOUNT) }),
  freeze: z.object({ frozen: z.enum(['on', 'off']) }),
} as const;

interface SettingsData {
  readonly guild: LoadedGuild;
  readonly channels: readonly ChannelFact[];
  readonly roles: readonly RoleFact[];
}

/** The form as an object: each field once, `channel` as the list of every value it was sent with. */
function fieldsOf(form: URLSearchParams): Record<string, unknown> {
  const fields: Record<string, unknown> = Object.fromEntries(form);
  fields.channel = form.getAll('channel');
  return fields;
}

function parse<S extends z.ZodType>(schema: S, form: URLSearchParams): z.output<S> {
  const parsed = schema.safeParse(fieldsOf(form));
  if (!parsed.success) throw new FormError();
  return parsed.data;
}

/** A form whose fields are not what the page sends (edited by hand, or out of range). */
class FormError extends Error {}

const saved: ActionNotice = { kind: 'done', text: localText('dashboard.saved') };

function requireModerator(ctx: GuildPageContext, ownersToo = false): void {
  if (!ctx.viewer.isModerator && !(ownersToo && ctx.viewer.isOwner)) throw new PageRefusal(localText('refusal.moderatorOnly'));
}

/** A refusal the member reads as the page's notice. */
export class PageRefusal extends Error {
  constructor(readonly userText: LocalText) {
    super(userText.key);
  }
}

async function change(ctx: GuildPageContext, settingsChange: SettingsChange): Promise<ActionNotice> {
  requireModerator(ctx);
  await ctx.data.guilds.changeSettings({ guildId: ctx.guildId, actorId: ctx.viewer.userId, change: settingsChange, models: ctx.settings.musicModels, source: 'dashboard' });
  return saved;
}

/** Wraps an action: a form that does not parse becomes the page's "check the form" notice. */
function action(run: (form: URLSearchParams, ctx: GuildPageContext) => Promise<ActionNotice>) {
  return async (form: URLSearchParams, ctx: GuildPageContext): Promise<ActionNotice> => {
    try {
      return await run(form, ctx);
    } catch (error) {
      if (error instanceof FormError) return { kind: 'error', text: localText('dashboard.settings.invalid') };
      if (error instanceof PageRefusal) return { kind: 'error', text: error.userText };
      throw error;
    }
  };
}

export const settingsPage = defineGuildPage<SettingsData>({
  path: PATH,
  titleKey: 'dashboard.page.settings',
  access: 'moderator',
  async load(ctx) {
    const guild = await ctx.data.guilds.loadGuild(ctx.guildId, { startingCredits: ctx.settings.startingCredits });
    return { guild, channels: await ctx.directory.channels(), roles: ctx.directory.roles };
  },
  render: renderSettings,
  actions: {
    channels: action((form, ctx) => change(ctx, { setting: 'allowedChannels', set: parse(SETTINGS_FORMS.channels, form).channel })),
    role: action(async (form, ctx) => {
      const { which, role } = parse(SETTINGS_FORMS.role, form);
      // As `/settings moderator-role`: a moderator by role must not hand moderation to another role.
      if (which === 'moderator' && !ctx.viewer.canManageGuild) throw new PageRefusal(localText('settings.moderatorRoleRefused'));
      const setting = which === 'member' ? 'requiredRole' : which === 'moderator' ? 'moderatorRole' : 'djRole';
      return change(ctx, { setting, roleId: role });
    }),
    model: action((form, ctx) => {
      const { model } = parse(SETTINGS_FORMS.model, form);
      return change(ctx, { setting: 'defaultModel', model: model === '' ? null : model });
    }),
    cooldown: action((form, ctx) => change(ctx, { setting: 'cooldown', seconds: parse(SETTINGS_FORMS.cooldown, form).seconds })),
    visibility: action((form, ctx) => change(ctx, { setting: 'visibility', visibility: parse(SETTINGS_FORMS.visibility, form).visibility })),
    notify: action((form, ctx) => change(ctx, { setting: 'notify', whenDone: parse(SETTINGS_FORMS.notify, form).whenDone === 'on' })),
    limit: action(async (form, ctx) => {
      requireModerator(ctx, true);
      const { amount, key: formKey } = parse(SETTINGS_FORMS.limit, form);
      await ctx.data.credits.setUserDailyCap({ guildId: ctx.guildId, actorId: ctx.viewer.userId, amount: amount === 0 ? null : amount, key: `dashboard:${formKey}`, source: 'dashboard' });
      return saved;
    }),
    alert: action(async (form, ctx) => {
      requireModerator(ctx, true);
      const { channel, below } = parse(SETTINGS_FORMS.alert, form);
      const off = channel === null || below === 0;
      await ctx.data.credits.setLowBalanceAlert({ guildId: ctx.guildId, actorId: ctx.viewer.userId, channelId: off ? null : channel, below: off ? null : below, source: 'dashboard' });
      return saved;
    }),
    freeze: action(async (form, ctx) => {
      requireModerator(ctx, true);
      const frozen = parse(SETTINGS_FORMS.freeze, form).frozen === 'on';
      const outcome = await ctx.data.credits.setFrozen({ guildId: ctx.guildId, frozen, actorId: ctx.viewer.userId, source: 'dashboard' });
      const text = frozen ? (outcome.changed ? 'creditsAdmin.frozen' : 'creditsAdmin.alreadyFrozen') : outcome.changed ? 'creditsAdmin.unfrozen' : 'creditsAdmin.alreadyUnfrozen';
      return { kind: 'done', text: localText(text) };
    }),
  },
});

function renderSettings(data: SettingsData, ctx: GuildPageContext): Html {
  const { t } = ctx;
  const { guild } = data;
  const form = (name: string, title: string, body: Html, testId = name) =>
    html`<form class="card" method="post" action="${actionUrl(ctx, PATH, name)}" data-testid="form-${testId}">${csrfField(ctx)}<h2>${title}</h2>${body}</form>`;
  const save = html`<button type="submit">${t('dashboard.save')}</button>`;
  const roleSelect = (which: 'member' | 'moderator' | 'dj', current: string | null, none: string) =>
    html`<input type="hidden" name="which" value="${which}"><label for="role-${which}">${t(`dashboard.settings.role.${which}`)}</label>
<select id="role-${which}" name="role"><option value="">${none}</option>${data.roles.map((role) => option(role.id, role.name, role.id === current))}${missingOption(current, data.roles)}</select>`;
  const textChannels = data.channels.filter((channel) => channel.kind === 'text' || channel.kind === 'announcement');
  return html`<div class="grid">
${form('cooldown', t('dashboard.settings.cooldown'), html`<label for="seconds">${t('dashboard.settings.cooldownSeconds')}</label>
<input id="seconds" name="seconds" type="number" inputmode="numeric" min="0" max="${MAX_COOLDOWN_SECONDS}" required value="${guild.cooldownSeconds}">
<p class="hint">${t('dashboard.settings.cooldownHint')}</p>${save}`)}
${form('visibility', t('dashboard.settings.visibility'), html`<label for="visibility">${t('dashboard.settings.visibility')}</label>
<select id="visibility" name="visibility">${(['public', 'private'] as const).map((mode) => option(mode, t(`command.settings.visibility.mode.choice.${mode}`), guild.visibility === mode))}</select>${save}`)}
${form('model', t('dashboard.settings.model'), html`<label for="model">${t('dashboard.settings.model')}</label>
<select id="model" name="model"><option value="">${t('dashboard.settings.serviceDefault')}</option>${ctx.settings.musicModels.map((model) => option(model, model, guild.defaultModel === model))}</select>${save}`)}
${form('notify', t('dashboard.settings.notify'), html`<label for="whenDone">${t('dashboard.settings.notify')}</label>
<select id="whenDone" name="whenDone">${option('on', t('dashboard.on'), guild.notifyWhenDone)}${option('off', t('dashboard.off'), !guild.notifyWhenDone)}</select>${save}`)}
</div>
${form('channels', t('dashboard.settings.channels'), html`<p class="hint">${t('dashboard.settings.channelsHint')}</p>
<fieldset><legend class="visually-hidden">${t('dashboard.settings.channels')}</legend>${data.channels.map(
    (channel) => html`<label><input type="checkbox" name="channel" value="${channel.id}"${guild.allowedChannelIds.includes(channel.id) ? html` checked` : ''}> ${channelLabel(channel)}</label>`,
  )}</fieldset>${save}`)}
<div class="grid">
${form('role', t('dashboard.settings.role.member'), html`${roleSelect('member', guild.requiredRoleId, t('dashboard.settings.role.everyone'))}${save}`, 'role-member')}
${form('role', t('dashboard.settings.role.moderator'), html`${roleSelect('moderator', guild.moderatorRoleId, t('dashboard.settings.role.manageServerOnly'))}
${ctx.viewer.canManageGuild ? '' : html`<p class="hint">${t('settings.moderatorRoleRefused')}</p>`}${save}`, 'role-moderator')}
${form('role', t('dashboard.settings.role.dj'), html`${roleSelect('dj', guild.djRoleId, t('dashboard.settings.role.none'))}${save}`, 'role-dj')}
</div>
<div class="grid">
${form('limit', t('dashboard.settings.limit'), html`<input type="hidden" name="key" value="${randomToken(18)}"><label for="amount">${t('dashboard.settings.limitAmount')}</label>
<input id="amount" name="amount" type="number" inputmode="numeric" min="0" max="${MAX_MANUAL_AMOUNT}" required value="${guild.userDailyCap ?? 0}">
<p class="hint">${t('dashboard.settings.limitHint')}</p>${save}`)}
${form('alert', t('dashboard.settings.alert'), html`<label for="alert-channel">${t('dashboard.settings.alertChannel')}</label>
<select id="alert-channel" name="channel"><option value="">${t('dashboard.off')}</option>${textChannels.map((channel) => option(channel.id, `#${channel.name}`, guild.alertChannelId === channel.id))}</select>
<label for="below">${t('dashboard.settings.alertBelow')}</label>
<input id="below" name="below" type="number" inputmode="numeric" min="0" max="${MAX_MANUAL_AMOUNT}" value="${guild.alertBelow ?? 0}">${save}`)}
${form('freeze', t('dashboard.settings.freeze'), html`<p data-testid="frozen-state">${guild.frozen ? t('dashboard.settings.frozen') : t('dashboard.settings.notFrozen')}</p>
<input type="hidden" name="frozen" value="${guild.frozen ? 'off' : 'on'}"><button type="submit" class="${guild.frozen ? '' : 'danger'}">${guild.frozen ? t('dashboard.settings.unfreeze') : t('dashboard.settings.freezeButton')}</button>`)}
</div>`;
}

function option(value: string, label: string, selected: boolean): Html {
  return html`<option value="${value}"${selected ? html` selected` : ''}>${label}</option>`;
}

/** A role the settings name but the server no longer has: shown by id, so saving does not lose it silently. */
function missingOption(current: string | null, roles: readonly RoleFact[]): Html | string {
  return current !== null && !roles.some((role) => role.id === current) ? option(current, current, true) : '';
}

function channelLabel(channel: ChannelFact): string {
  return channel.kind === 'voice' ? `🔊 ${channel.name}` : channel.kind === 'forum' ? `💬 ${channel.name}` : `#${channel.name}`;
}
