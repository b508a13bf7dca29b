/**
 * deploy/Caddyfile, the TLS proxy the operations document puts in front of the bot, run by a
 * real Caddy: a signed webhook reaches the bot over HTTPS and finishes its job, Discord's signed
 * webhook events reach it too; /metrics and the health routes, which the bot serves on the same
 * port, are not forwarded.
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { createHmac } from 'node:crypto';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { Agent, fetch } from 'undici';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { findFreePort } from '../../src/embedded/free-port.js';
import type { SubmitResult } from '../../src/pipeline/requests.js';
import { found } from '../support/found.js';
import { jobRow } from '../support/ledger.js';
import { startHarness, type Harness } from '../support/pipeline-harness.js';

const root = path.resolve(import.meta.dirname, '../..');
let h: Harness;
let caddy: ChildProcess | undefined;
let proxy: string;
let folder: string;
let caddyLog = '';
// Caddy's own certificate authority signed the proxy's certificate; the test trusts it as a client would.
const insecure = new Agent({ connect: { rejectUnauthorized: false } });

beforeAll(async () => {
  if (spawnSync('caddy', ['version']).status !== 0) throw new Error('caddy is not installed (Debian: apt-get install -y caddy)');
  h = await startHarness({ webhooks: true, startingCredits: 200, env: (stack) => ({ DISCORD_PUBLIC_KEY: stack.emulator.publicKey }) });
  const [https, http] = [await findFreePort(), await findFreePort()];
  folder = await mkdtemp(path.join(os.tmpdir(), 'caddy-'));
  // The shipped site block, on test ports, trusting nothing system-wide and keeping its files here.
  await writeFile(
    path.join(folder, 'Caddyfile'),
    `{\n\tadmin off\n\tskip_install_trust\n\thttp_port ${http}\n\thttps_port ${https}\n\tauto_https disable_redirects\n\tstorage file_system ${folder}/storage\n}\nimport ${path.join(root, 'deploy/Caddyfile')}\n`,
  );
  proxy = `https://127.0.0.1:${https}`;
  caddy = spawn('caddy', ['run', '--config', path.join(folder, 'Caddyfile'), '--adapter', 'caddyfile'], {
    env: { PATH: process.env.PATH ?? '', HOME: folder, XDG_DATA_HOME: folder, XDG_CONFIG_HOME: folder, BOT_DOMAIN: proxy, BOT_UPSTREAM: new URL(h.app.httpUrl!).host },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  caddy.stdout!.on('data', (chunk: Buffer) => (caddyLog += chunk.toString()));
  caddy.stderr!.on('data', (chunk: Buffer) => (caddyLog += chunk.toString()));
  await vi.waitFor(async () => found(((await fetch(`${proxy}/`, { dispatcher: insecure }).catch(() => undefined))?.status === 404 ? true : undefined), 'Caddy serving HTTPS'), 20_000).catch((error: unknown) => {
    throw new Error(`${String(error)}\n${caddyLog.slice(-2000)}`);
  });
});
afterAll(async () => {
  caddy?.kill('SIGTERM');
  await h?.close();
  if (folder) await rm(folder, { recursive: true, force: true });
});

describe('the TLS proxy of docs/operations.md', () => {
  it('forwards a signed webhook over HTTPS, and the job it names finishes', async () => {
    h.setSimForThisTest({ taskMs: 60_000, faults: [{ kind: 'no-webhook' }] });
    const { result } = await h.request({ kind: 'song', prompt: 'through the proxy' });
    const { jobId } = result as SubmitResult;
    const job = await vi.waitFor(async () => {
      const row = await jobRow(h.db.db, jobId);
      return found(row?.upstreamTaskId ? row : undefined, 'the song submitted');
    }, 10_000);

    const body = JSON.stringify({ code: 200, message: 'success', status: 'SUCCESS', data: [{ clip_id: 'c1', audio_url: 'https://cdn.example/c1.m4a', title: 'Proxied' }] });
    const answer = await fetch(`${proxy}/webhooks/music/${jobId}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-webhook-signature': createHmac('sha256', job.webhookSecret!).update(body).digest('hex') },
      body,
      dispatcher: insecure,
    });
    expect(answer.status).toBe(200);
    await vi.waitFor(async () => found(((await jobRow(h.db.db, jobId))?.state === 'succeeded' ? true : undefined), 'the job finished by the proxied webhook'), 10_000);
  });

  it('forwards Discord\'s signed webhook events over HTTPS, and the bot answers them', async () => {
    const ping = JSON.stringify({ version: 1, application_id: h.env.DISCORD_APPLICATION_ID, type: 0 });
    const post = (headers: Record<string, string>) =>
      fetch(`${proxy}/webhook-events`, { method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body: ping, dispatcher: insecure });
    expect((await post(h.emulator.signInteraction(ping))).status).toBe(204);
    expect((await post({})).status, 'unsigned: the bot, not the proxy, refuses it').toBe(401);
  });

  it('answers /metrics and the health routes with 404, though the bot serves them on the port behind it', async () => {
    for (const route of ['/metrics', '/healthz', '/readyz']) {
      expect((await fetch(`${h.app.httpUrl}${route}`)).status, `${route} behind the proxy`).toBe(200);
      const proxied = await fetch(`${proxy}${route}`, { dispatcher: insecure });
      expect(proxied.status, route).toBe(404);
      expect(await proxied.text(), route).not.toContain('musicbot_');
    }
  });
});
