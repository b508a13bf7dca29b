/**
 * A real power cut, again and again: the bot's four processes, redis-server and Postgres (the
 * postmaster, its backends and helpers) all killed in one instant (SIGKILL), at seeded random
 * moments while songs are being sent, queued, submitted, finished and posted. Redis comes back
 * from its append-only file less up to a second of writes (what `appendfsync everysec` may lose
 * when the machine loses power); Postgres runs crash recovery. Five cuts (two in the quick run),
 * each followed by a restart and an audit of every song so far: each command whose first answer
 * accepted it has, in Discord's own record, its result or its refund notice, once; one upstream
 * task per job; the guilds paid what the service kept.
 *
 * `CHAOS_SEED=<seed> npm run chaos -- power-cut-all` draws the same moments again.
 */
import { randomInt } from 'node:crypto';
import { sleep } from '@music-bot/test-world';
import { auditFigures, type Scenario } from '../scenario.js';
import { prng } from './fuzzed-interactions.js';

/** Songs a second, as the other load scenarios send them. */
const RATE = 20;

export const powerCutAll: Scenario = {
  name: 'power-cut-all',
  title: 'the bot, Redis and Postgres all killed at once (SIGKILL) five times, up to 1 s of Redis writes lost each time',
  // Each cut costs a restart and the queue entries the workers held wait out their 30 s lock.
  inShortSuite: false,
  async run(world, { jobs, quick }) {
    const crashesBefore = world.crashes().length;
    const prefix = 'chaos power-cut-all';
    const seed = process.env.CHAOS_SEED === undefined ? randomInt(2 ** 31) : Number(process.env.CHAOS_SEED);
    const random = prng(seed);
    const cuts = quick ? 2 : 5;
    const perCut = Math.max(4, Math.ceil(jobs / cuts));
    const burstMs = (perCut / RATE) * 1000;
    // The highest each figure reached after any cut: a fault a later cut hid still counts.
    const worst: Record<string, number> = {};
    const details: string[] = [];
    const moments: string[] = [];
    const backInMs: number[] = [];
    let sentSoFar = 0;
    const handles: Array<ReturnType<typeof world.song>> = [];
    let unansweredAfterRestart = 0;
    let redisLostBytes = 0;
    let postgresProcesses = 0;
    let figures: ReturnType<typeof auditFigures> | undefined;

    for (let cut = 1; cut <= cuts; cut += 1) {
      // Anywhere in the burst or up to 3 s after its last song: queued, in submission, running, finishing, being posted.
      const cutAfterMs = Math.round(random.next() * (burstMs + 3_000));
      const redisLostMs = Math.round(random.next() * 1_000);
      // Set at the cut; resolved once everything runs again.
      const power: { restored?: Promise<void> } = {};
      const afterRestart: Array<ReturnType<typeof world.song>> = [];
      const sender = (async () => {
        for (let i = 0; i < perCut; i += 1) {
          await sleep(1_000 / RATE);
          // While the power is off nobody can reach the bot: the rest of the burst waits for it.
          const waited = power.restored !== undefined;
          if (power.restored) await power.restored;
          const n = sentSoFar++;
          const handle = world.song(world.places[n % world.places.length]!, `${prefix} ${n}`);
          handles.push(handle);
          if (waited) afterRestart.push(handle);
        }
      })();

      await sleep(cutAfterMs);
      let powerBack!: () => void;
      power.restored = new Promise((resolve) => (powerBack = resolve));
      const cutAt = Date.now();
      const cutDone = await world.powerCut({ redisLostMs });
      await world.startAll();
      powerBack();
      backInMs.push(Date.now() - cutAt);
      postgresProcesses += cutDone.postgresProcesses;
      redisLostBytes += cutDone.redisLostBytes ?? 0;
      moments.push(`+${cutAfterMs} ms (Redis -${redisLostMs} ms, ${cutDone.redisLostBytes ?? 'n/a'} B; ${cutDone.postgresProcesses} Postgres processes)`);
      await sender;

      const answered = await Promise.all(afterRestart.map((handle) => handle.waitForResponse(30_000).then(() => true, () => false)));
      unansweredAfterRestart += answered.filter((ok) => !ok).length;
      const audit = await world.settleAndAudit({ prefix, timeoutMs: 240_000 });
      figures = auditFigures(audit, world, crashesBefore);
      for (const [name, value] of Object.entries(figures.zero)) worst[name] = Math.max(worst[name] ?? 0, value);
      details.push(...figures.details.map((detail) => `after cut ${cut}: ${detail}`));
    }

    return {
      zero: { ...worst, unansweredAfterRestart },
      info: {
        ...figures!.info,
        commands: sentSoFar,
        // Sent as the power went: the gateway died before it could answer, so nothing was accepted.
        neverAnswered: handles.filter((handle) => handle.response === undefined).length,
        cuts,
        seed,
        backInSecondsMax: Math.round(Math.max(...backInMs) / 100) / 10,
        postgresProcessesKilled: postgresProcesses,
        redisBytesLost: redisLostBytes,
        moments: moments.join('; '),
      },
      details,
    };
  },
};
