import { ApplicationCommandOptionType, ChannelType } from 'discord-api-types/v10';
import type { CommandOption, OptionAttachment } from '../../../src/discord/interaction-port.js';
import { describe, expect, expectTypeOf, it } from 'vitest';
import { definition as jobs } from '../../../commands/jobs.js';
import type { definition as download } from '../../../commands/download.js';
import { definition as song } from '../../../commands/song.js';
import type { definition as voice } from '../../../commands/voice.js';
import { fitsDefinition, readArgs, type CommandArgs, type ResolvedChannel, type ResolvedRole } from '../../../src/discord/options.js';

/** Options as the interaction port hands them over; only the fields `readArgs` looks at. */
const option = (fields: Record<string, unknown>) => fields as unknown as CommandOption;
const string = (name: string, value: string) => option({ name, type: ApplicationCommandOptionType.String, value });

describe('readArgs', () => {
  it('reads plain options by name, keeping falsy values and leaving out absent ones', () => {
    const args = readArgs([
      string('prompt', ''),
      option({ name: 'seconds', type: ApplicationCommandOptionType.Integer, value: 0 }),
      option({ name: 'instrumental', type: ApplicationCommandOptionType.Boolean, value: false }),
      option({ name: 'title', type: ApplicationCommandOptionType.String, value: null }),
      option({ name: 'model', type: ApplicationCommandOptionType.String }),
    ]);
    expect(args).toEqual({ prompt: '', seconds: 0, instrumental: false });
    expect(Object.keys(args)).toEqual(['prompt', 'seconds', 'instrumental']);
  });

  it('reads nothing from no options', () => {
    expect(readArgs<typeof song>([])).toEqual({});
  });

  it('reads a subcommand and its options, or none', () => {
    expect(readArgs<typeof voice>([option({ name: 'create', type: ApplicationCommandOptionType.Subcommand, options: [string('name', 'Robo')] })])).toEqual({
      subcommand: 'create',
      options: { name: 'Robo' },
    });
    expect(readArgs<typeof voice>([option({ name: 'list', type: ApplicationCommandOptionType.Subcommand })])).toEqual({
      subcommand: 'list',
      options: {},
    });
  });

  it('gives the resolved user and attachment as discord.js resolved them', () => {
    const user = { id: '42', username: 'alice' };
    const attachment = { id: '7', url: 'https://cdn.example/a.wav', name: 'a.wav' };
    expect(
      readArgs([
        option({ name: 'user', type: ApplicationCommandOptionType.User, value: '42', user }),
        option({ name: 'audio', type: ApplicationCommandOptionType.Attachment, value: '7', attachment }),
      ]),
    ).toEqual({ user, audio: attachment });
  });

  it('gives a channel as id, type and name, and the id alone when Discord did not resolve it', () => {
    const args = readArgs([
      option({ name: 'named', type: ApplicationCommandOptionType.Channel, value: '1', channel: { id: '1', type: ChannelType.GuildText, name: 'music' } }),
      option({ name: 'nameless', type: ApplicationCommandOptionType.Channel, value: '2', channel: { id: '2', type: ChannelType.DM } }),
      option({ name: 'unresolved', type: ApplicationCommandOptionType.Channel, value: '3' }),
    ]);
    expect(args).toEqual({
      named: { id: '1', type: ChannelType.GuildText, name: 'music' },
      nameless: { id: '2', type: ChannelType.DM, name: null },
      unresolved: { id: '3', type: -1, name: null },
    } satisfies Record<string, ResolvedChannel>);
  });

  it('gives a role as id and name, and the id alone when Discord did not resolve it', () => {
    const args = readArgs([
      option({ name: 'resolved', type: ApplicationCommandOptionType.Role, value: '5', role: { id: '5', name: 'DJ', color: 0 } }),
      option({ name: 'unresolved', type: ApplicationCommandOptionType.Role, value: '6' }),
    ]);
    expect(args).toEqual({ resolved: { id: '5', name: 'DJ' }, unresolved: { id: '6', name: '' } } satisfies Record<string, ResolvedRole>);
  });

  // Checked by `tsc --noEmit`: a wrong type fails the type check, not the run.
  it('types the arguments from the definition', () => {
    expectTypeOf<CommandArgs<typeof song>>().toEqualTypeOf<{
      prompt: string;
      lyrics?: string;
      title?: string;
      model?: string;
      instrumental?: boolean;
      voice?: string;
    }>();
    expectTypeOf<CommandArgs<typeof download>>().toEqualTypeOf<{ song: string; format: 'mp3' | 'wav' }>();
    type VoiceArgs = CommandArgs<typeof voice>;
    expectTypeOf<VoiceArgs['subcommand']>().toEqualTypeOf<'create' | 'list' | 'delete'>();
    expectTypeOf<Extract<VoiceArgs, { subcommand: 'create' }>['options']>().toEqualTypeOf<{ audio: OptionAttachment; name: string }>();
    expectTypeOf<keyof Extract<VoiceArgs, { subcommand: 'list' }>['options']>().toBeNever();
  });
});

describe('readArgs and U+0000', () => {
  it('leaves it out of a text, as Postgres cannot store it', () => {
    expect(readArgs([string('query', 'ra\u0000in')])).toEqual({ query: 'rain' });
  });
});

describe('fitsDefinition', () => {
  const subcommand = (name: string, options: CommandOption[] = []) => option({ name, type: ApplicationCommandOptionType.Subcommand, options });

  it('takes what a current app sends', () => {
    expect(fitsDefinition(song, [string('prompt', 'rain')])).toBe(true);
    expect(fitsDefinition(song, [string('prompt', 'rain'), option({ name: 'instrumental', type: ApplicationCommandOptionType.Boolean, value: false })])).toBe(true);
    expect(fitsDefinition(jobs, [subcommand('list')])).toBe(true);
    expect(fitsDefinition(jobs, [subcommand('show', [string('id', 'abc')])])).toBe(true);
  });

  it('refuses an unknown option, an option twice, a missing required one, and a value of another type', () => {
    expect(fitsDefinition(song, [string('prompt', 'rain'), string('mood', 'sad')])).toBe(false);
    expect(fitsDefinition(song, [string('prompt', 'rain'), string('prompt', 'snow')])).toBe(false);
    expect(fitsDefinition(song, [string('lyrics', 'la la')])).toBe(false);
    expect(fitsDefinition(song, [option({ name: 'prompt', type: ApplicationCommandOptionType.Integer, value: 7 })])).toBe(false);
    expect(fitsDefinition(song, [option({ name: 'prompt', type: ApplicationCommandOptionType.String, value: 7 })])).toBe(false);
    expect(fitsDefinition(song, [string('prompt', 'rain'), option({ name: 'instrumental', type: ApplicationCommandOptionType.Boolean, value: 'yes' })])).toBe(false);
  });

  it('refuses a subcommand the command does not have, none, or two', () => {
    expect(fitsDefinition(jobs, [subcommand('purge')])).toBe(false);
    expect(fitsDefinition(jobs, [])).toBe(false);
    expect(fitsDefinition(jobs, [subcommand('list'), subcommand('list')])).toBe(false);
    expect(fitsDefinition(jobs, [subcommand('show')])).toBe(false);
  });
});
