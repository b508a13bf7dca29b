/**
 * `npm run playground`: the whole bot on one machine, with no configuration and no secrets.
 * The bot runs in its zero-setup mode (embedded Postgres and Redis under the data folder) on
 * the test world's stand-ins, through the same `startApp` and discord.js client that `npm start`
 * runs, behind a web page that looks like a channel.
 */
import { spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync } from 'node:fs';
import { mkdir, readdir, rm } from 'node:fs/promises';
import path from 'node:path';
import type { App } from '../../../src/app.js';
import type { Logger } from '../../../src/logger.js';
import { locationNoteFor, relocatedClusterDir } from '../../../src/embedded/embedded-postgres.js';
import { findFreePort } from '../../../src/embedded/free-port.js';
import type { DiscordEmulator } from '@music-bot/discord-emulator';
import type { MusicApiSim } from '@music-bot/music-api-sim';
import { startWebServer, type WebServer } from './web.js';

export interface PlaygroundOptions {
  /** Where Postgres, Redis and the world's ids live between runs. */
  readonly dataDir: string;
  /** The web page's port; 0 picks a free one. */
  readonly port: number;
  /** Where the page listens. @defaultValue '127.0.0.1' (this machine only) */
  readonly host?: string;
  /** Start from empty data. @defaultValue false */
  readonly fresh?: boolean;
  /** How long the simulated music service takes per task. @defaultValue 4000 */
  readonly taskMs?: number;
  /** How long the simulated songs are (played in the voice channel). @defaultValue 20 */
  readonly songSeconds?: number;
  /** How long a day of `/contest start days:` lasts, so a contest ends in minutes. @defaultValue 60 */
  readonly contestDaySeconds?: number;
  /** Credits a new server starts with. @defaultValue 500 */
  readonly startingCredits?: number;
  /** The bot's and the stand-ins' logs; the page is the playground's real output. */
  readonly logger: Logger;
}

export interface Playground {
  /** The page, e.g. `http://127.0.0.1:3000/`. */
  readonly url: string;
  readonly emulator: DiscordEmulator;
  readonly sim: MusicApiSim;
  readonly app: App;
  stop(): Promise<void>;
}

export const DEFAULT_TASK_MS = 4_000;
export const DEFAULT_SONG_SECONDS = 20;
/** A contest's day in the playground: a minute, so a newcomer sees one end. */
export const DEFAULT_CONTEST_DAY_SECONDS = 60;
/** The log's name in the data folder; `--fresh` keeps it. */
export const LOG_FILE = 'playground.log';

/** Where the page serves the emulator's attachments. */
const DISCORD_CDN_PREFIX = '/discord-cdn';

/** The emulator's token; it opens nothing outside this machine. */
const BOT_TOKEN = 'playground.bot-token.for-the-local-discord-emulator-only';

/** Everything but the log, which the caller may be writing to; also a cluster kept elsewhere (run as root). */
async function emptyDataDir(dataDir: string): Promise<void> {
  const cluster = path.join(dataDir, 'postgres');
  if (existsSync(locationNoteFor(cluster))) await rm(relocatedClusterDir(cluster), { recursive: true, force: true });
  for (const entry of await readdir(dataDir)) {
    if (entry !== LOG_FILE) await rm(path.join(dataDir, entry), { recursive: true, force: true });
  }
}

function hasFfmpeg(): boolean {
  return spawnSync('ffmpeg', ['-version']).status === 0;
}

export async function startPlayground(options: PlaygroundOptions): Promise<Playground> {
  const { logger } = options;
  const taskMs = options.taskMs ?? DEFAULT_TASK_MS;
  const dataDir = path.resolve(options.dataDir);
  await mkdir(dataDir, { recursive: true });
  if (options.fresh) await emptyDataDir(dataDir);
  const worldFile = path.join(dataDir, 'world.json');

  const stops: Array<() => Promise<void>> = [];
  const stop = async () => {
    for (const step of stops.reverse()) await step().catch((err: unknown) => logger.error({ err }, 'playground stop step failed'));
  };
  try {
    // The page binds first: the simulator's media and the emulator's attachments go through it,
    // so their links keep working across runs on the same port though the others' ports change.
    const web: WebServer = await startWebServer({ port: options.port, ...(options.host && { host: options.host }), logger });
    stops.push(() => web.close());

    // Loaded once the page has its port: a taken port is told without loading the bot first.
    const [{ applicationCommandDefinitions }, { startApp }, { loadConfig }, { deployCommands }, { startStandIns }, { keepHistory }, { playgroundApplicationId, seedWorld, skuEnv }] = await Promise.all([
      import('../../../commands/index.js'),
      import('../../../src/app.js'),
      import('../../../src/config.js'),
      import('../../../src/discord/deploy.js'),
      import('@music-bot/test-world'),
      import('./history.js'),
      import('./world.js'),
    ]);
    const applicationId = await playgroundApplicationId(worldFile);
    const standIns = await startStandIns({
      sim: {
        apiKey: randomBytes(18).toString('base64url'),
        credits: 1_000_000,
        taskMs,
        // Songs long enough to listen to in the voice channel; they need ffmpeg, like the bot's player.
        ...(hasFfmpeg() && { songSeconds: options.songSeconds ?? DEFAULT_SONG_SECONDS }),
        publicUrl: `${web.origin}/music-api`,
        logger: logger.child({ part: 'music-api-sim' }),
      },
      emulator: {
        botToken: BOT_TOKEN,
        applicationId,
        botUserId: applicationId,
        botUsername: 'music-bot',
        // Attachments (the CSV export, uploads) come through the page's address too: one port to forward.
        cdnUrl: `${web.origin}${DISCORD_CDN_PREFIX}`,
        logger: logger.child({ part: 'discord-emulator' }),
      },
    });
    stops.push(() => standIns.close());
    const { sim, emulator } = standIns;
    web.proxyMedia('/music-api', sim.url);
    web.proxyMedia(DISCORD_CDN_PREFIX, emulator.origin);
    const world = await seedWorld(emulator, worldFile);
    const history = keepHistory(emulator, world.channels.map((channel) => channel.id), path.join(dataDir, 'history.json'), logger);
    stops.push(async () => {
      await history.flush();
      history.stop();
    });

    const httpPort = await findFreePort();
    // The moderators' dashboard on the bot's own port, signed in through the emulator's OAuth2.
    const publicUrl = `http://127.0.0.1:${httpPort}`;
    emulator.setOAuth2Redirects([`${publicUrl}/dashboard/callback`]);
    const seconds = String(Math.max(1, Math.round(taskMs / 1000)));
    const config = loadConfig({
      // The playground's own environment: a real .env or DISCORD_TOKEN must never be picked up here.
      env: {
        ...standIns.env,
        DISCORD_DEV_GUILD_ID: world.guild.id,
        BOT_OWNER_IDS: world.users.filter((user) => user.role === 'owner').map((user) => user.id).join(','),
        DATA_DIR: dataDir,
        PUBLIC_URL: publicUrl,
        DISCORD_CLIENT_SECRET: emulator.clientSecret,
        DISCORD_WEB_URL: emulator.webUrl,
        HTTP_PORT: String(httpPort),
        STARTING_CREDITS: String(options.startingCredits ?? 500),
        EXPECTED_SECONDS: ['song', 'lyrics', 'video', 'upload', 'download', 'voice', 'persona_song'].map((kind) => `${kind}=${seconds}`).join(','),
        // One task of each kind at the service at a time: a second request waits its turn in the
        // bot's queue, with its Cancel button (longer while the page holds the music service).
        UPSTREAM_MAX_IN_FLIGHT: '1',
        POLL_INTERVAL_MIN_MS: '1000',
        POLL_INTERVAL_MAX_MS: '5000',
        // A contest of `days:1` ends in a minute, not a day.
        CONTEST_DAY_SECONDS: String(options.contestDaySeconds ?? DEFAULT_CONTEST_DAY_SECONDS),
        // What the page's premium buttons sell: "100 credits" and the "Server plan" subscription.
        ...skuEnv(world),
      },
    });

    await deployCommands(config, applicationCommandDefinitions);
    const app = await startApp(config, logger.child({ part: 'bot' }));
    stops.push(() => app.stop());
    await emulator.waitForBotReady(30_000);

    web.attach({ emulator, sim, world, taskMs, origins: history.origins, dashboardUrl: `${publicUrl}/dashboard` });
    return { url: `${web.origin}/`, emulator, sim, app, stop };
  } catch (error) {
    await stop();
    throw error;
  }
}
