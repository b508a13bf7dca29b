/**
 * The router's own duties: answering buttons it does not know, surviving interactions that
 * expired before it could answer, commands that do not fit their definition, logging every
 * interaction by id and never by token, and refusing DMs; and the registration of the commands.
 */
import { spawn } from 'node:child_process';
import { createServer, type IncomingMessage } from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { ButtonStyle, ComponentType, InteractionType, type APIChatInputApplicationCommandInteraction } from 'discord-api-types/v10';
import { ChatInputCommandInteraction, Client } from 'discord.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { applicationCommandDefinitions, commands } from '../../../commands/index.js';
import type { InteractionHandle } from '@music-bot/discord-emulator';
import { deployCommands } from '../../../src/discord/deploy.js';
import { createInteractionRouter } from '../../../src/discord/router.js';
import { commandSettings } from '../../../src/discord/context.js';
import { dataFacades } from '../../../src/discord/data.js';
import { pino } from 'pino';
import { Writable } from 'node:stream';
import { count, eq } from 'drizzle-orm';
import { getBalance } from '../../../src/credits/index.js';
import { jobs } from '../../../src/db/schema.js';
import { jobIdIn, privateAnswer, SIM_KEY, startBot, type BotHarness } from './harness.js';

let h: BotHarness;
const handles: InteractionHandle[] = [];

beforeAll(async () => {
  // A world of its own: the late interaction below is not logged as expired when the file
  // follows another in a shared world, for a reason not yet found (docs/decisions/shared-test-worlds.md).
  h = await startBot({ ownWorld: true });
});
afterAll(async () => h?.close());

function track(handle: InteractionHandle): InteractionHandle {
  handles.push(handle);
  return handle;
}

/** Posts a message as the bot, as an older version of it might have. */
async function postAsBot(body: Record<string, unknown>): Promise<string> {
  const response = await fetch(`${h.emulator.apiUrl}/v10/channels/${h.channelId}/messages`, {
    method: 'POST',
    headers: { authorization: `Bot ${h.emulator.botToken}`, 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
  expect(response.status).toBe(200);
  return ((await response.json()) as { id: string }).id;
}

describe('buttons the bot does not know', () => {
  it('answers a button from an older version with a private line', async () => {
    const messageId = await postAsBot({
      content: 'old message',
      components: [
        {
          type: ComponentType.ActionRow,
          components: [
            { type: ComponentType.Button, style: ButtonStyle.Secondary, label: 'Old', custom_id: 'shuffle:123' },
            { type: ComponentType.Button, style: ButtonStyle.Secondary, label: 'Bad id', custom_id: 'video:not-a-job' },
          ],
        },
      ],
    });
    const old = await privateAnswer(track(h.emulator.clickButton({ messageId, customId: 'shuffle:123', userId: h.members.alice })));
    expect(old.content).toBe('This button no longer works.');
    const bad = await privateAnswer(track(h.emulator.clickButton({ messageId, customId: 'video:not-a-job', userId: h.members.alice })));
    expect(bad.content).toContain('not a finished song of this server');
    expect(h.emulator.message(messageId)?.content).toBe('old message');
  });
});

describe('commands that do not fit their definition', () => {
  // What a member's app with an older copy of a command sends, or a forged payload; Discord's
  // own checks would stop it from a current app, so it goes through the emulator unchecked.
  const command = (g: BotHarness, name: string, options: unknown[]) =>
    h.emulator.dispatchUnchecked({
      guildId: g.guild.id,
      channelId: g.channelId,
      userId: g.members.alice,
      type: InteractionType.ApplicationCommand,
      data: { id: h.emulator.registeredCommands().find((registered) => registered.name === name)?.id ?? '1', name, type: 1, options },
    });
  const balanceOf = async (g: BotHarness) => (await getBalance(h.db.db, g.guild.id)) ?? Number.NaN;
  const outdated = 'This command has changed since your Discord app loaded it. Please try again in a moment.';

  it('are refused privately, and nothing is spent on them', async () => {
    const g = h.inNewGuild();
    const before = await balanceOf(g);
    const sent = [
      // An option the command does not have.
      command(g, 'lyrics', [{ name: 'prompt', type: 3, value: 'rain' }, { name: 'mood', type: 3, value: 'sad' }]),
      // A required option missing (the song form may leave out the style; the command may not).
      command(g, 'song', [{ name: 'lyrics', type: 3, value: 'la la la' }]),
      // Options of another type than the definition's.
      command(g, 'song', [{ name: 'prompt', type: 4, value: 7 }]),
      command(g, 'song', [{ name: 'prompt', type: 3, value: 'rain' }, { name: 'instrumental', type: 5, value: 'yes' }]),
      // A subcommand the command no longer has: before, the bot answered nothing at all.
      command(g, 'jobs', [{ name: 'purge', type: 1, options: [] }]),
      command(g, 'jobs', []),
    ];
    for (const handle of sent) expect((await privateAnswer(track(handle))).content).toBe(outdated);
    expect(await balanceOf(g)).toBe(before);
    const [made] = await h.db.db.select({ count: count() }).from(jobs).where(eq(jobs.guildId, g.guild.id));
    expect(made?.count).toBe(0);
  });

  it('refuses a search longer than the option allows, which only a forged payload can carry', async () => {
    const g = h.inNewGuild();
    const long = command(g, 'library', [{ name: 'query', type: 3, value: 'rain '.repeat(1_200) }]);
    expect((await privateAnswer(track(long))).content).toBe('That search is too long to page through: at most 40 characters.');
  });

  it('keeps a text with U+0000, which Postgres cannot store, without it', async () => {
    const g = h.inNewGuild();
    const answer = await privateAnswer(track(g.run(g.members.alice, { name: 'lyrics', options: { prompt: 'rain\u0000 on the roof' } })));
    const [job] = await h.db.db.select().from(jobs).where(eq(jobs.id, jobIdIn(answer)));
    expect(job?.request).toMatchObject({ prompt: 'rain on the roof' });
    // A search with it is a search, not "something went wrong".
    const search = track(g.run(g.members.alice, { name: 'library', options: { query: 'rain\u0000' } }));
    await expect.poll(() => h.logs.find((line) => line.interactionId === search.id && ['interaction handled', 'interaction failed'].includes(String(line.msg)))?.msg).toBe('interaction handled');
  });
});

describe('interactions Discord gave up on', () => {
  it('logs an interaction answered too late and goes on serving the next', async () => {
    const late = track(h.run(h.members.alice, { name: 'credits' }));
    // Discord's 3 seconds pass before the bot's answer arrives.
    h.emulator.clock.advance(4_000);
    await expect.poll(() => h.logs.some((line) => line.interactionId === late.id && line.msg === 'interaction expired before it was answered')).toBe(true);
    expect(late.response).toBeUndefined();

    const next = await privateAnswer(track(h.run(h.members.alice, { name: 'credits' })));
    expect(next.content).toContain('Credits of this server');
  });
});

describe('logging', () => {
  it('names every interaction by id and never writes a token or the service key', async () => {
    await privateAnswer(track(h.run(h.members.alice, { name: 'song', options: { prompt: ' ' } })));
    await privateAnswer(track(h.run(h.members.alice, { name: 'credits-admin', subcommand: 'freeze' })));
    for (const handle of handles) {
      expect(h.logs.some((line) => line.interactionId === handle.id), handle.id).toBe(true);
    }
    const everything = h.rawLogs.join('\n');
    for (const handle of handles) expect(everything).not.toContain(handle.token);
    expect(everything).not.toContain(SIM_KEY);
    expect(everything).not.toContain(h.emulator.botToken);
  });
});

describe('direct messages', () => {
  it('are refused privately before anything else happens', async () => {
    // The emulator sends guild interactions only, so this one comes from a small stand-in
    // for Discord's callback endpoint, to a real discord.js interaction.
    const callbacks: Array<{ url: string; body: unknown }> = [];
    const server = createServer((request: IncomingMessage, response) => {
      let text = '';
      request.on('data', (chunk: Buffer) => (text += chunk.toString('utf8')));
      request.on('end', () => {
        callbacks.push({ url: request.url ?? '', body: JSON.parse(text || '{}') });
        response.writeHead(204).end();
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const client = new Client({ intents: [], rest: { api: `http://127.0.0.1:${(server.address() as AddressInfo).port}/api` } });
    client.rest.setToken('dm-test-token');
    const lines: string[] = [];
    const logger = pino({ level: 'debug' }, new Writable({ write: (chunk: Buffer, _e, done) => (lines.push(chunk.toString()), done()) }));
    try {
      const payload = {
        id: '1300000000000000001',
        application_id: '1300000000000000002',
        type: InteractionType.ApplicationCommand,
        token: 'dm-interaction-token-secret',
        version: 1,
        channel_id: '1300000000000000003',
        channel: { id: '1300000000000000003', type: 1 },
        user: { id: '1300000000000000004', username: 'dm-user', discriminator: '0', global_name: null, avatar: null },
        locale: 'en-US',
        app_permissions: '0',
        entitlements: [],
        authorizing_integration_owners: {},
        context: 1,
        attachment_size_limit: 10_485_760,
        data: { id: '1300000000000000005', name: 'song', type: 1, options: [{ name: 'prompt', type: 3, value: 'hi' }] },
      } as unknown as APIChatInputApplicationCommandInteraction;
      const interaction = Reflect.construct(ChatInputCommandInteraction, [client, payload]) as ChatInputCommandInteraction;
      const route = createInteractionRouter({ ...h.app.deps, ...dataFacades(h.app.deps.db), settings: commandSettings(h.config), logger, pipeline: h.app.pipeline }, commands);
      await route(interaction);
      expect(callbacks).toHaveLength(1);
      expect(callbacks[0]?.url).toContain('/interactions/1300000000000000001/');
      expect(callbacks[0]?.body).toMatchObject({
        type: 4,
        data: { content: 'This bot works in servers only: credits belong to a server.', flags: 64 },
      });
      expect(lines.join('')).not.toContain('dm-interaction-token-secret');
    } finally {
      await client.destroy();
      await new Promise((resolve) => server.close(resolve));
    }
  });
});

describe('registration', () => {
  it('registers every command globally, within Discord’s rules', async () => {
    h.emulator.clearRecords();
    await deployCommands(h.config, applicationCommandDefinitions);
    expect(h.emulator.findings).toEqual([]);
    expect(h.emulator.registeredCommands().map((command) => command.name).sort()).toEqual(
      applicationCommandDefinitions.map((definition) => definition.name).sort(),
    );
    // The Report message command, in the "Apps" menu of a message.
    expect(h.emulator.registeredCommands().find((command) => command.name === 'Report')).toMatchObject({ type: 3, name_localizations: { de: 'Melden', 'pt-BR': 'Denunciar' } });
    const admin = h.emulator.registeredCommands().find((command) => command.name === 'credits-admin');
    expect(admin?.default_member_permissions).toBe('32');
  });

  it('registers to the development guild with `npm run deploy-commands` when DISCORD_DEV_GUILD_ID is set', async () => {
    h.emulator.clearRecords();
    const root = path.resolve(import.meta.dirname, '../../..');
    const output = await new Promise<{ code: number | null; stdout: string; stderr: string }>((resolve) => {
      const child = spawn(process.execPath, ['--import', 'tsx', 'src/scripts/deploy-commands.ts'], {
        cwd: root,
        env: {
          PATH: process.env.PATH,
          DISCORD_TOKEN: h.emulator.botToken,
          DISCORD_APPLICATION_ID: h.emulator.applicationId,
          DISCORD_API_URL: h.emulator.apiUrl,
          DISCORD_DEV_GUILD_ID: h.guild.id,
        },
      });
      let stdout = '';
      let stderr = '';
      child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
      child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
      child.on('close', (code) => resolve({ code, stdout, stderr }));
    });
    expect(output.stderr).toBe('');
    expect(output.code).toBe(0);
    expect(output.stdout).toContain(`registered ${applicationCommandDefinitions.length} commands to guild ${h.guild.id}`);
    expect(h.emulator.findings).toEqual([]);
    const registered = h.emulator.registeredCommands(h.guild.id);
    expect(registered.map((command) => command.name).sort()).toEqual(applicationCommandDefinitions.map((definition) => definition.name).sort());
  });
});
