/**
 * Two readings of one contract: the client's (src/music-api-spec.ts, and in src/music-api:
 * guessed-fields.ts, costs.ts, webhook-signature.ts) and the simulator's own (packages/music-api-sim/src/contract.ts),
 * each written from the spec and the notes. The real client runs against the real simulator;
 * wherever the two read the spec differently (a field name, a price, a model, a signature),
 * a test here fails and names the difference.
 */
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { MusicApiClient, type TaskAccepted, type WebhookTarget } from '../../src/music-api/client.js';
import type { CostedOperation } from '../../src/music-api/costs.js';
import { DOWNLOAD_FORMATS, MAX_WEBHOOK_URL_LENGTH, OPERATION_COSTS, RETIRED_TASK_TYPES, SPEC_DEFAULT_MODEL } from '../../src/music-api-spec.js';
import { normaliseWebhookPayload, type TaskStatus } from '../../src/music-api/task-status.js';
import { signWebhook, verifyWebhookSignature, type SignatureScheme } from '../../src/music-api/webhook-signature.js';
import * as sim from '@music-bot/music-api-sim/contract.js';
import { harnessForTest, receiverForTest, type Harness } from './helpers.js';

const secret = 'whsec-readings';
function setup(simOptions: Parameters<typeof harnessForTest>[0] = {}): Promise<Harness> {
  return harnessForTest({ credits: 10_000, ...simOptions });
}

/** The error's message, or undefined when the call succeeded: failures are collected, not thrown. */
async function refusal(promise: Promise<unknown>): Promise<string | undefined> {
  return promise.then(
    () => undefined,
    (error: unknown) => (error instanceof Error ? error.message : String(error)),
  );
}

/** Reaches paths the client has no operation for, through its own request and error mapping. */
class ProbeClient extends MusicApiClient {
  send(method: 'GET' | 'POST', path: string, body?: Record<string, unknown>) {
    return this.request({ operation: 'request', method, path, ...(body === undefined ? {} : { body }), schema: z.unknown() });
  }
}

interface OperationCase {
  /** The client call, as the report names it. */
  name: string;
  /** The simulator's name for the operation it must reach. */
  operation: sim.CreateOperationName;
  /** The client's name for its price. */
  clientCost: CostedOperation;
  create: (client: MusicApiClient, webhook: WebhookTarget) => Promise<TaskAccepted>;
  /** What the finished task shows of the values sent: proof that the simulator read each field. */
  check: (status: TaskStatus) => void;
}

/** Every client operation that creates a task, with every optional field filled in. */
const OPERATION_CASES: OperationCase[] = [
  {
    name: 'createSong',
    operation: 'song',
    clientCost: 'song',
    create: (client, webhook) =>
      client.createSong({
        sound: 'lofi rain on a tin roof',
        lyrics: 'drip drop',
        title: 'Tin Roof',
        model: 'ModelB-2.0 Pro',
        makeInstrumental: false,
        seed: '42',
        webhook,
      }),
    check: (status) =>
      expect(status.clips[0]).toMatchObject({
        title: 'Tin Roof',
        lyrics: 'drip drop',
        audioUrl: expect.any(String),
        raw: expect.objectContaining({ sound: 'lofi rain on a tin roof', mv: 'ModelB-2.0 Pro' }),
      }),
  },
  {
    name: 'createLyrics',
    operation: 'lyrics',
    clientCost: 'lyrics',
    create: (client, webhook) => client.createLyrics({ prompt: 'a sea shanty about rain', webhook }),
    check: (status) => expect(status.lyrics).toContain('a sea shanty about rain'),
  },
  {
    name: 'createVideoClip',
    operation: 'video',
    clientCost: 'video',
    create: (client, webhook) => client.createVideoClip({ clipId: 'clip-for-video', webhook }),
    check: (status) => expect(status.clips[0]).toMatchObject({ clipId: 'clip-for-video', videoUrl: expect.any(String) }),
  },
  {
    name: 'uploadAudio',
    operation: 'upload',
    clientCost: 'upload',
    create: (client, webhook) => client.uploadAudio({ audioUrl: 'https://files.example.com/reference.mp3', webhook }),
    check: (status) => expect(status.clips[0]).toMatchObject({ clipId: expect.any(String), audioUrl: expect.any(String) }),
  },
  ...DOWNLOAD_FORMATS.map(
    (format): OperationCase => ({
      name: `requestDownload (${format})`,
      operation: 'download',
      clientCost: 'download',
      create: (client, webhook) => client.requestDownload({ clipId: 'clip-for-download', format, webhook }),
      check: (status) =>
        expect(status.clips[0]).toMatchObject({
          clipId: 'clip-for-download',
          downloadUrl: expect.stringMatching(format === 'wav' ? /-wav\.wav$/ : /\.mp3$/),
        }),
    }),
  ),
  {
    name: 'createVoice',
    operation: 'voice',
    clientCost: 'voice',
    create: (client, webhook) => client.createVoice({ audioUrl: 'https://files.example.com/voice.wav', webhook }),
    check: (status) => expect(status.personaId).toMatch(/\S/),
  },
  {
    name: 'createPersonaSong',
    operation: 'personaSong',
    clientCost: 'personaSong',
    // The sonic create takes no webhook (spec "Events"): a persona song is polled.
    create: (client) => client.createPersonaSong({ personaId: 'persona-1', lyrics: 'hello hello', title: 'Echo', tags: 'synthpop', model: 'sonic-v4-5' }),
    check: (status) => {
      expect(status.clips).toHaveLength(2);
      expect(status.clips[0]).toMatchObject({ title: 'Echo', tags: 'synthpop', lyrics: 'hello hello', audioUrl: expect.any(String) });
    },
  },
];

describe.each(['spec', 'timestamped'] as const)('every create operation, webhooks signed with the %s scheme', (scheme) => {
  it.each(OPERATION_CASES.map((c) => [c.name, c] as const))('%s: route, field names, price, result fields and webhook agree', async (_name, c) => {
    const h = await setup({ signatureScheme: scheme, taskMs: 60_000 });
    const receiver = await receiverForTest();
    const route = sim.CREATE_OPERATIONS[c.operation];
    const before = h.sim.getCredits();

    const failed = await refusal(c.create(h.client, { url: receiver.url, secret }));
    const request = h.sim.requests.at(-1);
    expect(`${request?.method} ${request?.path}`, `${c.name}: where the client sends it`).toBe(`${route.method} ${route.path}`);
    const known = sim.requestFieldNames(c.operation);
    const unknown = Object.keys(request?.body as Record<string, unknown>).filter((field) => !known.includes(field));
    expect(
      unknown,
      `${c.name} sends fields the simulator's contract does not have for ${route.path} (it takes ${known.join(', ')})`,
    ).toEqual([]);
    expect(failed, `${c.name}: the simulator refused what the client sent`).toBeUndefined();
    expect(before - h.sim.getCredits(), `${c.name}: the simulator charged this; the client prices it differently`).toBe(
      h.client.costOf(c.clientCost),
    );

    const task = h.sim.listTasks().at(-1)!;
    expect(h.sim.completeTask(task.taskId)).toBe(true);
    const poll = route.platform === 'producer' ? h.client.getProducerTask(task.taskId) : h.client.getSonicTask(task.taskId);
    const status = await poll;
    expect(status.state).toBe('succeeded');
    c.check(status);
    expect(before - h.sim.getCredits(), 'polling is free on both sides').toBe(h.client.costOf(c.clientCost) + h.client.costOf('poll'));

    if (!('webhookUrl' in sim.REQUEST_FIELDS[c.operation])) {
      expect(request?.body, `${c.name}: the operation takes no webhook`).not.toHaveProperty('webhook_url');
      return;
    }
    const [hook] = await receiver.waitFor(1);
    const verdict = verifyWebhookSignature({ rawBody: hook!.rawBody, secret, headers: hook!.headers });
    expect(verdict, `the client's verifier on a ${scheme}-signed webhook from the simulator`).toMatchObject({ ok: true, scheme });
    const event = normaliseWebhookPayload(hook!.rawBody, hook!.headers);
    // The spec's body is the polling body alone; the real service's (timestamped) adds task_id.
    expect(event).toMatchObject({ taskId: scheme === 'spec' ? undefined : task.taskId, status: { state: 'succeeded' } });
  });
});

describe('prices', () => {
  it('the same credit table, sonic concat music included, though nothing calls it yet', () => {
    expect(sim.COSTS.concat).toBe(2);
    expect({ ...sim.COSTS }).toEqual({ ...OPERATION_COSTS });
  });
});

describe('results', () => {
  it("a failed task: the client finds the simulator's failure reason and the refund", async () => {
    const h = await setup({ taskMs: 60_000 });
    const before = h.sim.getCredits();
    const accepted = await h.client.createSong({ sound: 'a song that will fail' });
    expect(h.sim.completeTask(accepted.taskId, 'failure')).toBe(true);
    const status = await h.client.getProducerTask(accepted.taskId);
    expect(status).toMatchObject({ state: 'failed', failureReason: expect.stringMatching(/\S/) });
    expect(h.sim.getCredits()).toBe(before);
  });

  it("get-credits: the client reads the simulator's balance", async () => {
    const h = await setup({ credits: 321 });
    expect(await h.client.getCredits()).toMatchObject({ credits: 321, extraCredits: 0 });
    expect(h.sim.requests.at(-1)).toMatchObject({ method: 'GET', path: sim.READ_ROUTES.getCredits, status: 200 });
  });
});

describe('models', () => {
  it('every model either side knows by default is accepted by both', async () => {
    const h = await setup({ taskMs: 60_000 });
    const refused: string[] = [];
    for (const model of new Set([...h.client.models, ...sim.SPEC_MODELS])) {
      const message = await refusal(h.client.createSong({ sound: 'any', model }));
      if (message !== undefined) refused.push(`${JSON.stringify(model)}: ${message}`);
    }
    expect(refused, 'models one side accepts and the other refuses').toEqual([]);
  });

  it("without mv the simulator applies the model the client's spec reading names as the default", async () => {
    const h = await setup();
    const accepted = await h.client.createSong({ sound: 'no model chosen' });
    expect(h.sim.requests.at(-1)?.body).not.toHaveProperty('mv');
    const status = await h.client.getProducerTask(accepted.taskId);
    expect(status.clips[0]?.raw['mv']).toBe(SPEC_DEFAULT_MODEL);
  });
});

describe('limits', () => {
  it('the same task types are retired', async () => {
    const h = await setup();
    const probe = new ProbeClient({ baseUrl: h.sim.url, apiKey: h.apiKey });
    const notRetired: string[] = [];
    for (const taskType of RETIRED_TASK_TYPES) {
      const message = await refusal(probe.send('POST', sim.CREATE_OPERATIONS.song.path, { task_type: taskType, sound: 'x' }));
      if (message?.includes('endpoint_retired') !== true) notRetired.push(`${taskType}: ${message ?? 'accepted'}`);
    }
    expect(notRetired, 'task types the client reads as retired that the simulator does not retire').toEqual([]);
    expect([...sim.RETIRED_TASK_TYPES].sort(), "the simulator's retired list").toEqual([...RETIRED_TASK_TYPES].sort());
  });

  it('the same longest webhook URL', async () => {
    const h = await setup({ taskMs: 60_000 });
    expect(sim.MAX_WEBHOOK_URL_LENGTH).toBe(MAX_WEBHOOK_URL_LENGTH);
    const url = (length: number) => `https://hooks.example.com/${'a'.repeat(length - 'https://hooks.example.com/'.length)}`;
    expect(await refusal(h.client.createSong({ sound: 'x', webhook: { url: url(MAX_WEBHOOK_URL_LENGTH) } }))).toBeUndefined();
    const tooLong = await refusal(h.client.createSong({ sound: 'x', webhook: { url: url(MAX_WEBHOOK_URL_LENGTH + 1) } }));
    expect(tooLong).toMatch(/validation/);
  });

  it('the same download formats', () => {
    expect([...sim.DOWNLOAD_FORMATS].sort()).toEqual([...DOWNLOAD_FORMATS].sort());
  });
});

describe('webhook signatures', () => {
  it.each(['spec', 'timestamped'] as const)('%s: each side verifies what the other signs', (scheme: SignatureScheme) => {
    const body = JSON.stringify({ code: 200, message: 'success', data: [], status: 'SUCCESS', task_id: 't-1' });
    const now = Date.now();
    const timestamp = Math.floor(now / 1000);
    const bySim = sim.signWebhookBody(body, secret, scheme, timestamp);
    expect(verifyWebhookSignature({ rawBody: body, secret, headers: bySim, now })).toMatchObject({ ok: true, scheme });
    // The simulator has no verifier: the client's signature must be the very one it would send.
    const byClient = signWebhook({ rawBody: body, secret, scheme, timestamp });
    expect(lowerCaseKeys(byClient)).toEqual(lowerCaseKeys(bySim));
  });
});

function lowerCaseKeys(headers: Record<string, string>): Record<string, string> {
  return Object.fromEntries(Object.entries(headers).map(([key, value]) => [key.toLowerCase(), value]));
}
