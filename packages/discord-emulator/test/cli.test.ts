/** The standalone emulator: what it prints for a person, and the command lines its prompt takes (AutoMod keyword rules among them). */
import { spawn } from 'node:child_process';
import type { ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { REST } from '@discordjs/rest';
import { PermissionFlagsBits, Routes, type APIAutoModerationRule } from 'discord-api-types/v10';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { startDiscordEmulator, type DiscordEmulator } from '@music-bot/discord-emulator';
import { automodCommand, parseCommandLine } from '@music-bot/discord-emulator/repl.js';

let child: ChildProcess | undefined;

afterEach(async () => {
  if (child && child.exitCode === null) {
    const exited = once(child, 'exit');
    child.kill('SIGTERM');
    await exited;
  }
  child = undefined;
});

/** Collects stdout until `done` matches it. */
function readUntil(process: ChildProcess, done: RegExp, timeoutMs: number): Promise<string> {
  return new Promise((resolve, reject) => {
    let output = '';
    const timer = setTimeout(() => reject(new Error(`no match for ${done} in:\n${output}`)), timeoutMs);
    process.stdout?.on('data', (chunk: Buffer) => {
      output += chunk.toString();
      if (done.test(output)) {
        clearTimeout(timer);
        resolve(output);
      }
    });
  });
}

describe('discord-emulator CLI', () => {
  // tsx compiles the emulator as it starts: 20 s and more on a busy machine, hence the waits.
  it('prints the DISCORD_API_URL and seeded ids, and serves the API there', async () => {
    child = spawn(process.execPath, ['--import', 'tsx', 'src/cli.ts', '--port', '0', '--token', 'cli-token', '--automod-keywords', 'cat*, dog', '--redirect-uri', 'http://127.0.0.1:9/callback'], {
      cwd: new URL('..', import.meta.url),
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    const output = await readUntil(child, /AutoMod:.*\n/, 60_000);
    const apiUrl = /DISCORD_API_URL=(\S+)/.exec(output)?.[1];
    expect(apiUrl).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/api$/);
    expect(output).toContain('DISCORD_TOKEN=cli-token');
    expect(output).toMatch(/DISCORD_WEB_URL=http:\/\/127\.0\.0\.1:\d+ /);
    expect(output).toContain('redirects: http://127.0.0.1:9/callback');
    const guildId = /Guild:\s+(\d+)/.exec(output)?.[1];
    const channelId = /Channel:\s+(\d+)/.exec(output)?.[1];

    const gateway = await fetch(`${apiUrl}/v10/gateway/bot`, { headers: { authorization: 'Bot cli-token' } });
    expect(gateway.status).toBe(200);
    expect(await gateway.json()).toMatchObject({ url: expect.stringMatching(/^ws:\/\//), shards: 1 });
    const channel = await fetch(`${apiUrl}/v10/channels/${channelId}`, { headers: { authorization: 'Bot cli-token' } });
    expect(await channel.json()).toMatchObject({ id: channelId, guild_id: guildId, name: 'general' });
    // The seeded keyword rule, enabled, as the emulator prints it.
    expect(output).toMatch(/AutoMod:\s+\d+ "Blocked words" \(keyword, enabled\) keywords: cat\*, dog\n/);
  }, 90_000);
});

describe('the prompt command line', () => {
  it('splits a slash command into name, subcommands and options', () => {
    expect(parseCommandLine('/song create prompt:"rainy city" count:3')).toEqual({
      name: 'song',
      path: ['create'],
      options: { prompt: 'rainy city', count: '3' },
    });
    expect(parseCommandLine('/admin credits grant user:42')).toEqual({ name: 'admin', path: ['credits', 'grant'], options: { user: '42' } });
    expect(parseCommandLine('song create')).toBeNull();
  });
});

describe('the prompt’s AutoMod commands', () => {
  let emu: DiscordEmulator;
  let guildId: string;
  let rest: REST;
  beforeAll(async () => {
    emu = await startDiscordEmulator({ shards: { identifyWindowMs: 0 } });
    guildId = emu.createGuild({ name: 'Prompt guild', botPermissions: PermissionFlagsBits.ViewChannel | PermissionFlagsBits.ManageGuild }).id;
    rest = new REST({ api: emu.apiUrl, retries: 0 }).setToken(emu.botToken);
  });
  afterAll(async () => emu?.close());

  it('lists, creates and deletes the guild’s keyword rules, as the bot then reads them over REST', async () => {
    expect(automodCommand(emu, guildId, 'list')).toEqual(['no AutoMod rules in this guild']);
    const [created] = automodCommand(emu, guildId, 'add No cats keywords:"cat*, kitt*" allow:"catalogue" regex:"c[a@]t"');
    const ruleId = /^created (\d+) /.exec(created ?? '')?.[1];
    expect(created).toBe(`created ${ruleId} "No cats" (keyword, enabled) keywords: cat*, kitt*; allow: catalogue; regex: c[a@]t`);
    automodCommand(emu, guildId, 'add "Quiet words" keywords:hush disabled');

    const rules = (await rest.get(Routes.guildAutoModerationRules(guildId))) as APIAutoModerationRule[];
    expect(rules).toEqual([
      expect.objectContaining({ id: ruleId, name: 'No cats', enabled: true, trigger_type: 1, actions: [{ type: 1, metadata: {} }], trigger_metadata: { keyword_filter: ['cat*', 'kitt*'], allow_list: ['catalogue'], regex_patterns: ['c[a@]t'] } }),
      expect.objectContaining({ name: 'Quiet words', enabled: false, trigger_metadata: { keyword_filter: ['hush'], allow_list: [], regex_patterns: [] } }),
    ]);
    expect(automodCommand(emu, guildId, '')).toEqual(automodCommand(emu, guildId, 'list'));
    expect(automodCommand(emu, guildId, 'list')).toHaveLength(2);

    expect(automodCommand(emu, guildId, `delete ${ruleId}`)).toEqual([`deleted ${ruleId}`]);
    expect(((await rest.get(Routes.guildAutoModerationRules(guildId))) as APIAutoModerationRule[]).map((rule) => rule.name)).toEqual(['Quiet words']);
    expect(emu.findings).toEqual([]);
  });

  it('says what is wrong with a line, and prints Discord’s refusals instead of failing', () => {
    expect(automodCommand(emu, guildId, 'add Nameless')[0]).toMatch(/^a keyword rule needs a name and keywords or regex: automod list \| automod add/);
    expect(automodCommand(emu, guildId, 'delete 123')).toEqual(['Discord refused it (404, 0): 404: Not Found']);
    expect(automodCommand(emu, guildId, 'add Too long keywords:' + 'x'.repeat(61))[0]).toMatch(/^Discord refused it \(400, 50035\): Invalid Form Body/);
    expect(automodCommand(emu, guildId, 'rename 1')[0]).toMatch(/^automod list \| automod add/);
  });
});
