/**
 * Faults the simulator can be told to produce, through the control API or through markers
 * written in a prompt (`[sim:429]`, `[sim:fail]`, ...; see README.md).
 */

/** Faults that change how a request is answered. */
export type RequestFault =
  /** Answer with this status and error `type` instead of the normal answer. */
  | { kind: 'status'; status: number; type?: string; times?: number; path?: string }
  /**
   * Never answer. With `accepted`, the task is created and charged first, as when a real
   * create hangs after the service took it.
   */
  | { kind: 'hang'; accepted?: boolean; times?: number; path?: string };

/** Faults that change what happens to the next created tasks. */
export type TaskFault =
  | { kind: 'fail-task'; times?: number }
  | { kind: 'no-webhook'; times?: number }
  | { kind: 'webhook-twice'; times?: number }
  | { kind: 'webhook-late'; ms: number; times?: number }
  | { kind: 'bad-signature'; times?: number }
  | { kind: 'task-ms'; ms: number; times?: number };

export type SimFault = RequestFault | TaskFault;

/** What one task does differently. */
export interface TaskBehaviour {
  fail: boolean;
  webhook: 'normal' | 'none' | 'twice';
  webhookLateMs: number;
  badSignature: boolean;
  taskMs: number | undefined;
}

export const NORMAL_BEHAVIOUR: Readonly<TaskBehaviour> = Object.freeze({
  fail: false,
  webhook: 'normal',
  webhookLateMs: 0,
  badSignature: false,
  taskMs: undefined,
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
  switch (fault['kind']) {
    case 'status':
      if (typeof fault['status'] !== 'number' || fault['status'] < 400 || fault['status'] > 599) return 'status: 400 to 599';
      if (fault['type'] !== undefined && typeof fault['type'] !== 'string') return 'type: a string';
      return fault as SimFault;
    case 'webhook-late':
    case 'task-ms':
      if (typeof fault['ms'] !== 'number' || fault['ms'] < 0) return 'ms: a number of milliseconds';
      return fault as SimFault;
    case 'hang':
    case 'fail-task':
    case 'no-webhook':
    case 'webhook-twice':
    case 'bad-signature':
      return fault as SimFault;
    default:
      return 'kind: one of status, hang, fail-task, no-webhook, webhook-twice, webhook-late, bad-signature, task-ms';
  }
}

export function isRequestFault(fault: SimFault): fault is RequestFault {
  return fault.kind === 'status' || fault.kind === 'hang';
}

/** A marker as written, with the fault it stands for. */
export interface Marker {
  text: string;
  fault: SimFault;
}

const MARKER = /\[sim:(\d{3}|[a-z][a-z-]*)(?:=(\d+))?(?:x(\d+))?\]/gi;

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
  if (/^\d{3}$/.test(name)) {
    const status = Number(name);
    const type = TYPE_BY_STATUS[status];
    return { kind: 'status', status, ...(type === undefined ? {} : { type }), ...counted };
  }
  switch (name) {
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
    case 'bad-signature':
      return { kind: 'bad-signature', ...counted };
    case 'task-ms':
      return value === undefined ? undefined : { kind: 'task-ms', ms: value, ...counted };
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
    case 'bad-signature':
      return { ...behaviour, badSignature: true };
    case 'task-ms':
      return { ...behaviour, taskMs: fault.ms };
  }
}

function stringsOf(body: unknown): string[] {
  if (typeof body === 'string') return [body];
  if (Array.isArray(body)) return body.flatMap(stringsOf);
  if (typeof body === 'object' && body !== null) return Object.values(body).flatMap(stringsOf);
  return [];
}
