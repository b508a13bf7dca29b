/**
 * Faults the simulator can be told to produce, through the control API or through markers
 * written in a prompt (`[sim:429]`, `[sim:fail]`, ...; see README.md).
 */

/**
 * Faults that change how a request is answered. With `accepted`, a create's task is made and
 * charged first, and only then is the answer faulted: the service took the request, but the
 * client cannot know it.
 */
export type RequestFault =
  /** Answer with this status and error `type` instead of the normal answer. */
  | { kind: 'status'; status: number; type?: string; accepted?: boolean; times?: number; path?: string }
  /** Answer HTTP 200 with this error `code` (and `type`) in the body, as some gateways do. */
  | { kind: 'code'; code: number; type?: string; accepted?: boolean; times?: number; path?: string }
  /** Close the connection without an answer once the body has been read. */
  | { kind: 'reset'; accepted?: boolean; times?: number; path?: string }
  /**
   * Answer this status (200 to 599) with an HTML page, as a reverse proxy or CDN in front of
   * the service does: with `accepted`, after the service behind it made the task.
   */
  | { kind: 'proxy'; status: number; accepted?: boolean; times?: number; path?: string }
  /** Never answer. */
  | { kind: 'hang'; accepted?: boolean; times?: number; path?: string };

/** Faults that change what happens to the next created tasks. */
export type TaskFault =
  | { kind: 'fail-task'; times?: number }
  | { kind: 'no-webhook'; times?: number }
  | { kind: 'webhook-twice'; times?: number }
  | { kind: 'webhook-late'; ms: number; times?: number }
  /** The task's intermediate callback (`song.streaming`, the RUNNING body) comes after its final one. */
  | { kind: 'webhook-out-of-order'; times?: number }
  | { kind: 'bad-signature'; times?: number }
  | { kind: 'task-ms'; ms: number; times?: number }
  /**
   * The task ends SUCCESS without the result its task type gives: a song without `audio_url`,
   * lyrics without `text`, a video without `video_url`, a download without `download_url`, a
   * voice without `persona_id`.
   */
  | { kind: 'empty-success'; times?: number };

export type SimFault = RequestFault | TaskFault;

/** What one task does differently. */
export interface TaskBehaviour {
  fail: boolean;
  webhook: 'normal' | 'none' | 'twice';
  webhookLateMs: number;
  /** Send the intermediate callback after the final one. */
  outOfOrder: boolean;
  badSignature: boolean;
  taskMs: number | undefined;
  /** Ends SUCCESS without its result (see the `empty-success` fault). */
  emptySuccess: boolean;
}

export const NORMAL_BEHAVIOUR: Readonly<TaskBehaviour> = Object.freeze({
  fail: false,
  webhook: 'normal',
  webhookLateMs: 0,
  outOfOrder: false,
  badSignature: false,
  taskMs: undefined,
  emptySuccess: false,
});

/** The upstream `type` the service sends with each error status. */
export const TYPE_BY_STATUS: Readonly<Record<number, string>> = {
  400: 'validation_error',
  401: 'unauthorized',
  402: 'insufficient_credits',
  403: 'insufficient_credits',
  404: 'not_found',
  410: 'endpoint_retired',
  429: 'rate_limited',
  500: 'internal_error',
  502: 'upstream_error',
  503: 'upstream_error',
};

/**
 * Reads a fault sent to the control API, or explains what is wrong with it.
 */
export function parseFault(input: unknown): SimFault | string {
  if (typeof input !== 'object' || input === null) return 'a fault object with a kind';
  const fault = input as Record<string, unknown>;
  const times = fault['times'];
  if (times !== undefined && (typeof times !== 'number' || !Number.isInteger(times) || times < 1)) return 'times: a whole number from 1';
  if (fault['path'] !== undefined && typeof fault['path'] !== 'string') return 'path: a path prefix';
  if (fault['accepted'] !== undefined && typeof fault['accepted'] !== 'boolean') return 'accepted: true or false';
  switch (fault['kind']) {
    case 'status':
    case 'code': {
      const status = fault[fault['kind']];
      if (typeof status !== 'number' || status < 400 || status > 599) return `${fault['kind']}: 400 to 599`;
      if (fault['type'] !== undefined && typeof fault['type'] !== 'string') return 'type: a string';
      return fault as SimFault;
    }
    case 'proxy': {
      const status = fault['status'];
      if (typeof status !== 'number' || !Number.isInteger(status) || status < 200 || status > 599) return 'proxy: a status from 200 to 599';
      return fault as SimFault;
    }
    case 'reset':
    case 'webhook-late':
    case 'task-ms':
      if (typeof fault['ms'] !== 'number' || fault['ms'] < 0) return 'ms: a number of milliseconds';
      return fault as SimFault;
    case 'hang':
    case 'fail-task':
    case 'no-webhook':
    case 'webhook-twice':
    case 'webhook-out-of-order':
    case 'bad-signature':
    case 'empty-success':
      return fault as SimFault;
    default:
      return 'kind: one of status, code, reset, proxy, hang, fail-task, no-webhook, webhook-twice, webhook-late, webhook-out-of-order, bad-signature, task-ms, empty-success';
  }
}

export function isRequestFault(fault: SimFault): fault is RequestFault {
  return fault.kind === 'status' || fault.kind === 'code' || fault.kind === 'reset' || fault.kind === 'proxy' || fault.kind === 'hang';
}

/** A marker as written, with the fault it stands for. */
export interface Marker {
  text: string;
  fault: SimFault;
}

const MARKER = /\[sim:(\d{3}(?:-accepted)?|(?:code|proxy)-\d{3}(?:-accepted)?|[a-z][a-z-]*)(?:=(\d+))?(?:x(\d+))?\]/gi;

/**
 * Every `[sim:...]` marker in the strings of a request body. Syntax: `[sim:NAME]`,
 * `[sim:NAME=VALUE]`, and a trailing `xN` for "the first N times", e.g. `[sim:429x2]`.
 */
export function parseMarkers(body: unknown): Marker[] {
  const markers: Marker[] = [];
  for (const text of stringsOf(body)) {
    for (const match of text.matchAll(MARKER)) {
      const name = (match[1] ?? '').toLowerCase();
      const value = match[2] === undefined ? undefined : Number(match[2]);
      const times = match[3] === undefined ? undefined : Math.max(1, Number(match[3]));
      const fault = markerFault(name, value, times);
      // The field's whole text keys the count, so a retry of the same prompt proceeds.
      if (fault !== undefined) markers.push({ text: `${match[0]}|${text}`, fault });
    }
  }
  return markers;
}

function markerFault(name: string, value: number | undefined, times: number | undefined): SimFault | undefined {
  const counted = times === undefined ? {} : { times };
  const answer = /^(code-|proxy-)?(\d{3})(-accepted)?$/.exec(name);
  if (answer !== null) {
    const status = Number(answer[2]);
    if (answer[1] === 'proxy-') return { kind: 'proxy', status, ...(answer[3] === undefined ? {} : { accepted: true }), ...counted };
    const type = TYPE_BY_STATUS[status];
    const accepted = answer[3] === undefined ? {} : { accepted: true };
    const typed = type === undefined ? {} : { type };
    return answer[1] === undefined
      ? { kind: 'status', status, ...typed, ...accepted, ...counted }
      : { kind: 'code', code: status, ...typed, ...accepted, ...counted };
  }
  switch (name) {
    case 'reset':
      return { kind: 'reset', ...counted };
    case 'reset-accepted':
      return { kind: 'reset', accepted: true, ...counted };
    case 'hang':
      return { kind: 'hang', accepted: false, ...counted };
    case 'hang-accepted':
      return { kind: 'hang', accepted: true, ...counted };
    case 'fail':
      return { kind: 'fail-task', ...counted };
    case 'no-webhook':
      return { kind: 'no-webhook', ...counted };
    case 'webhook-twice':
      return { kind: 'webhook-twice', ...counted };
    case 'webhook-late':
      return { kind: 'webhook-late', ms: value ?? 5000, ...counted };
    case 'webhook-out-of-order':
      return { kind: 'webhook-out-of-order', ...counted };
    case 'bad-signature':
      return { kind: 'bad-signature', ...counted };
    case 'task-ms':
      return value === undefined ? undefined : { kind: 'task-ms', ms: value, ...counted };
    case 'empty-success':
      return { kind: 'empty-success', ...counted };
    default:
      return undefined;
  }
}

/** Applies a task fault to a behaviour. */
export function applyTaskFault(behaviour: TaskBehaviour, fault: TaskFault): TaskBehaviour {
  switch (fault.kind) {
    case 'fail-task':
      return { ...behaviour, fail: true };
    case 'no-webhook':
      return { ...behaviour, webhook: 'none' };
    case 'webhook-twice':
      return { ...behaviour, webhook: 'twice' };
    case 'webhook-late':
      return { ...behaviour, webhookLateMs: fault.ms };
    case 'webhook-out-of-order':
      return { ...behaviour, outOfOrder: true };
    case 'bad-signature':
      return { ...behaviour, badSignature: true };
    case 'task-ms':
      return { ...behaviour, taskMs: fault.ms };
    case 'empty-success':
      return { ...behaviour, emptySuccess: true };
  }
}

function stringsOf(body: unknown): string[] {
  if (typeof body === 'string') return [body];
  if (Array.isArray(body)) return body.flatMap(stringsOf);
  if (typeof body === 'object' && body !== null) return Object.values(body).flatMap(stringsOf);
  return [];
}

// ---- random faults ------------------------------------------------------------------------

/** What the random mode can draw: an answer status, a hang, or something done to a created task. */
export const RANDOM_FAULT_KINDS = [
  '429',
  '500',
  '502',
  'hang',
  'fail-task',
  'webhook-twice',
  'webhook-late',
  'webhook-out-of-order',
  'bad-signature',
  'no-webhook',
] as const;
export type RandomFaultKind = (typeof RANDOM_FAULT_KINDS)[number];

/** Kinds that change how a call is answered; any call can draw them. The others change a created task, so only a create draws them. */
const CALL_KINDS: ReadonlySet<RandomFaultKind> = new Set(['429', '500', '502', 'hang']);

/**
 * Every kind at the same weight, but `no-webhook` (0): after a hung create it leaves the client
 * nothing to find the task by, which tests only its deadline. Give it a weight to have it.
 */
export const DEFAULT_RANDOM_MIX: Readonly<Record<RandomFaultKind, number>> = Object.freeze({
  '429': 1,
  '500': 1,
  '502': 1,
  hang: 1,
  'fail-task': 1,
  'webhook-twice': 1,
  'webhook-late': 1,
  'webhook-out-of-order': 1,
  'bad-signature': 1,
  'no-webhook': 0,
});

/** The random-fault mode: a share of the API calls fail, each in a way drawn from a weighted mix. */
export interface RandomFaults {
  /** Share of calls (creates, polls, get-credits) that get a fault, from 0 to 1. */
  rate: number;
  /** Relative weight of each kind; a kind left out keeps its default weight. @defaultValue DEFAULT_RANDOM_MIX */
  mix?: Partial<Record<RandomFaultKind, number>>;
  /** Seed of the draws, so that a run can be repeated (the state reports the one used). @defaultValue a random one */
  seed?: number;
  /**
   * Share of hung creates that the service took first (task created and charged, then no
   * answer): the case in which a client that sends the create again makes two tasks.
   * @defaultValue 1
   */
  hangAccepted?: number;
  /** How late a late webhook is, drawn evenly between the two. @defaultValue { min: 1000, max: 5000 } */
  webhookLateMs?: { min: number; max: number };
  /** Only calls under this path prefix draw. @defaultValue every API route */
  path?: string;
}

/** A random-fault mode at work: its settings, the seed it used, and what it drew so far. */
export interface RandomFaultState {
  readonly rate: number;
  readonly mix: Readonly<Record<RandomFaultKind, number>>;
  readonly seed: number;
  readonly hangAccepted: number;
  readonly webhookLateMs: { readonly min: number; readonly max: number };
  readonly path: string | undefined;
  /** Calls that drew (faulted or not). */
  readonly calls: number;
  /** Faults drawn, by kind (`hang` counts both hangs; `hangAccepted` those that created a task). */
  readonly drawn: Readonly<Record<RandomFaultKind | 'hangAccepted', number>>;
}

export interface RandomFaultSource {
  /** The fault for one call, or undefined for a normal answer. `create` is whether the call creates a task. */
  draw(path: string, create: boolean): SimFault | undefined;
  state(): RandomFaultState;
}

/** Reads random-fault settings sent to the control API, or explains what is wrong with them. */
export function parseRandomFaults(input: unknown): RandomFaults | string {
  if (typeof input !== 'object' || input === null) return 'an object with a rate';
  const settings = input as Record<string, unknown>;
  const share = (value: unknown) => typeof value === 'number' && value >= 0 && value <= 1;
  if (!share(settings['rate'])) return 'rate: a share of calls from 0 to 1';
  if (settings['hangAccepted'] !== undefined && !share(settings['hangAccepted'])) return 'hangAccepted: a share from 0 to 1';
  if (settings['seed'] !== undefined && !Number.isInteger(settings['seed'])) return 'seed: a whole number';
  if (settings['path'] !== undefined && typeof settings['path'] !== 'string') return 'path: a path prefix';
  const mix = settings['mix'];
  if (mix !== undefined) {
    if (typeof mix !== 'object' || mix === null) return `mix: weights by kind (${RANDOM_FAULT_KINDS.join(', ')})`;
    for (const [kind, weight] of Object.entries(mix)) {
      if (!(RANDOM_FAULT_KINDS as readonly string[]).includes(kind)) return `mix: ${kind} is not one of ${RANDOM_FAULT_KINDS.join(', ')}`;
      if (typeof weight !== 'number' || weight < 0) return `mix: the weight of ${kind} must be a number from 0`;
    }
  }
  const late = settings['webhookLateMs'];
  if (late !== undefined) {
    const { min, max } = (typeof late === 'object' && late !== null ? late : {}) as Record<string, unknown>;
    if (typeof min !== 'number' || typeof max !== 'number' || min < 0 || max < min) return 'webhookLateMs: { min, max } in milliseconds, min ≤ max';
  }
  return settings as unknown as RandomFaults;
}

/** A random-fault source with its own seeded generator. */
export function createRandomFaults(settings: RandomFaults): RandomFaultSource {
  const seed = settings.seed ?? Math.floor(Math.random() * 2 ** 31);
  const random = seededRandom(seed);
  const mix: Record<RandomFaultKind, number> = { ...DEFAULT_RANDOM_MIX, ...settings.mix };
  const hangAccepted = settings.hangAccepted ?? 1;
  const late = settings.webhookLateMs ?? { min: 1000, max: 5000 };
  const drawn = Object.fromEntries([...RANDOM_FAULT_KINDS, 'hangAccepted'].map((kind) => [kind, 0])) as Record<RandomFaultKind | 'hangAccepted', number>;
  let calls = 0;

  const pick = (create: boolean): RandomFaultKind | undefined => {
    const kinds = RANDOM_FAULT_KINDS.filter((kind) => mix[kind] > 0 && (create || CALL_KINDS.has(kind)));
    const total = kinds.reduce((sum, kind) => sum + mix[kind], 0);
    let point = random() * total;
    for (const kind of kinds) {
      point -= mix[kind];
      if (point < 0) return kind;
    }
    return kinds.at(-1);
  };

  return {
    draw(path, create) {
      if (settings.path !== undefined && !path.startsWith(settings.path)) return undefined;
      calls += 1;
      if (random() >= settings.rate) return undefined;
      const kind = pick(create);
      if (kind === undefined) return undefined;
      drawn[kind] += 1;
      switch (kind) {
        case '429':
        case '500':
        case '502': {
          const status = Number(kind);
          return { kind: 'status', status, type: TYPE_BY_STATUS[status] ?? 'internal_error' };
        }
        case 'hang': {
          // Only a create can have been taken before it hung; a poll that hangs created nothing.
          const accepted = create && random() < hangAccepted;
          if (accepted) drawn.hangAccepted += 1;
          return { kind: 'hang', accepted };
        }
        case 'webhook-late':
          return { kind: 'webhook-late', ms: Math.round(late.min + random() * (late.max - late.min)) };
        default:
          return { kind } as TaskFault;
      }
    },
    state: () => ({ rate: settings.rate, mix, seed, hangAccepted, webhookLateMs: late, path: settings.path, calls, drawn: { ...drawn } }),
  };
}

/** mulberry32: small, fast, and the same sequence for the same seed everywhere. */
function seededRandom(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}
