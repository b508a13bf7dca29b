/**
 * A guild's Auto Moderation rules, as Discord documents them: created, modified and deleted
 * with the documented limits (rules of each trigger type per guild, keyword and pattern counts
 * and lengths, exempt roles and channels), each change told to the sessions holding the
 * AUTO_MODERATION_CONFIGURATION intent.
 */
import {
  AutoModerationActionType,
  AutoModerationRuleEventType,
  AutoModerationRuleTriggerType,
  GatewayDispatchEvents,
  GatewayIntentBits,
} from 'discord-api-types/v10';
import type { APIAutoModerationAction, APIAutoModerationRule, APIAutoModerationRuleTriggerMetadata } from 'discord-api-types/v10';
import { DiscordHttpError, FormErrors } from '../errors.js';
import { dispatch, requireGuild } from './state.js';
import type { StoreState } from './state.js';

/** Rules of each trigger type a guild may have at once. */
export const RULES_PER_GUILD: Readonly<Record<number, number>> = {
  [AutoModerationRuleTriggerType.Keyword]: 6,
  [AutoModerationRuleTriggerType.Spam]: 1,
  [AutoModerationRuleTriggerType.KeywordPreset]: 1,
  [AutoModerationRuleTriggerType.MentionSpam]: 1,
  [AutoModerationRuleTriggerType.MemberProfile]: 1,
};

/** The trigger metadata's array limits: items and characters per item. */
const LIMITS = {
  keyword_filter: { items: 1000, chars: 60 },
  regex_patterns: { items: 10, chars: 260 },
  allow_list: { items: 100, chars: 60 },
  presetAllowList: { items: 1000, chars: 60 },
} as const;

const MAX_NAME = 100;
const MAX_EXEMPT_ROLES = 20;
const MAX_EXEMPT_CHANNELS = 50;
const MAX_ACTIONS = 5;
const MAX_CUSTOM_MESSAGE = 150;
const MAX_TIMEOUT_SECONDS = 2_419_200;

/** What creating a rule takes: Create Auto Moderation Rule's JSON params. */
export type RuleInput = Record<string, unknown>;

/** The guild's rules by id, created on first use. */
function rulesOf(state: StoreState, guildId: string): Map<string, APIAutoModerationRule> {
  let rules = state.automodRules.get(guildId);
  if (!rules) state.automodRules.set(guildId, (rules = new Map()));
  return rules;
}

export function listRules(state: StoreState, guildId: string): APIAutoModerationRule[] {
  return [...rulesOf(state, guildId).values()].map((rule) => structuredClone(rule));
}

/** The rule, or 404 as Discord answers an id it does not know. */
export function getRule(state: StoreState, guildId: string, ruleId: string): APIAutoModerationRule {
  const rule = rulesOf(state, guildId).get(ruleId);
  if (!rule) throw new DiscordHttpError(404, 0, '404: Not Found');
  return structuredClone(rule);
}

/** Checks and stores a new rule made by `creatorId`: AUTO_MODERATION_RULE_CREATE. */
export function createRule(state: StoreState, guildId: string, creatorId: string, input: RuleInput): APIAutoModerationRule {
  requireGuild(state, guildId);
  const errors = new FormErrors();
  for (const field of ['name', 'event_type', 'trigger_type', 'actions'] as const) {
    if (input[field] === undefined || input[field] === null) errors.add([field], 'BASE_TYPE_REQUIRED', 'This field is required');
  }
  errors.throwIfAny();
  const triggerType = input.trigger_type as number;
  if (!(triggerType in RULES_PER_GUILD)) {
    errors.add(['trigger_type'], 'BASE_TYPE_CHOICES', `Value must be one of {${Object.keys(RULES_PER_GUILD).join(', ')}}.`);
    errors.throwIfAny();
  }
  const rule: APIAutoModerationRule = {
    id: state.ids.next(),
    guild_id: guildId,
    name: '',
    creator_id: creatorId,
    event_type: AutoModerationRuleEventType.MessageSend,
    trigger_type: triggerType,
    trigger_metadata: emptyMetadata(triggerType),
    actions: [],
    enabled: false,
    exempt_roles: [],
    exempt_channels: [],
  };
  applyChanges(state, rule, input, errors);
  const sameType = [...rulesOf(state, guildId).values()].filter((existing) => existing.trigger_type === triggerType).length;
  if (sameType >= (RULES_PER_GUILD[triggerType] ?? 0)) {
    errors.add([], 'AUTO_MODERATION_MAX_RULES_OF_TYPE_EXCEEDED', `Maximum number of rules with trigger type ${triggerType} is ${RULES_PER_GUILD[triggerType]}`);
  }
  errors.throwIfAny();
  rulesOf(state, guildId).set(rule.id, rule);
  dispatch(state, GatewayDispatchEvents.AutoModerationRuleCreate, structuredClone(rule), GatewayIntentBits.AutoModerationConfiguration);
  return structuredClone(rule);
}

/** Changes the fields given (all optional; the trigger type stays): AUTO_MODERATION_RULE_UPDATE. */
export function modifyRule(state: StoreState, guildId: string, ruleId: string, input: RuleInput): APIAutoModerationRule {
  const stored = rulesOf(state, guildId).get(ruleId);
  if (!stored) throw new DiscordHttpError(404, 0, '404: Not Found');
  const rule = structuredClone(stored);
  const errors = new FormErrors();
  if (input.trigger_type !== undefined && input.trigger_type !== rule.trigger_type) {
    errors.add(['trigger_type'], 'AUTO_MODERATION_TRIGGER_TYPE_IMMUTABLE', 'The trigger type of a rule cannot be changed.');
  }
  applyChanges(state, rule, input, errors);
  errors.throwIfAny();
  rulesOf(state, guildId).set(rule.id, rule);
  dispatch(state, GatewayDispatchEvents.AutoModerationRuleUpdate, structuredClone(rule), GatewayIntentBits.AutoModerationConfiguration);
  return structuredClone(rule);
}

/** AUTO_MODERATION_RULE_DELETE, with the rule as it was. */
export function deleteRule(state: StoreState, guildId: string, ruleId: string): void {
  const rules = rulesOf(state, guildId);
  const rule = rules.get(ruleId);
  if (!rule) throw new DiscordHttpError(404, 0, '404: Not Found');
  rules.delete(ruleId);
  dispatch(state, GatewayDispatchEvents.AutoModerationRuleDelete, structuredClone(rule), GatewayIntentBits.AutoModerationConfiguration);
}

function emptyMetadata(triggerType: number): APIAutoModerationRuleTriggerMetadata {
  switch (triggerType) {
    case AutoModerationRuleTriggerType.Keyword:
    case AutoModerationRuleTriggerType.MemberProfile:
      return { keyword_filter: [], regex_patterns: [], allow_list: [] };
    case AutoModerationRuleTriggerType.KeywordPreset:
      return { presets: [], allow_list: [] };
    case AutoModerationRuleTriggerType.MentionSpam:
      return { mention_total_limit: 0, mention_raid_protection_enabled: false };
    default:
      return {};
  }
}

/** Copies the fields `input` sets onto `rule`, collecting what Discord would refuse. */
function applyChanges(state: StoreState, rule: APIAutoModerationRule, input: RuleInput, errors: FormErrors): void {
  if (input.name !== undefined) {
    if (typeof input.name !== 'string' || input.name.length < 1 || input.name.length > MAX_NAME) {
      errors.add(['name'], 'BASE_TYPE_BAD_LENGTH', `Must be between 1 and ${MAX_NAME} in length.`);
    } else rule.name = input.name;
  }
  if (input.event_type !== undefined) {
    if (input.event_type !== AutoModerationRuleEventType.MessageSend && input.event_type !== AutoModerationRuleEventType.MemberUpdate) {
      errors.add(['event_type'], 'BASE_TYPE_CHOICES', 'Value must be one of {1, 2}.');
    } else rule.event_type = input.event_type;
  }
  if (input.enabled !== undefined && input.enabled !== null) {
    if (typeof input.enabled !== 'boolean') errors.add(['enabled'], 'BASE_TYPE_BOOLEAN', 'Must be either true or false.');
    else rule.enabled = input.enabled;
  }
  const guild = state.guilds.get(rule.guild_id);
  const exempt = (field: 'exempt_roles' | 'exempt_channels', max: number, exists: (id: string) => boolean): void => {
    const value = input[field];
    if (value === undefined || value === null) return;
    if (!Array.isArray(value) || value.some((id) => typeof id !== 'string')) return errors.add([field], 'BASE_TYPE_ARRAY', 'Must be an array of snowflakes.');
    if (value.length > max) return errors.add([field], 'BASE_TYPE_MAX_LENGTH', `Must be ${max} or fewer in length.`);
    const unknown = (value as string[]).findIndex((id) => !exists(id));
    if (unknown !== -1) return errors.add([field, unknown], 'AUTO_MODERATION_INVALID_EXEMPTION', 'Unknown role or channel.');
    rule[field] = [...new Set(value as string[])];
  };
  exempt('exempt_roles', MAX_EXEMPT_ROLES, (id) => guild?.roles.has(id) === true);
  exempt('exempt_channels', MAX_EXEMPT_CHANNELS, (id) => guild?.channelIds.includes(id) === true);
  if (input.trigger_metadata !== undefined && input.trigger_metadata !== null) {
    rule.trigger_metadata = checkMetadata(rule.trigger_type, input.trigger_metadata, rule.trigger_metadata, errors);
  }
  if (input.actions !== undefined && input.actions !== null) rule.actions = checkActions(rule.trigger_type, input.actions, errors);
}

function checkMetadata(
  triggerType: number,
  value: unknown,
  current: APIAutoModerationRuleTriggerMetadata,
  errors: FormErrors,
): APIAutoModerationRuleTriggerMetadata {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    errors.add(['trigger_metadata'], 'DICT_TYPE_CONVERT', 'Only dictionaries may be used in a DictType');
    return current;
  }
  const given = value as Record<string, unknown>;
  const next: APIAutoModerationRuleTriggerMetadata = { ...current };
  const strings = (field: 'keyword_filter' | 'regex_patterns' | 'allow_list', limit: { items: number; chars: number }): void => {
    const list = given[field];
    if (list === undefined || list === null) return;
    const path = ['trigger_metadata', field];
    if (!Array.isArray(list)) return errors.add(path, 'BASE_TYPE_ARRAY', 'Must be an array.');
    if (list.length > limit.items) return errors.add(path, 'BASE_TYPE_MAX_LENGTH', `Must be ${limit.items} or fewer in length.`);
    for (const [index, item] of list.entries()) {
      if (typeof item !== 'string' || item.length < 1 || item.length > limit.chars) {
        errors.add([...path, index], 'BASE_TYPE_BAD_LENGTH', `Must be between 1 and ${limit.chars} in length.`);
      }
    }
    next[field] = [...list] as string[];
  };
  if (triggerType === AutoModerationRuleTriggerType.Keyword || triggerType === AutoModerationRuleTriggerType.MemberProfile) {
    strings('keyword_filter', LIMITS.keyword_filter);
    strings('regex_patterns', LIMITS.regex_patterns);
    strings('allow_list', LIMITS.allow_list);
  } else if (triggerType === AutoModerationRuleTriggerType.KeywordPreset) {
    strings('allow_list', LIMITS.presetAllowList);
    if (Array.isArray(given.presets)) next.presets = [...(given.presets as number[])];
  } else if (triggerType === AutoModerationRuleTriggerType.MentionSpam) {
    if (typeof given.mention_total_limit === 'number') {
      if (given.mention_total_limit < 0 || given.mention_total_limit > 50) errors.add(['trigger_metadata', 'mention_total_limit'], 'NUMBER_TYPE_MAX', 'Must be 50 or less.');
      else next.mention_total_limit = given.mention_total_limit;
    }
    if (typeof given.mention_raid_protection_enabled === 'boolean') next.mention_raid_protection_enabled = given.mention_raid_protection_enabled;
  }
  return next;
}

function checkActions(triggerType: number, value: unknown, errors: FormErrors): APIAutoModerationAction[] {
  if (!Array.isArray(value)) {
    errors.add(['actions'], 'BASE_TYPE_ARRAY', 'Must be an array.');
    return [];
  }
  if (value.length < 1 || value.length > MAX_ACTIONS) errors.add(['actions'], 'BASE_TYPE_BAD_LENGTH', `Must be between 1 and ${MAX_ACTIONS} in length.`);
  return value.map((action: unknown, index): APIAutoModerationAction => {
    const path = ['actions', index];
    const { type, metadata } = (typeof action === 'object' && action !== null ? action : {}) as { type?: unknown; metadata?: Record<string, unknown> };
    switch (type) {
      case AutoModerationActionType.BlockMessage: {
        const message = metadata?.custom_message;
        if (message !== undefined && (typeof message !== 'string' || message.length > MAX_CUSTOM_MESSAGE)) {
          errors.add([...path, 'metadata', 'custom_message'], 'BASE_TYPE_MAX_LENGTH', `Must be ${MAX_CUSTOM_MESSAGE} or fewer in length.`);
        }
        // Answers always carry `metadata`, empty when none was given.
        return { type, metadata: message === undefined ? {} : { custom_message: String(message) } };
      }
      case AutoModerationActionType.SendAlertMessage:
        if (typeof metadata?.channel_id !== 'string') errors.add([...path, 'metadata', 'channel_id'], 'BASE_TYPE_REQUIRED', 'This field is required');
        return { type, metadata: { channel_id: String(metadata?.channel_id) } };
      case AutoModerationActionType.Timeout: {
        if (triggerType !== AutoModerationRuleTriggerType.Keyword && triggerType !== AutoModerationRuleTriggerType.MentionSpam) {
          errors.add([...path, 'type'], 'AUTO_MODERATION_INVALID_ACTION', 'Timeout is only available for keyword and mention spam rules.');
        }
        const seconds = metadata?.duration_seconds;
        if (typeof seconds !== 'number' || seconds < 0 || seconds > MAX_TIMEOUT_SECONDS) {
          errors.add([...path, 'metadata', 'duration_seconds'], 'NUMBER_TYPE_MAX', `Must be between 0 and ${MAX_TIMEOUT_SECONDS}.`);
        }
        return { type, metadata: { duration_seconds: Number(seconds) } };
      }
      case AutoModerationActionType.BlockMemberInteraction:
        return { type, metadata: {} };
      default:
        errors.add([...path, 'type'], 'BASE_TYPE_CHOICES', 'Value must be one of {1, 2, 3, 4}.');
        return { type: AutoModerationActionType.BlockMessage, metadata: {} };
    }
  });
}
