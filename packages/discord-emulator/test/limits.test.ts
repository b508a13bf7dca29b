/**
 * Discord's limits as the emulator enforces them (each at the limit and one past it), and
 * the OpenAPI checks with the description's known looseness absorbed.
 */
import { describe, expect, it } from 'vitest';
import { checkAutocompleteChoices, checkCommandList, checkMessagePayload, checkModal, DiscordLimits } from '@music-bot/discord-emulator/limits.js';
import { OpenApiSpec } from '@music-bot/discord-emulator/openapi.js';

type Payload = Record<string, unknown>;

/** The error codes collected for a message body, flattened to `path: code`. */
function messageErrors(payload: Payload): string[] {
  return flatten(checkMessagePayload(payload).errors.toJSON());
}

function flatten(tree: object, prefix = ''): string[] {
  const out: string[] = [];
  for (const [key, value] of Object.entries(tree)) {
    if (key === '_errors') out.push(...(value as Array<{ code: string }>).map((error) => `${prefix || '.'}: ${error.code}`));
    else out.push(...flatten(value as object, prefix ? `${prefix}.${key}` : key));
  }
  return out;
}

const text = (length: number): string => 'x'.repeat(length);
const button = (id: string, label = 'Go'): Payload => ({ type: 2, style: 1, custom_id: id, label });
const row = (...components: Payload[]): Payload => ({ type: 1, components });

describe('message limits', () => {
  const cases: Array<[string, (n: number) => Payload, number, string]> = [
    ['content', (n) => ({ content: text(n) }), DiscordLimits.content, 'content: BASE_TYPE_MAX_LENGTH'],
    ['embeds per message', (n) => ({ embeds: Array.from({ length: n }, () => ({ title: 't' })) }), 10, 'embeds: BASE_TYPE_MAX_LENGTH'],
    ['embed title', (n) => ({ embeds: [{ title: text(n) }] }), 256, 'embeds.0.title: BASE_TYPE_MAX_LENGTH'],
    ['embed description', (n) => ({ embeds: [{ description: text(n) }] }), 4096, 'embeds.0.description: BASE_TYPE_MAX_LENGTH'],
    ['embed fields', (n) => ({ embeds: [{ fields: Array.from({ length: n }, () => ({ name: 'n', value: 'v' })) }] }), 25, 'embeds.0.fields: BASE_TYPE_MAX_LENGTH'],
    ['field name', (n) => ({ embeds: [{ fields: [{ name: text(n), value: 'v' }] }] }), 256, 'embeds.0.fields.0.name: BASE_TYPE_BAD_LENGTH'],
    ['field value', (n) => ({ embeds: [{ fields: [{ name: 'n', value: text(n) }] }] }), 1024, 'embeds.0.fields.0.value: BASE_TYPE_BAD_LENGTH'],
    ['footer text', (n) => ({ embeds: [{ footer: { text: text(n) } }] }), 2048, 'embeds.0.footer.text: BASE_TYPE_BAD_LENGTH'],
    ['author name', (n) => ({ embeds: [{ author: { name: text(n) } }] }), 256, 'embeds.0.author.name: BASE_TYPE_BAD_LENGTH'],
    ['action rows', (n) => ({ components: Array.from({ length: n }, (_, i) => row(button(`b${i}`))) }), 5, 'components: BASE_TYPE_MAX_LENGTH'],
    ['buttons per row', (n) => ({ components: [row(...Array.from({ length: n }, (_, i) => button(`b${i}`)))] }), 5, 'components.0.components: BASE_TYPE_BAD_LENGTH'],
    ['custom id', (n) => ({ components: [row(button(text(n)))] }), 100, 'components.0.components.0.custom_id: BASE_TYPE_BAD_LENGTH'],
    ['button label', (n) => ({ components: [row(button('b', text(n)))] }), 80, 'components.0.components.0.label: BASE_TYPE_MAX_LENGTH'],
    [
      'select options',
      (n) => ({ components: [row({ type: 3, custom_id: 's', options: Array.from({ length: n }, (_, i) => ({ label: `o${i}`, value: `v${i}` })) })] }),
      25,
      'components.0.components.0.options: BASE_TYPE_BAD_LENGTH',
    ],
  ];

  it.each(cases)('%s: %i is accepted, one more is refused', (_name, build, limit, expected) => {
    expect(messageErrors(build(limit))).toEqual([]);
    expect(messageErrors(build(limit + 1))).toContain(expected);
  });

  it('counts every embed toward 6000 characters in all', () => {
    const within = { embeds: [{ title: text(256), description: text(4096) }, { description: text(6000 - 256 - 4096) }] };
    expect(messageErrors(within)).toEqual([]);
    const over = { embeds: [{ title: text(256), description: text(4096) }, { description: text(6000 - 256 - 4096 + 1) }] };
    expect(messageErrors(over)).toEqual(['embeds: MAX_EMBED_SIZE_EXCEEDED']);
  });

  it('counts characters, not UTF-16 units', () => {
    expect(messageErrors({ content: '🎵'.repeat(2000) })).toEqual([]);
  });

  it('refuses duplicate custom ids, a select beside buttons, and a link button with a custom id', () => {
    expect(messageErrors({ components: [row(button('a')), row(button('a'))] })).toContain('components.1.components.0.custom_id: COMPONENT_CUSTOM_ID_DUPLICATED');
    expect(messageErrors({ components: [row(button('a'), { type: 3, custom_id: 's', options: [{ label: 'l', value: 'v' }] })] })).toContain(
      'components.0.components: COMPONENT_LAYOUT_WIDTH_EXCEEDED',
    );
    expect(messageErrors({ components: [row({ type: 2, style: 5, url: 'https://example.com', custom_id: 'x' })] })).toContain(
      'components.0.components.0.custom_id: BUTTON_COMPONENT_CUSTOM_ID_NOT_ALLOWED',
    );
  });

  it('calls a message with nothing in it empty, unless files come along', () => {
    expect(checkMessagePayload({ content: '  ' }).empty).toBe(true);
    expect(checkMessagePayload({}, { fileCount: 1 }).empty).toBe(false);
    expect(checkMessagePayload({}, { isEdit: true }).empty).toBe(false);
  });

  it('nests errors under a prefix for interaction callbacks', () => {
    expect(flatten(checkMessagePayload({ content: text(2001) }, { path: ['data'] }).errors.toJSON())).toEqual(['data.content: BASE_TYPE_MAX_LENGTH']);
  });
});

describe('modal limits', () => {
  const input = (overrides: Payload = {}): Payload => ({ type: 4, custom_id: 'comment', style: 1, label: 'Comment', ...overrides });
  const modal = (overrides: Payload = {}): Payload => ({ custom_id: 'm', title: 'Title', components: [row(input())], ...overrides });
  const modalErrors = (payload: Payload): string[] => flatten(checkModal(payload).toJSON());

  it('accepts a modal at every limit', () => {
    const rows = Array.from({ length: 5 }, (_, i) => row(input({ custom_id: `c${i}`, label: text(45), value: text(4000) })));
    expect(modalErrors(modal({ title: text(45), components: rows }))).toEqual([]);
    expect(modalErrors(modal({ components: [{ type: 18, label: text(45), component: input({ label: undefined }) }] }))).toEqual([]);
  });

  it('refuses a title over 45, no rows or more than 5, a label over 45 and a value over 4000', () => {
    expect(modalErrors(modal({ title: text(46) }))).toEqual(['data.title: BASE_TYPE_BAD_LENGTH']);
    expect(modalErrors(modal({ components: [] }))).toEqual(['data.components: BASE_TYPE_BAD_LENGTH']);
    const six = Array.from({ length: 6 }, (_, i) => row(input({ custom_id: `c${i}` })));
    expect(modalErrors(modal({ components: six }))).toEqual(['data.components: BASE_TYPE_BAD_LENGTH']);
    expect(modalErrors(modal({ components: [row(input({ label: text(46) }))] }))).toEqual(['data.components.0.components.0.label: BASE_TYPE_BAD_LENGTH']);
    expect(modalErrors(modal({ components: [row(input({ value: text(4001) }))] }))).toEqual(['data.components.0.components.0.value: BASE_TYPE_MAX_LENGTH']);
    expect(modalErrors(modal({ components: [{ type: 18, label: text(46), component: input() }] }))).toEqual(['data.components.0.label: BASE_TYPE_BAD_LENGTH']);
  });
});

describe('autocomplete and command limits', () => {
  it('takes 25 choices and refuses 26', () => {
    const choices = (n: number): Payload => ({ choices: Array.from({ length: n }, (_, i) => ({ name: `c${i}`, value: `v${i}` })) });
    expect(checkAutocompleteChoices(choices(25)).isEmpty).toBe(true);
    expect(flatten(checkAutocompleteChoices(choices(26)).toJSON())).toEqual(['data.choices: BASE_TYPE_MAX_LENGTH']);
    expect(flatten(checkAutocompleteChoices({ choices: [{ name: text(101), value: 'v' }] }).toJSON())).toEqual(['data.choices.0.name: BASE_TYPE_BAD_LENGTH']);
  });

  it('refuses invalid names, duplicates, and required options after optional ones', () => {
    const errors = flatten(
      checkCommandList([
        { name: 'ok', description: 'fine', options: [{ type: 3, name: 'a', description: 'a' }, { type: 3, name: 'b', description: 'b', required: true }] },
        { name: 'Bad Name', description: 'x' },
        { name: 'ok', description: 'again' },
      ]).toJSON(),
    );
    expect(errors).toEqual([
      '0.options.1.required: APPLICATION_COMMAND_OPTIONS_REQUIRED_INVALID',
      '1.name: APPLICATION_COMMAND_INVALID_NAME',
      '2.name: APPLICATION_COMMANDS_DUPLICATE_NAME',
    ]);
  });
});

describe("checks against Discord's OpenAPI description", () => {
  const spec = OpenApiSpec.load();
  const none = new URLSearchParams();

  it('knows paths and methods, and says when it does not', () => {
    expect(spec.check('GET', '/users/@me', none, { kind: 'none' })).toMatchObject({ route: '/users/@me', operationId: 'get_my_user', issues: [] });
    expect(spec.check('GET', '/nowhere', none, { kind: 'none' }).issues[0]?.kind).toBe('unknown-route');
    expect(spec.check('PUT', '/users/@me', none, { kind: 'none' }).issues[0]?.kind).toBe('unknown-method');
  });

  it('takes int-parseable strings where it types integers, and integers where it types snowflakes', () => {
    const command = { name: 'song', description: 'x', default_member_permissions: '8' };
    expect(spec.check('PUT', '/applications/1/commands', none, { kind: 'json', value: [command] }).issues).toEqual([]);
    const withNumericId = { content: 'x', attachments: [{ id: 0, filename: 'a.mp3' }] };
    expect(spec.check('POST', '/channels/1/messages', none, { kind: 'json', value: withNumericId }).issues).toEqual([]);
    const notANumber = { name: 'song', description: 'x', default_member_permissions: 'admin' };
    expect(spec.check('PUT', '/applications/1/commands', none, { kind: 'json', value: [notANumber] }).issues[0]?.kind).toBe('invalid-body');
  });

  it('coerces query strings and treats an empty value as absent', () => {
    const callback = '/interactions/1/token/callback';
    const body = { kind: 'json' as const, value: { type: 5 } };
    expect(spec.check('POST', callback, new URLSearchParams('with_response=false'), body).issues).toEqual([]);
    expect(spec.check('POST', callback, new URLSearchParams('with_response='), body).issues).toEqual([]);
    expect(spec.check('POST', callback, new URLSearchParams('with_response=perhaps'), body).issues[0]?.kind).toBe('invalid-query');
  });

  it('validates multipart bodies through their payload_json and finds what is wrong in it', () => {
    const good = spec.check('POST', '/channels/1/messages', none, { kind: 'multipart', payload: { content: 'hi' }, hasPayloadJson: true });
    expect(good.issues).toEqual([]);
    const bad = spec.check('POST', '/channels/1/messages', none, { kind: 'multipart', payload: { embeds: [{ title: text(300) }] }, hasPayloadJson: true });
    expect(bad.issues[0]?.details).toContain('/embeds/0/title: must NOT have more than 256 characters');
  });

  it('accepts values that fit more than one branch of a union (oneOf read as anyOf)', () => {
    // A numeric string nonce fits both the integer branch (int-parseable) and the string branch.
    expect(spec.check('POST', '/channels/1/messages', none, { kind: 'json', value: { content: 'x', nonce: '123' } }).issues).toEqual([]);
    expect(spec.check('POST', '/webhooks/1/token', none, { kind: 'json', value: { content: 'x' } }).issues).toEqual([]);
  });
});
