/** Shared pieces of the music API contract tests. */
import { randomUUID } from 'node:crypto';
import { createServer, type IncomingHttpHeaders } from 'node:http';
import type { AddressInfo } from 'node:net';
import { pino, type Logger } from 'pino';
import { onTestFinished, vi } from 'vitest';
import { MusicApiClient, type MusicApiClientOptions } from '../../src/music-api/client.js';
import type { TaskState, TaskStatus } from '../../src/music-api/task-status.js';
import { startMusicApiSim, type MusicApiSim, type MusicApiSimOptions } from '@music-bot/music-api-sim/server.js';

export interface Harness {
  sim: MusicApiSim;
  client: MusicApiClient;
  apiKey: string;
  logLines: string[];
}

/** A fresh simulator and a client pointed at it, with a fresh key; every log line kept. */
export async function startHarness(
  simOptions: Partial<MusicApiSimOptions> = {},
  clientOptions: Partial<MusicApiClientOptions> = {},
): Promise<Harness> {
  const apiKey = `sk-test-${randomUUID()}`;
  const sim = await startMusicApiSim({ apiKey, credits: 100, taskMs: 300, allowHttpWebhooks: true, ...simOptions });
  const logLines: string[] = [];
  const client = new MusicApiClient({
    baseUrl: sim.url,
    apiKey,
    logger: capturingLogger(logLines),
    ...clientOptions,
  });
  return { sim, client, apiKey, logLines };
}

export function capturingLogger(lines: string[]): Logger {
  return pino({ level: 'debug' }, { write: (line: string) => void lines.push(line) });
}

/** The task's status once it reaches one of `states`. */
export function waitForState(
  poll: () => Promise<TaskStatus>,
  states: readonly TaskState[] = ['succeeded', 'failed'],
  timeoutMs = 5000,
): Promise<TaskStatus> {
  return vi.waitFor(
    async () => {
      const status = await poll();
      if (!states.includes(status.state)) throw new Error(`task still ${status.state}`);
      return status;
    },
    { timeout: timeoutMs, interval: 20 },
  );
}

export interface ReceivedWebhook {
  headers: IncomingHttpHeaders;
  rawBody: Buffer;
  at: number;
  answered: number;
}

export interface WebhookReceiver {
  url: string;
  received: ReceivedWebhook[];
  /** Statuses to answer, in order; 200 once they run out. */
  answers: number[];
  waitFor(count: number, timeoutMs?: number): Promise<ReceivedWebhook[]>;
  close(): Promise<void>;
}

/** A plain-HTTP loopback receiver (the simulator allows it with allowHttpWebhooks). */
export async function startWebhookReceiver(answers: number[] = []): Promise<WebhookReceiver> {
  const received: ReceivedWebhook[] = [];
  const receiver: Partial<WebhookReceiver> = { received, answers };
  const server = createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      const answered = receiver.answers?.shift() ?? 200;
      received.push({ headers: request.headers, rawBody: Buffer.concat(chunks), at: Date.now(), answered });
      response.writeHead(answered).end();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return Object.assign(receiver, {
    url: `http://127.0.0.1:${port}/hooks/music`,
    waitFor(count: number, timeoutMs = 5000) {
      return vi.waitFor(
        () => {
          if (received.length < count) throw new Error(`expected ${count} webhooks, got ${received.length}`);
          return received;
        },
        { timeout: timeoutMs, interval: 10 },
      );
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  }) as WebhookReceiver;
}

/** A port nothing listens on: bound, then released. */
export async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

/** A simulator and a client for one test, closed when the test finishes, pass or fail. */
export async function harnessForTest(
  simOptions: Partial<MusicApiSimOptions> = {},
  clientOptions: Partial<MusicApiClientOptions> = {},
): Promise<Harness> {
  const harness = await startHarness(simOptions, clientOptions);
  onTestFinished(() => harness.sim.close());
  return harness;
}

/** A webhook receiver for one test, closed when the test finishes. */
export async function receiverForTest(answers: number[] = []): Promise<WebhookReceiver> {
  const receiver = await startWebhookReceiver(answers);
  onTestFinished(() => receiver.close());
  return receiver;
}
