/**
 * 1. Killed workers: songs while a random worker is `kill -9`ed every few seconds and started
 * again. Every job is delivered exactly once, and charged once or refunded once; the guilds'
 * spend equals the simulator's charges, net of refunds.
 */
import { sleep } from '@music-bot/test-world';
import { atRate } from '../../bench/support.js';
import { auditFigures, type Scenario } from '../scenario.js';

export const killedWorkers: Scenario = {
  name: 'killed-workers',
  title: 'a random worker killed (SIGKILL) every few seconds',
  async run(world, { jobs, quick }) {
    const crashesBefore = world.crashes().length;
    const prefix = 'chaos killed-workers';
    let kills = 0;
    let sending = true;
    const killer = (async () => {
      // Kill, wait a moment with the worker down, start it again; until every command is sent and then one round more.
      let rounds = 0;
      while (sending || rounds < 1) {
        if (!sending) rounds += 1;
        await sleep(quick ? 800 : 2_500);
        const victim = world.processes[Math.random() < 0.5 ? 'worker-1' : 'worker-2'];
        await victim.kill();
        kills += 1;
        await sleep(quick ? 200 : 1_000);
        await victim.start();
      }
    })();
    const handles = await atRate(jobs, quick ? 10 : 20, (i) => world.song(world.places[i % world.places.length]!, `${prefix} ${i}`));
    const answers = await Promise.all(handles.map((handle) => handle.waitForResponse(30_000).then(() => true, () => false)));
    sending = false;
    await killer;
    const audit = await world.settleAndAudit({ prefix, timeoutMs: quick ? 60_000 : 180_000 });
    const figures = auditFigures(audit, world, crashesBefore);
    const unanswered = answers.filter((answered) => !answered).length;
    return { ...figures, zero: { ...figures.zero, unanswered }, info: { ...figures.info, kills } };
  },
};
