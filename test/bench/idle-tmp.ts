import { sleep } from '@music-bot/test-world';
import { cpuMsOfAll, cpuMsOfCommands, startBenchWorld } from './support.js';
const world = await startBenchWorld();
try {
  await world.deployCommands();
  const env = { STARTING_CREDITS: '100000000', UPSTREAM_MAX_IN_FLIGHT: '100000', EXPECTED_SECONDS: 'song=3600' };
  const bot = world.bot({ env: { ...env, ROLE: 'all' } });
  bot.spawn();
  await world.emulator.waitForBotReady(60_000);
  await sleep(10_000);
  const read = async () => ({ bot: await cpuMsOfAll([bot.pid!]), ...(await cpuMsOfCommands(['postgres', 'redis-server'])), world: process.cpuUsage().user / 1000 + process.cpuUsage().system / 1000 });
  const a = await read();
  await sleep(30_000);
  const b = await read();
  console.log('idle CPU ms per second over 30 s:', Object.fromEntries(Object.entries(b).map(([k, v]) => [k, ((v - (a as Record<string, number>)[k]!) / 30).toFixed(1)])));
} finally {
  await world.close();
}
