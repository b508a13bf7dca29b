/**
 * A power cut (where the issue is silent: what an operator who lost data elsewhere tries first):
 * every process killed at once (SIGKILL) while songs are queued, submitted and finishing, then
 * all started again. Every job that was accepted is delivered exactly once, charged once or
 * refunded once; commands sent after the restart are answered.
 */
import { sleep } from '@music-bot/test-world';
import { atRate } from '../../bench/support.js';
import { auditFigures, type Scenario } from '../scenario.js';
import { PROCESS_NAMES } from '../world.js';

export const powerCut: Scenario = {
  name: 'power-cut',
  title: 'every process killed at once mid-run, then started again',
  // The entries the workers held wait out their 30 s lock before another takes them over.
  inShortSuite: false,
  async run(world, { jobs, quick }) {
    const crashesBefore = world.crashes().length;
    const prefix = 'chaos power-cut';
    const half = Math.ceil(jobs / 2);
    const before = await atRate(half, quick ? 20 : 40, (i) => world.song(world.places[i % world.places.length]!, `${prefix} ${i}`));
    // Some answered, some still in the bot's hands: cut now.
    await Promise.race([Promise.all(before.map((handle) => handle.waitForResponse(10_000).catch(() => undefined))), sleep(quick ? 300 : 1_000)]);
    await Promise.all(PROCESS_NAMES.map((name) => world.processes[name].kill()));
    await sleep(quick ? 300 : 2_000);
    await world.startAll();

    const after = await atRate(jobs - half, quick ? 20 : 40, (i) => world.song(world.places[i % world.places.length]!, `${prefix} ${half + i}`));
    const answeredAfter = await Promise.all(after.map((handle) => handle.waitForResponse(30_000).then(() => true, () => false)));
    const answeredBefore = before.filter((handle) => handle.response !== undefined).length;
    const audit = await world.settleAndAudit({ prefix, timeoutMs: quick ? 60_000 : 180_000 });
    const figures = auditFigures(audit, world, crashesBefore);
    return {
      ...figures,
      zero: { ...figures.zero, unansweredAfterRestart: answeredAfter.filter((answered) => !answered).length },
      info: { ...figures.info, answeredBeforeTheCut: `${answeredBefore} of ${half}` },
    };
  },
};
