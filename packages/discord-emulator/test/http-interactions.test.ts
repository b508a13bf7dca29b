/**
 * The emulator's Interactions Endpoint URL, as Discord runs one: the URL is saved only after
 * a signed PING gets PONG and a forged request gets 401; each interaction is then POSTed
 * there, signed with the application's key, and never sent over the gateway; the response is
 * the interaction's first answer, held to Discord's rules.
 */
import { createPublicKey, verify } from 'node:crypto';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { startDiscordEmulator, type DiscordEmulator } from '@music-bot/discord-emulator';

type Handler = (request: IncomingMessage, body: string, response: ServerResponse) => void;

const cleanups: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

async function endpoint(handler: Handler): Promise<string> {
  const server: Server = createServer((request, response) => {
    let body = '';
    request.on('data', (chunk: Buffer) => (body += chunk.toString()));
    request.on('end', () => handler(request, body, response));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  cleanups.push(() => new Promise((resolve) => server.close(() => resolve())));
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}/interactions`;
}

async function emulatorWithMember(): Promise<{ emulator: DiscordEmulator; place: { guildId: string; channelId: string; userId: string } }> {
  const emulator = await startDiscordEmulator();
  cleanups.push(() => emulator.close());
  const guild = emulator.createGuild({ name: 'Endpoint' });
  const channel = emulator.createChannel(guild.id, { name: 'general' });
  const member = emulator.addMember(guild.id, { username: 'alice' });
  return { emulator, place: { guildId: guild.id, channelId: channel.id, userId: member.id } };
}

function signedByEmulator(emulator: DiscordEmulator, request: IncomingMessage, body: string): boolean {
  const key = createPublicKey({ key: { kty: 'OKP', crv: 'Ed25519', x: Buffer.from(emulator.publicKey, 'hex').toString('base64url') }, format: 'jwk' });
  const signature = String(request.headers['x-signature-ed25519'] ?? '');
  const timestamp = String(request.headers['x-signature-timestamp'] ?? '');
  return /^[0-9a-f]{128}$/.test(signature) && verify(null, Buffer.from(timestamp + body), key, Buffer.from(signature, 'hex'));
}

describe('the interactions endpoint URL', () => {
  it('is refused when it takes a forged request, or does not answer PING with PONG', async () => {
    const { emulator } = await emulatorWithMember();
    const trusting = await endpoint((_request, _body, response) => response.writeHead(200, { 'content-type': 'application/json' }).end('{"type":1}'));
    await expect(emulator.setInteractionsEndpoint(trusting)).rejects.toThrow('not 401');
    const rude = await endpoint((_request, _body, response) => response.writeHead(200, { 'content-type': 'application/json' }).end('{"type":4}'));
    await expect(emulator.setInteractionsEndpoint(rude)).rejects.toThrow('PING');
    expect(emulator.httpDeliveryStats.delivered).toBe(0);
  });

  it('receives each interaction signed with the application key, and its response is the first answer', async () => {
    const { emulator, place } = await emulatorWithMember();
    const received: Array<{ type: number; verified: boolean }> = [];
    const url = await endpoint((request, body, response) => {
      const verified = signedByEmulator(emulator, request, body);
      if (!verified) return void response.writeHead(401).end();
      const interaction = JSON.parse(body) as { type: number };
      received.push({ type: interaction.type, verified });
      const answer = interaction.type === 1 ? { type: 1 } : { type: 4, data: { content: 'hello over HTTP' } };
      response.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(answer));
    });
    await emulator.setInteractionsEndpoint(url);
    const handle = emulator.runCommand({ ...place, name: 'anything' });
    const response = await handle.waitForResponse();
    expect(response.type).toBe(4);
    expect(handle.original()?.content).toBe('hello over HTTP');
    expect(received).toEqual([
      { type: 1, verified: true },
      { type: 2, verified: true },
    ]);
    expect(emulator.httpDeliveryStats).toEqual({ delivered: 1, answered: 1, failed: 0 });
    expect(emulator.findings).toEqual([]);
  });

  it('counts a response Discord would not take as a failed interaction: not 200, or not a valid answer', async () => {
    const { emulator, place } = await emulatorWithMember();
    let next: { status: number; body: string } = { status: 500, body: '' };
    const url = await endpoint((request, body, response) => {
      if (!signedByEmulator(emulator, request, body)) return void response.writeHead(401).end();
      if ((JSON.parse(body) as { type: number }).type === 1) return void response.writeHead(200).end('{"type":1}');
      response.writeHead(next.status, { 'content-type': 'application/json' }).end(next.body);
    });
    await emulator.setInteractionsEndpoint(url);
    emulator.runCommand({ ...place, name: 'one' });
    await vi.waitFor(() => expect(emulator.httpDeliveryStats.failed).toBe(1), 5_000);
    next = { status: 200, body: JSON.stringify({ type: 4, data: {} }) };
    emulator.runCommand({ ...place, name: 'two' });
    await vi.waitFor(() => expect(emulator.httpDeliveryStats.failed).toBe(2), 5_000);
    expect(emulator.findings.map((finding) => finding.kind)).toEqual(['interaction-response', 'interaction-response']);
    expect(emulator.findings[0]?.message).toContain('answered 500');
    expect(emulator.findings[1]?.details.join(' ')).toContain('Cannot send an empty message');
  });
});
