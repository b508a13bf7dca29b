/** The standalone emulator: what it prints for a person, and the command lines its prompt takes. */
import { spawn } from 'node:child_process';
import type { ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { afterEach, describe, expect, it } from 'vitest';
import { parseCommandLine } from '@music-bot/discord-emulator/repl.js';

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
  it('prints the DISCORD_API_URL and seeded ids, and serves the API there', async () => {
    child = spawn(process.execPath, ['--import', 'tsx', 'src/cli.ts', '--port', '0', '--token', 'cli-token'], {
      cwd: new URL('..', import.meta.url),
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    const output = await readUntil(child, /User:\s+\d+/, 20_000);
    const apiUrl = /DISCORD_API_URL=(\S+)/.exec(output)?.[1];
    expect(apiUrl).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/api$/);
    expect(output).toContain('DISCORD_TOKEN=cli-token');
    const guildId = /Guild:\s+(\d+)/.exec(output)?.[1];
    const channelId = /Channel:\s+(\d+)/.exec(output)?.[1];

    const gateway = await fetch(`${apiUrl}/v10/gateway/bot`, { headers: { authorization: 'Bot cli-token' } });
    expect(gateway.status).toBe(200);
    expect(await gateway.json()).toMatchObject({ url: expect.stringMatching(/^ws:\/\//), shards: 1 });
    const channel = await fetch(`${apiUrl}/v10/channels/${channelId}`, { headers: { authorization: 'Bot cli-token' } });
    expect(await channel.json()).toMatchObject({ id: channelId, guild_id: guildId, name: 'general' });
  }, 30_000);
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
