/**
 * Counts the round trips a bot in this process makes: each statement its Postgres clients send,
 * each command its Redis connections send, each request the Discord emulator and the music-API
 * simulator receive. It wraps what is already there (pg's client `query`, ioredis's
 * `sendCommand`, the stand-ins' recorded requests), so it counts on the real stack. A Redis
 * pipeline (or MULTI) is one trip, as is a Postgres query string that holds several statements.
 * Stages end at a trip of their own (the first answer's callback, the task sent to the service),
 * so a stage owns exactly the trips made before its end, whenever the test looks.
 */
import { createHash } from 'node:crypto';
import * as bullmqScripts from 'bullmq/dist/esm/scripts/index.js';
import { Redis } from 'ioredis';
import pg from 'pg';

export type TripKind = 'postgres' | 'redis' | 'discord' | 'service';

export interface Trip {
  readonly kind: TripKind;
  /**
   * The statement's first words, the command's name (BullMQ's scripts by their own: `evalsha
   * moveToActive`; a pipeline's commands joined by `+`), or the request's method and path.
   */
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
 * on their own timers; an idle worker's blocking wait for the next job, and the fetches that
 * follow each wake-up (`moveToActive`, one per free slot, most finding nothing), return and
 * start again as often as timing has it (a busy worker fetches its next job with the finish of
 * the last, which is counted); and the health records are written on a timer, or at most
 * every few seconds per process however many answers come (src/queue/health-records.ts); the
 * maintenance queue's passes (charts, contests, reconcile…) run on their own schedules.
 */
const BACKGROUND_SCRIPTS = new Set(['moveStalledJobsToWait', 'extendLock', 'extendLocks', 'moveToActive']);
const BACKGROUND_KEYS = /:health:|:maintenance:/;
const WAITS = new Set(['bzpopmin', 'bzpopmax', 'brpoplpush', 'blmove', 'brpop', 'blpop']);
/** Statements a new pooled connection runs once when it opens (see connectDatabase). */
const CONNECTION_SETUP = /^set /i;

/** BullMQ's scripts by the SHA-1 ioredis calls them by (`evalsha`). */
const SCRIPT_NAMES = new Map(
  Object.values(bullmqScripts as unknown as Record<string, { name: string; content: string }>).map((script) => [createHash('sha1').update(script.content).digest('hex'), script.name]),
);

/** A Redis command as a trip's `what`: its name, a BullMQ script's name beside `evalsha`. */
function redisWhat(name: string, args: readonly unknown[]): string {
  if (name !== 'evalsha' && name !== 'eval') return name;
  const script = name === 'evalsha' ? SCRIPT_NAMES.get(String(args[0])) : SCRIPT_NAMES.get(createHash('sha1').update(String(args[0])).digest('hex'));
  return script === undefined ? name : `${name} ${script}`;
}

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
 * The stages of one `/song` from the interaction to the job shown as submitted, for the
 * interaction `interaction()` names (its id: every path its answers take holds
 * `emulator.<interaction id>.`): the first answer's callback; the task created at the service and
 * the acknowledgement posted; the job recorded as submitted, its submit entry finished and the
 * progress edit committed.
 */
export function songStages(interaction: () => string): Stage[] {
  const ours = (trip: Trip) => interaction() !== '' && trip.what.includes(`emulator.${interaction()}.`);
  return [
    { name: 'first answer', endsWith: (trip) => trip.kind === 'discord' && ours(trip) && trip.what.endsWith('/callback') },
    {
      name: 'enqueued and sent',
      endsWith: allOf(
        (trip) => trip.kind === 'service' && trip.what === 'POST /api/v1/producer/create',
        (trip) => trip.kind === 'discord' && ours(trip) && trip.what.startsWith('POST /webhooks/'),
      ),
    },
    {
      name: 'submitted and shown',
      endsWith: allOf(
        (trip) => trip.kind === 'postgres' && trip.what.startsWith('update "jobs" set "state"'),
        (trip) => trip.kind === 'redis' && trip.what === 'evalsha moveToFinished',
        after(
          (trip) => trip.kind === 'discord' && ours(trip) && trip.what.startsWith('PATCH ') && trip.what.endsWith('/messages/%40original'),
          (trip) => trip.kind === 'postgres' && trip.what === 'commit',
        ),
      ),
    },
  ];
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

  // A pipeline hands its commands over one by one, synchronously, with one stream object; they
  // leave in one write. They are recorded once the last is in, as one trip, unless one of them
  // is background work (the health record's MULTI).
  const sendCommand = Redis.prototype.sendCommand;
  const pipelines = new WeakMap<object, Array<{ what: string; background: boolean }>>();
  Redis.prototype.sendCommand = function (this: Redis, command, stream) {
    const what = redisWhat(command.name, command.args);
    const background =
      WAITS.has(command.name) || BACKGROUND_SCRIPTS.has(what.split(' ')[1] ?? '') || command.args.some((arg) => BACKGROUND_KEYS.test(String(arg)));
    const pipeline = (stream as { isPipeline?: boolean } | undefined)?.isPipeline === true ? stream! : undefined;
    if (pipeline === undefined) {
      if (!background) record({ kind: 'redis', what });
    } else {
      let commands = pipelines.get(pipeline);
      if (commands === undefined) {
        const sent: Array<{ what: string; background: boolean }> = [];
        pipelines.set(pipeline, (commands = sent));
        queueMicrotask(() => {
          if (!sent.some((each) => each.background)) record({ kind: 'redis', what: sent.map((each) => each.what).join('+') });
        });
      }
      commands.push({ what, background });
    }
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
