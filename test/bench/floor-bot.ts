/**
 * The floor of the ack benchmark: a bare discord.js bot, in its own process as the bot is,
 * that answers every command either with one guarded balance decrement and a reply
 * (`decide`) or with a deferral only (`defer`). Configured by the environment the benchmark
 * gives it; prints `ready` once connected.
 */
import { Client, Events, GatewayIntentBits, MessageFlags } from 'discord.js';
import pg from 'pg';

const mode = process.argv[2] === 'defer' ? 'defer' : 'decide';
const guilds = Number(process.env.FLOOR_GUILDS ?? '5');
const cost = 10;
const db = new pg.Pool({ connectionString: process.env.DATABASE_URL, max: 10 });
const client = new Client({ intents: [GatewayIntentBits.Guilds], rest: { api: process.env.DISCORD_API_URL } });
let next = 0;
client.on(Events.InteractionCreate, (interaction) => {
  if (!interaction.isChatInputCommand()) return;
  const answer = async () => {
    if (mode === 'defer') {
      await interaction.deferReply({ flags: MessageFlags.Ephemeral });
      return;
    }
    await db.query('update bench_floor set n = n - $1 where id = $2 and n >= $1 returning n', [cost, next++ % guilds]);
    await interaction.reply({ content: 'Starting a song…' });
  };
  answer().catch((error: unknown) => console.error('floor bot:', error));
});
client.once(Events.ClientReady, () => console.log('ready'));
process.once('SIGTERM', () => {
  void client.destroy().then(() => db.end()).then(() => process.exit(0));
});
await client.login(process.env.DISCORD_TOKEN);
