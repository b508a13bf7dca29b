/**
 * Two gateways at once (where the issue is silent: an old instance still running during a
 * deploy, or a second copy started by mistake). Discord sends every interaction to every
 * session of the shard, so both processes see each command. Each must still make one job,
 * charge once and answer once.
 */
import { atRate } from '../../bench/support.js';
import { auditFigures, type Scenario } from '../scenario.js';

export const twinGateways: Scenario = {
  name: 'twin-gateways',
  title: 'a second gateway process running beside the first',
  async run(world, { jobs, quick }) {
    const crashesBefore = world.crashes().length;
    const prefix = 'chaos twin-gateways';
    const twin = await world.spawnExtra('gateway');
    try {
      const handles = await atRate(jobs, quick ? 10 : 20, (i) => world.song(world.places[i % world.places.length]!, `${prefix} ${i}`));
      const answers = await Promise.all(handles.map((handle) => handle.waitForResponse(30_000).then(() => true, () => false)));
      const audit = await world.settleAndAudit({ prefix, timeoutMs: quick ? 60_000 : 180_000 });
      const figures = auditFigures(audit, world, crashesBefore);
      return {
        ...figures,
        zero: { ...figures.zero, unanswered: answers.filter((answered) => !answered).length, extraJobs: audit.jobs - jobs },
      };
    } finally {
      await twin.stop();
    }
  },
};
