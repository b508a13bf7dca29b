/**
 * Interactions POSTed to `/interactions` (INTERACTIONS=http), with the router's answers taken
 * into the HTTP response: what the song and moderation scenarios (../../e2e/*-over-http) do
 * not reach. A first answer with a file (Discord's HTTP answer carries none), a decision past
 * the answer budget, a follow-up sent straight after the answer, and a handler that answers
 * nothing. The commands here are fixtures of the router's contract; Discord is the emulator,
 * delivering by HTTP and signing with its own key.
 */
import Fastify, { type FastifyInstance } from 'fastify';
import { ApplicationCommandType, InteractionResponseType } from 'discord-api-types/v10';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { loadConfig } from '../../../src/config.js';
import { defineCommand, type Command } from '../../../src/discord/command.js';
import { commandSettings, type BaseCommandContext } from '../../../src/discord/context.js';
import { createHttpInteractionReceiver, type HttpInteractionReceiver } from '../../../src/discord/http-interactions.js';
import { answerInPlace, firstAnswerOf } from '../../../src/discord/respond.js';
import { INTERACTIONS_BODY_LIMIT, registerInteractionsRoute } from '../../../src/http/interactions.js';
import { silentLogger } from '../../../src/logger.js';
import { RequestTakenError } from '../../../src/pipeline/requests.js';
import { startDiscordEmulator, type DiscordEmulator, type InteractionResponse } from '@music-bot/discord-emulator';
import { found } from '../../support/found.js';

const ANSWER_BUDGET_MS = 100;

const fixture = (name: string, acknowledge: 'public' | 'ephemeral', execute: Command['execute']): Command =>
  defineCommand({ definition: { name, description: `${name} (a fixture)`, type: ApplicationCommandType.ChatInput }, acknowledge: () => acknowledge, execute }) as Command;

const commands: Command[] = [
  fixture('file', 'ephemeral', async (interaction) => {
    await answerInPlace(interaction, { content: 'your export', files: [{ attachment: Buffer.from('a,b\n1,2\n'), name: 'export.csv' }] });
  }),
  fixture('slow', 'public', async (interaction) => {
    await vi.waitFor(() => found(firstAnswerOf(interaction)?.first === 'deferred' || undefined, 'the budget to run out'), 5_000);
    await answerInPlace(interaction, { content: 'decided late' });
  }),
  fixture('chatty', 'public', async (interaction) => {
    await answerInPlace(interaction, { content: 'starting' });
    await interaction.followUp({ content: 'and a private word', flags: 64 });
  }),
  fixture('hello', 'ephemeral', async (interaction) => {
    await answerInPlace(interaction, { content: `hello ${interaction.user.username}` });
  }),
  fixture('taken', 'public', async () => {
    throw new RequestTakenError('00000000-0000-4000-8000-000000000000');
  }),
];

let emulator: DiscordEmulator;
let server: FastifyInstance;
let receiver: HttpInteractionReceiver;
let place: { guildId: string; channelId: string; userId: string };
let endpoint: string;

beforeAll(async () => {
  emulator = await startDiscordEmulator({ botToken: 'MTA5ODc2NTQzMjEwOTg3NjU0.emulator.http-interactions-token' });
  const guild = emulator.createGuild({ name: 'Endpoint' });
  const channel = emulator.createChannel(guild.id, { name: 'music' });
  const member = emulator.addMember(guild.id, { username: 'alice' });
  place = { guildId: guild.id, channelId: channel.id, userId: member.id };
  for (const command of commands) {
    await fetch(`${emulator.apiUrl}/v10/applications/${emulator.applicationId}/guilds/${guild.id}/commands`, {
      method: 'POST',
      headers: { authorization: `Bot ${emulator.botToken}`, 'content-type': 'application/json' },
      body: JSON.stringify(command.definition),
    });
  }

  const config = loadConfig({
    require: [],
    env: {
      DISCORD_TOKEN: emulator.botToken,
      DISCORD_APPLICATION_ID: emulator.applicationId,
      DISCORD_API_URL: emulator.apiUrl,
      INTERACTIONS: 'http',
      DISCORD_PUBLIC_KEY: emulator.publicKey,
      ANSWER_BUDGET_MS: String(ANSWER_BUDGET_MS),
    },
  });
  // These fixtures touch neither the database, the pipeline nor the service.
  const context = { settings: commandSettings(config), logger: silentLogger } as BaseCommandContext;
  receiver = createHttpInteractionReceiver({ context, commands, discord: { apiUrl: config.discordApiUrl, token: config.discordToken } });
  server = Fastify();
  server.removeContentTypeParser('application/json');
  server.addContentTypeParser('application/json', { parseAs: 'buffer' }, (_request, body, done) => done(null, body));
  registerInteractionsRoute(server, { publicKey: config.discordPublicKey!, receiver, logger: silentLogger, logRefusal: () => {} });
  endpoint = `${await server.listen({ port: 0, host: '127.0.0.1' })}/interactions`;
  await emulator.setInteractionsEndpoint(endpoint);
});

afterAll(async () => {
  await server?.close();
  await receiver?.stop();
  await emulator?.close();
});

describe('interactions over HTTP', () => {
  it('answers with a deferral and then puts the message with its file in place', async () => {
    const handle = emulator.runCommand({ ...place, name: 'file' });
    const response = await handle.waitForResponse();
    expect(response.type).toBe(InteractionResponseType.DeferredChannelMessageWithSource);
    expect(response.ephemeral).toBe(true);
    const edited = await handle.waitForEdit((message) => message.attachments.length > 0);
    expect(edited.content).toBe('your export');
    expect(edited.attachments[0]?.filename).toBe('export.csv');
    expect(edited.attachments[0]?.data.toString()).toBe('a,b\n1,2\n');
    expect(emulator.findings).toEqual([]);
  });

  it('defers in the response when the decision takes longer than the budget, then edits', async () => {
    const handle = emulator.runCommand({ ...place, name: 'slow' });
    const response = await handle.waitForResponse();
    expect(response.type).toBe(InteractionResponseType.DeferredChannelMessageWithSource);
    expect(response.ephemeral).toBe(false);
    const edited = await handle.waitForEdit((message) => message.content === 'decided late');
    expect(edited.content).toBe('decided late');
    expect(emulator.findings).toEqual([]);
  });

  it('takes a follow-up sent straight after the answer in the response', async () => {
    const handle = emulator.runCommand({ ...place, name: 'chatty' });
    const followUp = await handle.waitForFollowUp((message) => message.content === 'and a private word');
    expect(handle.response?.type).toBe(InteractionResponseType.ChannelMessageWithSource);
    expect(handle.original()?.content).toBe('starting');
    expect(followUp.flags! & 64).toBe(64);
    expect(emulator.findings).toEqual([]);
  });

  it('reads an interaction with only the fields Discord documents as always sent', async () => {
    // No `entitlements`, no `authorizing_integration_owners`, no `channel`: discord.js alone would throw on the first two.
    const body = JSON.stringify({
      id: '1400000000000000011',
      application_id: emulator.applicationId,
      type: 2,
      token: 'a-token-only-this-test-knows',
      version: 1,
      guild_id: place.guildId,
      channel_id: place.channelId,
      member: { user: { id: place.userId, username: 'alice', discriminator: '0', avatar: null, global_name: null }, roles: [], permissions: '0', joined_at: '2024-01-01T00:00:00Z', deaf: false, mute: false, flags: 0 },
      data: { id: '1400000000000000012', name: 'hello', type: 1 },
      locale: 'en-US',
    });
    const response = await fetch(endpoint, { method: 'POST', headers: { 'content-type': 'application/json', ...emulator.signInteraction(body) }, body });
    expect(response.status).toBe(200);
    expect(await response.json()).toMatchObject({ type: InteractionResponseType.ChannelMessageWithSource, data: { content: 'hello alice', flags: 64 } });
  });

  it('refuses a flood of forged requests, and still answers the genuine one among them', async () => {
    const genuine = JSON.stringify({ id: '1', application_id: emulator.applicationId, type: 2, token: 't', version: 1, data: { name: 'hello' } });
    const signed = emulator.signInteraction(genuine);
    const forgeries: Array<{ body: string; headers: Record<string, string> }> = [
      { body: genuine, headers: {} },
      { body: genuine.replace('hello', 'file'), headers: signed },
      { body: genuine, headers: { ...signed, 'x-signature-timestamp': String(Number(signed['x-signature-timestamp']) + 1) } },
      { body: genuine, headers: emulator.signInteraction(genuine, Math.floor(Date.now() / 1000) - 3_600) },
    ];
    // The test's own process sends the flood and runs the emulator: a few bodies just over the
    // limit test the limit without making the sender the bottleneck.
    const oversized = { body: 'x'.repeat(INTERACTIONS_BODY_LIMIT + 1024), headers: signed };
    // The genuine interaction is on its way first, then 104 at once: a flood, yet one that a busy
    // CI machine's single test process (sender, emulator and bot, beside three other test files)
    // gets through within the 3 s Discord gives the genuine interaction. 164 did not, once.
    const handle = emulator.runCommand({ ...place, name: 'hello' });
    const flood = [...Array.from({ length: 100 }, (_, i) => forgeries[i % forgeries.length]!), ...Array.from({ length: 4 }, () => oversized)].map(
      ({ body, headers }) =>
        fetch(endpoint, { method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body }).then(
          (response) => response.status,
          () => 'closed',
        ),
    );
    const statuses = await Promise.all(flood);
    // The oversized ones: 413, or the connection closed while the body was still on its way.
    expect(statuses.filter((status) => status !== 401 && status !== 413 && status !== 'closed')).toEqual([]);
    expect(statuses.filter((status) => status === 401)).toHaveLength(100);
    // A delivery Discord gave up on is a finding: fail with it rather than wait out the timeout.
    let answer: InteractionResponse | undefined;
    handle.waitForResponse(20_000).then((response) => (answer = response), () => undefined);
    const outcome = await vi.waitFor(
      () => found(answer ? { answer } : emulator.findings[0] ? { finding: emulator.findings[0] } : undefined, 'the answer or a failed delivery'),
      20_000,
    );
    expect(outcome.finding?.message).toBeUndefined();
    expect(outcome.answer?.data).toMatchObject({ content: 'hello alice' });
    expect(emulator.findings).toEqual([]);
  });

  it('answers 500 when the handler says nothing, which Discord shows as a failed interaction', async () => {
    const before = emulator.httpDeliveryStats.failed;
    emulator.findings.length = 0;
    emulator.runCommand({ ...place, name: 'taken' });
    await vi.waitFor(() => found((emulator.httpDeliveryStats.failed > before ? true : undefined), 'the failed delivery'), 5_000);
    expect(emulator.findings.map((finding) => finding.kind)).toEqual(['interaction-response']);
    expect(emulator.findings[0]?.message).toContain('answered 500');
    emulator.findings.length = 0;
  });
});
