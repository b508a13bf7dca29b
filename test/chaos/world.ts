/**
 * The world a chaos scenario runs in: the test world (packages/test-world) with the real bot as
 * four processes (`ROLE=gateway`, two `ROLE=worker`, `ROLE=http`) on one embedded Postgres (or a
 * database the caller gives) and one persistent redis-server, with the Discord emulator and the music-API simulator around
 * them. Every part can be taken away and given back: a process killed or stopped and started
 * again, Redis flushed or stopped, Postgres stopped. Every line the processes log is kept, and
 * every exit the world did not ask for is counted as a crash.
 *
 * `audit()` says what became of every command, from three records that do not share code: the
 * bot's Postgres (jobs and ledger), the simulator's tasks (charges and refunds) and the
 * messages the emulator received.
 */
import path from 'node:path';
import pg from 'pg';
import type { DiscordEmulator, DiscordEmulatorOptions, EmulatorMessage, InteractionHandle } from '@music-bot/discord-emulator';
import type { MusicApiSim, MusicApiSimOptions } from '@music-bot/music-api-sim';
import { populateGuilds, startWorld, waitFor, type BotProcess, type Crash, type Place } from '@music-bot/test-world';
import { findFreePort } from '../../src/embedded/free-port.js';
import { registerCommands } from '../support/register-commands.js';
import { answerOf, type Answer } from './answers.js';
import { appendOnlyMark, childrenOf, cutAppendOnlyFile, pidFromFile, signalAll, waitGone, type AppendOnlyMark } from './power.js';

export type { BotProcess, Crash } from '@music-bot/test-world';

export const PROCESS_NAMES = ['gateway', 'worker-1', 'worker-2', 'http'] as const;
export type ProcessName = (typeof PROCESS_NAMES)[number] | `extra-${number}`;
const ROLE_OF: Record<(typeof PROCESS_NAMES)[number], 'gateway' | 'worker' | 'http'> = { gateway: 'gateway', 'worker-1': 'worker', 'worker-2': 'worker', http: 'http' };

export interface ChaosWorldOptions {
  readonly guilds?: number;
  readonly membersPerGuild?: number;
  readonly startingCredits?: number;
  readonly sim?: Partial<MusicApiSimOptions>;
  readonly emulator?: Partial<DiscordEmulatorOptions>;
  /** Extra environment for every bot process. */
  readonly env?: Record<string, string>;
  /** Webhooks on (PUBLIC_URL set to the http process). @defaultValue true */
  readonly webhooks?: boolean;
  /**
   * A migrated database of the caller's, instead of a Postgres server of the world's own. Such a
   * world cannot stop or cut its Postgres: `postgres.stop`, `postgres.start` and `powerCut` reject.
   */
  readonly postgres?: { readonly url: string };
}

/** What became of the commands a scenario sent; every figure but `jobs` must be 0. */
export interface Audit {
  /** Jobs the bot recorded. */
  readonly jobs: number;
  readonly delivered: number;
  readonly refunded: number;
  /**
   * From Discord's record: a command whose first answer accepted it, for which Discord holds
   * neither its result nor its refund notice. Beside those, a job the bot never settled (for
   * commands the world did not send through `song`).
   */
  readonly lost: number;
  /** A job whose result (or whose refund notice) reached Discord more than once. */
  readonly duplicated: number;
  /** From the simulator's record: a job for which the service made more than one task. */
  readonly duplicatedUpstream: number;
  /**
   * Jobs refunded because their submission was unconfirmed (a create that may or may not have
   * reached the service: a process killed during the call, a 5xx or a reset after sending). Not
   * a failure: the member paid nothing, and may still get the song free if the task turns up.
   */
  readonly uncertain: number;
  /** Credits the service kept for the tasks of `uncertain` jobs: the price of not sending twice. */
  readonly uncertainKept: number;
  /** A job with more than one charge or refund, or charged and refunded while it succeeded (but for an `uncertain` one, delivered free). */
  readonly doubleCharged: number;
  /**
   * Credits that do not add up: ledger against balances, the guilds' spend against the
   * simulator's charges, and the packs Discord sold against the credits they put in.
   */
  readonly ledgerDrift: number;
  /** Credit packs Discord sold (the emulator's entitlements), and of them refunded. */
  readonly purchases: number;
  readonly purchaseRefunds: number;
  /** What each non-zero figure is made of, for the report. */
  readonly details: string[];
}

export interface ChaosWorld {
  readonly sim: MusicApiSim;
  readonly emulator: DiscordEmulator;
  /** A pool on the bot's database, for audits (reconnects by itself after an outage). */
  readonly db: pg.Pool;
  readonly places: readonly Place[];
  readonly httpUrl: string;
  /** Where the gateway and each worker serve their own /metrics, /healthz and /readyz (METRICS_PORT). */
  readonly metricsUrls: Readonly<Partial<Record<ProcessName, string>>>;
  /** The values that must never appear in a log line or a request to Discord. */
  readonly secrets: readonly string[];
  readonly processes: Readonly<Record<(typeof PROCESS_NAMES)[number], BotProcess>>;
  /**
   * One more process of a role beside the four (a second gateway, as when an old instance is
   * still running during a deploy); stopped with the world.
   */
  spawnExtra(role: 'gateway' | 'worker' | 'http'): Promise<BotProcess>;
  readonly redis: { stop(): Promise<void>; start(): Promise<void>; flushAll(): Promise<void> };
  /** The world's own Postgres server; rejects when the world was given a database. */
  readonly postgres: { stop(): Promise<void>; start(): Promise<void> };
  /**
   * A power cut: the bot's processes, redis-server and Postgres (postmaster, backends and its
   * helpers) stopped in one instant and killed (SIGKILL); then Redis's append-only file is cut
   * back by `redisLostMs` of writes, what a disk under `appendfsync everysec` may not have had
   * yet. Postgres needs no such cut: with `synchronous_commit = on` every commit it answered is
   * on disk. `startAll` brings everything back.
   */
  powerCut(options?: { redisLostMs?: number }): Promise<PowerCut>;
  /** Postgres (crash recovery) and redis-server (its append-only file) where they are down, and the four processes, on the same data and ports. */
  startAll(): Promise<void>;
  /** Every line any bot process wrote, stdout and stderr. */
  logLines(): readonly string[];
  crashes(): readonly Crash[];
  /**
   * `/song` from a member. The prompt must start with `chaos <scenario>` and be the command's
   * own: the simulator's tasks are matched to jobs by it.
   */
  song(place: Place, prompt: string): InteractionHandle;
  /**
   * Waits until every job has settled (or `timeoutMs` passed), then audits the jobs whose
   * prompt starts with `prefix` (all of them without one) and every guild's balance.
   */
  settleAndAudit(options?: { timeoutMs?: number; prefix?: string }): Promise<Audit>;
  close(): Promise<void>;
}

export interface PowerCut {
  /** Postgres processes killed: the postmaster and its children. */
  readonly postgresProcesses: number;
  /** Bytes of Redis's append-only file dropped; undefined when none could be (an AOF rewrite in the window). */
  readonly redisLostBytes: number | undefined;
}

const SETTLED_STATES = new Set(['succeeded', 'failed', 'timed_out', 'cancelled']);

/** The credit pack the chaos world sells (CREDIT_PACKS), bought by the purchases scenario. */
export const CHAOS_PACK = { skuId: '1400000000000000001', credits: 100 } as const;
/** The server subscriptions it sells (SUBSCRIPTION_ALLOWANCES): two, so that a server can hold both. */
export const CHAOS_PLANS = { large: { skuId: '1400000000000000002', credits: 300 }, small: { skuId: '1400000000000000003', credits: 200 } } as const;

export async function startChaosWorld(options: ChaosWorldOptions = {}): Promise<ChaosWorld> {
  const base = await startWorld({
    ...(options.postgres && { postgres: { url: options.postgres.url } }),
    // Persistent, as a production Redis is: a restart keeps the queues (a FLUSHALL does not).
    redis: { persistent: true },
    sim: { taskMs: 1_500, concurrencyLimit: 1_000_000, ...options.sim },
    emulator: {
      // The OpenAPI check only records findings, which no scenario reads. Its validators compile
      // on first use, seconds of CPU in the thread the emulator shares with the scenarios, and an
      // interaction's answer arriving meanwhile waited behind them and was refused as late.
      validateRequests: false,
      ...options.emulator,
      skus: [
        { id: CHAOS_PACK.skuId, name: `${CHAOS_PACK.credits} credits`, type: 'consumable' },
        ...Object.entries(CHAOS_PLANS).map(([name, plan]) => ({ id: plan.skuId, name: `${name} plan`, type: 'subscription' as const })),
        ...(options.emulator?.skus ?? []),
      ],
    },
  });
  const cleanups: Array<() => Promise<unknown>> = [() => base.close()];
  const close = async () => {
    for (const cleanup of cleanups) await cleanup().catch(() => {});
  };
  try {
    const { sim, emulator, httpUrl } = base;
    // Redis embedded, as asked: the world started it. Postgres too, unless the caller gave a database.
    const postgres = base.postgres ?? notOurs;
    const redis = base.redis!;
    const places = populateGuilds(emulator, options.guilds ?? 4, options.membersPerGuild ?? 5, 'Chaos');

    const db = new pg.Pool({ connectionString: base.postgresUrl, max: 4 });
    db.on('error', () => {});
    cleanups.unshift(() => db.end());
    // Where postmaster.pid is (run as root, the cluster may be kept elsewhere than postgres.dataDir).
    const pgDataDir = base.postgres && (await db.query<{ data_directory: string }>('show data_directory')).rows[0]!.data_directory;
    // How far Redis's append-only file had grown, every 100 ms over the last 5 s: a power cut
    // keeps the file as it was up to a second before (appendfsync everysec).
    const appendOnlyMarks: AppendOnlyMark[] = [];
    const sampler = setInterval(() => {
      void appendOnlyMark(redis.dataDir).then((mark) => {
        if (!mark) return;
        appendOnlyMarks.push(mark);
        appendOnlyMarks.splice(0, Math.max(0, appendOnlyMarks.length - 50));
      });
    }, 100);
    sampler.unref();
    cleanups.unshift(async () => clearInterval(sampler));

    // On top of the world's environment (Discord, the music service, Postgres, Redis, HTTP_PORT, DATA_DIR).
    const env: Record<string, string> = {
      ATTACH_AUDIO: 'false',
      ...(options.webhooks !== false && { PUBLIC_URL: httpUrl }),
      LOG_LEVEL: 'info',
      STARTING_CREDITS: String(options.startingCredits ?? 1_000_000),
      EXPECTED_SECONDS: 'song=1.5,lyrics=1.5,video=1.5,upload=1.5,download=1.5,voice=1.5,persona_song=1.5',
      POLL_INTERVAL_MIN_MS: '250',
      POLL_INTERVAL_MAX_MS: '2000',
      // The simulator answers in milliseconds, so 5 s is a hang: a hung call (the unreliable-service
      // scenario's) ends in seconds rather than the production 30 s, and no scenario's calls come near it.
      MUSIC_API_TIMEOUT_MS: '5000',
      CREDIT_PACKS: `${CHAOS_PACK.skuId}:${CHAOS_PACK.credits}`,
      SUBSCRIPTION_ALLOWANCES: Object.values(CHAOS_PLANS).map((plan) => `${plan.skuId}:${plan.credits}`).join(','),
      PACK_CLAIM_MINUTES: '0',
      ENTITLEMENT_CHECK_SECONDS: '5',
      ...options.env,
    };
    await registerCommands(base.env(env));

    const lines: string[] = [];
    const crashes: Crash[] = [];
    const botProcess = (name: ProcessName, role: 'gateway' | 'worker' | 'http', metricsPort?: number) =>
      base.bot({
        name,
        env: { ...env, ROLE: role, ...(metricsPort && { METRICS_PORT: String(metricsPort) }) },
        onLine: (line) => lines.push(`${name}: ${line}`),
        onCrash: (crash) => crashes.push(crash),
      });
    // The gateway and the workers serve their own /metrics, /healthz and /readyz (METRICS_PORT).
    const metricsPorts = Object.fromEntries(
      await Promise.all(PROCESS_NAMES.filter((name) => ROLE_OF[name] !== 'http').map(async (name) => [name, await findFreePort()] as const)),
    ) as Partial<Record<ProcessName, number>>;
    const processes = Object.fromEntries(PROCESS_NAMES.map((name) => [name, botProcess(name, ROLE_OF[name], metricsPorts[name])])) as Record<
      (typeof PROCESS_NAMES)[number],
      BotProcess
    >;
    const extras: BotProcess[] = [];
    // The http role first: the gateway's first jobs may finish by webhook before a worker is up.
    const startProcesses = async () => {
      await processes.http.start();
      await Promise.all([processes['worker-1'].start(), processes['worker-2'].start()]);
      await processes.gateway.start();
      await emulator.waitForBotReady(60_000);
    };
    await startProcesses();

    const acceptedJobIds = new Map<string, string>();
    // Every /song sent through `song`, and its first answer as Discord recorded it once it came.
    const sent: SentSong[] = [];
    // Every message the bot made, as last seen (kept after a delete: a member saw it).
    const messages = new Map<string, EmulatorMessage>();
    cleanups.unshift(async () => unsubscribe());
    const unsubscribe = emulator.onMessage((message, change) => {
      if (change !== 'delete') messages.set(message.id, message);
    });
    const world: ChaosWorld = {
      sim,
      emulator,
      db,
      places,
      httpUrl,
      metricsUrls: Object.fromEntries(Object.entries(metricsPorts).map(([name, port]) => [name, `http://127.0.0.1:${port}`])),
      // As the bot got them.
      secrets: [emulator.botToken, base.env().MUSIC_API_KEY!],
      processes,
      async spawnExtra(role) {
        const extra = botProcess(`extra-${extras.length + 1}`, role);
        extras.push(extra);
        await extra.start();
        return extra;
      },
      redis,
      postgres,
      logLines: () => lines,
      crashes: () => crashes,
      song(place, prompt) {
        const sentAt = Date.now();
        const handle = emulator.runCommand({ ...place, name: 'song', options: { prompt } });
        const song: SentSong = { prompt, handle, channelId: place.channelId, answer: undefined };
        sent.push(song);
        void answerOf({ prompt, handle, sentAt, duringOutage: false }, 120_000).then((answer) => (song.answer = answer));
        // The member's private acknowledgement names the job: an accepted command must end in a job.
        void handle
          .waitForFollowUp((message) => JOB_ID.test(message.content ?? ''), 120_000)
          .then((message) => acceptedJobIds.set(JOB_ID.exec(message.content ?? '')![1]!, prompt))
          .catch(() => {});
        return handle;
      },
      async settleAndAudit({ timeoutMs = 120_000, prefix = '' } = {}) {
        await waitFor(
          'every job to settle',
          async () => {
            const { rows } = await db.query<{ open: number }>(
              // Ended, and its result or failure posted (a refund notice too: it is what the member gets).
              `select count(*)::int as open from jobs where state not in ('succeeded', 'failed', 'timed_out', 'cancelled') or (state in ('succeeded', 'failed', 'timed_out') and delivery_state = 'pending')`,
            );
            return rows[0]!.open === 0;
          },
          { timeoutMs, everyMs: 250 },
        ).catch(() => {});
        // Purchases settle when every pack bought is in a server and every refund taken back.
        await waitFor('every purchase to settle', async () => (await auditPurchases(db, emulator)).drift === 0, { timeoutMs: Math.min(timeoutMs, 60_000), everyMs: 500 }).catch(() => {});
        return audit({ db, sim, emulator, messages, accepted: acceptedJobIds, sent, prefix });
      },
      async powerCut({ redisLostMs = 0 } = {}) {
        if (pgDataDir === undefined) throw notOursError();
        const cutAt = Date.now();
        const postmaster = await pidFromFile(path.join(pgDataDir, 'postmaster.pid'));
        const redisPid = await pidFromFile(path.join(redis.dataDir, 'redis.pid'));
        const bots = [...PROCESS_NAMES.map((name) => processes[name]), ...extras].filter((bot) => bot.running);
        const servers = [postmaster, redisPid].filter((pid): pid is number => pid !== undefined);
        // The instant of the cut: nothing runs on, and the postmaster forks no more, while its children are found.
        signalAll([...servers, ...bots.map((bot) => bot.pid!)], 'SIGSTOP');
        const backends = postmaster === undefined ? [] : await childrenOf(postmaster);
        const children = [...backends, ...(redisPid === undefined ? [] : await childrenOf(redisPid))];
        signalAll([...servers, ...children], 'SIGKILL');
        await Promise.all(bots.map((bot) => bot.kill()));
        await waitGone([...servers, ...children]);
        // Both are gone already: this only lets their handles go, so that `start` starts them again.
        await Promise.all([postgres.stop(), redis.stop()]);
        // What the disk had: the file as it was `redisLostMs` before the cut.
        const mark = appendOnlyMarks.findLast((sample) => sample.at <= cutAt - redisLostMs);
        const redisLostBytes = mark ? await cutAppendOnlyFile(redis.dataDir, mark) : undefined;
        return { postgresProcesses: postmaster === undefined ? 0 : 1 + backends.length, redisLostBytes };
      },
      async startAll() {
        await Promise.all([postgres.start(), redis.start()]);
        await startProcesses();
      },
      close,
    };
    return world;
  } catch (error) {
    await close();
    throw error;
  }
}

/** A Postgres the world did not start: not the world's to stop. */
const notOurs = {
  stop: () => Promise.reject(notOursError()),
  start: () => Promise.reject(notOursError()),
};
function notOursError(): Error {
  return new Error('this chaos world runs on a database it was given: start it without `postgres` to stop or cut its Postgres');
}

const JOB_ID = /Job `([0-9a-f-]{36})`/;
const JOB_ID_ANYWHERE = /([0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12})/;

/** A /song the world sent, and its first answer as Discord recorded it (undefined until there was one). */
interface SentSong {
  readonly prompt: string;
  readonly handle: InteractionHandle;
  readonly channelId: string;
  answer: Answer | undefined;
}

interface JobRow {
  id: string;
  guild_id: string;
  state: string;
  delivery_state: string;
  cost: number;
  prompt: string | null;
  uncertain: boolean;
  charges: number;
  refunds: number;
  net: number;
}

interface AuditRecords {
  readonly db: pg.Pool;
  readonly sim: MusicApiSim;
  readonly emulator: DiscordEmulator;
  /** Every message the bot made, as last seen, deleted ones too. */
  readonly messages: ReadonlyMap<string, EmulatorMessage>;
  /** Job ids named by the private acknowledgements, and their prompts. */
  readonly accepted: ReadonlyMap<string, string>;
  readonly sent: readonly SentSong[];
  readonly prefix: string;
}

/** Discord's colours of a result and of a failure (its refund notice) in the bot's embeds. */
const FAILURE_COLOUR = 0xed4245;

/**
 * The job a message gives its final word on, and whether that word is a failure (the refund
 * notice) or a result: an embed whose footer names the job, but not a progress embed ("Making
 * your …"); or a private guild's notice in the channel, which names the job in its text.
 */
function finalWordOf(message: EmulatorMessage): { jobId: string; failure: boolean } | undefined {
  for (const embed of message.embeds ?? []) {
    const id = JOB_ID_ANYWHERE.exec(embed.footer?.text ?? '')?.[1];
    if (id && !(embed.title ?? '').startsWith('Making your')) return { jobId: id, failure: embed.color === FAILURE_COLOUR };
  }
  if (!message.ephemeral && !JOB_ID.test(message.content ?? '')) {
    const id = JOB_ID_ANYWHERE.exec(message.content ?? '')?.[1];
    if (id) return { jobId: id, failure: false };
  }
  return undefined;
}

async function audit({ db, sim, emulator, messages, accepted, sent, prefix }: AuditRecords): Promise<Audit> {
  const details: string[] = [];
  const { rows: jobs } = await db.query<JobRow>(
    `select j.id, j.guild_id, j.state, j.delivery_state, j.cost, j.request->>'prompt' as prompt,
       (j.submit_uncertain_at is not null or j.error->>'kind' = 'unconfirmed_submission'
         or coalesce(bool_or(l.reason = 'unconfirmed_submission'), false)) as uncertain,
       count(l.id) filter (where l.kind = 'reserve')::int as charges,
       count(l.id) filter (where l.kind in ('refund', 'release'))::int as refunds,
       coalesce(sum(l.amount), 0)::int as net
     from jobs j left join credit_ledger l on l.job_id = j.id
     where starts_with(coalesce(j.request->>'prompt', ''), $1)
     group by j.id`,
    [prefix],
  );

  // Lost, from Discord's record: every command whose first answer accepted it must have, in
  // what Discord holds now, its result or its refund notice: in its own reply or follow-ups, or
  // in the channel for a job its messages name.
  const lostJobs = new Set<string>();
  let lost = 0;
  const finalsInChannels = new Map<string, Set<string>>();
  for (const channelId of new Set(sent.map((song) => song.channelId))) {
    for (const message of emulator.channelMessages(channelId)) {
      const word = finalWordOf(message);
      if (word) finalsInChannels.set(channelId, (finalsInChannels.get(channelId) ?? new Set()).add(word.jobId));
    }
  }
  for (const song of sent) {
    if (!song.prompt.startsWith(prefix) || song.answer?.outcome !== 'accepted') continue;
    const own = [song.handle.original(), ...song.handle.followUps].filter((message): message is EmulatorMessage => message !== undefined);
    if (own.some((message) => finalWordOf(message) !== undefined)) continue;
    // The jobs Discord's record ties to this command: named by its acknowledgement (seen when it came) or its progress.
    const named = new Set<string>();
    for (const message of own) {
      const text = [message.content ?? '', ...(message.embeds ?? []).map((embed) => embed.footer?.text ?? '')].join(' ');
      for (const match of text.matchAll(new RegExp(JOB_ID_ANYWHERE.source, 'g'))) named.add(match[1]!);
    }
    for (const [jobId, prompt] of accepted) if (prompt === song.prompt) named.add(jobId);
    if ([...named].some((jobId) => finalsInChannels.get(song.channelId)?.has(jobId))) continue;
    lost += 1;
    for (const jobId of named) lostJobs.add(jobId);
    // What the bot believes of it, for the reader: Discord's record decides.
    const believed = [...named].map((jobId) => {
      const job = jobs.find((row) => row.id === jobId);
      return `job ${jobId}: ${job ? `${job.state}/${job.delivery_state} in the bot's record` : 'no row in the bot'}`;
    });
    details.push(`lost: "${song.prompt}" was accepted ("${song.answer.text.slice(0, 60)}"), but Discord holds neither its result nor its refund notice (${believed.join('; ') || 'no job named'})`);
  }
  // The bot's record, for commands not sent through `song`: a job that never settled.
  for (const job of jobs) {
    const settled = SETTLED_STATES.has(job.state) && !(job.state !== 'cancelled' && job.delivery_state === 'pending');
    if (settled || lostJobs.has(job.id)) continue;
    lost += 1;
    details.push(`lost: job ${job.id} is still ${job.state}/${job.delivery_state}`);
  }

  // The simulator's tasks, matched to jobs by the job id in their webhook URL, or without one by
  // their prompt (each command's prompt is its own).
  type SimTask = { cost: number; refunded: boolean; state: string; taskId: string };
  const tasksByJob = new Map<string, SimTask[]>();
  const tasksByPrompt = new Map<string, SimTask[]>();
  const jobIds = new Set(jobs.map((job) => job.id));
  for (const task of sim.listTasks()) {
    // The prompt travels in a field whose name depends on the task type (`sound` for a song).
    const prompt = Object.values(task.body).find((value): value is string => typeof value === 'string' && value.startsWith('chaos '));
    if (prompt === undefined || !prompt.startsWith(prefix)) continue;
    const entry = { cost: task.cost, refunded: task.refunded, state: task.state, taskId: task.taskId };
    const jobId = task.webhookUrl === undefined ? undefined : JOB_ID_ANYWHERE.exec(task.webhookUrl)?.[1];
    if (jobId === undefined) tasksByPrompt.set(prompt, [...(tasksByPrompt.get(prompt) ?? []), entry]);
    else tasksByJob.set(jobId, [...(tasksByJob.get(jobId) ?? []), entry]);
  }

  // A job's final word, by message: edits of one message are one. Deleted messages count (a
  // member saw them). A refund notice and then the song (an uncertain job delivered free) are two words.
  const finals = new Map<string, { results: Set<string>; notices: Set<string> }>();
  for (const message of messages.values()) {
    const word = finalWordOf(message);
    if (!word) continue;
    const words = finals.get(word.jobId) ?? { results: new Set(), notices: new Set() };
    (word.failure ? words.notices : words.results).add(message.id);
    finals.set(word.jobId, words);
  }

  let duplicated = 0;
  let duplicatedUpstream = 0;
  let doubleCharged = 0;
  let ledgerDrift = 0;
  let delivered = 0;
  let refunded = 0;
  let uncertain = 0;
  let uncertainKept = 0;
  for (const job of jobs) {
    const tasks = [...(tasksByJob.get(job.id) ?? []), ...(job.prompt === null ? [] : (tasksByPrompt.get(job.prompt) ?? []))];
    const words = finals.get(job.id) ?? { results: new Set(), notices: new Set() };
    // Refunded because nobody could know whether the service took it: the song may still come, free.
    const unconfirmed = job.uncertain && job.refunds > 0;
    if (job.delivery_state === 'delivered') delivered += 1;
    if (job.refunds > 0) refunded += 1;
    if (words.results.size > 1 || words.notices.size > 1 || (words.results.size > 0 && words.notices.size > 0 && !unconfirmed)) {
      duplicated += 1;
      details.push(`duplicated: job ${job.id}: ${words.results.size} messages with its result, ${words.notices.size} with its failure`);
    }
    if (tasks.length > 1) {
      duplicatedUpstream += 1;
      details.push(`duplicated upstream: job ${job.id}: ${tasks.length} upstream tasks (${tasks.map((task) => task.taskId).join(', ')})`);
    }
    const chargedWrongly =
      job.charges > 1 ||
      job.refunds > 1 ||
      (job.state === 'succeeded' && job.refunds > 0 && !unconfirmed) ||
      (job.state !== 'succeeded' && SETTLED_STATES.has(job.state) && job.net !== 0);
    if (chargedWrongly) {
      doubleCharged += 1;
      details.push(`double-charged: job ${job.id} (${job.state}): ${job.charges} charges, ${job.refunds} refunds, net ${job.net}`);
    }
    // The guild paid what the service kept: its net charge for the job's tasks.
    const simNet = tasks.reduce((sum, task) => sum + (task.refunded ? 0 : task.cost), 0);
    if (unconfirmed) {
      uncertain += 1;
      uncertainKept += simNet;
      // The guild paid nothing, whatever the service kept.
      if (job.net !== 0) {
        ledgerDrift += Math.abs(job.net);
        details.push(`drift: job ${job.id} (${job.state}) was refunded as unconfirmed, yet the guild paid ${-job.net}`);
      }
    } else if (SETTLED_STATES.has(job.state) && -job.net !== simNet) {
      ledgerDrift += Math.abs(-job.net - simNet);
      details.push(`drift: job ${job.id} (${job.state}): the guild paid ${-job.net}, the service kept ${simNet}`);
    }
  }
  // A task made for a job the bot has no row of: the service kept credits no guild paid.
  for (const [jobId, tasks] of tasksByJob) {
    if (jobIds.has(jobId)) continue;
    const kept = tasks.reduce((sum, task) => sum + (task.refunded ? 0 : task.cost), 0);
    ledgerDrift += kept;
    details.push(`drift: the service made ${tasks.length} task(s) for job ${jobId}, which the bot has no row of (kept ${kept})`);
  }

  const bought = await auditPurchases(db, emulator);
  ledgerDrift += bought.drift;
  details.push(...bought.details);

  const { rows: balances } = await db.query<{ id: string; balance: number; entries: number }>(`
    select g.id, g.balance, coalesce((select sum(amount) from credit_ledger l where l.guild_id = g.id), 0)::int as entries from guilds g`);
  for (const guild of balances) {
    if (guild.balance !== guild.entries) {
      ledgerDrift += Math.abs(guild.balance - guild.entries);
      details.push(`drift: guild ${guild.id}: balance ${guild.balance}, ledger says ${guild.entries}`);
    }
  }
  return {
    jobs: jobs.length,
    delivered,
    refunded,
    lost,
    duplicated,
    duplicatedUpstream,
    doubleCharged,
    ledgerDrift,
    uncertain,
    uncertainKept,
    purchases: bought.purchases,
    purchaseRefunds: bought.refunds,
    details,
  };
}

/**
 * Discord's record of the packs sold (the emulator's entitlements) against the ledger: each pack
 * bought put its credits in once; each refunded one took back what the balance allowed, the rest
 * recorded as unrecovered. Any other sum is drift, and so is a ledger purchase Discord never sold.
 */
async function auditPurchases(db: pg.Pool, emulator: DiscordEmulator): Promise<{ purchases: number; refunds: number; drift: number; details: string[] }> {
  const packs = emulator.entitlements().filter((entitlement) => entitlement.sku_id === CHAOS_PACK.skuId);
  const { rows } = await db.query<{ id: string; purchased: number; purchases: number; reversed: number; unrecovered: number }>(`
    select substring(l.key from '^entitlement:(\\d+)') as id,
      coalesce(sum(l.amount) filter (where l.kind = 'purchase'), 0)::int as purchased,
      count(*) filter (where l.kind = 'purchase')::int as purchases,
      coalesce(-sum(l.amount) filter (where l.kind = 'reversal'), 0)::int as reversed,
      coalesce(max(e.unrecovered_credits), 0)::int as unrecovered
    from credit_ledger l left join entitlements e on e.id = substring(l.key from '^entitlement:(\\d+)')
    where l.kind in ('purchase', 'reversal')
    group by 1`);
  const ledger = new Map(rows.map((row) => [row.id, row]));
  const details: string[] = [];
  let drift = 0;
  let refunds = 0;
  for (const pack of packs) {
    const row = ledger.get(pack.id) ?? { purchased: 0, purchases: 0, reversed: 0, unrecovered: 0 };
    ledger.delete(pack.id);
    if (row.purchases > 1) details.push(`drift: pack ${pack.id} was credited ${row.purchases} times`);
    if (pack.deleted) {
      refunds += 1;
      const off = Math.abs(row.purchased - row.reversed - row.unrecovered);
      if (off > 0) details.push(`drift: refunded pack ${pack.id}: ${row.purchased} in, ${row.reversed} taken back, ${row.unrecovered} recorded as unrecovered`);
      drift += off;
    } else {
      const off = Math.abs(row.purchased - row.reversed - CHAOS_PACK.credits);
      if (off > 0) details.push(`drift: pack ${pack.id} bought for ${CHAOS_PACK.credits} credits: ${row.purchased} in, ${row.reversed} taken back`);
      drift += off;
    }
  }
  for (const [id, row] of ledger) {
    drift += row.purchased - row.reversed;
    details.push(`drift: ${row.purchased} credits in for entitlement ${id}, which Discord never sold`);
  }
  return { purchases: packs.length, refunds, drift, details };
}
