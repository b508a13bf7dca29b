/** Starting the players in a process that runs the gateway: its checks at start-up, and the host's life. */
import { generateDependencyReport } from '@discordjs/voice';
import { Events, type Client } from 'discord.js';
import type { RedisClient } from '../queue/connection.js';
import type { Config } from '../config.js';
import type { Database } from '../db/client.js';
import type { Logger } from '../logger.js';
import type { VoiceControl } from './control.js';
import { checkFfmpeg, FFMPEG_MISSING, type FfmpegCheck } from './ffmpeg.js';
import { VoiceEngine } from './engine/engine.js';
import { RedisGuildLease } from './guild-lease.js';
import { PlayerHost } from './player.js';
import { createPlayerStore } from './store.js';

/**
 * Logs @discordjs/voice's dependency report at debug level, and one readable line when ffmpeg
 * is missing (the voice commands then say so) or lacks libopus (Opus is then encoded in Node).
 */
export async function checkVoiceDependencies(config: Pick<Config, 'ffmpegPath'>, logger: Logger): Promise<FfmpegCheck> {
  logger.debug({ report: generateDependencyReport() }, 'voice dependency report');
  const ffmpeg = await checkFfmpeg(config.ffmpegPath);
  if (!ffmpeg.found) logger.warn({ ffmpegPath: config.ffmpegPath }, FFMPEG_MISSING);
  else if (!ffmpeg.libopus) logger.warn({ ffmpegPath: config.ffmpegPath, version: ffmpeg.version }, 'ffmpeg has no libopus: voice playback encodes Opus in Node with opusscript, at more CPU');
  else logger.debug({ ffmpegPath: config.ffmpegPath, version: ffmpeg.version }, 'ffmpeg found with libopus');
  return ffmpeg;
}

export interface Players {
  stop(): Promise<void>;
}

/** The host of this process's players: answers voice requests for its guilds and resumes what was playing, now and on each shard's READY. */
export async function startPlayers(input: {
  client: Client<true>;
  db: Database;
  redis: RedisClient;
  prefix: string;
  logger: Logger;
  config: Pick<Config, 'ffmpegPath' | 'voiceIdleSeconds' | 'voiceLeaseMs' | 'voiceThreads'>;
  ffmpeg: FfmpegCheck;
  voice: VoiceControl;
}): Promise<Players> {
  const { client, logger } = input;
  const engine = new VoiceEngine({ logger, ffmpegPath: input.config.ffmpegPath, libopus: input.ffmpeg.libopus, threads: input.config.voiceThreads });
  const host = new PlayerHost({
    client,
    db: input.db,
    lease: new RedisGuildLease({ redis: input.redis, prefix: input.prefix, durationMs: input.config.voiceLeaseMs }),
    store: createPlayerStore(input.redis, input.prefix),
    logger,
    ffmpeg: input.ffmpeg,
    engine,
    idleSeconds: input.config.voiceIdleSeconds,
  });
  await input.voice.attach(host);
  const resume = () => void host.resumeAll().catch((error: unknown) => logger.warn({ err: error }, 'voice players could not resume'));
  client.on(Events.ShardReady, resume);
  resume();
  return {
    async stop() {
      client.off(Events.ShardReady, resume);
      await host.stop();
      await engine.close();
    },
  };
}
