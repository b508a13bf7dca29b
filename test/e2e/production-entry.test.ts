/**
 * The compiled bot as the image runs it (`node build/src/main.js`), its commands registered by
 * `build/src/scripts/deploy-commands.js` (the one end-to-end file that runs the script), stopped
 * with SIGTERM while it works, as `docker stop` stops it through the image's init: the graceful
 * shutdown runs, the queue entries in hand are released, the process exits 0, and a new start
 * finishes every job once.
 */
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildFolder } from '@music-bot/test-world';
import { applicationCommandDefinitions } from '../../commands/index.js';
import { ledgerOfJob } from '../support/ledger.js';
import { printBotLogsOnFailure, startE2E, type E2E } from './bot-process.js';

let bot: E2E;
printBotLogsOnFailure(() => bot);

beforeAll(async () => {
  // The suite's build (test/support/bot-build.ts) is `npm run build`'s, as the image's build stage
  // runs it. It holds the bot alone: nothing of the stand-ins is compiled into it.
  expect(existsSync(path.join(buildFolder(), 'src/main.js'))).toBe(true);
  expect(existsSync(path.join(buildFolder(), 'packages'))).toBe(false);
  // The commands registered by the image's `node build/src/scripts/deploy-commands.js`, as its
  // register-commands step runs it: the other end-to-end files register them from the test's process.
  bot = await startE2E({ webhooks: false, entry: 'build', deployCommands: 'script', startingCredits: 200, sim: { taskMs: 3_000 } });
}, 240_000);
afterAll(async () => bot?.close());

describe('the production entry point', () => {
  it('registers the commands with deploy-commands, to the development guild', () => {
    const names = bot.emulator.registeredCommands(bot.guild.id).map((command) => command.name);
    expect(names.sort()).toEqual(applicationCommandDefinitions.map((definition) => definition.name).sort());
    expect(bot.emulator.registeredCommands()).toEqual([]);
  });

  it('stops gracefully on SIGTERM during work, exits 0, and loses nothing', async () => {
    const prompts = [1, 2, 3, 4].map((i) => `graceful goodbye ${i}`);
    const handles = prompts.map((prompt) => bot.run(bot.members.alice, { name: 'song', options: { prompt } }));
    const jobIds = await Promise.all(handles.map((handle) => bot.jobIdOf(handle)));
    const tasks = () => bot.sim.listTasks().filter((task) => prompts.includes(String(task.body.sound)));
    // Work under way: the service has the tasks and the bot polls them.
    await expect.poll(() => tasks().length, { timeout: 20_000 }).toBe(4);
    const botConnections = async () =>
      (
        await bot.db.pool.query<{ n: number }>(
          "select count(*)::int as n from pg_stat_activity where datname = current_database() and application_name like 'music-bot %'",
        )
      ).rows[0]!.n;
    expect(await botConnections()).toBeGreaterThan(0);

    expect(await bot.stop()).toEqual({ code: 0, signal: null });
    const messages = bot.output().split('\n').filter((line) => line.startsWith('{')).map((line) => (JSON.parse(line) as { msg: string }).msg);
    expect(messages).toContain('shutting down');
    expect(messages.at(-1)).toBe('stopped');
    expect(messages).not.toContain('shutdown did not finish in time; exiting');
    // Released, not left locked for BullMQ's 30 s: no entry of these jobs is still active.
    const entries = await Promise.all(jobIds.map((jobId) => bot.queueEntriesOf(jobId)));
    expect(entries.flatMap((e) => Object.values(e)).filter((state) => state === 'active')).toEqual([]);
    // Its connections are closed: Postgres has none left from the bot's pools (named `music-bot <role>`).
    await expect.poll(botConnections, { timeout: 5_000 }).toBe(0);

    await bot.start();
    for (const [i, jobId] of jobIds.entries()) {
      await bot.result(handles[i]!, jobId, 30_000);
      expect(await bot.delivered(jobId)).toEqual({ state: 'succeeded', deliveryState: 'delivered' });
      expect(await ledgerOfJob(bot.db.db, jobId)).toEqual([{ kind: 'reserve', amount: -10, key: `job:${jobId}:debit` }]);
    }
    expect(tasks()).toHaveLength(4);
    const rss = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${bot.pid}/status`, 'utf8'))?.[1];
    console.log(`[figure] the compiled bot (ROLE=all) after four songs: RSS ${Math.round(Number(rss) / 1024)} MB`);
  }, 120_000);
});
