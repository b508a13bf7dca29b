/**
 * 2. Redis gone: songs while Redis is emptied (FLUSHALL) in the middle of the run, then
 * redis-server stopped for 20 s (4 s in the quick run) and started again. No job is lost; while
 * Redis is down every command still gets its answer within 3 s, accepted (and recorded in
 * Postgres, for the reconciler to queue once Redis is back) or refused with nothing charged;
 * no process crashes.
 */
import { sleep } from '@music-bot/test-world';
import { answerFigures, answerOf, outageCommands } from '../answers.js';
import { auditFigures, type Scenario } from '../scenario.js';

export const redisGone: Scenario = {
  name: 'redis-gone',
  title: 'Redis flushed (FLUSHALL), then stopped for 20 s and started again',
  async run(world, { jobs, quick }) {
    const crashesBefore = world.crashes().length;
    const prefix = 'chaos redis-gone';
    const outageMs = quick ? 3_000 : 20_000;
    const rate = quick ? 10 : 20;
    // A third before the outage (the flush among them), a third during it, the rest after.
    const { before, during, after, sent, send: sendSome } = outageCommands(world, prefix, jobs);

    await sendSome(Math.ceil(before / 2), rate, false);
    await world.redis.flushAll();
    await sendSome(Math.floor(before / 2), rate, false);
    // Some of those are with the service, some still queued, when Redis goes.
    await sleep(quick ? 500 : 2_000);

    await world.redis.stop();
    const stoppedAt = Date.now();
    // Spread over the outage, the last a moment before Redis comes back.
    await sendSome(during, during / ((outageMs - 500) / 1000), true);
    await sleep(Math.max(0, outageMs - (Date.now() - stoppedAt)));
    await world.redis.start();
    const outage = Date.now() - stoppedAt;

    await sendSome(after, rate, false);
    const answers = await Promise.all(sent.map((command) => answerOf(command, 30_000)));
    const audit = await world.settleAndAudit({ prefix, timeoutMs: quick ? 60_000 : 180_000 });
    const figures = auditFigures(audit, world, crashesBefore);
    const told = await answerFigures(world, answers);
    return {
      zero: {
        ...figures.zero,
        // Time limits are figures of `npm run chaos`; the short run in `npm test` reports them
        // only, since it holds no timed assertion (a shared CI machine stalls now and then).
        ...(!quick && { slowAnswers: told.slowAnswers, lateAcknowledgements: told.lateAcknowledgements }),
        unanswered: told.unanswered,
        acceptedWithoutJob: told.acceptedWithoutJob,
        refusedButCharged: told.refusedButCharged,
      },
      info: {
        ...figures.info,
        ...told.info,
        ...(quick && { slowAnswers: told.slowAnswers, lateAcknowledgements: told.lateAcknowledgements }),
        outageMs: outage,
        flushes: 1,
      },
      details: [...figures.details, ...told.details],
    };
  },
};
