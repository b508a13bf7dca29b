/**
 * `npm run discord-emulator -- --port 8090`: runs the emulator standalone, prints what to give
 * the bot and the ids of a seeded guild, channel and user, and on a terminal reads commands as
 * that user (`repl.ts`; README.md, "Running it"). `--automod-keywords` seeds a keyword rule.
 */
import { parseArgs } from 'node:util';
import { ChannelType } from 'discord-api-types/v10';
import { pino } from 'pino';
import { startDiscordEmulator } from './emulator.js';
import { createKeywordRule, describeRule, listOption, startRepl } from './repl.js';

const USAGE = `Usage: npm run discord-emulator -- [--port 8090] [--host 127.0.0.1] [--token T] [--application-id ID]
  [--bot-user-id ID] [--openapi PATH] [--no-validate] [--no-rate-limits] [--log-level info]
  [--automod-keywords "word,pre*"]   (an enabled AutoMod keyword rule in the seeded guild)
  [--client-secret S] [--redirect-uri URL ...]   (OAuth2: the application's secret and registered redirects)`;

function write(line = ''): void {
  process.stdout.write(`${line}\n`);
}

async function main(): Promise<void> {
  const { values } = parseArgs({
    options: {
      port: { type: 'string', default: '8090' },
      host: { type: 'string', default: '127.0.0.1' },
      token: { type: 'string' },
      'application-id': { type: 'string' },
      'bot-user-id': { type: 'string' },
      openapi: { type: 'string' },
      'no-validate': { type: 'boolean', default: false },
      'no-rate-limits': { type: 'boolean', default: false },
      'log-level': { type: 'string', default: 'warn' },
      'automod-keywords': { type: 'string' },
      'client-secret': { type: 'string' },
      'redirect-uri': { type: 'string', multiple: true },
      help: { type: 'boolean', default: false },
    },
  });
  if (values.help) {
    write(USAGE);
    return;
  }
  const port = Number(values.port);
  if (!Number.isInteger(port) || port < 0 || port > 65_535) throw new Error(`--port must be a port number, got ${values.port}`);
  const emu = await startDiscordEmulator({
    port,
    host: values.host,
    botToken: values.token,
    applicationId: values['application-id'],
    botUserId: values['bot-user-id'],
    openApiPath: values.openapi,
    validateRequests: !values['no-validate'],
    rateLimits: !values['no-rate-limits'],
    logger: pino({ level: values['log-level'], name: 'discord-emulator' }),
    oauth2: { clientSecret: values['client-secret'], redirectUris: values['redirect-uri'] ?? [] },
  });
  const guild = emu.createGuild({ name: 'Emulator Guild' });
  const channel = emu.createChannel(guild.id, { name: 'general' });
  const user = emu.addMember(guild.id, { username: 'tester' });
  const lounge = emu.createChannel(guild.id, { name: 'Lounge', type: ChannelType.GuildVoice });

  write('Discord emulator listening. Give the bot:');
  write(`  DISCORD_API_URL=${emu.apiUrl}`);
  write(`  DISCORD_TOKEN=${emu.botToken}`);
  write(`  DISCORD_APPLICATION_ID=${emu.applicationId}`);
  write(`  DISCORD_PUBLIC_KEY=${emu.publicKey}   (with INTERACTIONS=http)`);
  write(`  NODE_EXTRA_CA_CERTS=${emu.voiceCaPath}   (to trust the voice gateway's certificate)`);
  write(`  DISCORD_WEB_URL=${emu.webUrl}   (Sign in with Discord: ${emu.webUrl}/oauth2/authorize)`);
  write(`  DISCORD_CLIENT_SECRET=${emu.clientSecret}   (OAuth2; redirects: ${emu.oauth2Redirects.join(' ') || 'none, add --redirect-uri'})`);
  write(`Gateway:  ${emu.gatewayUrl}`);
  write(`Guild:    ${guild.id} (Emulator Guild)`);
  write(`Channel:  ${channel.id} (#general)`);
  write(`Voice:    ${lounge.id} (Lounge, voice gateway ${emu.voiceEndpoint})`);
  write(`User:     ${user.id} (tester)`);
  if (values['automod-keywords'] !== undefined) {
    const keywords = listOption(values['automod-keywords']);
    if (keywords.length === 0) throw new Error('--automod-keywords takes words separated by commas, e.g. "cat*,dog"');
    write(`AutoMod:  ${describeRule(createKeywordRule(emu, guild.id, { name: 'Blocked words', keywords }))}`);
  }

  const stop = (): void => {
    void emu.close().then(() => process.exit(0));
  };
  process.once('SIGINT', stop);
  process.once('SIGTERM', stop);
  if (process.stdin.isTTY) startRepl(emu, { guildId: guild.id, channelId: channel.id, userId: user.id });
}

main().catch((error: unknown) => {
  process.stderr.write(`${(error as Error).message}\n${USAGE}\n`);
  process.exit(1);
});
