/** The simulator's tasks and credit balance: a create charges, a task walks to its end on a timer, a failure refunds. */
import { randomUUID } from 'node:crypto';
import type { Logger } from 'pino';
import { costOf, CREATE_OPERATIONS, REQUEST_FIELDS, type CreateOperationName } from './contract.js';
import type { TaskBehaviour } from './faults.js';
import type { SimTaskView } from './types.js';

export type TaskOutcome = 'success' | 'failure';

export interface SimTask {
  view: SimTaskView;
  operation: CreateOperationName;
  behaviour: TaskBehaviour;
  clipIds: string[];
  timers: NodeJS.Timeout[];
  /** From submission to its end, the time it is held not counted. */
  durationMs: number;
  /** How far along it was when held (undefined while it runs), or when it started running (Date.now() less its progress). */
  progress: { heldAtMs: number } | { startedAt: number };
  webhookSecret: string | undefined;
}

export interface TaskStore {
  getCredits(): number;
  setCredits(credits: number): void;
  getTaskMs(): number;
  /** Duration of tasks created from now on. */
  setTaskMs(ms: number): void;
  /** Credits a create of `operation` costs. */
  costOf(operation: CreateOperationName): number;
  /** Tasks of `taskType` not yet ended. */
  inFlight(taskType: string): number;
  /** Charges and starts a task; the caller has checked the balance. */
  create(operation: CreateOperationName, body: Record<string, unknown>, behaviour: TaskBehaviour): SimTask;
  /** Ends a task now. False when it had already ended. */
  finish(task: SimTask, outcome: TaskOutcome): boolean;
  get(taskId: string): SimTask | undefined;
  all(): SimTask[];
  /** Stops every task's timers. */
  stop(): void;
  /**
   * Holds the service's tasks (`true`): none advances or ends, those created meanwhile included,
   * until released (`false`), when each goes on from where it was.
   */
  setHeld(held: boolean): void;
  isHeld(): boolean;
}

export interface TaskStoreOptions {
  credits: number;
  taskMs: number;
  personaSongCost: number;
  log: Logger;
  /** Called once when a task ends, after its state and refund are settled. */
  onEnded(task: SimTask, outcome: TaskOutcome): void;
}

export function createTaskStore(options: TaskStoreOptions): TaskStore {
  const { log, personaSongCost } = options;
  const tasks = new Map<string, SimTask>();
  /** Tasks not yet ended, by task type: kept on create and finish, so a create never walks every task. */
  const open = new Map<string, number>();
  let credits = options.credits;
  let taskMs = options.taskMs;
  let held = false;

  /** Walks a task on from `fromMs` into its duration: RUNNING at a quarter of it, ended at its end. */
  function run(task: SimTask, fromMs: number): void {
    task.progress = { startedAt: Date.now() - fromMs };
    const quarter = Math.floor(task.durationMs / 4);
    if (fromMs < quarter) {
      task.timers.push(
        setTimeout(() => {
          if (task.view.state === 'PENDING') task.view.state = 'RUNNING';
        }, quarter - fromMs),
      );
    } else if (task.view.state === 'PENDING') {
      task.view.state = 'RUNNING';
    }
    task.timers.push(setTimeout(() => store.finish(task, task.behaviour.fail ? 'failure' : 'success'), Math.max(0, task.durationMs - fromMs)));
  }

  function pause(task: SimTask): void {
    for (const timer of task.timers) clearTimeout(timer);
    task.timers = [];
    if ('startedAt' in task.progress) task.progress = { heldAtMs: Date.now() - task.progress.startedAt };
  }

  const ended = (task: SimTask) => task.view.state === 'SUCCESS' || task.view.state === 'FAILED';

  const store: TaskStore = {
    getCredits: () => credits,
    setCredits(value) {
      credits = value;
    },
    getTaskMs: () => taskMs,
    setTaskMs(ms) {
      taskMs = ms;
    },
    costOf: (operation) => costOf(operation, personaSongCost),
    inFlight: (taskType) => open.get(taskType) ?? 0,
    create(operation, body, behaviour) {
      const route = CREATE_OPERATIONS[operation];
      const fields = REQUEST_FIELDS[operation];
      const cost = costOf(operation, personaSongCost);
      credits -= cost;
      const taskId = randomUUID();
      const clipCount = operation === 'personaSong' ? 2 : operation === 'voice' ? 0 : 1;
      const clipIds: string[] = Array.from({ length: clipCount }, () => randomUUID());
      // Video and download tasks work on an existing clip and keep its id.
      const existingClip = 'clipId' in fields ? body[fields.clipId] : undefined;
      if (typeof existingClip === 'string') clipIds[0] = existingClip;
      const webhookUrl = 'webhookUrl' in fields ? body[fields.webhookUrl] : undefined;
      const webhookSecret = 'webhookSecret' in fields ? body[fields.webhookSecret] : undefined;
      const task: SimTask = {
        view: {
          taskId,
          platform: route.platform,
          taskType: route.taskType,
          state: 'PENDING',
          cost,
          refunded: false,
          createdAt: Date.now(),
          endedAt: undefined,
          body,
          webhookUrl: typeof webhookUrl === 'string' ? webhookUrl : undefined,
        },
        operation,
        behaviour,
        clipIds,
        timers: [],
        durationMs: behaviour.taskMs ?? taskMs,
        progress: { heldAtMs: 0 },
        webhookSecret: typeof webhookSecret === 'string' ? webhookSecret : undefined,
      };
      tasks.set(taskId, task);
      open.set(route.taskType, (open.get(route.taskType) ?? 0) + 1);
      if (!held) run(task, 0);
      log.debug({ taskId, taskType: route.taskType, cost, credits }, 'sim task created');
      return task;
    },
    finish(task, outcome) {
      if (ended(task)) return false;
      for (const timer of task.timers) clearTimeout(timer);
      task.timers = [];
      task.view.state = outcome === 'success' ? 'SUCCESS' : 'FAILED';
      task.view.endedAt = Date.now();
      open.set(task.view.taskType, (open.get(task.view.taskType) ?? 1) - 1);
      if (outcome === 'failure') {
        // The spec: a task that fails upstream refunds its credits automatically.
        credits += task.view.cost;
        task.view.refunded = true;
      }
      log.debug({ taskId: task.view.taskId, state: task.view.state, credits }, 'sim task ended');
      options.onEnded(task, outcome);
      return true;
    },
    get: (taskId) => tasks.get(taskId),
    all: () => [...tasks.values()],
    stop() {
      for (const task of tasks.values()) for (const timer of task.timers) clearTimeout(timer);
    },
    setHeld(value) {
      if (value === held) return;
      held = value;
      for (const task of tasks.values()) {
        if (ended(task)) continue;
        if (held) pause(task);
        else if ('heldAtMs' in task.progress) run(task, task.progress.heldAtMs);
      }
      log.debug({ held }, 'sim tasks held');
    },
    isHeld: () => held,
  };
  return store;
}
