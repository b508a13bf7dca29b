/**
 * The floor of the ack and accept benchmarks: a bare discord.js bot, in its own process as the
 * bot is, that answers every command either with one guarded balance decrement on its guild's
 * row of `bench_floor` (rows 0 to FLOOR_GUILDS − 1, one per guild in the order guilds are first
 * seen) and a reply (`decide`), or with a deferral only (`defer`). Configured by the
 * environment the benchmark gives it (`spawnFloorBot` in support.ts); prints `ready` once connected.
 */
import { Client, Events, GatewayIntentBits, MessageFlags } from 'discord.js';
import pg from 'pg';

const mode = process.argv[2] === 'defer' ? 'defer' : 'decide';
const guilds = Number(process.env.FLOOR_GUILDS ?? '5');
const cost = 10;
const db = new pg.Pool({ connectionString: process.env.DATABASE_URL, max: 10 });
const client = new Client({ intents: [GatewayIntentBits.Guilds], rest: { api: process.env.DISCORD_API_URL } });
/** Each guild's row, in the order guilds are first seen. */
const rows = new Map<string, number>();
const rowOf = (guildId: string | null) => {
  const key = guildId ?? '';
  let row = rows.get(key);
  if (row === undefined) rows.set(key, (row = rows.size % guilds));
  return row;
};
client.on(Events.InteractionCreate, (interaction) => {
  if (!interaction.isChatInputCommand()) return;
  const answer = async () => {
    if (mode === 'defer') {
      await interaction.deferReply({ flags: MessageFlags.Ephemeral });
      return;
    }
    await db.query('update bench_floor set n = n - $1 where id = $2 and n >= $1 returning n', [cost, rowOf(interaction.guildId)]);
    await interaction.reply({ content: 'Starting a song…' });
  };
  answer().catch((error: unknown) => console.error('floor bot:', error));
});
client.once(Events.ClientReady, () => console.log('ready'));
process.once('SIGTERM', () => {
  void client.destroy().then(() => db.end()).then(() => process.exit(0));
});
await client.login(process.env.DISCORD_TOKEN);
