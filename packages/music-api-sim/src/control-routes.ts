/** The control API under /_sim: what tests and the playground use to set credits, end tasks, inject faults and read records. */
import type { Exchange } from './exchange.js';
import type { FaultPlan } from './fault-plan.js';
import { parseFault, parseRandomFaults } from './faults.js';
import { parseModerationSettings } from './moderation.js';
import type { TaskStore } from './tasks.js';
import type { MusicApiSim } from './types.js';

/** The simulator's handle, less what only exists once it listens. */
export type SimControls = Omit<MusicApiSim, 'url' | 'port' | 'close'>;

export interface ControlContext {
  sim: SimControls;
  tasks: TaskStore;
  faults: FaultPlan;
}

export interface ControlRequest {
  /** The request body: an object for most routes, anything else is read as `{}`. */
  body: unknown;
  params: Record<string, string>;
}

export interface ControlRoute {
  methods: string[];
  /** Path with `:name` parameters. */
  url: string;
  handle(context: ControlContext, exchange: Exchange, request: ControlRequest): void;
}

const bad = (exchange: Exchange, message: string) => exchange.send(400, { type: 'validation_error', message });
const inputOf = (body: unknown) => (typeof body === 'object' && body !== null ? (body as Record<string, unknown>) : {});

export const CONTROL_ROUTES: readonly ControlRoute[] = [
  {
    methods: ['GET'],
    url: '/_sim/state',
    handle: ({ sim, tasks, faults }, exchange) =>
      exchange.send(200, {
        credits: tasks.getCredits(),
        taskMs: tasks.getTaskMs(),
        held: sim.tasksHeld(),
        tasks: sim.listTasks(),
        faults: faults.injected(),
        randomFaults: sim.getRandomFaults() ?? null,
      }),
  },
  {
    methods: ['GET'],
    url: '/_sim/credits',
    handle: ({ tasks }, exchange) => exchange.send(200, { credits: tasks.getCredits() }),
  },
  {
    methods: ['POST', 'PUT'],
    url: '/_sim/credits',
    handle({ sim, tasks }, exchange, { body }) {
      const credits = inputOf(body)['credits'];
      if (typeof credits !== 'number') return bad(exchange, 'credits: a number');
      sim.setCredits(credits);
      exchange.send(200, { credits: tasks.getCredits() });
    },
  },
  {
    methods: ['POST', 'PUT'],
    url: '/_sim/task-ms',
    handle({ sim, tasks }, exchange, { body }) {
      const taskMs = inputOf(body)['taskMs'];
      if (typeof taskMs !== 'number') return bad(exchange, 'taskMs: a number');
      sim.setTaskMs(taskMs);
      exchange.send(200, { taskMs: tasks.getTaskMs() });
    },
  },
  {
    methods: ['GET'],
    url: '/_sim/hold',
    handle: ({ sim }, exchange) => exchange.send(200, { held: sim.tasksHeld() }),
  },
  {
    methods: ['POST', 'PUT'],
    url: '/_sim/hold',
    handle({ sim }, exchange, { body }) {
      const held = inputOf(body)['held'];
      if (typeof held !== 'boolean') return bad(exchange, 'held: true or false');
      sim.holdTasks(held);
      exchange.send(200, { held: sim.tasksHeld() });
    },
  },
  {
    methods: ['POST'],
    url: '/_sim/tasks/:taskId/complete',
    handle({ sim, tasks }, exchange, { body, params }) {
      const taskId = params['taskId'] ?? '';
      const outcome = inputOf(body)['outcome'] === 'failure' ? 'failure' : 'success';
      if (tasks.get(taskId) === undefined) return exchange.send(404, { type: 'not_found', message: 'no such task' });
      exchange.send(200, { completed: sim.completeTask(taskId, outcome), task: sim.getTask(taskId) });
    },
  },
  {
    methods: ['POST'],
    url: '/_sim/faults',
    handle({ sim, faults }, exchange, { body }) {
      const fault = parseFault(body);
      if (typeof fault === 'string') return bad(exchange, fault);
      sim.injectFault(fault);
      exchange.send(200, { faults: faults.injected().length });
    },
  },
  {
    methods: ['DELETE'],
    url: '/_sim/faults',
    handle({ sim }, exchange) {
      sim.clearFaults();
      exchange.send(204);
    },
  },
  {
    methods: ['GET'],
    url: '/_sim/random-faults',
    handle: ({ sim }, exchange) => exchange.send(200, { randomFaults: sim.getRandomFaults() ?? null }),
  },
  {
    methods: ['POST', 'PUT'],
    url: '/_sim/random-faults',
    handle({ sim }, exchange, { body }) {
      const settings = parseRandomFaults(body);
      if (typeof settings === 'string') return bad(exchange, settings);
      sim.setRandomFaults(settings);
      exchange.send(200, { randomFaults: sim.getRandomFaults() });
    },
  },
  {
    methods: ['DELETE'],
    url: '/_sim/random-faults',
    handle({ sim }, exchange) {
      sim.setRandomFaults(undefined);
      exchange.send(204);
    },
  },
  {
    methods: ['GET'],
    url: '/_sim/moderation',
    handle: ({ sim }, exchange) => exchange.send(200, { moderation: sim.getModeration() }),
  },
  {
    methods: ['POST', 'PUT'],
    url: '/_sim/moderation',
    handle({ sim }, exchange, { body }) {
      const settings = parseModerationSettings(body);
      if (typeof settings === 'string') return bad(exchange, settings);
      sim.setModeration(settings);
      exchange.send(200, { moderation: sim.getModeration() });
    },
  },
  {
    methods: ['DELETE'],
    url: '/_sim/moderation',
    handle({ sim }, exchange) {
      sim.setModeration({}, { reset: true });
      exchange.send(204);
    },
  },
  {
    methods: ['GET'],
    url: '/_sim/requests',
    handle: ({ sim }, exchange) => exchange.send(200, sim.requests),
  },
  {
    methods: ['DELETE'],
    url: '/_sim/requests',
    handle({ sim }, exchange) {
      sim.clearRecords();
      exchange.send(204);
    },
  },
  {
    methods: ['GET'],
    url: '/_sim/webhooks',
    handle: ({ sim }, exchange) => exchange.send(200, sim.webhookAttempts),
  },
];

/** The answer to a control path no route serves. */
export function controlNotFound(exchange: Exchange, path: string): void {
  exchange.send(404, { type: 'not_found', message: `no control route ${exchange.method} ${path}` });
}
