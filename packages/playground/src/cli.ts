/**
 * `npm run playground -- [--port 3000] [--host 127.0.0.1] [--fresh] [--task-ms 4000] [--song-seconds 20] [--contest-day-seconds 60] [--data-dir ./data/playground]`
 * Starts everything and prints the page's address. The bot's logs go to playground.log in the
 * data folder, so the terminal shows only what a person needs.
 */
import { createWriteStream, existsSync } from 'node:fs';
import { mkdir } from 'node:fs/promises';
import path from 'node:path';
import { isIP } from 'node:net';
import { parseArgs } from 'node:util';
import { VOICE_CA_PATH } from '@music-bot/discord-emulator/voice/server.js';
import { checkTools, pathWithBundledFfmpeg } from '@music-bot/test-world/tools.js';
import { exitWithError } from '../../../src/cli-support.js';
import { createLogger } from '../../../src/logger.js';
import { locationNoteFor, relocatedClusterDir } from '../../../src/embedded/embedded-postgres.js';
import { findFreePort } from '../../../src/embedded/free-port.js';
import { DEFAULT_CONTEST_DAY_SECONDS, DEFAULT_SONG_SECONDS, DEFAULT_TASK_MS, LOG_FILE, startPlayground } from './playground.js';
import { DEFAULT_HOST, isLoopback } from './web.js';

const USAGE = `Usage: npm run playground -- [--port <port>] [--host <address>] [--fresh] [--task-ms <ms>] [--song-seconds <s>] [--contest-day-seconds <s>] [--data-dir <folder>]

  --port       the page's port (default 3000, or a free one when 3000 is taken)
  --host       the address to listen on (default 127.0.0.1: this machine only)
  --fresh      start from empty data (by default credits, settings and jobs are kept)
  --task-ms    how long the simulated music service takes per task (default ${DEFAULT_TASK_MS})
  --song-seconds  how long its songs are (default ${DEFAULT_SONG_SECONDS}; made with ffmpeg)
  --contest-day-seconds  how long a day of /contest start days: lasts (default ${DEFAULT_CONTEST_DAY_SECONDS}: a contest in minutes)
  --data-dir   where the playground keeps its data (default data/playground in the checkout)`;

const ROOT = path.resolve(import.meta.dirname, '../../..');
const DEFAULT_PORT = 3_000;

function fail(message: string): never {
  process.stderr.write(`${message}\n\n${USAGE}\n`);
  process.exit(2);
}

function wholeNumber(name: string, value: string | undefined, min: number, max: number): number | undefined {
  if (value === undefined) return undefined;
  const number = Number(value);
  if (!Number.isInteger(number) || number < min || number > max) fail(`--${name} must be a whole number from ${min} to ${max}, not "${value}".`);
  return number;
}

/** 3000 when it is free, as a person would expect; any free port otherwise. */
async function defaultPort(host: string): Promise<number> {
  const { createServer } = await import('node:net');
  return new Promise((resolve) => {
    const probe = createServer();
    probe.once('error', () => resolve(findFreePort()));
    probe.listen(DEFAULT_PORT, host.replace(/^\[(.*)\]$/, '$1'), () => probe.close(() => resolve(DEFAULT_PORT)));
  });
}

let args;
try {
  args = parseArgs({
    options: {
      port: { type: 'string' },
      host: { type: 'string' },
      fresh: { type: 'boolean', default: false },
      'task-ms': { type: 'string' },
      'song-seconds': { type: 'string' },
      'contest-day-seconds': { type: 'string' },
      'data-dir': { type: 'string' },
      help: { type: 'boolean', short: 'h', default: false },
    },
  }).values;
} catch (error) {
  fail((error as Error).message);
}
if (args.help) {
  process.stdout.write(`${USAGE}\n`);
  process.exit(0);
}

// What the playground runs outside npm, checked before anything starts; ffmpeg is npm's where the system has none.
process.env.PATH = pathWithBundledFfmpeg();
const tools = checkTools('playground');
if (tools.line !== undefined) {
  process.stderr.write(`${tools.line}\n`);
  process.exit(1);
}

const dataDir = path.resolve(args['data-dir'] ?? path.join(ROOT, 'data/playground'));
const host = args.host?.trim() || DEFAULT_HOST;
if (isIP(host.replace(/^\[(.*)\]$/, '$1')) === 0 && host !== 'localhost') fail(`--host must be an IP address such as 127.0.0.1 or 0.0.0.0, or localhost, not "${args.host}".`);
const port = wholeNumber('port', args.port, 0, 65_535) ?? (await defaultPort(host));
const taskMs = wholeNumber('task-ms', args['task-ms'], 0, 600_000);
const songSeconds = wholeNumber('song-seconds', args['song-seconds'], 1, 600);
const contestDaySeconds = wholeNumber('contest-day-seconds', args['contest-day-seconds'], 1, 86_400);

await mkdir(dataDir, { recursive: true });
const logFile = path.join(dataDir, LOG_FILE);
const logger = createLogger({ level: 'info' }, createWriteStream(logFile, { flags: 'a' }));

process.stdout.write(`Starting the playground (Postgres, Redis, the music simulator, the Discord emulator and the bot)…\n`);
// Node reads NODE_EXTRA_CA_CERTS only as it starts: `npm run playground` sets it.
if (path.resolve(process.env.NODE_EXTRA_CA_CERTS ?? '') !== VOICE_CA_PATH) {
  process.stdout.write(
    `Warning: NODE_EXTRA_CA_CERTS is not ${path.relative(ROOT, VOICE_CA_PATH)}, so the bot will not trust the emulated voice server: it joins voice channels but plays nothing. Start with npm run playground, which sets it.\n`,
  );
}
if (!isLoopback(host)) {
  process.stdout.write(`Warning: listening on ${host}, not only this machine: the playground has no login, so anyone who can reach it acts as any member, a moderator or the bot's owner.\n`);
}
try {
  const playground = await startPlayground({ dataDir, port, host, fresh: args.fresh, taskMs, songSeconds, contestDaySeconds, logger });
  // Run as root from a closed folder, Postgres keeps its data elsewhere; say where.
  const cluster = path.join(dataDir, 'postgres');
  const elsewhere = existsSync(locationNoteFor(cluster)) ? `; Postgres's part is in ${relocatedClusterDir(cluster)}, where the postgres user can reach it` : '';
  process.stdout.write(
    [
      '',
      `  Playground ready: ${playground.url}`,
      '',
      `  Open it in a browser and type /song prompt:rainy night lofi in #music.`,
      '  Join the Lounge voice channel and press "Play in voice" on a song to hear it.',
      `  Data: ${dataDir} (kept between runs; --fresh starts over)${elsewhere}.`,
      `  Logs: ${logFile}`,
      '  Stop with Ctrl+C.',
      '',
    ].join('\n'),
  );
  let stopping = false;
  const shutdown = () => {
    if (stopping) return;
    stopping = true;
    process.stdout.write('Stopping the playground…\n');
    playground.stop().then(
      () => process.exit(0),
      () => process.exit(1),
    );
  };
  process.on('SIGINT', shutdown);
  process.on('SIGTERM', shutdown);
} catch (error) {
  logger.error({ err: error }, 'playground start failed');
  if ((error as NodeJS.ErrnoException).code === 'EADDRINUSE') {
    process.stderr.write(`Port ${port} is taken by another program: pick another with --port, or leave --port out to get a free one.\n`);
    process.exit(1);
  }
  exitWithError(error);
}
