/** The webhooks a task sends when it ends: the final event, and the copies, delays and reorderings its faults ask for. */
import type { Logger } from 'pino';
import { WEBHOOK_EVENTS, type SignatureEncoding, type SignatureScheme } from './contract.js';
import { pollBody } from './answers.js';
import type { SimTask, TaskOutcome } from './tasks.js';
import type { SimTaskState } from './types.js';
import { deliverWebhook, type WebhookAttempt, type WebhookRetry } from './webhooks.js';

export interface TaskWebhooks {
  /** Starts the deliveries for a task that just ended (none without a webhook URL). */
  taskEnded(task: SimTask, outcome: TaskOutcome): void;
  /** Resolves once every delivery started has ended. */
  settled(): Promise<void>;
}

export interface TaskWebhookSettings {
  scheme: SignatureScheme;
  encoding: SignatureEncoding;
  retry: WebhookRetry;
  timeoutMs: number;
  /** Aborted when the simulator closes. */
  signal: AbortSignal;
  log: Logger;
  /** Base of the media links in the payloads. */
  baseUrl: () => string;
  songSeconds: number;
  record(attempt: WebhookAttempt): void;
}

export function createTaskWebhooks(settings: TaskWebhookSettings): TaskWebhooks {
  const { scheme } = settings;
  const deliveries = new Set<Promise<void>>();
  const context = {
    scheme,
    encoding: settings.encoding,
    retry: settings.retry,
    timeoutMs: settings.timeoutMs,
    signal: settings.signal,
    log: settings.log,
    record: settings.record,
  };

  return {
    taskEnded(task, outcome) {
      if (task.view.webhookUrl === undefined || task.behaviour.webhook === 'none') return;
      // spec "Events": the payload is the polling body, nothing added. The real service adds
      // `task_id`, `platform` and `event` (notes "Webhooks"): the timestamped scheme does too.
      const payloadOf = (state: SimTaskState, event: string): Record<string, unknown> =>
        scheme === 'timestamped'
          ? { ...pollBody(task, { baseUrl: settings.baseUrl(), songSeconds: settings.songSeconds }, state), task_id: task.view.taskId, platform: task.view.platform, event }
          : pollBody(task, { baseUrl: settings.baseUrl(), songSeconds: settings.songSeconds }, state);
      const finalEvent = outcome === 'success' ? WEBHOOK_EVENTS.completed : WEBHOOK_EVENTS.failed;
      const final = { url: task.view.webhookUrl, taskId: task.view.taskId, secret: task.webhookSecret, badSignature: task.behaviour.badSignature };
      let delivery = deliverWebhook(
        {
          ...final,
          payload: payloadOf(task.view.state, finalEvent),
          event: finalEvent,
          copies: task.behaviour.webhook === 'twice' ? 2 : 1,
          lateMs: task.behaviour.webhookLateMs,
        },
        context,
      );
      if (task.behaviour.outOfOrder) {
        // The intermediate callback, overtaken by the final one: it says RUNNING after the end.
        delivery = delivery.then(() =>
          deliverWebhook({ ...final, payload: payloadOf('RUNNING', WEBHOOK_EVENTS.streaming), event: WEBHOOK_EVENTS.streaming, copies: 1, lateMs: 0 }, context),
        );
      }
      deliveries.add(delivery);
      void delivery.finally(() => deliveries.delete(delivery));
    },
    async settled() {
      await Promise.allSettled([...deliveries]);
    },
  };
}
