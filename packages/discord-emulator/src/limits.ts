import { ButtonStyle, ComponentType, MessageFlags, TextInputStyle } from 'discord-api-types/v10';
import { FormErrors } from './errors.js';

/** Discord's documented limits, enforced by the emulator as Discord does (400, code 50035). */
export const DiscordLimits = {
  content: 2000,
  embedsPerMessage: 10,
  embedTotalCharacters: 6000,
  embedTitle: 256,
  embedDescription: 4096,
  embedFields: 25,
  embedFieldName: 256,
  embedFieldValue: 1024,
  embedFooterText: 2048,
  embedAuthorName: 256,
  actionRows: 5,
  componentsPerRow: 5,
  componentsV2Total: 40,
  customId: 100,
  buttonLabel: 80,
  selectOptions: 25,
  selectOptionText: 100,
  selectPlaceholder: 150,
  attachmentsPerMessage: 10,
  modalTitle: 45,
  modalComponents: 5,
  textInputLabel: 45,
  textInputValue: 4000,
  textInputPlaceholder: 100,
  labelDescription: 100,
  autocompleteChoices: 25,
  choiceName: 100,
  choiceStringValue: 100,
  commandName: 32,
  commandDescription: 100,
  commandOptions: 25,
  commandChoices: 25,
  chatInputCommands: 100,
  contextMenuCommands: 15,
} as const;

type Path = ReadonlyArray<string | number>;

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** Length as Discord counts it: in characters (code points), not UTF-16 units. */
export function characterLength(value: string): number {
  let count = 0;
  for (const _ of value) count += 1;
  return count;
}

function checkMax(errors: FormErrors, path: Path, value: unknown, max: number): void {
  if (typeof value === 'string' && characterLength(value) > max) {
    errors.add(path, 'BASE_TYPE_MAX_LENGTH', `Must be ${max} or fewer in length.`);
  }
}

function checkBetween(errors: FormErrors, path: Path, value: unknown, min: number, max: number, required: boolean): void {
  if (value === undefined || value === null) {
    if (required) errors.add(path, 'BASE_TYPE_REQUIRED', 'This field is required');
    return;
  }
  if (typeof value !== 'string') return;
  const length = characterLength(value);
  if (length < min || length > max) errors.add(path, 'BASE_TYPE_BAD_LENGTH', `Must be between ${min} and ${max} in length.`);
}

function checkArrayMax(errors: FormErrors, path: Path, value: unknown, max: number): void {
  if (Array.isArray(value) && value.length > max) {
    errors.add(path, 'BASE_TYPE_MAX_LENGTH', `Must be ${max} or fewer in length.`);
  }
}

/** What a message payload (create, edit, interaction reply) is checked for. */
export interface MessagePayloadCheck {
  /** Path prefix for errors, e.g. `['data']` inside an interaction callback. */
  path?: Path;
  /** Number of files uploaded alongside (they make a message non-empty). */
  fileCount?: number;
  /** Edits may leave everything out. */
  isEdit?: boolean;
  /** Flags already on the message (for edits): IS_COMPONENTS_V2 stays once set. */
  existingFlags?: number;
  /** Whether a premium button may name this SKU (one of the application's). @defaultValue any */
  purchasableSku?: (skuId: unknown) => boolean;
}

/**
 * Checks a message body against Discord's limits. Returns the collected errors and
 * whether the message would be empty (Discord answers that with 50006, not 50035).
 */
export function checkMessagePayload(payload: unknown, options: MessagePayloadCheck = {}): { errors: FormErrors; empty: boolean } {
  const errors = new FormErrors();
  const base = options.path ?? [];
  const body = isRecord(payload) ? payload : {};
  const flags = (typeof body.flags === 'number' ? body.flags : 0) | (options.existingFlags ?? 0);
  const componentsV2 = (flags & MessageFlags.IsComponentsV2) !== 0;

  checkMax(errors, [...base, 'content'], body.content, DiscordLimits.content);

  if (Array.isArray(body.embeds)) {
    checkArrayMax(errors, [...base, 'embeds'], body.embeds, DiscordLimits.embedsPerMessage);
    let total = 0;
    body.embeds.forEach((embed, index) => {
      total += checkEmbed(errors, [...base, 'embeds', index], embed);
    });
    if (total > DiscordLimits.embedTotalCharacters) {
      errors.add([...base, 'embeds'], 'MAX_EMBED_SIZE_EXCEEDED', `Embed size exceeds maximum size of ${DiscordLimits.embedTotalCharacters}`);
    }
  }

  if (Array.isArray(body.components)) {
    const skus = options.purchasableSku ?? (() => true);
    if (componentsV2) checkComponentsV2(errors, [...base, 'components'], body.components, skus);
    else checkActionRows(errors, [...base, 'components'], body.components, skus);
  }

  if (componentsV2) {
    for (const legacy of ['content', 'embeds', 'poll'] as const) {
      const value = body[legacy];
      if (value !== undefined && value !== null && !(typeof value === 'string' && value === '') && !(Array.isArray(value) && value.length === 0)) {
        errors.add([...base, legacy], 'MESSAGE_CANNOT_USE_LEGACY_FIELDS_WITH_COMPONENTS_V2', 'The \'content\', \'embeds\', \'stickers\' and \'poll\' fields cannot be used when using MessageFlags.IS_COMPONENTS_V2');
      }
    }
  }

  checkArrayMax(errors, [...base, 'attachments'], body.attachments, DiscordLimits.attachmentsPerMessage);
  checkAllowedMentions(errors, [...base, 'allowed_mentions'], body.allowed_mentions);

  const hasContent = typeof body.content === 'string' && body.content.trim().length > 0;
  const hasEmbeds = Array.isArray(body.embeds) && body.embeds.length > 0;
  const hasComponents = Array.isArray(body.components) && body.components.length > 0;
  const hasAttachments = (options.fileCount ?? 0) > 0 || (Array.isArray(body.attachments) && body.attachments.length > 0);
  const hasStickers = Array.isArray(body.sticker_ids) && body.sticker_ids.length > 0;
  const hasPoll = isRecord(body.poll);
  const empty = !options.isEdit && !hasContent && !hasEmbeds && !hasComponents && !hasAttachments && !hasStickers && !hasPoll;
  return { errors, empty };
}

/** Returns the embed's character count toward the 6000 total. */
function checkEmbed(errors: FormErrors, path: Path, embed: unknown): number {
  if (!isRecord(embed)) return 0;
  let total = 0;
  const count = (value: unknown): void => {
    if (typeof value === 'string') total += characterLength(value);
  };
  checkMax(errors, [...path, 'title'], embed.title, DiscordLimits.embedTitle);
  count(embed.title);
  checkMax(errors, [...path, 'description'], embed.description, DiscordLimits.embedDescription);
  count(embed.description);
  if (Array.isArray(embed.fields)) {
    checkArrayMax(errors, [...path, 'fields'], embed.fields, DiscordLimits.embedFields);
    embed.fields.forEach((field, index) => {
      if (!isRecord(field)) return;
      checkBetween(errors, [...path, 'fields', index, 'name'], field.name, 1, DiscordLimits.embedFieldName, true);
      checkBetween(errors, [...path, 'fields', index, 'value'], field.value, 1, DiscordLimits.embedFieldValue, true);
      count(field.name);
      count(field.value);
    });
  }
  if (isRecord(embed.footer)) {
    checkBetween(errors, [...path, 'footer', 'text'], embed.footer.text, 1, DiscordLimits.embedFooterText, true);
    count(embed.footer.text);
  }
  if (isRecord(embed.author)) {
    checkBetween(errors, [...path, 'author', 'name'], embed.author.name, 1, DiscordLimits.embedAuthorName, true);
    count(embed.author.name);
  }
  return total;
}

function checkAllowedMentions(errors: FormErrors, path: Path, value: unknown): void {
  if (!isRecord(value) || !Array.isArray(value.parse)) return;
  const parse = value.parse as unknown[];
  for (const kind of ['users', 'roles'] as const) {
    if (parse.includes(kind) && Array.isArray(value[kind]) && (value[kind] as unknown[]).length > 0) {
      errors.add([...path, kind], 'MESSAGE_ALLOWED_MENTIONS_PARSE_EXCLUSIVE', `parse:["${kind}"] and ${kind}: [ids...] are mutually exclusive.`);
    }
  }
}

function checkActionRows(errors: FormErrors, path: Path, rows: unknown[], skus: (skuId: unknown) => boolean): void {
  checkArrayMax(errors, path, rows, DiscordLimits.actionRows);
  const customIds = new Set<string>();
  rows.forEach((row, rowIndex) => {
    const rowPath = [...path, rowIndex];
    if (!isRecord(row)) return;
    if (row.type !== ComponentType.ActionRow) {
      errors.add([...rowPath, 'type'], 'UNION_TYPE_CHOICES', 'Value of field "type" must be one of (1,).');
      return;
    }
    const children = Array.isArray(row.components) ? row.components : [];
    if (children.length < 1 || children.length > DiscordLimits.componentsPerRow) {
      errors.add([...rowPath, 'components'], 'BASE_TYPE_BAD_LENGTH', `Must be between 1 and ${DiscordLimits.componentsPerRow} in length.`);
    }
    let width = 0;
    children.forEach((child, childIndex) => {
      const childPath = [...rowPath, 'components', childIndex];
      if (!isRecord(child)) return;
      width += child.type === ComponentType.Button ? 1 : DiscordLimits.componentsPerRow;
      checkInteractiveComponent(errors, childPath, child, customIds, skus);
    });
    if (width > DiscordLimits.componentsPerRow) {
      errors.add([...rowPath, 'components'], 'COMPONENT_LAYOUT_WIDTH_EXCEEDED', 'The specified component exceeds the maximum width');
    }
  });
}

function checkComponentsV2(errors: FormErrors, path: Path, components: unknown[], skus: (skuId: unknown) => boolean): void {
  const customIds = new Set<string>();
  let total = 0;
  const walk = (node: unknown, nodePath: Path): void => {
    if (!isRecord(node)) return;
    total += 1;
    checkInteractiveComponent(errors, nodePath, node, customIds, skus);
    if (Array.isArray(node.components)) node.components.forEach((child, index) => walk(child, [...nodePath, 'components', index]));
    if (isRecord(node.accessory)) walk(node.accessory, [...nodePath, 'accessory']);
  };
  components.forEach((component, index) => walk(component, [...path, index]));
  if (total > DiscordLimits.componentsV2Total) {
    errors.add(path, 'BASE_TYPE_MAX_LENGTH', `Must be ${DiscordLimits.componentsV2Total} or fewer in length.`);
  }
}

function checkCustomId(errors: FormErrors, path: Path, component: Record<string, unknown>, seen: Set<string>, required: boolean): void {
  checkBetween(errors, [...path, 'custom_id'], component.custom_id, 1, DiscordLimits.customId, required);
  if (typeof component.custom_id === 'string') {
    if (seen.has(component.custom_id)) {
      errors.add([...path, 'custom_id'], 'COMPONENT_CUSTOM_ID_DUPLICATED', 'Component custom id cannot be duplicated');
    }
    seen.add(component.custom_id);
  }
}

function checkInteractiveComponent(
  errors: FormErrors,
  path: Path,
  component: Record<string, unknown>,
  customIds: Set<string>,
  skus: (skuId: unknown) => boolean,
): void {
  switch (component.type) {
    case ComponentType.Button: {
      checkMax(errors, [...path, 'label'], component.label, DiscordLimits.buttonLabel);
      if (component.style === ButtonStyle.Link) {
        if (typeof component.url !== 'string') errors.add([...path, 'url'], 'BASE_TYPE_REQUIRED', 'This field is required');
        if (component.custom_id !== undefined && component.custom_id !== null) {
          errors.add([...path, 'custom_id'], 'BUTTON_COMPONENT_CUSTOM_ID_NOT_ALLOWED', 'A custom id cannot be specified for this button style');
        }
      } else if (component.style === ButtonStyle.Premium) {
        checkPremiumButton(errors, path, component, skus);
      } else {
        checkCustomId(errors, path, component, customIds, true);
        if (component.url !== undefined && component.url !== null) {
          errors.add([...path, 'url'], 'BUTTON_COMPONENT_URL_NOT_ALLOWED', 'A url cannot be specified for this button style');
        }
      }
      break;
    }
    case ComponentType.StringSelect: {
      checkCustomId(errors, path, component, customIds, true);
      checkMax(errors, [...path, 'placeholder'], component.placeholder, DiscordLimits.selectPlaceholder);
      const options = Array.isArray(component.options) ? component.options : [];
      if (options.length < 1 || options.length > DiscordLimits.selectOptions) {
        errors.add([...path, 'options'], 'BASE_TYPE_BAD_LENGTH', `Must be between 1 and ${DiscordLimits.selectOptions} in length.`);
      }
      options.forEach((option, index) => {
        if (!isRecord(option)) return;
        checkBetween(errors, [...path, 'options', index, 'label'], option.label, 1, DiscordLimits.selectOptionText, true);
        checkBetween(errors, [...path, 'options', index, 'value'], option.value, 1, DiscordLimits.selectOptionText, true);
        checkMax(errors, [...path, 'options', index, 'description'], option.description, DiscordLimits.selectOptionText);
      });
      checkSelectCounts(errors, path, component, options.length);
      break;
    }
    case ComponentType.UserSelect:
    case ComponentType.RoleSelect:
    case ComponentType.MentionableSelect:
    case ComponentType.ChannelSelect: {
      checkCustomId(errors, path, component, customIds, true);
      checkMax(errors, [...path, 'placeholder'], component.placeholder, DiscordLimits.selectPlaceholder);
      checkSelectCounts(errors, path, component, DiscordLimits.selectOptions);
      break;
    }
    default:
      break;
  }
}

/** A premium button names one of the application's SKUs and nothing a member could read or send back. */
function checkPremiumButton(errors: FormErrors, path: Path, component: Record<string, unknown>, skus: (skuId: unknown) => boolean): void {
  if (component.sku_id === undefined || component.sku_id === null) {
    errors.add([...path, 'sku_id'], 'BASE_TYPE_REQUIRED', 'This field is required');
  } else if (!skus(component.sku_id)) {
    errors.add([...path, 'sku_id'], 'BUTTON_COMPONENT_INVALID_SKU_ID', 'Invalid SKU');
  }
  const notAllowed = {
    custom_id: ['BUTTON_COMPONENT_CUSTOM_ID_NOT_ALLOWED', 'A custom id cannot be specified for this button style'],
    label: ['BUTTON_COMPONENT_LABEL_NOT_ALLOWED', 'A label cannot be specified for this button style'],
    url: ['BUTTON_COMPONENT_URL_NOT_ALLOWED', 'A url cannot be specified for this button style'],
    emoji: ['BUTTON_COMPONENT_EMOJI_NOT_ALLOWED', 'An emoji cannot be specified for this button style'],
  } as const;
  for (const [field, [code, message]] of Object.entries(notAllowed)) {
    if (component[field] !== undefined && component[field] !== null) errors.add([...path, field], code, message);
  }
}

function checkSelectCounts(errors: FormErrors, path: Path, component: Record<string, unknown>, optionCount: number): void {
  const { min_values: min, max_values: max } = component;
  if (typeof min === 'number' && (min < 0 || min > DiscordLimits.selectOptions)) {
    errors.add([...path, 'min_values'], 'NUMBER_TYPE_MAX', `int value should be between 0 and ${DiscordLimits.selectOptions}.`);
  }
  if (typeof max === 'number' && (max < 1 || max > DiscordLimits.selectOptions)) {
    errors.add([...path, 'max_values'], 'NUMBER_TYPE_MAX', `int value should be between 1 and ${DiscordLimits.selectOptions}.`);
  }
  if (typeof max === 'number' && max > optionCount) {
    errors.add([...path, 'max_values'], 'SELECT_COMPONENT_MAX_VALUES_TOO_LARGE', 'max_values must be less than or equal to the number of options');
  }
  if (typeof min === 'number' && typeof max === 'number' && min > max) {
    errors.add([...path, 'min_values'], 'SELECT_COMPONENT_MIN_VALUES_TOO_LARGE', 'min_values must be less than or equal to max_values');
  }
}

/** Checks a modal (interaction callback type 9); `path` is normally `['data']`. */
export function checkModal(modal: unknown, path: Path = ['data']): FormErrors {
  const errors = new FormErrors();
  const body = isRecord(modal) ? modal : {};
  checkBetween(errors, [...path, 'title'], body.title, 1, DiscordLimits.modalTitle, true);
  checkBetween(errors, [...path, 'custom_id'], body.custom_id, 1, DiscordLimits.customId, true);
  const components = Array.isArray(body.components) ? body.components : [];
  if (components.length < 1 || components.length > DiscordLimits.modalComponents) {
    errors.add([...path, 'components'], 'BASE_TYPE_BAD_LENGTH', `Must be between 1 and ${DiscordLimits.modalComponents} in length.`);
  }
  const customIds = new Set<string>();
  components.forEach((component, index) => {
    const componentPath = [...path, 'components', index];
    if (!isRecord(component)) return;
    switch (component.type) {
      case ComponentType.ActionRow: {
        const children = Array.isArray(component.components) ? component.components : [];
        if (children.length !== 1) {
          errors.add([...componentPath, 'components'], 'BASE_TYPE_BAD_LENGTH', 'Must be between 1 and 1 in length.');
        }
        children.forEach((child, childIndex) => {
          if (isRecord(child)) checkTextInput(errors, [...componentPath, 'components', childIndex], child, customIds, true);
        });
        break;
      }
      case ComponentType.Label: {
        checkBetween(errors, [...componentPath, 'label'], component.label, 1, DiscordLimits.textInputLabel, true);
        checkMax(errors, [...componentPath, 'description'], component.description, DiscordLimits.labelDescription);
        const child = component.component;
        if (!isRecord(child)) {
          errors.add([...componentPath, 'component'], 'BASE_TYPE_REQUIRED', 'This field is required');
        } else if (child.type === ComponentType.TextInput) {
          checkTextInput(errors, [...componentPath, 'component'], child, customIds, false);
        } else {
          checkInteractiveComponent(errors, [...componentPath, 'component'], child, customIds, () => true);
        }
        break;
      }
      case ComponentType.TextDisplay: {
        checkMax(errors, [...componentPath, 'content'], component.content, DiscordLimits.textInputValue);
        break;
      }
      default:
        errors.add([...componentPath, 'type'], 'UNION_TYPE_CHOICES', 'Value of field "type" must be one of (1, 10, 18).');
    }
  });
  return errors;
}

function checkTextInput(errors: FormErrors, path: Path, input: Record<string, unknown>, customIds: Set<string>, inActionRow: boolean): void {
  if (input.type !== ComponentType.TextInput) {
    errors.add([...path, 'type'], 'UNION_TYPE_CHOICES', 'Value of field "type" must be one of (4,).');
    return;
  }
  checkCustomId(errors, path, input, customIds, true);
  if (input.style !== TextInputStyle.Short && input.style !== TextInputStyle.Paragraph) {
    errors.add([...path, 'style'], 'BASE_TYPE_CHOICES', 'Value must be one of {1, 2}.');
  }
  if (inActionRow) checkBetween(errors, [...path, 'label'], input.label, 1, DiscordLimits.textInputLabel, true);
  checkMax(errors, [...path, 'value'], input.value, DiscordLimits.textInputValue);
  checkMax(errors, [...path, 'placeholder'], input.placeholder, DiscordLimits.textInputPlaceholder);
  const { min_length: min, max_length: max } = input;
  if (typeof min === 'number' && (min < 0 || min > DiscordLimits.textInputValue)) {
    errors.add([...path, 'min_length'], 'NUMBER_TYPE_MAX', `int value should be between 0 and ${DiscordLimits.textInputValue}.`);
  }
  if (typeof max === 'number' && (max < 1 || max > DiscordLimits.textInputValue)) {
    errors.add([...path, 'max_length'], 'NUMBER_TYPE_MAX', `int value should be between 1 and ${DiscordLimits.textInputValue}.`);
  }
  if (typeof min === 'number' && typeof max === 'number' && min > max) {
    errors.add([...path, 'min_length'], 'TEXT_INPUT_MIN_LENGTH_TOO_LARGE', 'min_length must be less than or equal to max_length');
  }
  if (typeof input.value === 'string' && typeof max === 'number' && characterLength(input.value) > max) {
    errors.add([...path, 'value'], 'BASE_TYPE_MAX_LENGTH', `Must be ${max} or fewer in length.`);
  }
}

/** Checks autocomplete choices (interaction callback type 8). */
export function checkAutocompleteChoices(data: unknown, path: Path = ['data']): FormErrors {
  const errors = new FormErrors();
  const body = isRecord(data) ? data : {};
  if (!Array.isArray(body.choices)) {
    errors.add([...path, 'choices'], 'BASE_TYPE_REQUIRED', 'This field is required');
    return errors;
  }
  checkArrayMax(errors, [...path, 'choices'], body.choices, DiscordLimits.autocompleteChoices);
  body.choices.forEach((choice, index) => checkChoice(errors, [...path, 'choices', index], choice));
  return errors;
}

function checkChoice(errors: FormErrors, path: Path, choice: unknown): void {
  if (!isRecord(choice)) {
    errors.add(path, 'MODEL_TYPE_CONVERT', 'Only dictionaries may be used in a ModelType');
    return;
  }
  checkBetween(errors, [...path, 'name'], choice.name, 1, DiscordLimits.choiceName, true);
  if (choice.value === undefined || choice.value === null) errors.add([...path, 'value'], 'BASE_TYPE_REQUIRED', 'This field is required');
  checkMax(errors, [...path, 'value'], choice.value, DiscordLimits.choiceStringValue);
}

const COMMAND_NAME = /^[-_'\p{L}\p{N}\p{sc=Deva}\p{sc=Thai}]{1,32}$/u;
const SUBCOMMAND = 1;
const SUBCOMMAND_GROUP = 2;

/** Checks a bulk overwrite of application commands. */
export function checkCommandList(commands: unknown): FormErrors {
  const errors = new FormErrors();
  if (!Array.isArray(commands)) return errors;
  const counts = new Map<number, number>();
  const names = new Set<string>();
  commands.forEach((command, index) => {
    if (!isRecord(command)) return;
    const type = typeof command.type === 'number' ? command.type : 1;
    counts.set(type, (counts.get(type) ?? 0) + 1);
    const key = `${type}:${String(command.name)}`;
    if (names.has(key)) errors.add([index, 'name'], 'APPLICATION_COMMANDS_DUPLICATE_NAME', `Application command names must be unique`);
    names.add(key);
    checkCommand(errors, [index], command, type);
  });
  if ((counts.get(1) ?? 0) > DiscordLimits.chatInputCommands) {
    errors.add([], 'APPLICATION_COMMAND_TOO_MANY', `Maximum number of application commands reached (${DiscordLimits.chatInputCommands}).`);
  }
  for (const type of [2, 3]) {
    if ((counts.get(type) ?? 0) > DiscordLimits.contextMenuCommands) {
      errors.add([], 'APPLICATION_COMMAND_TOO_MANY', `Maximum number of context menu commands reached (${DiscordLimits.contextMenuCommands}).`);
    }
  }
  return errors;
}

/** Checks one application command (create, or one item of a bulk overwrite). */
export function checkCommand(errors: FormErrors, path: Path, command: Record<string, unknown>, type: number): void {
  if (type === 1) {
    checkName(errors, [...path, 'name'], command.name);
    checkBetween(errors, [...path, 'description'], command.description, 1, DiscordLimits.commandDescription, true);
    checkOptions(errors, [...path, 'options'], command.options, 0);
  } else {
    checkBetween(errors, [...path, 'name'], command.name, 1, DiscordLimits.commandName, true);
  }
}

function checkName(errors: FormErrors, path: Path, name: unknown): void {
  if (typeof name !== 'string') {
    errors.add(path, 'BASE_TYPE_REQUIRED', 'This field is required');
  } else if (!COMMAND_NAME.test(name) || name !== name.toLowerCase()) {
    errors.add(path, 'APPLICATION_COMMAND_INVALID_NAME', 'Command name is invalid');
  }
}

function checkOptions(errors: FormErrors, path: Path, options: unknown, depth: number): void {
  if (!Array.isArray(options)) return;
  checkArrayMax(errors, path, options, DiscordLimits.commandOptions);
  let sawOptional = false;
  const names = new Set<string>();
  options.forEach((option, index) => {
    if (!isRecord(option)) return;
    const optionPath = [...path, index];
    checkName(errors, [...optionPath, 'name'], option.name);
    if (typeof option.name === 'string') {
      if (names.has(option.name)) errors.add([...optionPath, 'name'], 'APPLICATION_COMMAND_OPTION_NAME_ALREADY_EXISTS', 'Option names must be unique');
      names.add(option.name);
    }
    checkBetween(errors, [...optionPath, 'description'], option.description, 1, DiscordLimits.commandDescription, true);
    const isSubcommand = option.type === SUBCOMMAND || option.type === SUBCOMMAND_GROUP;
    if (isSubcommand) {
      if (depth >= 2 || (option.type === SUBCOMMAND_GROUP && depth >= 1)) {
        errors.add([...optionPath, 'type'], 'APPLICATION_COMMAND_OPTION_INVALID_NESTING', 'Sub-command groups and sub-commands cannot be nested this deep');
      }
      checkOptions(errors, [...optionPath, 'options'], option.options, depth + 1);
      return;
    }
    if (option.required === true && sawOptional) {
      errors.add([...optionPath, 'required'], 'APPLICATION_COMMAND_OPTIONS_REQUIRED_INVALID', 'Required options must be placed before non-required options');
    }
    if (option.required !== true) sawOptional = true;
    if (Array.isArray(option.choices)) {
      checkArrayMax(errors, [...optionPath, 'choices'], option.choices, DiscordLimits.commandChoices);
      option.choices.forEach((choice, choiceIndex) => checkChoice(errors, [...optionPath, 'choices', choiceIndex], choice));
      if (option.autocomplete === true && option.choices.length > 0) {
        errors.add([...optionPath, 'autocomplete'], 'APPLICATION_COMMAND_AUTOCOMPLETE_CHOICES', 'Autocomplete cannot be set with choices');
      }
    }
    for (const [key, min, max] of [['min_length', 0, 6000], ['max_length', 1, 6000]] as const) {
      const value = option[key];
      if (typeof value === 'number' && (value < min || value > max)) {
        errors.add([...optionPath, key], 'NUMBER_TYPE_MAX', `int value should be between ${min} and ${max}.`);
      }
    }
  });
}
