/**
 * Counts the round trips a bot in this process makes: each statement its Postgres clients send,
 * each command its Redis connections send, each request the Discord emulator and the music-API
 * simulator receive. It wraps what is already there (pg's client `query`, ioredis's
 * `sendCommand`, the stand-ins' recorded requests), so it counts on the real stack. Stages end
 * at a trip of their own (the first answer's callback, the task sent to the service), so a stage
 * owns exactly the trips made before its end, whenever the test looks.
 */
import { Redis } from 'ioredis';
import pg from 'pg';

export type TripKind = 'postgres' | 'redis' | 'discord' | 'service';

export interface Trip {
  readonly kind: TripKind;
  /** The statement's first words, the command's name, or the request's method and path. */
  readonly what: string;
}

export type StageCounts = Record<TripKind, number>;

export interface Stage {
  readonly name: string;
  /** The trip that ends the stage; it belongs to the stage. */
  readonly endsWith: (trip: Trip) => boolean;
}

export interface CountedStage {
  readonly name: string;
  readonly counts: StageCounts;
  readonly trips: readonly Trip[];
}

export interface TripCounter {
  /** Resolves once every stage has ended, with each stage's trips. */
  readonly ended: Promise<readonly CountedStage[]>;
  /** Puts back what was wrapped. */
  stop(): void;
}

interface RecordsRequests {
  readonly requests: Array<{ method: string; path: string }>;
}

/**
 * Redis commands no stage owns: BullMQ's check for stalled jobs and the renewal of its locks run
 * on their own timers, and an idle worker's blocking wait for the next job returns and starts
 * again as often as timing has it.
 */
const BACKGROUND_ARGS = /stalled/;
const WAITS = new Set(['bzpopmin', 'bzpopmax', 'brpoplpush', 'blmove', 'brpop', 'blpop']);
/** Statements a new pooled connection runs once when it opens (see connectDatabase). */
const CONNECTION_SETUP = /^set /i;

/** A stage's end that needs every one of `matchers` seen, each once, in any order. */
export function allOf(...matchers: Array<(trip: Trip) => boolean>): (trip: Trip) => boolean {
  const seen = new Set<number>();
  return (trip) => {
    const index = matchers.findIndex((matches, i) => !seen.has(i) && matches(trip));
    if (index >= 0) seen.add(index);
    return seen.size === matchers.length;
  };
}

/** Matches `then` only once `first` has matched. */
export function after(first: (trip: Trip) => boolean, then: (trip: Trip) => boolean): (trip: Trip) => boolean {
  let started = false;
  return (trip) => {
    if (started) return then(trip);
    started = first(trip);
    return false;
  };
}

/**
 * Starts counting, from the first of `stages` on. `skipPools` are the test's own pools, left out.
 * The test makes no Redis call of its own while counting.
 */
export function countTrips(parts: { stages: readonly Stage[]; discord: RecordsRequests; service: RecordsRequests; skipPools?: readonly pg.Pool[] }): TripCounter {
  let current: Trip[] = [];
  const done: CountedStage[] = [];
  let end!: (stages: readonly CountedStage[]) => void;
  const ended = new Promise<readonly CountedStage[]>((resolve) => (end = resolve));
  const record = (trip: Trip) => {
    const stage = parts.stages[done.length];
    if (!stage) return;
    current.push(trip);
    if (!stage.endsWith(trip)) return;
    const counts: StageCounts = { postgres: 0, redis: 0, discord: 0, service: 0 };
    for (const each of current) counts[each.kind] += 1;
    done.push({ name: stage.name, counts, trips: current });
    current = [];
    if (done.length === parts.stages.length) end(done);
  };
  const skipped = new WeakSet<object>();
  const skipPools = parts.skipPools ?? [];
  const onAcquire = (client: pg.PoolClient) => skipped.add(client);
  for (const pool of skipPools) pool.on('acquire', onAcquire);

  const pgQuery = pg.Client.prototype.query;
  pg.Client.prototype.query = function (this: pg.Client, ...args: unknown[]) {
    const first = args[0];
    const text = typeof first === 'string' ? first : ((first as { text?: string } | undefined)?.text ?? '');
    if (!skipped.has(this) && !CONNECTION_SETUP.test(text)) {
      record({ kind: 'postgres', what: text.replace(/\s+/g, ' ').trim().slice(0, 80) });
    }
    return (pgQuery as (...a: unknown[]) => unknown).apply(this, args);
  } as typeof pgQuery;

  const sendCommand = Redis.prototype.sendCommand;
  Redis.prototype.sendCommand = function (this: Redis, command, stream) {
    const args = command.args.map(String).join(' ');
    if (!WAITS.has(command.name) && !BACKGROUND_ARGS.test(args)) record({ kind: 'redis', what: command.name });
    return sendCommand.call(this, command, stream);
  };

  const unwrap: Array<() => void> = [];
  for (const [kind, recorder] of [['discord', parts.discord], ['service', parts.service]] as const) {
    const push = recorder.requests.push;
    recorder.requests.push = function (this: RecordsRequests['requests'], ...records) {
      for (const each of records) record({ kind, what: `${each.method} ${each.path}` });
      return push.apply(this, records);
    };
    unwrap.push(() => {
      recorder.requests.push = push;
    });
  }

  return {
    ended,
    stop() {
      pg.Client.prototype.query = pgQuery;
      Redis.prototype.sendCommand = sendCommand;
      for (const pool of skipPools) pool.off('acquire', onAcquire);
      for (const undo of unwrap) undo();
    },
  };
}
