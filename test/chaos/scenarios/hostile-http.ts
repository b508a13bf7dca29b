/**
 * 5. Hostile HTTP: 10,000 requests to the webhook server (300 in the quick run) while genuine
 * songs finish by webhook beside them: forged, stale, replayed and tampered signatures; bodies
 * that are too large, not JSON, or JSON of the wrong shape; unknown job ids, random paths and
 * garbage on the wire; bodies and headers that trickle in. Not one may be accepted: no 2xx
 * (a replay may be answered "duplicate"), no change to any job, ledger or webhook-event row of
 * a job it aimed at, nothing posted to Discord. Meanwhile `/healthz` is probed every 50 ms from
 * a thread of its own and must answer within 100 ms (beyond what a bare server on the same
 * machine took at that moment), the http process's RSS must stay flat over the attack's second
 * half, and slow senders must be cut off; the genuine songs must all be delivered once, their
 * webhooks answered 2xx.
 */
import { spawn } from 'node:child_process';
import { createHmac, randomUUID } from 'node:crypto';
import { once } from 'node:events';
import net from 'node:net';
import { Worker } from 'node:worker_threads';
import { Agent, request, type Dispatcher } from 'undici';
import { REQUEST_TIMEOUT_MS } from '../../../src/http/server.js';
import { ROOT, sleep, SIM_KEY, waitFor } from '@music-bot/test-world';
import { atRate, rssMegabytes } from '../../bench/support.js';
import { auditFigures, type Scenario } from '../scenario.js';
import type { ChaosWorld } from '../world.js';

const PREFIX = 'chaos hostile-http';
const LIVE = `${PREFIX} live`;
const VICTIM = `${PREFIX} victim`;
/** Every forged body points here: finding it in a job's result or a Discord message is a forgery that got through. */
const FORGED_HOST = 'forged.invalid';
const ROUTE = '/webhooks/music';
type HttpMethod = Dispatcher.HttpMethod;
const HEALTHZ_LIMIT_MS = 100;
const HEALTHZ_EVERY_MS = 50;
/**
 * RSS growth of the http process over the attack's second half, each half followed by 5 s of
 * quiet, that counts as "not flat". The first half grows V8's heap to what the attack needs (up
 * to ~16 one-megabyte bodies in flight at once); a leak of 5 KB a request would add 25 MB more
 * over the second half's 5,000 requests.
 */
const RSS_GROWTH_LIMIT_MB = 25;
/** Quiet after each half of the attack before RSS is read: time for the process to collect its garbage. */
const QUIET_MS = 5_000;

type Kind = 'forged' | 'stale' | 'replayed' | 'tampered' | 'tooLarge' | 'notJson' | 'wrongShape' | 'unknownJob' | 'randomPath' | 'slow';
/** Shares of the traffic, in percent. */
const MIX: ReadonlyArray<[Kind, number]> = [
  ['forged', 20],
  ['stale', 10],
  ['replayed', 15],
  ['tampered', 14],
  ['tooLarge', 3],
  ['notJson', 8],
  ['wrongShape', 8],
  ['unknownJob', 9],
  ['randomPath', 9],
  ['slow', 4],
];

/** A job the attack aims at: the victims (settled before it) and the live songs (in flight). */
interface Target {
  id: string;
  secret: string;
  taskId: string | null;
  live: boolean;
}

/** A genuine webhook as the simulator sent it, to be replayed and tampered with. */
interface Captured {
  url: string;
  headers: Record<string, string>;
  body: string;
}

interface Outcome {
  kind: Kind;
  variant: string;
  status: number | undefined;
  /** The body of a 2xx answer (a replay's `duplicate: true`). */
  body?: string;
  error?: string;
  ms: number;
  /** A replay of a genuine webhook: a 2xx that says `duplicate: true` is no acceptance. */
  mayBeDuplicate?: boolean;
  /** Signed with the job's real secret (a body only the service could send, or a stale one). */
  signed?: boolean;
}

interface Plan {
  kind: Kind;
  variant: string;
  /** A request the bot must never take as news; a replay of a genuine webhook may be answered as a duplicate. */
  mayBeDuplicate?: boolean;
  signed?: boolean;
  send(): Promise<Omit<Outcome, 'kind' | 'variant' | 'ms'>>;
}

export const hostileHttp: Scenario = {
  name: 'hostile-http',
  title: 'hostile requests to the webhook server beside genuine webhooks',
  async run(world, { jobs, quick }) {
    const crashesBefore = world.crashes().length;
    const requests = quick ? 300 : 10_000;
    const concurrency = quick ? 8 : 16;
    // Quick: the trickles are sent, not held to the server's limit (which would double the run).
    const slowHoldMs = quick ? 2_000 : REQUEST_TIMEOUT_MS + 5_000;
    const seed = process.env.CHAOS_SEED === undefined ? Math.floor(Math.random() * 2 ** 31) : Number(process.env.CHAOS_SEED);
    const random = mulberry32(seed);
    const pick = <T>(items: readonly T[]): T => items[Math.floor(random() * items.length)]!;
    const httpPid = world.processes.http.pid!;

    // Watchers first: /healthz from a thread of its own (this thread is busy attacking), RSS by /proc.
    const prober = await startHealthzProber(`${world.httpUrl}/healthz`, world.db.options.connectionString!);
    const proberStarted = performance.now();
    const rss = { before: await rssMegabytes(httpPid), peak: 0, samples: [] as number[] };
    rss.peak = rss.before;
    const rssTimer = setInterval(() => {
      void rssMegabytes(httpPid).then(
        (mb) => {
          rss.peak = Math.max(rss.peak, mb);
          rss.samples.push(mb);
        },
        () => {},
      );
    }, 250);

    // Victims: songs that finished before the attack; their genuine webhooks are what is replayed.
    const victimCount = quick ? 2 : 6;
    for (let i = 0; i < victimCount; i += 1) world.song(world.places[i % world.places.length]!, `${VICTIM} ${i}`);
    await waitFor('the victims to be delivered', async () => (await settledCount(world, VICTIM)) === victimCount, { timeoutMs: 60_000, everyMs: 250 });
    const targets: Target[] = await targetsOf(world, VICTIM, false);
    const captured: Captured[] = [];
    const capture = () => {
      const known = new Set(captured.map((c) => `${c.url} ${c.body}`));
      for (const attempt of world.sim.webhookAttempts) {
        if (attempt.status === undefined || attempt.status < 200 || attempt.status >= 300) continue;
        if (!targets.some((target) => attempt.url.endsWith(target.id)) || known.has(`${attempt.url} ${attempt.body}`)) continue;
        captured.push({ url: attempt.url, headers: attempt.headers, body: attempt.body });
        known.add(`${attempt.url} ${attempt.body}`);
      }
    };
    await waitFor('the victims\' webhooks to be recorded', () => (capture(), captured.length >= victimCount), { timeoutMs: 20_000, everyMs: 100 });
    // A victim that a poll finished first still gets its final webhook, later: under load it can
    // land after the snapshot, and its genuine row would read as a forgery. Wait for every one.
    await waitFor(
      "the victims' final webhooks to be taken",
      async () => {
        const { rows } = await world.db.query<{ n: number }>(
          `select count(distinct job_id)::int as n from webhook_events where job_id = any($1::uuid[]) and event_key like '%:succeeded'`,
          [targets.map((target) => target.id)],
        );
        return rows[0]!.n === victimCount;
      },
      { timeoutMs: 30_000, everyMs: 100 },
    );
    const before = await snapshot(world);
    const emulatorSeqBefore = world.emulator.requests.length;

    // The genuine songs, sent while the attack runs; they join the targets as their jobs appear.
    let sending = true;
    const songs = atRate(jobs, quick ? 10 : 10, (i) => world.song(world.places[i % world.places.length]!, `${LIVE} ${i}`));
    const followLive = (async () => {
      while (sending) {
        const live = await targetsOf(world, LIVE, true).catch(() => []);
        for (const target of live) {
          const known = targets.find((other) => other.id === target.id);
          if (known) known.taskId = target.taskId;
          else targets.push(target);
        }
        capture();
        await sleep(200);
      }
    })();

    const planner = makePlanner(world, targets, captured, pick, random, slowHoldMs);
    const outcomes: Outcome[] = [];
    const slowOnes: Array<Promise<void>> = [];
    const started = performance.now();
    // Two equal halves, each sent whole (its slow senders too) and followed by quiet: RSS after the
    // first is the baseline, so what the second adds is what the attack leaves behind.
    const attack = async (count: number) => {
      let next = 0;
      await Promise.all(
        Array.from({ length: concurrency }, async () => {
          while (next < count) {
            next += 1;
            const plan = planner();
            const run = async () => {
              const at = performance.now();
              const result = await plan.send().catch((error: unknown) => ({ status: undefined, error: (error as Error).message }));
              outcomes.push({ kind: plan.kind, variant: plan.variant, ...result, ms: performance.now() - at, ...(plan.mayBeDuplicate && { mayBeDuplicate: true }), ...(plan.signed && { signed: true }) });
            };
            // Slow ones are left trickling beside the rest, as an attacker would hold them.
            if (plan.kind === 'slow') slowOnes.push(run());
            else await run();
          }
        }),
      );
      await Promise.all(slowOnes);
    };
    await attack(Math.floor(requests / 2));
    await sleep(QUIET_MS);
    const rssHalfway = await rssMegabytes(httpPid);
    await attack(requests - Math.floor(requests / 2));
    const attackSeconds = (performance.now() - started - QUIET_MS) / 1000;
    const attackWindow = `+${((started - proberStarted) / 1000).toFixed(1)}–${((performance.now() - proberStarted) / 1000).toFixed(1)} s`;
    await songs;
    sending = false;
    await followLive;

    const audit = await world.settleAndAudit({ prefix: LIVE, timeoutMs: quick ? 60_000 : 180_000 });
    // RSS after the attack, once the process has had its quiet to collect its garbage.
    await sleep(QUIET_MS);
    clearInterval(rssTimer);
    const rssAfter = await rssMegabytes(httpPid);
    const healthz = await prober.stop();

    // What the attack changed.
    const details: string[] = [];
    const accepted: string[] = [];
    const duplicateWords = /"duplicate":\s*true/;
    for (const outcome of outcomes) {
      const ok = outcome.status !== undefined && outcome.status >= 200 && outcome.status < 300;
      if (!ok) continue;
      // A replay, or a body signed with the real secret, may be answered as a repeat of news already taken.
      const isDuplicate = (outcome.mayBeDuplicate === true || outcome.signed === true) && duplicateWords.test(outcome.body ?? '');
      // A signed body that is no envelope the bot can use may be ignored with 202 (not final news); it must not be taken.
      const ignored = outcome.signed === true && outcome.status === 202;
      if (!isDuplicate && !ignored) accepted.push(`accepted: ${outcome.kind}/${outcome.variant} answered ${outcome.status} ${outcome.body?.slice(0, 80) ?? ''}`);
    }
    const after = await snapshot(world);
    for (const [id, row] of before.rows) {
      const now = after.rows.get(id);
      if (now !== row) accepted.push(`changed: ${id.slice(0, 60)}: ${row.slice(0, 160)} → ${(now ?? 'gone').slice(0, 160)}`);
    }
    let lateGenuine = 0;
    for (const [id, row] of after.rows) {
      if (before.rows.has(id)) continue;
      // An earlier job's final webhook that the simulator itself sent late (a poll finished the job first) is genuine news.
      // The bot writes its row before it answers, and the simulator records the attempt once answered or timed out: wait for it.
      const genuine = await waitFor('the simulator to record its delivery', () => sentBySimulator(world, id, row), { timeoutMs: 10_000 }).then(
        () => true,
        () => false,
      );
      if (genuine) lateGenuine += 1;
      else accepted.push(`new row: ${id.slice(0, 60)}: ${row.slice(0, 160)} (${simulatorAttemptsFor(world, row)})`);
    }
    const live = await liveFindings(world);
    accepted.push(...live);
    const victimIds = targets.filter((target) => !target.live).map((target) => target.id);
    for (const request of world.emulator.requests.slice(emulatorSeqBefore)) {
      const text = `${request.path} ${JSON.stringify(request.body ?? null)}`;
      if (text.includes(FORGED_HOST) || victimIds.some((id) => text.includes(id))) {
        accepted.push(`posted to Discord: ${request.method} ${request.route ?? request.path}: ${text.slice(0, 160)}`);
      }
    }
    details.push(...accepted.slice(0, 30));
    if (accepted.length > 30) details.push(`… and ${accepted.length - 30} more accepted`);

    const genuineRefused = await genuineWebhooksRefused(world);
    details.push(...genuineRefused.slice(0, 10));
    // Counted: over 100 ms by more than the control took at the same moment, i.e. the bot's own
    // 100 ms and more, not the machine's. Every probe over 100 ms is in `info` as well.
    const over = healthz.filter((probe) => probe.ms === undefined || probe.ms > HEALTHZ_LIMIT_MS);
    const slow = over.filter((probe) => probe.ms === undefined || probe.ms - (probe.controlMs ?? 0) > HEALTHZ_LIMIT_MS);
    const describe = (probe: Probe) =>
      `at +${(probe.at / 1000).toFixed(1)} s: ${probe.ms === undefined ? probe.error : `${Math.round(probe.ms)} ms`} (control ${probe.controlMs === undefined ? 'no answer' : `${Math.round(probe.controlMs)} ms`}, load ${probe.load ?? '?'})`;
    for (const probe of slow.slice(0, 10)) details.push(`${quick ? 'note: ' : ''}slow healthz ${describe(probe)}`);
    for (const probe of over.filter((probe) => !slow.includes(probe)).slice(0, 5)) details.push(`note: healthz over ${HEALTHZ_LIMIT_MS} ms with the machine ${describe(probe)}`);
    // A 5xx to a body signed with the real secret is the service's own garbage, not an attack; reported, not counted.
    const fiveHundreds = outcomes.filter((outcome) => outcome.status !== undefined && outcome.status >= 500);
    const serverErrors = fiveHundreds.filter((outcome) => !outcome.signed);
    for (const outcome of fiveHundreds.slice(0, 10)) details.push(`${outcome.signed ? 'note: signed body' : 'server error'}: ${outcome.kind}/${outcome.variant} answered ${outcome.status}`);
    // In the full run slow senders hold on past the server's limit (REQUEST_TIMEOUT_MS): it must have cut every one.
    const slowHeldOpen = slowHoldMs > REQUEST_TIMEOUT_MS + 2_000 ? outcomes.filter((outcome) => outcome.kind === 'slow' && outcome.error === 'held to the limit') : [];
    for (const outcome of slowHeldOpen.slice(0, 5)) details.push(`slow sender not cut: ${outcome.variant} held ${Math.round(outcome.ms)} ms`);
    const rssGrowth = rssAfter - rssHalfway;
    if (rssGrowth > RSS_GROWTH_LIMIT_MB) details.push(`rss: ${rssHalfway} MB after the first half, ${rssAfter} MB after the second (${rss.before} MB before, peak ${rss.peak} MB)`);

    const figures = auditFigures(audit, world, crashesBefore);
    const byKind = new Map<Kind, number>();
    const statuses = new Map<string, number>();
    for (const outcome of outcomes) {
      byKind.set(outcome.kind, (byKind.get(outcome.kind) ?? 0) + 1);
      const key = outcome.status === undefined ? 'closed' : String(outcome.status);
      statuses.set(key, (statuses.get(key) ?? 0) + 1);
    }
    const slowOutcomes = outcomes.filter((outcome) => outcome.kind === 'slow');
    const probeTimes = healthz.flatMap((probe) => (probe.ms === undefined ? [] : [probe.ms])).sort((a, b) => a - b);
    return {
      zero: {
        ...figures.zero,
        acceptedForgeries: accepted.length,
        genuineRefused: genuineRefused.length,
        // A time limit is a figure for `npm run chaos`, not for the short run in `npm test`,
        // which holds no timed assertion (shared CI machines stall): there it is reported only.
        ...(!quick && { slowHealthz: slow.length }),
        rssGrowthMB: rssGrowth > RSS_GROWTH_LIMIT_MB ? 1 : 0,
        serverErrors: serverErrors.length,
        ...(slowHoldMs > REQUEST_TIMEOUT_MS + 2_000 && { slowHeldOpen: slowHeldOpen.length }),
      },
      info: {
        ...figures.info,
        requests: outcomes.length,
        perSecond: Math.round(outcomes.length / attackSeconds),
        attackWindow,
        kinds: [...byKind].map(([kind, n]) => `${kind} ${n}`).join(' '),
        statuses: [...statuses].sort().map(([status, n]) => `${status}×${n}`).join(' '),
        slowCut: slowOutcomes.filter((outcome) => outcome.status === 408 || outcome.error === 'cut').length,
        signedServerErrors: fiveHundreds.length - serverErrors.length,
        slowHeld: slowOutcomes.filter((outcome) => outcome.error === 'held to the limit').length,
        slowMaxMs: Math.round(Math.max(0, ...slowOutcomes.map((outcome) => outcome.ms))),
        ...(quick && { slowHealthz: slow.length }),
        healthzProbes: healthz.length,
        healthzOver100: over.length,
        healthzP99Ms: Math.round(probeTimes[Math.floor(probeTimes.length * 0.99)] ?? 0),
        healthzMaxMs: Math.round(probeTimes.at(-1) ?? 0),
        rssBeforeMB: rss.before,
        rssPeakMB: rss.peak,
        rssHalfwayMB: rssHalfway,
        rssAfterMB: rssAfter,
        lateGenuineWebhooks: lateGenuine,
        seed,
      },
      details: [...figures.details, ...details],
    };
  },
};

// ---- the attack ----

function makePlanner(
  world: ChaosWorld,
  targets: readonly Target[],
  captured: readonly Captured[],
  pick: <T>(items: readonly T[]) => T,
  random: () => number,
  slowHoldMs: number,
): () => Plan {
  const url = (path: string) => `${world.httpUrl}${path}`;
  const post = (path: string, body: string | Buffer, headers: Record<string, string>) => fetchOutcome(url(path), { method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body });
  const nowSeconds = () => Math.floor(Date.now() / 1000);
  const hex = (bytes: number) => Array.from({ length: bytes }, () => Math.floor(random() * 256).toString(16).padStart(2, '0')).join('');
  const forgedBody = (target: Target) => {
    const failed = random() < 0.3;
    return JSON.stringify({
      code: 200,
      message: 'success',
      status: failed ? 'FAILED' : 'SUCCESS',
      task_id: target.taskId ?? randomUUID(),
      data: [{ clip_id: `forged-${hex(4)}`, title: 'forged', audio_url: `https://${FORGED_HOST}/${hex(4)}.mp3`, image_url: `https://${FORGED_HOST}/x.png` }],
    });
  };
  const spec = (secret: string, body: string) => ({ 'x-webhook-signature': createHmac('sha256', secret).update(body).digest('hex') });
  const stamped = (secret: string, body: string, timestamp: number | string) => ({
    'x-webhook-signature': `sha256=${createHmac('sha256', secret).update(`${timestamp}.${body}`).digest('hex')}`,
    'x-webhook-timestamp': String(timestamp),
  });
  const target = () => pick(targets);
  const capturedOne = () => (captured.length > 0 ? pick(captured) : undefined);
  const pathOf = (fullUrl: string) => new URL(fullUrl).pathname;

  const plans: Record<Kind, () => Plan> = {
    forged() {
      const job = target();
      const body = forgedBody(job);
      const keys: Array<[string, () => Record<string, string>]> = [
        ['random-secret', () => spec(hex(16), body)],
        ['random-secret-stamped', () => stamped(hex(16), body, nowSeconds())],
        ['empty-key', () => spec('', body)],
        ['job-id-as-key', () => spec(job.id, body)],
        ['task-id-as-key', () => spec(job.taskId ?? job.id, body)],
        ['api-key-as-key', () => stamped(SIM_KEY, body, nowSeconds())],
        ['zeros', () => ({ 'x-webhook-signature': '0'.repeat(64) })],
        ['unsigned', () => ({})],
        ['prefix-only', () => ({ 'x-webhook-signature': 'sha256=' })],
        ['real-secret-other-body', () => spec(job.secret, '{}')],
        ['other-jobs-secret', () => spec(pick(targets.filter((other) => other.id !== job.id).map((other) => other.secret).concat(hex(8))), body)],
      ];
      const [variant, headers] = pick(keys);
      return { kind: 'forged', variant: `${variant}${job.live ? '@live' : ''}`, send: () => post(`${ROUTE}/${job.id}`, body, headers()) };
    },
    stale() {
      // Signed with the job's real secret (a webhook captured long ago), but out of its time.
      const job = target();
      const body = forgedBody(job);
      const offsets: Array<[string, number | string]> = [
        ['hour-old', nowSeconds() - 3_600],
        ['just-past-tolerance', nowSeconds() - 301 - Math.floor(random() * 60)],
        ['day-old', nowSeconds() - 86_400],
        ['future', nowSeconds() + 301 + Math.floor(random() * 3_600)],
        ['epoch', 0],
        ['milliseconds', Date.now()],
        ['negative', -5],
        ['exponent', '1e9'],
        ['padded', ` ${nowSeconds() - 4_000} `],
      ];
      const [variant, timestamp] = pick(offsets);
      return { kind: 'stale', variant: `${variant}${job.live ? '@live' : ''}`, signed: true, send: () => post(`${ROUTE}/${job.id}`, body, stamped(job.secret, body, timestamp)) };
    },
    replayed() {
      const hook = capturedOne();
      if (!hook) return plans.forged();
      const variants: Array<[string, () => Promise<Omit<Outcome, 'kind' | 'variant' | 'ms'>>, boolean]> = [
        ['verbatim', () => post(pathOf(hook.url), hook.body, hook.headers), true],
        ['fresh-event-id', () => post(pathOf(hook.url), hook.body, { ...hook.headers, 'x-webhook-id': randomUUID(), 'idempotency-key': randomUUID() }), true],
        ['fresh-timestamp', () => post(pathOf(hook.url), hook.body, { ...hook.headers, 'x-webhook-timestamp': String(nowSeconds()) }), true],
        ['other-event-header', () => post(pathOf(hook.url), hook.body, { ...hook.headers, 'x-webhook-event': 'song.failed' }), true],
        ['to-another-job', () => post(`${ROUTE}/${pick(targets.filter((job) => !hook.url.endsWith(job.id))).id}`, hook.body, hook.headers), false],
        ['upper-case-job-id', () => post(pathOf(hook.url).toUpperCase().replace('/WEBHOOKS/MUSIC/', `${ROUTE}/`), hook.body, hook.headers), true],
      ];
      const [variant, send, mayBeDuplicate] = pick(variants);
      return { kind: 'replayed', variant, mayBeDuplicate, send };
    },
    tampered() {
      const hook = capturedOne();
      if (!hook) return plans.forged();
      const signature = hook.headers['X-Webhook-Signature'] ?? hook.headers['x-webhook-signature'] ?? '';
      const flipped = signature.slice(0, -1) + (signature.endsWith('0') ? '1' : '0');
      const variants: Array<[string, string, Record<string, string>]> = [
        ['audio-url', hook.body.replace(/"audio_url":"[^"]*"/, `"audio_url":"https://${FORGED_HOST}/a.mp3"`), hook.headers],
        ['status-flipped', hook.body.replace('"SUCCESS"', '"FAILED"'), hook.headers],
        // The spec's body (the polling body) names no task: one is added, or the real service's is changed.
        ['task-id', /"task_id":"[^"]*"/.test(hook.body) ? hook.body.replace(/"task_id":"[^"]*"/, `"task_id":"${randomUUID()}"`) : hook.body.replace(/^\{/, `{"task_id":"${randomUUID()}",`), hook.headers],
        ['trailing-space', `${hook.body} `, hook.headers],
        ['truncated', hook.body.slice(0, -1), hook.headers],
        ['extra-field', hook.body.replace(/^\{/, `{"note":"https://${FORGED_HOST}",`), hook.headers],
        ['signature-bit', hook.body, { ...hook.headers, 'X-Webhook-Signature': flipped }],
        ['signature-truncated', hook.body, { ...hook.headers, 'X-Webhook-Signature': signature.slice(0, 32) }],
        ['signature-doubled', hook.body, { ...hook.headers, 'X-Webhook-Signature': signature + signature }],
        ['signature-elsewhere', hook.body, { 'content-type': 'application/json', 'x-signature': signature }],
      ];
      const [variant, body, headers] = pick(variants);
      return { kind: 'tampered', variant, send: () => post(pathOf(hook.url), body, headers) };
    },
    tooLarge() {
      const job = target();
      const size = 1024 * 1024 + 1 + Math.floor(random() * 1024 * 1024);
      const variants: Array<[string, () => Promise<Omit<Outcome, 'kind' | 'variant' | 'ms'>>]> = [
        ['content-length', () => post(`${ROUTE}/${job.id}`, Buffer.alloc(size, 0x20), { 'x-webhook-signature': hex(32) })],
        // No Content-Length: the limit must hold while the body streams in.
        ['chunked', () => rawRequest(world.httpUrl, `POST ${ROUTE}/${job.id} HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n`, chunked(size), 10_000)],
        ['huge-headers', () => post(`${ROUTE}/${job.id}`, forgedBody(job), { 'x-webhook-signature': hex(32), 'x-padding': 'a'.repeat(20_000 + Math.floor(random() * 40_000)) })],
        ['lying-length', () => rawRequest(world.httpUrl, `POST ${ROUTE}/${job.id} HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 10\r\n\r\n`, Buffer.alloc(size, 0x7b), 10_000)],
      ];
      const [variant, send] = pick(variants);
      return { kind: 'tooLarge', variant, send };
    },
    notJson() {
      // Signed with the real secret half the time: then the parser is what must say no.
      const job = target();
      const bodies: Array<[string, string | Buffer]> = [
        ['garbage', Buffer.from(hex(64), 'hex')],
        ['half-json', '{"status":"SUCCESS","data":['],
        ['empty', ''],
        ['form', 'status=SUCCESS&task_id=x'],
        ['xml', '<status>SUCCESS</status>'],
        ['utf16', Buffer.from(JSON.stringify({ status: 'SUCCESS' }), 'utf16le')],
        ['bom', `\ufeff${forgedBody(job)}`],
        ['nan', '{"status":"SUCCESS","code":NaN}'],
      ];
      const [variant, body] = pick(bodies);
      const signed = random() < 0.5;
      const contentType = pick(['application/json', 'text/plain', 'application/x-www-form-urlencoded', 'application/octet-stream']);
      const headers = signed ? { ...spec(job.secret, body.toString()), 'content-type': contentType } : { 'x-webhook-signature': hex(32), 'content-type': contentType };
      // A Buffer body is signed over its bytes, not a string reading of them.
      if (signed && Buffer.isBuffer(body)) headers['x-webhook-signature'] = createHmac('sha256', job.secret).update(body).digest('hex');
      return { kind: 'notJson', variant: `${variant}${signed ? '-signed' : ''}${job.live ? '@live' : ''}`, signed, send: () => post(`${ROUTE}/${job.id}`, body, headers) };
    },
    wrongShape() {
      const job = target();
      // None of these says a final state: signed or not, each must be refused (400, 401) or ignored (202).
      const nested = (depth: number) => '['.repeat(depth) + ']'.repeat(depth);
      const bodies: Array<[string, string]> = [
        ['array', '[]'],
        ['null', 'null'],
        ['number', '42'],
        ['string', '"SUCCESS"'],
        ['data-string', JSON.stringify({ status: 'SUCCESS', data: 'x' })],
        ['data-number', JSON.stringify({ status: 'FAILED', data: 7 })],
        ['deep', nested(50_000)],
        ['deep-data', `{"data":${nested(50_000)}}`],
        // Read through a prototype, `status` would be SUCCESS.
        ['proto', '{"__proto__":{"status":"SUCCESS","isAdmin":true},"constructor":{"prototype":{"status":"SUCCESS"}}}'],
        ['status-object', JSON.stringify({ status: { state: 'SUCCESS' }, data: [] })],
        ['status-number', JSON.stringify({ status: 1, task_id: 5, data: [] })],
      ];
      const [variant, body] = pick(bodies);
      const signed = random() < 0.5;
      const headers = signed ? spec(job.secret, body) : { 'x-webhook-signature': hex(32) };
      return { kind: 'wrongShape', variant: `${variant}${signed ? '-signed' : ''}${job.live ? '@live' : ''}`, signed, send: () => post(`${ROUTE}/${job.id}`, body, headers) };
    },
    unknownJob() {
      const ids: Array<[string, string]> = [
        ['random-uuid', randomUUID()],
        ['nil-uuid', '00000000-0000-0000-0000-000000000000'],
        ['not-a-uuid', hex(8)],
        ['sql', encodeURIComponent("1' or '1'='1")],
        ['long', 'a'.repeat(2_000 + Math.floor(random() * 6_000))],
        ['unicode', encodeURIComponent('ジョブ-💥')],
        ['nul', '%00'],
        ['dot-dot', '..%2F..%2Fhealthz'],
      ];
      const [variant, id] = pick(ids);
      const body = forgedBody(target());
      return { kind: 'unknownJob', variant, send: () => post(`${ROUTE}/${id}`, body, { 'x-webhook-signature': hex(32) }) };
    },
    randomPath() {
      const job = target();
      const segment = () => hex(1 + Math.floor(random() * 6));
      const paths = [
        `/${segment()}`,
        `/${segment()}/${segment()}?${segment()}=${segment()}`,
        `${ROUTE}`,
        `${ROUTE}/`,
        `${ROUTE}/${job.id}/${segment()}`,
        `/webhooks/${job.id}`,
        `/api/v1/${segment()}`,
        '/admin',
        '/.env',
        `//${segment()}`,
      ];
      const variants: Array<[string, () => Promise<Omit<Outcome, 'kind' | 'variant' | 'ms'>>]> = [
        ['get', () => fetchOutcome(url(pick(paths)), { method: 'GET' })],
        ['post', () => post(pick(paths), forgedBody(job), { 'x-webhook-signature': hex(32) })],
        ['other-method', () => fetchOutcome(url(`${ROUTE}/${job.id}`), { method: pick<HttpMethod>(['GET', 'PUT', 'DELETE', 'PATCH', 'OPTIONS']) })],
        ['garbage-on-the-wire', () => rawRequest(world.httpUrl, Buffer.from(hex(32 + Math.floor(random() * 200)), 'hex'), undefined, 3_000)],
        ['bad-request-line', () => rawRequest(world.httpUrl, `POST ${ROUTE}/${job.id} HTTP/9.9\r\n\r\n`, undefined, 3_000)],
      ];
      const [variant, send] = pick(variants);
      return { kind: 'randomPath', variant, send };
    },
    slow() {
      // Bodies and headers that trickle in, held until the server cuts them or `slowHoldMs` passes.
      const job = target();
      const body = forgedBody(job);
      const head = `POST ${ROUTE}/${job.id} HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nX-Webhook-Signature: ${hex(32)}\r\nContent-Length: `;
      const variants: Array<[string, () => Promise<Omit<Outcome, 'kind' | 'variant' | 'ms'>>]> = [
        ['endless-body', () => trickle(world.httpUrl, `${head}100000\r\n\r\n`, 'x'.repeat(100_000), 1, 500, slowHoldMs)],
        ['endless-headers', () => trickle(world.httpUrl, '', `${head}${body.length}\r\n${'X-Padding: a\r\n'.repeat(5_000)}`, 4, 500, slowHoldMs)],
        // Arrives in full, slowly (about 2 s): answered on its merits (401).
        ['slow-but-whole', () => trickle(world.httpUrl, `${head}${Buffer.byteLength(body)}\r\n\r\n`, body, Math.ceil(body.length / 10), 200, slowHoldMs)],
      ];
      const [variant, send] = pick(variants);
      return { kind: 'slow', variant, send };
    },
  };

  const table: Kind[] = MIX.flatMap(([kind, share]) => Array.from({ length: share }, () => kind));
  return () => plans[pick(table)]();
}

/**
 * The attacker's connections are its own: the simulator (in this process) delivers the genuine
 * webhooks through the global fetch, and must not be handed a socket the server closed on an attacker.
 */
const attackerAgent = new Agent({ connections: 64 });

async function fetchOutcome(url: string, init: { method: HttpMethod; headers?: Record<string, string>; body?: string | Buffer }): Promise<Omit<Outcome, 'kind' | 'variant' | 'ms'>> {
  const response = await request(url, { ...init, dispatcher: attackerAgent, signal: AbortSignal.timeout(30_000) });
  const body = await response.body.text().catch(() => '');
  const ok = response.statusCode >= 200 && response.statusCode < 300;
  return { status: response.statusCode, ...(ok && { body }) };
}

/** Writes `head` and `body` on a socket of its own; the status of the answer, or undefined when the server closed it unanswered. */
function rawRequest(base: string, head: string | Buffer, body: Buffer | undefined, timeoutMs: number): Promise<Omit<Outcome, 'kind' | 'variant' | 'ms'>> {
  const { hostname, port } = new URL(base);
  return new Promise((resolve) => {
    const socket = net.connect(Number(port), hostname);
    let answer = '';
    const done = (error?: string) => {
      clearTimeout(timer);
      socket.destroy();
      const status = /^HTTP\/1\.[01] (\d{3})/.exec(answer)?.[1];
      resolve({ status: status === undefined ? undefined : Number(status), ...(error && { error }), ...(status?.startsWith('2') && { body: answer.slice(answer.indexOf('\r\n\r\n') + 4) }) });
    };
    const timer = setTimeout(() => done('client timeout'), timeoutMs);
    socket.on('data', (chunk: Buffer) => {
      answer += chunk.toString('latin1');
      if (/\r\n\r\n/.test(answer)) setTimeout(() => done(), 20);
    });
    socket.on('error', (error) => done(error.message));
    socket.on('close', () => done());
    socket.write(head);
    if (body) socket.write(body, () => {});
  });
}

/** A body of `size` bytes in chunked transfer encoding, in 64 KB chunks. */
function chunked(size: number): Buffer {
  const parts: Buffer[] = [];
  for (let left = size; left > 0; left -= 65_536) {
    const n = Math.min(left, 65_536);
    parts.push(Buffer.from(`${n.toString(16)}\r\n`), Buffer.alloc(n, 0x20), Buffer.from('\r\n'));
  }
  parts.push(Buffer.from('0\r\n\r\n'));
  return Buffer.concat(parts);
}

/**
 * Sends `head` at once, then `rest` `step` bytes at a time every `everyMs`. Ends with the
 * server's answer (variant suffix none), the server closing on it (`cut`), or `holdMs` passing.
 */
function trickle(base: string, head: string, rest: string, step: number, everyMs: number, holdMs: number): Promise<Omit<Outcome, 'kind' | 'variant' | 'ms'>> {
  const { hostname, port } = new URL(base);
  return new Promise((resolve) => {
    const socket = net.connect(Number(port), hostname);
    let answer = '';
    let offset = 0;
    let settled = false;
    const finish = (result: Omit<Outcome, 'kind' | 'variant' | 'ms'>) => {
      if (settled) return;
      settled = true;
      clearInterval(drip);
      clearTimeout(hold);
      socket.destroy();
      resolve(result);
    };
    const statusOf = () => {
      const status = /^HTTP\/1\.[01] (\d{3})/.exec(answer)?.[1];
      return status === undefined ? undefined : Number(status);
    };
    const drip = setInterval(() => {
      if (offset >= rest.length || socket.destroyed) return;
      socket.write(rest.slice(offset, offset + step));
      offset += step;
    }, everyMs);
    const hold = setTimeout(() => finish({ status: statusOf(), error: 'held to the limit' }), holdMs);
    socket.on('data', (chunk: Buffer) => {
      answer += chunk.toString('latin1');
      if (/\r\n\r\n/.test(answer)) finish({ status: statusOf(), ...(statusOf() !== undefined && statusOf()! < 300 && { body: answer }) });
    });
    socket.on('error', () => finish({ status: statusOf(), error: 'cut' }));
    socket.on('close', () => finish({ status: statusOf(), error: 'cut' }));
    socket.write(head);
  });
}

// ---- the watchers ----

interface Probe {
  /** ms since the prober started. */
  at: number;
  ms: number | undefined;
  /** The control server's answer at the same moment (undefined when it did not answer). */
  controlMs: number | undefined;
  error?: string;
  /** The 1-minute load average, beside a slow probe. */
  load?: string;
}

/**
 * Probes `url` every 50 ms from a worker thread, so the attack's own load on this thread does not
 * colour the figures; and beside each probe, at the same moment, a control: /healthz without the
 * bot, a bare node:http server in a process of its own that runs `select 1` on the same Postgres.
 * When the control is slow too, the machine was (other work on a small machine slows every
 * process, and a probe that crosses three of them most); when only /healthz is, the bot was.
 */
async function startHealthzProber(url: string, postgresUrl: string): Promise<{ stop(): Promise<Probe[]> }> {
  const control = spawn(
    process.execPath,
    [
      '-e',
      `const pool = new (require('pg').Pool)({ connectionString: process.env.CONTROL_PG, max: 2 });
       const s = require('node:http').createServer((q, r) => pool.query('select 1').then(() => r.end('ok'), () => r.end('down')));
       s.listen(0, '127.0.0.1', () => console.log(s.address().port));`,
    ],
    { cwd: ROOT, env: { PATH: process.env.PATH ?? '', CONTROL_PG: postgresUrl }, stdio: ['ignore', 'pipe', 'inherit'] },
  );
  const [line] = (await once(control.stdout!, 'data')) as [Buffer];
  const controlUrl = `http://127.0.0.1:${line.toString().trim()}/`;
  const worker = new Worker(
    `
    const { parentPort, workerData } = require('node:worker_threads');
    const probes = [];
    let running = true;
    parentPort.on('message', () => { running = false; });
    const timed = async (url) => {
      const at = performance.now();
      try {
        const response = await fetch(url, { signal: AbortSignal.timeout(5000) });
        await response.text();
        return response.status === 200 ? { ms: performance.now() - at } : { error: 'status ' + response.status };
      } catch (error) {
        return { error: String(error && error.message) };
      }
    };
    (async () => {
      // One unrecorded probe of each first: the thread's first fetch sets itself up.
      await Promise.all([timed(workerData.url), timed(workerData.controlUrl)]);
      const started = performance.now();
      while (running) {
        const at = performance.now();
        const [health, control] = await Promise.all([timed(workerData.url), timed(workerData.controlUrl)]);
        const probe = { at: at - started, ms: health.ms, controlMs: control.ms, error: health.error };
        if (!(health.ms <= ${HEALTHZ_LIMIT_MS})) probe.load = require('node:fs').readFileSync('/proc/loadavg', 'utf8').split(' ')[0];
        probes.push(probe);
        const wait = ${HEALTHZ_EVERY_MS} - (performance.now() - at);
        if (wait > 0) await new Promise((resolve) => setTimeout(resolve, wait));
      }
      parentPort.postMessage(probes);
    })();
    `,
    { eval: true, workerData: { url, controlUrl } },
  );
  return {
    stop: () =>
      new Promise<Probe[]>((resolve, reject) => {
        worker.once('message', (probes: Probe[]) => {
          void worker.terminate();
          control.kill();
          resolve(probes);
        });
        worker.once('error', (error) => {
          control.kill();
          reject(error);
        });
        worker.postMessage('stop');
      }),
  };
}

// ---- the records ----

async function settledCount(world: ChaosWorld, prefix: string): Promise<number> {
  const { rows } = await world.db.query<{ n: number }>(
    `select count(*)::int as n from jobs where starts_with(request->>'prompt', $1) and state in ('succeeded', 'failed', 'cancelled') and delivery_state <> 'pending'`,
    [prefix],
  );
  return rows[0]!.n;
}

async function targetsOf(world: ChaosWorld, prefix: string, live: boolean): Promise<Target[]> {
  const { rows } = await world.db.query<{ id: string; secret: string; task_id: string | null }>(
    `select id, webhook_secret as secret, upstream_task_id as task_id from jobs where starts_with(request->>'prompt', $1)`,
    [prefix],
  );
  return rows.map((row) => ({ id: row.id, secret: row.secret, taskId: row.task_id, live }));
}

/**
 * Every job, ledger and webhook-event row but the live songs' (which change as they should),
 * each as its JSON text, keyed by what it is. The live songs' webhook events are counted.
 */
async function snapshot(world: ChaosWorld): Promise<{ rows: Map<string, string> }> {
  const { rows } = await world.db.query<{ key: string; row: string }>(
    `with live as (select id from jobs where starts_with(request->>'prompt', $1))
     select 'job ' || j.id as key, to_jsonb(j)::text as row from jobs j where j.id not in (select id from live)
     union all
     select 'ledger ' || l.id, to_jsonb(l)::text from credit_ledger l
       -- A live song may be its guild's first command: the guild's starting credits are granted then.
       where case when l.job_id is null then l.key not like '%:starting-credits' else l.job_id not in (select id from live) end
     union all
     select 'webhook event ' || e.event_key, to_jsonb(e)::text from webhook_events e where e.job_id not in (select id from live)
`,
    [LIVE],
  );
  return { rows: new Map(rows.map((row) => [row.key, row.row])) };
}

/**
 * A new webhook-event row that the simulator's own, rightly signed webhook for that task made.
 * Its answer does not matter: under load the bot can write the row and answer after the
 * simulator gave up waiting.
 */
function sentBySimulator(world: ChaosWorld, key: string, row: string): boolean {
  if (!key.startsWith('webhook event ')) return false;
  const { job_id: jobId, event_key: eventKey } = JSON.parse(row) as { job_id?: string; event_key?: string };
  const taskId = /^task:([^:]+):/.exec(eventKey ?? '')?.[1];
  if (!jobId || !taskId) return false;
  return world.sim.webhookAttempts.some((attempt) => attempt.url.endsWith(jobId) && !attempt.badSignature && attempt.taskId === taskId);
}

/** What the simulator sent to a webhook-event row's job, for a finding's details. */
function simulatorAttemptsFor(world: ChaosWorld, row: string): string {
  const { job_id: jobId } = JSON.parse(row) as { job_id?: string };
  const attempts = world.sim.webhookAttempts.filter((attempt) => jobId !== undefined && attempt.url.endsWith(jobId));
  if (attempts.length === 0) return 'the simulator sent its job nothing';
  return attempts.map((attempt) => `${attempt.event} of task ${attempt.taskId} #${attempt.attempt}.${attempt.copy}${attempt.badSignature ? ' badly signed' : ''} → ${attempt.status ?? attempt.error}`).join(', ');
}

/** The live songs: each succeeded with the simulator's media, and took its completion once. */
async function liveFindings(world: ChaosWorld): Promise<string[]> {
  const { rows } = await world.db.query<{ id: string; state: string; forged: boolean; events: number }>(
    `select j.id, j.state, coalesce(j.result::text, '') like '%' || $2 || '%' as forged,
       (select count(*)::int from webhook_events e where e.job_id = j.id) as events
     from jobs j where starts_with(j.request->>'prompt', $1)`,
    [LIVE, FORGED_HOST],
  );
  const findings: string[] = [];
  for (const row of rows) {
    if (row.state !== 'succeeded') findings.push(`live job ${row.id} ended ${row.state} (the simulator failed none)`);
    if (row.forged) findings.push(`live job ${row.id} holds a forged result`);
    if (row.events > 1) findings.push(`live job ${row.id} took ${row.events} webhook events (one completion)`);
  }
  return findings;
}

/** The genuine songs' webhooks the bot refused (the simulator's record: a first attempt not answered 2xx). */
async function genuineWebhooksRefused(world: ChaosWorld): Promise<string[]> {
  const live = new Set((await targetsOf(world, LIVE, true)).map((target) => target.id));
  return world.sim.webhookAttempts
    .filter((attempt) => attempt.attempt === 1 && attempt.copy === 1 && live.has(attempt.url.slice(attempt.url.lastIndexOf('/') + 1)))
    .filter((attempt) => attempt.status === undefined || attempt.status < 200 || attempt.status >= 300)
    .map((attempt) => `genuine webhook refused: ${attempt.url.slice(-36)} answered ${attempt.status ?? attempt.error}`);
}

/** A small seeded generator, so a run can be told by its seed. */
function mulberry32(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4_294_967_296;
  };
}
