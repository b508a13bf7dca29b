/**
 * Which fault, if any, meets a call: injected faults first, then the random-fault mode, then
 * the markers in the body; and what the faults due change in a task about to be created.
 */
import {
  applyTaskFault,
  createRandomFaults,
  isRequestFault,
  NORMAL_BEHAVIOUR,
  parseMarkers,
  type Marker,
  type RandomFaults,
  type RandomFaultSource,
  type RandomFaultState,
  type RequestFault,
  type SimFault,
  type TaskBehaviour,
  type TaskFault,
} from './faults.js';

export interface FaultPlan {
  /** Adds a fault; `times` (default 1) is how many requests or tasks it affects. */
  inject(fault: SimFault): void;
  /** Removes injected faults and marker counts (not the random-fault mode). */
  clear(): void;
  /** Injected faults still due, each with how many times it has left. */
  injected(): Array<SimFault & { left: number }>;
  setRandom(settings: RandomFaults | undefined): void;
  randomState(): RandomFaultState | undefined;
  /** The first injected request fault that applies to this path, consumed. */
  takeRequestFault(path: string): RequestFault | undefined;
  /** The random mode's draw for a call; undefined when it is off or drew nothing. */
  draw(path: string, create: boolean): SimFault | undefined;
  /** Marker faults still due for this request (each counted by its marker and field text). */
  dueMarkers(path: string, body: unknown): Marker[];
  /** The behaviour of a task about to be created; consumes the injected task faults. */
  behaviourFor(markers: readonly Marker[], drawn: TaskFault | undefined): TaskBehaviour;
}

export function createFaultPlan(initialRandom: RandomFaults | undefined): FaultPlan {
  let faults: Array<{ fault: SimFault; left: number }> = [];
  let randomFaults: RandomFaultSource | undefined = initialRandom === undefined ? undefined : createRandomFaults(initialRandom);
  const markerUses = new Map<string, number>();

  return {
    inject(fault) {
      faults.push({ fault, left: Math.max(1, fault.times ?? 1) });
    },
    clear() {
      faults = [];
      markerUses.clear();
    },
    injected: () => faults.map(({ fault, left }) => ({ ...fault, left })),
    setRandom(settings) {
      randomFaults = settings === undefined ? undefined : createRandomFaults(settings);
    },
    randomState: () => randomFaults?.state(),
    takeRequestFault(path) {
      const entry = faults.find(({ fault }) => isRequestFault(fault) && (fault.path === undefined || path.startsWith(fault.path)));
      if (entry === undefined) return undefined;
      entry.left -= 1;
      if (entry.left <= 0) faults = faults.filter((other) => other !== entry);
      return entry.fault as RequestFault;
    },
    draw: (path, create) => randomFaults?.draw(path, create),
    dueMarkers(path, body) {
      return parseMarkers(body).filter((marker) => {
        // Request faults hit once unless counted; task faults hit every time unless counted.
        const limit = marker.fault.times ?? (isRequestFault(marker.fault) ? 1 : Number.POSITIVE_INFINITY);
        const key = `${path}|${marker.text}`;
        const used = markerUses.get(key) ?? 0;
        if (used >= limit) return false;
        markerUses.set(key, used + 1);
        return true;
      });
    },
    behaviourFor(markers, drawn) {
      let behaviour: TaskBehaviour = drawn === undefined ? { ...NORMAL_BEHAVIOUR } : applyTaskFault({ ...NORMAL_BEHAVIOUR }, drawn);
      for (const entry of [...faults]) {
        if (isRequestFault(entry.fault)) continue;
        behaviour = applyTaskFault(behaviour, entry.fault);
        entry.left -= 1;
        if (entry.left <= 0) faults = faults.filter((other) => other !== entry);
      }
      for (const { fault } of markers) {
        if (!isRequestFault(fault)) behaviour = applyTaskFault(behaviour, fault as TaskFault);
      }
      return behaviour;
    },
  };
}
