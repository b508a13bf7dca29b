/**
 * The music API simulator: the service as the spec states it, on a local port, with credits,
 * tasks, media files, webhooks, fault injection and a record of everything it was asked.
 */
import { mediaLibrary, STOCK_SONG_SECONDS } from './media.js';
import type { ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { pino } from 'pino';
import { DEFAULT_PERSONA_SONG_COST, RETIRED_FAMILIES, SPEC_MODELS } from './contract.js';
import type { SimControls } from './control-routes.js';
import { createFaultPlan } from './fault-plan.js';
import { createModerationStandIn } from './moderation.js';
import { createSimHttp } from './http.js';
import { createTaskWebhooks } from './task-webhooks.js';
import { createTaskStore } from './tasks.js';
import type { MusicApiSim, MusicApiSimOptions, RecordedRequest } from './types.js';
import { DEFAULT_WEBHOOK_RETRY, type WebhookAttempt } from './webhooks.js';

export type * from './types.js';

export const DEFAULT_TASK_MS = 2000;
export const DEFAULT_CONCURRENCY_LIMIT = 20;

/** Path names under which the retired family answers 410 (see ./contract.ts). */
export { RETIRED_FAMILIES };

/** Starts the simulator; resolves once it listens. */
export async function startMusicApiSim(options: MusicApiSimOptions): Promise<MusicApiSim> {
  const log = options.logger ?? pino({ level: 'silent' });
  let baseUrl = '';
  const requests: RecordedRequest[] = [];
  const webhookAttempts: WebhookAttempt[] = [];
  const attemptListeners = new Set<() => void>();
  const hungResponses = new Set<ServerResponse>();
  const shutdown = new AbortController();

  const songSeconds = options.songSeconds ?? STOCK_SONG_SECONDS;
  // Made before listening: a missing ffmpeg fails the start, not the first song.
  const media = mediaLibrary(options.songSeconds);

  const webhooks = createTaskWebhooks({
    scheme: options.signatureScheme ?? 'spec',
    encoding: options.signatureEncoding ?? 'hex',
    retry: options.webhookRetry ?? DEFAULT_WEBHOOK_RETRY,
    timeoutMs: options.webhookTimeoutMs ?? 5000,
    signal: shutdown.signal,
    log,
    baseUrl: () => baseUrl,
    songSeconds,
    record(attempt) {
      webhookAttempts.push(attempt);
      for (const listener of attemptListeners) listener();
    },
  });
  const tasks = createTaskStore({
    credits: options.credits,
    taskMs: options.taskMs ?? DEFAULT_TASK_MS,
    personaSongCost: options.personaSongCost ?? DEFAULT_PERSONA_SONG_COST,
    log,
    onEnded: (task, outcome) => webhooks.taskEnded(task, outcome),
  });
  const faults = createFaultPlan(options.randomFaults);
  const moderation = createModerationStandIn();

  const controls: SimControls = {
    requests,
    webhookAttempts,
    getCredits: () => tasks.getCredits(),
    setCredits: (value) => tasks.setCredits(value),
    setTaskMs: (ms) => tasks.setTaskMs(ms),
    holdTasks: (held) => tasks.setHeld(held),
    tasksHeld: () => tasks.isHeld(),
    completeTask(taskId, outcome = 'success') {
      const task = tasks.get(taskId);
      return task === undefined ? false : tasks.finish(task, outcome);
    },
    getTask: (taskId) => {
      const task = tasks.get(taskId);
      return task === undefined ? undefined : { ...task.view };
    },
    listTasks: () => tasks.all().map((task) => ({ ...task.view })),
    injectFault: (fault) => faults.inject(fault),
    clearFaults: () => faults.clear(),
    setRandomFaults: (settings) => faults.setRandom(settings),
    getRandomFaults: () => faults.randomState(),
    setModeration: (settings, setOptions) => moderation.set(settings, setOptions),
    getModeration: () => moderation.state(),
    clearRecords() {
      requests.length = 0;
      webhookAttempts.length = 0;
    },
    waitForWebhookAttempts(count, waitOptions = {}) {
      const matching = () =>
        webhookAttempts.filter((attempt) => waitOptions.taskId === undefined || attempt.taskId === waitOptions.taskId);
      return new Promise((resolve, reject) => {
        const check = () => {
          const found = matching();
          if (found.length < count) return;
          cleanup();
          resolve(found);
        };
        const timer = setTimeout(() => {
          cleanup();
          reject(new Error(`expected ${count} webhook attempts, saw ${matching().length}`));
        }, waitOptions.timeoutMs ?? 5000);
        const cleanup = () => {
          clearTimeout(timer);
          attemptListeners.delete(check);
        };
        attemptListeners.add(check);
        check();
      });
    },
  };

  const app = createSimHttp({
    apiKey: options.apiKey,
    api: {
      tasks,
      faults,
      models: [...(options.models ?? SPEC_MODELS)],
      allowHttpWebhooks: options.allowHttpWebhooks ?? false,
      concurrencyLimit: options.concurrencyLimit ?? DEFAULT_CONCURRENCY_LIMIT,
      baseUrl: () => baseUrl,
      songSeconds,
    },
    media,
    moderation: { standIn: moderation, apiKey: options.moderationApiKey ?? options.apiKey },
    control: { sim: controls, tasks, faults },
    requests,
    hungResponses,
    log,
  });
  await app.listen({ port: options.port ?? 0, host: options.host ?? '127.0.0.1' });
  const address = app.server.address() as AddressInfo;
  const host = address.family === 'IPv6' ? `[${address.address}]` : address.address;
  const url = `http://${host === '0.0.0.0' || host === '[::]' ? '127.0.0.1' : host}:${address.port}`;
  baseUrl = (options.publicUrl ?? url).replace(/\/+$/, '');
  log.debug({ url }, 'music-api-sim listening');

  return {
    ...controls,
    url,
    port: address.port,
    async close() {
      shutdown.abort();
      tasks.stop();
      moderation.stop();
      for (const response of hungResponses) response.destroy();
      app.server.closeAllConnections();
      await app.close();
      await webhooks.settled();
    },
  };
}
