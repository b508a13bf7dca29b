import { existsSync } from 'node:fs';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startWorld, waitFor, type Crash, type World } from '../src/index.js';

describe('waitFor', () => {
  it('returns the value once the check gives one', async () => {
    let calls = 0;
    const value = await waitFor('the third call', () => (++calls >= 3 ? `call ${calls}` : undefined), { timeoutMs: 5_000, everyMs: 1 });
    expect(value).toBe('call 3');
  });

  it('names what it waited for when it gives up', async () => {
    await expect(waitFor('a value that never comes', () => false, { timeoutMs: 50, everyMs: 5 })).rejects.toThrow('timed out: a value that never comes');
  });
});

describe('a world of its own', () => {
  let world: World;
  beforeAll(async () => {
    world = await startWorld({ sim: { taskMs: 200 } });
  }, 120_000);
  afterAll(async () => world?.close());

  it('keeps Postgres data across a stop and a start on the same port', async () => {
    const query = async (sql: string) => {
      const client = new pg.Client({ connectionString: world.postgresUrl });
      await client.connect();
      try {
        return (await client.query(sql)).rows as unknown[];
      } finally {
        await client.end();
      }
    };
    await query('create table kept (n int); insert into kept values (7)');
    await world.postgres!.stop();
    expect(world.postgres!.running).toBe(false);
    await world.postgres!.start();
    expect(await query('select n from kept')).toEqual([{ n: 7 }]);
  }, 60_000);

  it('runs the bot as a process: commands deployed, started, a song made, stopped with SIGTERM and exit 0', async () => {
    await world.deployCommands();
    expect(world.emulator.registeredCommands().map((command) => command.name)).toContain('song');
    const crashes: Crash[] = [];
    const bot = world.bot({ env: { LOG_LEVEL: 'info', STARTING_CREDITS: '50', PUBLIC_URL: world.httpUrl }, onCrash: (crash) => crashes.push(crash) });
    await bot.start();
    await world.emulator.waitForBotReady(30_000);
    expect(bot.pid).toBeTypeOf('number');

    const guild = world.emulator.createGuild({ name: 'World test' });
    const channel = world.emulator.createChannel(guild.id, { name: 'music' });
    const member = world.emulator.addMember(guild.id, { username: 'maker' });
    world.emulator.runCommand({ guildId: guild.id, channelId: channel.id, userId: member.id, name: 'song', options: { prompt: 'a world of its own' } });
    await waitFor('the service to get the task', () => world.sim.listTasks().find((task) => task.body.sound === 'a world of its own'), { timeoutMs: 30_000 });

    const exit = await bot.stop();
    expect(exit, `the bot's last output:\n${bot.output().slice(-6000)}`).toEqual({ code: 0, signal: null });
    expect(bot.running).toBe(false);
    expect(crashes).toEqual([]);
    expect(bot.logLines().some((line) => line.msg === 'bot started')).toBe(true);
  }, 120_000);

  it('reports a bot that exits by itself as a crash, with what it wrote', async () => {
    const crashes: Crash[] = [];
    const bot = world.bot({ name: 'broken', env: { DATABASE_URL: 'not a url' }, onCrash: (crash) => crashes.push(crash) });
    await expect(bot.start()).rejects.toThrow(/broken exited \(1\) before it started/);
    expect(crashes).toMatchObject([{ name: 'broken', code: 1 }]);
    expect(crashes[0]!.tail).toContain('DATABASE_URL');
  }, 60_000);

  it('removes its folder when it closes', async () => {
    const other = await startWorld({ postgres: { url: world.postgresUrl }, redis: { url: world.redisUrl, prefix: 'other' } });
    expect(other.postgres).toBeUndefined();
    expect(other.env().QUEUE_PREFIX).toBe('other');
    expect(existsSync(other.temp)).toBe(true);
    await other.close();
    expect(existsSync(other.temp)).toBe(false);
  });
});
