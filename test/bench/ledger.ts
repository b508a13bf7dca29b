/**
 * `npm run bench -- ledger`: how many reservations one guild's ledger takes per second.
 *
 * 50 clients reserve on ONE guild at once, each on its own connection, until the balance runs
 * out: every client goes on until it is refused, so the last reservations race for the last
 * credits. Each path first runs `PROBE_MS` on a guild of its own with credits to spare (its
 * warm-up), and the balance of the measured run is what that pace reserves in `MEASURE_SECONDS`,
 * so a slow path costs no more time than a fast one. Same Postgres, same 50 clients, one path
 * after the other:
 * - the floor: the simplest correct program doing the bot's grouped reservation with the same
 *   technique, pool and durability. Per account, one statement at a time; those that arrive
 *   while it runs wait, then go together, up to 32 per statement (as `reserveForJob` groups
 *   them): under the account's row lock, it takes the cost of as many as the balance covers, in
 *   order, writes one entry per reservation under its unique key, and sets the balance;
 * - for reference, one bare guarded `UPDATE … SET n = n - cost WHERE id = $1 AND n >= cost
 *   RETURNING n` per transaction, with no grouping (what the floor was before), and the same
 *   with `synchronous_commit = off`, which shows what waiting for the disk at each commit costs
 *   a row that every transaction takes in turn (not a path the bot takes);
 * - `reserveForJob` alone, in its own transaction (one ledger movement, key `job:<id>:debit`);
 * - the reservation as a request makes it (`submitRequest`): `reserveForJob` with the job row
 *   written by the same statement;
 * - the same where a daily cap applies: the member's spending check under their lock, then
 *   that statement, in one transaction.
 * After each ledger path: overspends (reservations beyond what the balance paid for), a
 * negative balance, a balance that is not the ledger's sum. All must be 0.
 * Targets: ≥ 2,000 reservations/s on the request's path, 0 overspend and a consistent ledger on
 * every path. The request's rate against the floor's is reported (a bot faster than its floor
 * would mean the floor is not the floor).
 *
 * Flags: `--probe-ms 2000`, `--measure-seconds 8` (smaller for a quick check).
 */
import { randomBytes, randomUUID } from 'node:crypto';
import { parseArgs } from 'node:util';
import { and, count, desc, eq } from 'drizzle-orm';
import pg from 'pg';
import { checkSpendingLimits, ensureGuild, getBalance, reserveForJob, verifyLedger } from '../../src/credits/index.js';
import { connectDatabase, type Database, type Executor } from '../../src/db/client.js';
import type { RowFor } from '../../src/db/insert-from.js';
import { runMigrations } from '../../src/db/migrate.js';
import { creditLedger, jobs } from '../../src/db/schema.js';
import { sleep } from '@music-bot/test-world';
import { printTable, ratio, round, startBenchWorld, summarize, target, writeResult, type Summary } from './support.js';
import { observeStatements } from '../support/sent-statements.js';

const CLIENTS = 50;
const COST = 10;
const { values: flags } = parseArgs({ options: { 'probe-ms': { type: 'string', default: '2000' }, 'measure-seconds': { type: 'string', default: '8' } }, strict: false });
const PROBE_MS = Number(flags['probe-ms']);
const MEASURE_SECONDS = Number(flags['measure-seconds']);
/** Reservations per statement at most, in the floor as in `reserveForJob`. */
const MOST_TOGETHER = 32;
/** Credits of a probe: more than any path spends in `PROBE_MS`. */
const PROBE_CREDITS = 100_000_000;
const TARGET_PER_SECOND = 2_000;

/** Thrown to roll the request's transaction back when the ledger refuses. */
class RefusedError extends Error {}

interface Counted {
  statements: number;
}

interface Phase {
  readonly reserved: number;
  readonly refused: number;
  readonly seconds: number;
  readonly perSecond: number;
  readonly latency: Summary;
  /** Statements sent to Postgres per attempt. */
  readonly statements: number;
  /** The bench process's own CPU time per attempt, in ms (building queries, parsing answers). */
  readonly clientCpuMs: number;
  /** Backends waiting on a lock, averaged over samples taken every 20 ms. */
  readonly lockWaiters: number;
  /** What the busy backends were doing (wait event, or on CPU, or waiting for this process), and on which statement: averages. */
  readonly backends: Record<string, number>;
}

/**
 * What each busy backend of the benchmark's database is doing: waiting on a lock (and which),
 * on I/O, running, or idle inside a transaction, i.e. waiting for this process to send its
 * next statement; with the statement's first word.
 */
const BACKENDS_QUERY = `
  select coalesce(wait_event_type || ':' || wait_event,
           case when state like 'idle in transaction%' then 'waiting for the client' else 'on CPU' end)
         || ' / ' || lower(coalesce(substring(query from '[A-Za-z]+'), '')) as what,
         count(*)::int as n
  from pg_stat_activity
  where datname = current_database() and pid <> pg_backend_pid() and state <> 'idle' and backend_type = 'client backend'
  group by 1`;

/** `attempt` answers whether it reserved; each client stops at its first refusal, or at `untilMs`. */
async function runClients(
  counted: Counted,
  sampler: pg.Pool,
  attempt: (client: number) => Promise<boolean>,
  untilMs = Number.POSITIVE_INFINITY,
): Promise<Phase> {
  const latencies: number[] = [];
  let reserved = 0;
  let refused = 0;
  const statementsBefore = counted.statements;
  const cpuBefore = process.cpuUsage();
  let sampling = true;
  let samples = 0;
  const backends = new Map<string, number>();
  const sampling$ = (async () => {
    while (sampling) {
      const { rows } = await sampler.query<{ what: string; n: number }>(BACKENDS_QUERY);
      samples += 1;
      for (const { what, n } of rows) backends.set(what, (backends.get(what) ?? 0) + n);
      if (!sampling) break;
      await sleep(20);
    }
  })();
  const started = performance.now();
  const clients = Promise.all(
    Array.from({ length: CLIENTS }, async (_, client) => {
      while (performance.now() - started < untilMs) {
        const begun = performance.now();
        const ok = await attempt(client);
        if (!ok) {
          refused += 1;
          return;
        }
        latencies.push(performance.now() - begun);
        reserved += 1;
      }
    }),
  ).then(() => ({ seconds: (performance.now() - started) / 1000, cpu: process.cpuUsage(cpuBefore) }));
  let ended: Awaited<typeof clients>;
  try {
    ended = await clients;
  } finally {
    sampling = false;
    await sampling$;
  }
  const { seconds, cpu } = ended;
  const attempts = Math.max(1, reserved + refused);
  return {
    reserved,
    refused,
    seconds: round(seconds),
    perSecond: Math.round(reserved / seconds),
    latency: summarize(latencies),
    statements: round((counted.statements - statementsBefore) / attempts, 1),
    clientCpuMs: round((cpu.user + cpu.system) / 1000 / attempts, 3),
    lockWaiters: round(
      [...backends].filter(([what]) => what.startsWith('Lock:')).reduce((sum, [, n]) => sum + n, 0) / Math.max(1, samples),
      1,
    ),
    backends: Object.fromEntries(
      [...backends]
        .map(([what, n]) => [what, round(n / Math.max(1, samples), 1)] as const)
        .filter(([, n]) => n >= 0.5)
        .sort((a, b) => b[1] - a[1]),
    ),
  };
}

interface Audit {
  readonly startingBalance: number;
  readonly finalBalance: number;
  readonly reservedCredits: number;
  /** Reservations beyond what the starting balance paid for: must be 0. */
  readonly overspend: number;
  readonly negativeBalance: boolean;
  /** The balance is not the sum of the guild's ledger, or not the start less what was reserved. */
  readonly ledgerMismatch: boolean;
  /** Reservations that answered ok but left no ledger row, or rows without an ok. */
  readonly unrecorded: number;
  /** Charges whose `balance_after` does not follow the one before (each must see the last). */
  readonly brokenChain: number;
}

async function audit(db: Database, guildId: string, startingBalance: number, reserved: number): Promise<Audit> {
  const finalBalance = (await getBalance(db, guildId)) ?? Number.NaN;
  const charges = await db
    .select({ balanceAfter: creditLedger.balanceAfter })
    .from(creditLedger)
    .where(and(eq(creditLedger.guildId, guildId), eq(creditLedger.kind, 'reserve')))
    .orderBy(desc(creditLedger.balanceAfter));
  const reservedCredits = reserved * COST;
  return {
    startingBalance,
    finalBalance,
    reservedCredits,
    overspend: Math.max(0, reservedCredits - startingBalance) / COST + Math.max(0, -finalBalance) / COST,
    negativeBalance: finalBalance < 0,
    ledgerMismatch: (await verifyLedger(db, guildId)).length > 0 || finalBalance !== startingBalance - reservedCredits,
    unrecorded: Math.abs(charges.length - reserved),
    brokenChain: charges.filter((charge, i) => charge.balanceAfter !== startingBalance - (i + 1) * COST).length,
  };
}

const consistent = (a: Audit, orphans = 0) =>
  !a.negativeBalance && !a.ledgerMismatch && a.unrecorded === 0 && a.brokenChain === 0 && orphans === 0 ? 'yes' : 'NO';

// Only its Postgres is used: the ledger is measured in this process, without the bot.
const world = await startBenchWorld();
const counted: Counted = { statements: 0 };
const database = connectDatabase(world.postgresUrl, { max: CLIENTS });
const floorPool = new pg.Pool({ connectionString: world.postgresUrl, max: CLIENTS });
for (const pool of [database.pool, floorPool]) observeStatements(pool, () => (counted.statements += 1));
const sampler = new pg.Pool({ connectionString: world.postgresUrl, max: 1 });
const { db } = database;

try {
  await runMigrations(world.postgresUrl);

  /**
   * Runs `path` for `PROBE_MS` on an account with credits to spare (the warm-up, and its
   * pace), then on a fresh account holding what that pace reserves in `MEASURE_SECONDS`,
   * until every client is refused. `open(credits)` makes an account and returns its attempt.
   */
  const probeThenMeasure = async (open: (credits: number) => Promise<(client: number) => Promise<boolean>>) => {
    const probe = await runClients(counted, sampler, await open(PROBE_CREDITS), PROBE_MS);
    const credits = Math.max(1_000, Math.round(probe.perSecond * MEASURE_SECONDS)) * COST;
    return { credits, phase: await runClients(counted, sampler, await open(credits)) };
  };

  let floorAccounts = 0;
  await floorPool.query('create table bench_floor (id int primary key, n int not null check (n >= 0))');
  await floorPool.query('create table bench_floor_entry (key text primary key, account int not null, amount int not null, balance_after int not null check (balance_after >= 0))');

  // ---- the floor: the grouped reservation, one guarded statement per group ----
  const GROUP_STATEMENT = `
    with account as (select n from bench_floor where id = $1 for no key update),
    taken as (
      select w.key, account.n - $2 * w.ord::int as balance_after
      from unnest($3::text[]) with ordinality as w(key, ord) cross join account
      where account.n - $2 * w.ord::int >= 0
    ), entry as (
      insert into bench_floor_entry (key, account, amount, balance_after)
      select key, $1, -$2, balance_after from taken
      returning key, balance_after
    ), moved as (
      update bench_floor set n = (select min(balance_after) from entry) where id = $1 and exists (select 1 from entry)
    )
    select key from entry`;
  let floorKeys = 0;
  const groupedAccount = async (credits: number) => {
    const id = floorAccounts++;
    await floorPool.query('insert into bench_floor values ($1, $2)', [id, credits]);
    // Those waiting while the account's statement runs; undefined when none runs.
    let lane: Array<{ key: string; resolve: (ok: boolean) => void; reject: (error: unknown) => void }> | undefined;
    const runGroup = async (group: NonNullable<typeof lane>) => {
      try {
        const { rows } = await floorPool.query<{ key: string }>(GROUP_STATEMENT, [id, COST, group.map((waiting) => waiting.key)]);
        const taken = new Set(rows.map((row) => row.key));
        for (const waiting of group) waiting.resolve(taken.has(waiting.key));
      } catch (error) {
        for (const waiting of group) waiting.reject(error);
      }
    };
    return (): Promise<boolean> => {
      const key = `${id}:${floorKeys++}`;
      return new Promise<boolean>((resolve, reject) => {
        if (lane) {
          lane.push({ key, resolve, reject });
          return;
        }
        const mine = (lane = []);
        void (async () => {
          await runGroup([{ key, resolve, reject }]);
          while (mine.length > 0) await runGroup(mine.splice(0, MOST_TOGETHER));
          lane = undefined;
        })();
      });
    };
  };
  const groupedAudit = async (credits: number, reserved: number) => {
    const id = floorAccounts - 1;
    const { rows } = await floorPool.query<{ n: number; entries: number }>(
      'select n, (select count(*)::int from bench_floor_entry where account = $1) as entries from bench_floor where id = $1',
      [id],
    );
    const left = rows[0]?.n ?? Number.NaN;
    return {
      overspend: Math.max(0, reserved * COST - credits) / COST,
      consistent: left === credits - reserved * COST && left >= 0 && rows[0]?.entries === reserved ? 'yes' : 'NO',
    };
  };
  const floor = await probeThenMeasure(groupedAccount);
  const floorChecks = await groupedAudit(floor.credits, floor.phase.reserved);

  // ---- for reference: one guarded UPDATE … RETURNING per transaction, no grouping ----
  const floorAccount = (options: { asynchronous: boolean }) => async (credits: number) => {
    const id = floorAccounts++;
    await floorPool.query('insert into bench_floor values ($1, $2)', [id, credits]);
    const update = 'update bench_floor set n = n - $1 where id = $2 and n >= $1 returning n';
    return async (): Promise<boolean> => {
      if (!options.asynchronous) return (await floorPool.query(update, [COST, id])).rowCount === 1;
      // One transaction all the same: the setting applies to this commit only.
      const client = await floorPool.connect();
      try {
        await client.query('begin');
        await client.query('set local synchronous_commit = off');
        const { rowCount } = await client.query(update, [COST, id]);
        await client.query('commit');
        return rowCount === 1;
      } finally {
        client.release();
      }
    };
  };
  const floorAudit = async (credits: number, reserved: number) => {
    const { rows } = await floorPool.query<{ n: number }>('select n from bench_floor where id = $1', [floorAccounts - 1]);
    const left = rows[0]?.n ?? Number.NaN;
    return { overspend: Math.max(0, reserved * COST - credits) / COST, consistent: left === credits - reserved * COST && left >= 0 ? 'yes' : 'NO' };
  };
  const single = await probeThenMeasure(floorAccount({ asynchronous: false }));
  const singleChecks = await floorAudit(single.credits, single.phase.reserved);
  const floorAsync = await probeThenMeasure(floorAccount({ asynchronous: true }));
  const floorAsyncChecks = await floorAudit(floorAsync.credits, floorAsync.phase.reserved);

  // ---- reserveForJob alone: one ledger movement in its own transaction ----
  const accounts: string[] = [];
  const ledgerAccount = (attempt: (guildId: string, client: number) => Promise<boolean>) => async (credits: number) => {
    const guildId = `bench-${randomUUID()}`;
    await ensureGuild(db, guildId, { startingCredits: credits });
    accounts.push(guildId);
    return (client: number) => attempt(guildId, client);
  };
  const movement = await probeThenMeasure(
    ledgerAccount(async (guildId, client) => {
      const result = await reserveForJob(db, { guildId, jobId: randomUUID(), userId: `member-${client}`, amount: COST });
      return result.ok;
    }),
  );
  const movementAudit = await audit(db, accounts.at(-1)!, movement.credits, movement.phase.reserved);

  // ---- the request's reservation, as submitRequest makes it: the job row written by the reservation's own statement ----
  const jobRow = (jobId: string, guildId: string, userId: string, now: Date): RowFor<typeof jobs> => ({
    table: jobs,
    values: {
      id: jobId,
      guildId,
      channelId: 'bench-channel',
      userId,
      kind: 'song',
      request: { kind: 'song', prompt: `bench ${jobId}` },
      cost: COST,
      webhookSecret: randomBytes(32).toString('hex'),
      createdAt: now,
      updatedAt: now,
    },
  });
  const reserveWithJob = async (executor: Executor, guildId: string, userId: string): Promise<boolean> => {
    const jobId = randomUUID();
    const reservation = await reserveForJob(executor, { guildId, jobId, userId, amount: COST, alongside: jobRow(jobId, guildId, userId, new Date()) });
    return reservation.ok;
  };
  const request = await probeThenMeasure(ledgerAccount((guildId, client) => reserveWithJob(db, guildId, `member-${client}`)));
  const requestGuild = accounts.at(-1)!;
  const requestAudit = await audit(db, requestGuild, request.credits, request.phase.reserved);
  const [requestJobRows] = await db.select({ n: count() }).from(jobs).where(eq(jobs.guildId, requestGuild));
  const requestOrphans = Math.abs((requestJobRows?.n ?? 0) - request.phase.reserved);

  // ---- the same where a daily cap applies: the member's cap checked under their lock, in one transaction ----
  const capped = await probeThenMeasure(
    ledgerAccount((guildId, client) => {
      const userId = `member-${client}`;
      return db
        .transaction(async (tx) => {
          const limits = await checkSpendingLimits(tx, { guildId, userId, roleIds: [], amount: COST, now: new Date() });
          if (!limits.ok) throw new Error(`refused by limits: ${limits.reason}`);
          // A refusal rolls the transaction back, as submitRequest does.
          if (!(await reserveWithJob(tx, guildId, userId))) throw new RefusedError();
          return true;
        })
        .catch((error: unknown) => {
          if (error instanceof RefusedError) return false;
          throw error;
        });
    }),
  );
  const cappedGuild = accounts.at(-1)!;
  const cappedAudit = await audit(db, cappedGuild, capped.credits, capped.phase.reserved);
  const [cappedJobRows] = await db.select({ n: count() }).from(jobs).where(eq(jobs.guildId, cappedGuild));
  const cappedOrphans = Math.abs((cappedJobRows?.n ?? 0) - capped.phase.reserved);

  const row = (path: string, measured: { credits: number; phase: Phase }, checks: { overspend: number; consistent: string }) => ({
    path,
    'paid for': measured.credits / COST,
    'reservations/s': measured.phase.perSecond,
    'p50 ms': measured.phase.latency.p50,
    'p99 ms': measured.phase.latency.p99,
    'rate / floor': ratio(measured.phase.perSecond, floor.phase.perSecond),
    'statements/attempt': measured.phase.statements,
    'client CPU ms/attempt': measured.phase.clientCpuMs,
    'lock waiters': measured.phase.lockWaiters,
    overspend: checks.overspend,
    consistent: checks.consistent,
  });
  printTable(`${CLIENTS} clients reserving ${COST} credits on one guild until its balance runs out`, [
    row(`floor: one guarded statement per group (≤ ${MOST_TOGETHER})`, floor, floorChecks),
    row('(one bare UPDATE … RETURNING each, no grouping)', single, singleChecks),
    row('(the same, synchronous_commit off)', floorAsync, floorAsyncChecks),
    row('reserveForJob alone', movement, { overspend: movementAudit.overspend, consistent: consistent(movementAudit) }),
    row("the request's reservation (its job row in the same statement)", request, { overspend: requestAudit.overspend, consistent: consistent(requestAudit, requestOrphans) }),
    row('the same, a daily cap checked first (one transaction)', capped, { overspend: cappedAudit.overspend, consistent: consistent(cappedAudit, cappedOrphans) }),
  ]);
  printTable(
    'what the backends were doing (average number of backends; wait event / statement)',
    [
      ['floor', floor],
      ['reserveForJob alone', movement],
      ["the request's reservation", request],
      ['with a daily cap', capped],
    ].map(([path, measured]) => {
      const { phase } = measured as { phase: Phase };
      return { path: path as string, backends: Object.entries(phase.backends).slice(0, 5).map(([what, n]) => `${n} ${what}`).join('; ') };
    }),
  );
  const noOverspend =
    requestAudit.overspend === 0 &&
    cappedAudit.overspend === 0 &&
    movementAudit.overspend === 0 &&
    floorChecks.overspend === 0 &&
    consistent(requestAudit, requestOrphans) === 'yes' &&
    consistent(cappedAudit, cappedOrphans) === 'yes' &&
    consistent(movementAudit) === 'yes' &&
    floorChecks.consistent === 'yes';
  const requestToFloor = ratio(request.phase.perSecond, floor.phase.perSecond);
  console.log(`\nthe request's path: ${request.phase.perSecond}/s, ${requestToFloor}× the grouped floor (${floor.phase.perSecond}/s)`);
  const targets = [
    target("reservations/s on the request's path", request.phase.perSecond, `≥ ${TARGET_PER_SECOND}`, request.phase.perSecond >= TARGET_PER_SECOND),
    target('overspend and inconsistencies, every path', noOverspend ? 0 : 'found', '0', noOverspend),
  ];
  await writeResult('ledger', {
    workload: {
      clients: CLIENTS,
      guilds: 1,
      cost: COST,
      probeMs: PROBE_MS,
      measureSeconds: MEASURE_SECONDS,
      stop: 'the balance pays for what the probe\'s pace reserves in measureSeconds; each client reserves until it is refused',
    },
    target: `≥ ${TARGET_PER_SECOND} reservations/s on the request's path, overspend 0`,
    floor: `the grouped reservation done simply: per account one statement at a time, those waiting going together (≤ ${MOST_TOGETHER} per statement), each statement taking under the row lock as many as the balance covers and writing one entry per reservation under its unique key; same Postgres, same ${CLIENTS}-connection pool, same durability (synchronous commit)`,
    results: {
      floor: { paidFor: floor.credits / COST, ...floor.phase },
      floorUngrouped: { paidFor: single.credits / COST, ...single.phase },
      floorSynchronousCommitOff: { paidFor: floorAsync.credits / COST, ...floorAsync.phase },
      reserveForJob: { paidFor: movement.credits / COST, ...movement.phase },
      request: { paidFor: request.credits / COST, ...request.phase },
      requestWithDailyCap: { paidFor: capped.credits / COST, ...capped.phase },
    },
    audits: { floor: floorChecks, floorUngrouped: singleChecks, reserveForJob: movementAudit, request: { ...requestAudit, orphanJobs: requestOrphans }, requestWithDailyCap: { ...cappedAudit, orphanJobs: cappedOrphans } },
    ratios: {
      requestToFloor,
      floorToUngroupedFloor: ratio(floor.phase.perSecond, single.phase.perSecond),
      reserveForJobToFloor: ratio(movement.phase.perSecond, floor.phase.perSecond),
      requestP99ToFloorP99: ratio(request.phase.latency.p99, floor.phase.latency.p99),
      floorSynchronousCommitOffToUngrouped: ratio(floorAsync.phase.perSecond, single.phase.perSecond),
    },
    seconds: round(performance.now() / 1000, 1),
  }, targets);
} finally {
  await sampler.end().catch(() => {});
  await floorPool.end().catch(() => {});
  await database.close().catch(() => {});
  await world.close();
}

