/**
 * The emulator's HTTP layer over raw sockets: the order of Discord's checks, paths as clients
 * write them, bodies whatever their method or content type, 413s, and the CDN's HEAD.
 */
import { request } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startDiscordEmulator } from '@music-bot/discord-emulator';
import type { DiscordEmulator, EmulatorChannel } from '@music-bot/discord-emulator';

let emu: DiscordEmulator;
let channel: EmulatorChannel;

beforeAll(async () => {
  emu = await startDiscordEmulator({ botToken: 'http-token', attachmentSizeLimit: 1024 });
  const guild = emu.createGuild({ name: 'HTTP guild' });
  channel = emu.createChannel(guild.id, { name: 'wire' });
  emu.addMember(guild.id, { username: 'gina' });
});

afterAll(async () => {
  await emu?.close();
});

interface Answer {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  text: string;
}

/** One request exactly as given (fetch refuses a GET with a body and rewrites some paths). */
function send(method: string, path: string, options: { token?: string | null; contentType?: string; body?: Buffer | string } = {}): Promise<Answer> {
  const headers: Record<string, string> = {};
  if (options.token !== null) headers.authorization = `Bot ${options.token ?? emu.botToken}`;
  if (options.contentType !== undefined) headers['content-type'] = options.contentType;
  if (options.body !== undefined) headers['content-length'] = String(Buffer.byteLength(options.body));
  const { hostname, port } = new URL(emu.origin);
  return new Promise((resolve, reject) => {
    const outgoing = request({ host: hostname, port, method, path, headers }, (response) => {
      const chunks: Buffer[] = [];
      response.on('data', (chunk: Buffer) => chunks.push(chunk));
      response.on('end', () => resolve({ status: response.statusCode ?? 0, headers: response.headers, text: Buffer.concat(chunks).toString('utf8') }));
    });
    outgoing.on('error', reject);
    outgoing.end(options.body);
  });
}

const api = (path: string): string => `/api/v10${path}`;

function multipart(payload: unknown, file: { name: string; data: Buffer }): { contentType: string; body: Buffer } {
  const boundary = 'emulator-test-boundary';
  const body = Buffer.concat([
    Buffer.from(`--${boundary}\r\nContent-Disposition: form-data; name="payload_json"\r\n\r\n${JSON.stringify(payload)}\r\n`),
    Buffer.from(`--${boundary}\r\nContent-Disposition: form-data; name="files[0]"; filename="${file.name}"\r\nContent-Type: application/octet-stream\r\n\r\n`),
    file.data,
    Buffer.from(`\r\n--${boundary}--\r\n`),
  ]);
  return { contentType: `multipart/form-data; boundary=${boundary}`, body };
}

describe("Discord's order of checks", () => {
  it('answers a rate limit before an unknown route, and an unknown route before a missing token', async () => {
    emu.rateLimitNext('GET /no/such/route', 1, { retryAfterSeconds: 0.2 });
    const limited = await send('GET', api('/no/such/route'), { token: null });
    expect(limited.status).toBe(429);
    expect(JSON.parse(limited.text)).toEqual({ message: 'You are being rate limited.', retry_after: 0.2, global: false });
    const unknown = await send('GET', api('/no/such/route'), { token: null });
    expect(unknown.status).toBe(404);
    expect(JSON.parse(unknown.text)).toEqual({ code: 0, message: '404: Not Found' });
  });

  it('answers a missing token before invalid JSON, and invalid JSON with the bucket headers', async () => {
    const messages = api(`/channels/${channel.id}/messages`);
    const anonymous = await send('POST', messages, { token: null, contentType: 'application/json', body: '{"content":' });
    expect(anonymous.status).toBe(401);
    expect(anonymous.headers['x-ratelimit-bucket']).toEqual(expect.any(String));
    const broken = await send('POST', messages, { contentType: 'application/json', body: '{"content":' });
    expect(broken.status).toBe(400);
    expect(JSON.parse(broken.text)).toEqual({ code: 50109, message: 'The request body contains invalid JSON.' });
    expect(broken.headers['x-ratelimit-remaining']).toEqual(expect.any(String));
  });

  it('answers an upload over the attachment limit with 413 before looking at permissions', async () => {
    const hidden = emu.createChannel(emu.createGuild({ name: 'Hidden guild' }).id, { name: 'hidden' });
    emu.denyChannel(hidden.id);
    const upload = multipart({ content: 'big' }, { name: 'big.bin', data: Buffer.alloc(1025, 7) });
    const tooLarge = await send('POST', api(`/channels/${hidden.id}/messages`), upload);
    expect(tooLarge.status).toBe(413);
    expect(tooLarge.text).toBe('{"code":40005,"message":"Request entity too large"}');
    const small = multipart({ content: 'small' }, { name: 'small.bin', data: Buffer.alloc(1024, 7) });
    const denied = await send('POST', api(`/channels/${hidden.id}/messages`), small);
    expect(denied.status).toBe(403);
    expect(JSON.parse(denied.text)).toMatchObject({ code: 50001 });
  });

  it('refuses a body beyond what any message could carry with 413, unread and unrecorded', async () => {
    emu.clearRecords();
    const body = Buffer.alloc(1024 * 10 + 8 * 1024 * 1024 + 1, 32);
    const answer = await send('POST', api(`/channels/${channel.id}/messages`), { contentType: 'application/json', body });
    expect(answer.status).toBe(413);
    expect(JSON.parse(answer.text)).toEqual({ code: 40005, message: 'Request entity too large' });
    const after = await send('GET', api('/users/@me'));
    expect(after.status).toBe(200);
    expect(emu.requests.map((recorded) => recorded.path)).toEqual(['/users/@me']);
  });
});

describe('paths as clients write them', () => {
  it('takes /users/%40me for /users/@me, which outranks /users/{user_id}', async () => {
    for (const path of ['/users/@me', '/users/%40me', '//users/@me/']) {
      const answer = await send('GET', api(path));
      expect(answer.status, path).toBe(200);
      expect(JSON.parse(answer.text)).toMatchObject({ id: emu.botUser.id, bot: true });
    }
  });

  it('answers a path with a malformed %-escape from the REST API, recorded, with its route', async () => {
    emu.clearRecords();
    const answer = await send('GET', api('/users/%E0%A4%A'));
    expect(answer.status).toBe(404);
    expect(JSON.parse(answer.text)).toMatchObject({ code: 10013, message: 'Unknown User' });
    expect(answer.headers['x-ratelimit-bucket']).toEqual(expect.any(String));
    expect(emu.requests).toMatchObject([{ path: '/users/%E0%A4%A', route: '/users/{user_id}', status: 404 }]);
  });

  it('answers an empty segment and another API version with 404, and records findings for both', async () => {
    emu.clearRecords();
    expect((await send('GET', api('/channels//messages'))).status).toBe(404);
    expect((await send('GET', '/api/v9/users/@me')).status).toBe(404);
    expect(emu.findings.map((finding) => [finding.kind, finding.path])).toEqual([
      ['unknown-route', '/channels//messages'],
      ['unknown-route', '/api/v9/users/@me'],
    ]);
  });
});

describe('bodies', () => {
  it('reads the body of a GET, and records that the route takes none', async () => {
    emu.clearRecords();
    const answer = await send('GET', api('/users/@me'), { contentType: 'application/json', body: '{"x":1}' });
    expect(answer.status).toBe(200);
    expect(emu.requests).toMatchObject([{ path: '/users/@me', body: { x: 1 } }]);
    expect(emu.findings).toMatchObject([{ kind: 'unexpected-body', operationId: 'get_my_user' }]);
  });

  it('answers a body of a malformed content type from the route, with a finding', async () => {
    emu.clearRecords();
    const answer = await send('POST', api(`/channels/${channel.id}/messages`), { contentType: 'text', body: '{"content":"x"}' });
    expect(answer.status).toBe(400);
    expect(JSON.parse(answer.text)).toMatchObject({ code: 50006 });
    expect(emu.findings).toMatchObject([{ kind: 'unsupported-content-type', operationId: 'create_message' }]);
  });
});

describe('the CDN', () => {
  it('answers HEAD with the type and length of an attachment and no bytes, and GET with the bytes', async () => {
    const upload = multipart({ content: 'file', attachments: [{ id: 0, filename: 'tune.mp3' }] }, { name: 'tune.mp3', data: Buffer.from('ID3 not really') });
    const posted = await send('POST', api(`/channels/${channel.id}/messages`), upload);
    expect(posted.status).toBe(200);
    const path = new URL((JSON.parse(posted.text) as { attachments: Array<{ url: string }> }).attachments[0]!.url).pathname;
    const get = await send('GET', path, { token: null });
    expect(get).toMatchObject({ status: 200, text: 'ID3 not really', headers: { 'content-type': 'audio/mpeg', 'content-length': '14' } });
    const head = await send('HEAD', path, { token: null });
    expect(head).toMatchObject({ status: 200, text: '', headers: { 'content-type': 'audio/mpeg', 'content-length': '14' } });
    const missing = await send('HEAD', `${path}.gone`, { token: null });
    expect(missing.status).toBe(404);
  });
});
