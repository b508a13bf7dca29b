/**
 * The work Redis carries. Postgres holds the truth about every job; a queue entry only says
 * "look at job X now". Entry ids are derived from the job id, so adding the same work twice
 * (a webhook and a poll, a reconcile pass and a live entry) adds it once.
 */
import { Queue, type ConnectionOptions, type JobsOptions } from 'bullmq';
import { z } from 'zod';
import { taskStatusSchema } from '../music-api/task-status.js';

export const QUEUE_NAMES = {
  submit: 'submit',
  poll: 'poll',
  complete: 'complete',
  deliver: 'deliver',
  maintenance: 'maintenance',
  consume: 'consume',
} as const;

export const submitPayloadSchema = z.object({
  jobId: z.uuid(),
  /** False when the acknowledgement offered no Cancel button, so the worker has none to remove. */
  cancelOffered: z.boolean().optional(),
  /** The task the service accepted for the job, kept here while Postgres could not record it. */
  taskId: z.string().min(1).optional(),
});
export const pollPayloadSchema = z.object({ jobId: z.uuid(), attempt: z.number().int().min(0).default(0) });
export const completePayloadSchema = z.object({
  jobId: z.uuid(),
  /** The normalised upstream status, as the music-API client gives it. */
  status: taskStatusSchema,
  taskId: z.string().optional(),
  source: z.enum(['webhook', 'poll']),
  receivedAt: z.number(),
});
export const deliverPayloadSchema = z.object({ jobId: z.uuid() });
/** A pack's consume that Discord did not take: tried again from here (src/premium/consume-retries.ts). */
export const consumePayloadSchema = z.object({ entitlementId: z.string().regex(/^\d+$/) });

/**
 * Periodic passes over the whole deployment. Each runs from a BullMQ job scheduler, so one
 * worker somewhere runs each pass, however many worker processes there are.
 */
export const MAINTENANCE_TASKS = ['reconcile', 'allowances', 'account', 'retention', 'entitlements', 'purchases', 'charts', 'contests'] as const;
export type MaintenanceTask = (typeof MAINTENANCE_TASKS)[number];

export type SubmitPayload = z.infer<typeof submitPayloadSchema>;
export type PollPayload = z.infer<typeof pollPayloadSchema>;
export type CompletePayload = z.infer<typeof completePayloadSchema>;
export type DeliverPayload = z.infer<typeof deliverPayloadSchema>;
export type ConsumePayload = z.infer<typeof consumePayloadSchema>;

/** BullMQ refuses `:` in custom ids. */
export const entryId = {
  submit: (jobId: string) => `submit-${jobId}`,
  poll: (jobId: string) => `poll-${jobId}`,
  /**
   * One entry per reported end: a webhook and a poll bringing the same end are one, while a
   * different end reported meanwhile is an entry of its own, to be counted as a second end.
   */
  complete: (jobId: string, state: string) => `complete-${jobId}-${state}`,
  deliver: (jobId: string) => `deliver-${jobId}`,
  consume: (entitlementId: string) => `consume-${entitlementId}`,
};

const common: JobsOptions = {
  removeOnComplete: true,
  removeOnFail: { age: 7 * 24 * 3600 },
};

export interface Queues {
  readonly submit: Queue<SubmitPayload>;
  readonly poll: Queue<PollPayload>;
  readonly complete: Queue<CompletePayload>;
  readonly deliver: Queue<DeliverPayload>;
  readonly maintenance: Queue<Record<string, never>, unknown, MaintenanceTask>;
  readonly consume: Queue<ConsumePayload>;
  readonly prefix: string;
  enqueueSubmit(jobId: string, delayMs?: number, options?: { cancelOffered?: boolean }): Promise<void>;
  enqueuePoll(jobId: string, delayMs: number): Promise<void>;
  enqueueComplete(payload: CompletePayload): Promise<void>;
  enqueueDeliver(jobId: string, delayMs?: number): Promise<void>;
  /**
   * Tries a pack's consume again in {@link CONSUME_RETRY.firstDelayMs}, then with a doubling
   * wait, {@link CONSUME_RETRY.attempts} times in all, wherever a worker runs; after that the
   * minute sweep takes it. One entry per entitlement at a time.
   */
  retryConsume(entitlementId: string): Promise<void>;
  /**
   * Makes sure `task` runs every `everyMs` somewhere in the deployment (idempotent: every
   * worker process calls it). Resolves true when the schedule was missing, e.g. because Redis
   * lost its data; a new schedule runs its first pass at once.
   */
  scheduleMaintenance(task: MaintenanceTask, everyMs: number): Promise<boolean>;
  close(): Promise<void>;
}

export interface QueueOptions {
  /** Key prefix in Redis; tests give each file its own. @defaultValue 'musicbot' */
  readonly prefix?: string;
  /** Submission attempts for retryable upstream errors. @defaultValue 6 */
  readonly submitAttempts?: number;
  /** Hears the queues' errors (their connection's, mostly); without it BullMQ writes them to the console. */
  readonly onError?: (error: Error) => void;
}

/** Name of the custom backoff the submit worker implements (exponential with equal jitter, capped, after Retry-After). */
export const JITTER_BACKOFF = 'jitter';

/** The retries of a pack's consume after the first attempt failed: at 0.5, 1 and 2 s. */
export const CONSUME_RETRY = { attempts: 3, firstDelayMs: 500, backoffMs: 1_000 } as const;

export function createQueues(connection: ConnectionOptions, { prefix = 'musicbot', submitAttempts = 6, onError }: QueueOptions = {}): Queues {
  const options = { connection, prefix, defaultJobOptions: common };
  const submit = new Queue<SubmitPayload>(QUEUE_NAMES.submit, options);
  const poll = new Queue<PollPayload>(QUEUE_NAMES.poll, options);
  const complete = new Queue<CompletePayload>(QUEUE_NAMES.complete, options);
  const deliver = new Queue<DeliverPayload>(QUEUE_NAMES.deliver, options);
  const maintenance = new Queue<Record<string, never>, unknown, MaintenanceTask>(QUEUE_NAMES.maintenance, {
    ...options,
    defaultJobOptions: { removeOnComplete: true, removeOnFail: 100 },
  });
  // A retry that gave up leaves nothing behind: its id would refuse the next retry of the pack.
  const consume = new Queue<ConsumePayload>(QUEUE_NAMES.consume, { ...options, defaultJobOptions: { removeOnComplete: true, removeOnFail: true } });
  if (onError) for (const queue of [submit, poll, complete, deliver, maintenance, consume]) queue.on('error', onError);

  return {
    submit,
    poll,
    complete,
    deliver,
    maintenance,
    consume,
    prefix,
    async enqueueSubmit(jobId, delayMs = 0, options = {}) {
      await submit.add('submit', submitPayloadSchema.parse({ jobId, ...options }), {
        jobId: entryId.submit(jobId),
        delay: delayMs,
        attempts: submitAttempts,
        backoff: { type: JITTER_BACKOFF },
      });
    },
    async enqueuePoll(jobId, delayMs) {
      await poll.add('poll', pollPayloadSchema.parse({ jobId, attempt: 0 }), { jobId: entryId.poll(jobId), delay: delayMs });
    },
    async enqueueComplete(payload) {
      await complete.add('complete', completePayloadSchema.parse(payload), {
        jobId: entryId.complete(payload.jobId, payload.status.state),
        attempts: 10,
        backoff: { type: 'exponential', delay: 500 },
      });
    },
    async enqueueDeliver(jobId, delayMs = 0) {
      await deliver.add('deliver', deliverPayloadSchema.parse({ jobId }), {
        jobId: entryId.deliver(jobId),
        delay: delayMs,
        attempts: 8,
        backoff: { type: 'exponential', delay: 1000 },
      });
    },
    async retryConsume(entitlementId) {
      await consume.add('consume', consumePayloadSchema.parse({ entitlementId }), {
        jobId: entryId.consume(entitlementId),
        delay: CONSUME_RETRY.firstDelayMs,
        attempts: CONSUME_RETRY.attempts,
        backoff: { type: 'exponential', delay: CONSUME_RETRY.backoffMs },
      });
    },
    async scheduleMaintenance(task, everyMs) {
      const current = await maintenance.getJobScheduler(task);
      if (current?.every === everyMs) return false;
      await maintenance.upsertJobScheduler(task, { every: everyMs }, { name: task, data: {} });
      return current === undefined;
    },
    async close() {
      await Promise.all([submit.close(), poll.close(), complete.close(), deliver.close(), maintenance.close(), consume.close()]);
    },
  };
}
