/**
 * 4. An unreliable service: songs while 30% of the calls to the music service fail, drawn from
 * an even mix of 429, 500, 502, hangs past the client timeout (creates the service took before
 * it hung), FAILED tasks, and webhooks duplicated, late, out of order (the intermediate callback
 * after the final one) and wrongly signed (the simulator's random-fault mode). Every job ends
 * delivered, or failed and refunded; no job is charged twice, and no request makes two
 * upstream tasks.
 */
import { atRate } from '../../bench/support.js';
import { DEFAULT_RANDOM_MIX, RANDOM_FAULT_KINDS } from '@music-bot/music-api-sim/faults.js';
import type { InteractionHandle } from '@music-bot/discord-emulator';
import { unansweredDetail } from '../answers.js';
import { auditFigures, type Scenario } from '../scenario.js';

/** The share of calls that fail. */
const FAULT_RATE = 0.3;

export const unreliableService: Scenario = {
  name: 'unreliable-service',
  title: '30% of calls to the music service fail: 429, 500, 502, hangs, FAILED tasks, webhooks twice, late, out of order, wrongly signed',
  async run(world, { jobs, quick }) {
    const crashesBefore = world.crashes().length;
    const prefix = 'chaos unreliable-service';
    // With webhooks on a song makes one or two calls: fewer than 20 draw too few faults to meet most kinds.
    const count = quick ? Math.max(jobs, 20) : jobs;
    const webhooksBefore = world.sim.webhookAttempts.length;
    // A fresh seed each run, reported, so that a failing run can be repeated with its draws.
    const seed = Math.floor(Math.random() * 2 ** 31);
    // Every hung create was taken first (the default): the case in which sending it again makes a
    // second task. A create that hangs without being taken leaves the job waiting for a webhook
    // that never comes until its 30-minute deadline, which no run here waits for.
    world.sim.setRandomFaults({ rate: FAULT_RATE, seed, path: '/api/v1/' });
    let drawn: NonNullable<ReturnType<typeof world.sim.getRandomFaults>>;
    let audit;
    let handles: InteractionHandle[];
    let answers: boolean[];
    try {
      handles = await atRate(count, 20, (i) => world.song(world.places[i % world.places.length]!, `${prefix} ${i}`));
      answers = await Promise.all(handles.map((handle) => handle.waitForResponse(30_000).then(() => true, () => false)));
      audit = await world.settleAndAudit({ prefix, timeoutMs: quick ? 60_000 : 240_000 });
    } finally {
      drawn = world.sim.getRandomFaults()!;
      world.sim.setRandomFaults(undefined);
    }
    const figures = auditFigures(audit, world, crashesBefore);
    const details = [...figures.details];

    // Delivered, or failed and refunded once, with the failure told in the channel.
    const { rows } = await world.db.query<{ id: string; state: string; delivery_state: string; refunds: number; uncertain: boolean }>(
      `select j.id, j.state, j.delivery_state, count(l.id) filter (where l.kind in ('refund', 'release'))::int as refunds,
         j.submit_uncertain_at is not null as uncertain
       from jobs j left join credit_ledger l on l.job_id = j.id
       where starts_with(coalesce(j.request->>'prompt', ''), $1)
       group by j.id`,
      [prefix],
    );
    let unsettled = 0;
    for (const job of rows) {
      // A job refunded as unconfirmed (a 5xx after the create was sent) may still get its song, free.
      const ended = job.state === 'succeeded' ? job.refunds === 0 || (job.uncertain && job.refunds === 1) : ['failed', 'timed_out'].includes(job.state) && job.refunds === 1;
      if (ended && job.delivery_state === 'delivered') continue;
      unsettled += 1;
      details.push(`unsettled: job ${job.id} is ${job.state}/${job.delivery_state} with ${job.refunds} refunds`);
    }

    // No request made two upstream tasks (the audit counts these as `duplicatedUpstream` too).
    const tasksByPrompt = new Map<string, number>();
    for (const task of world.sim.listTasks()) {
      const prompt = task.body['sound'];
      if (typeof prompt === 'string' && prompt.startsWith(prefix)) tasksByPrompt.set(prompt, (tasksByPrompt.get(prompt) ?? 0) + 1);
    }
    const secondTasks = [...tasksByPrompt.values()].filter((tasks) => tasks > 1).length;

    // A wrongly signed webhook must be refused, however right its news.
    const webhooks = world.sim.webhookAttempts.slice(webhooksBefore);
    const forged = webhooks.filter((attempt) => attempt.badSignature && attempt.status !== undefined && attempt.status < 300);
    for (const attempt of forged.slice(0, 5)) details.push(`accepted a wrongly signed webhook: ${attempt.event} for ${attempt.url} answered ${attempt.status}`);

    const unanswered = answers.filter((answered) => !answered).length;
    answers.forEach((answered, i) => {
      if (!answered) details.push(unansweredDetail(world, handles[i]!, `${prefix} ${i}`));
    });
    // The full run must have met every kind of the mix; the quick one draws too few faults to.
    const neverDrawn = RANDOM_FAULT_KINDS.filter((kind) => DEFAULT_RANDOM_MIX[kind] > 0 && drawn.drawn[kind] === 0);
    if (!quick && neverDrawn.length > 0) details.push(`faults never drawn: ${neverDrawn.join(', ')}`);
    const faults = Object.entries(drawn.drawn)
      .filter(([kind, times]) => times > 0 && kind !== 'hangAccepted')
      .map(([kind, times]) => `${kind} ${times}`)
      .join(' ');
    return {
      zero: {
        ...figures.zero,
        unanswered,
        unsettled,
        secondTasks,
        acceptedForgeries: forged.length,
        ...(!quick && { kindsNeverDrawn: neverDrawn.length }),
      },
      info: {
        ...figures.info,
        calls: drawn.calls,
        faults: faults === '' ? 'none' : faults,
        // Hung creates the service had taken: each one's job must still end with that one task.
        hungCreatesTaken: drawn.drawn.hangAccepted,
        webhooks: webhooks.length,
        seed,
      },
      details,
    };
  },
};
