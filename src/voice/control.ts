/**
 * The one way a voice command reaches a guild's player, wherever the command arrived: here
 * when this process's gateway holds the guild and plays it, else over Redis pub/sub to the
 * gateway process that does; only that process answers, on this process's reply channel.
 * A song leaving the library is a notice instead, answered by nobody: every gateway process
 * hears it, and the one playing the guild drops the song.
 */
import { randomUUID } from 'node:crypto';
import { closeRedis, watchRedisConnection, type RedisClient } from '../queue/connection.js';
import { localText } from '../i18n/index.js';
import { loggableError, type Logger } from '../logger.js';
import { answer, type PlayerAnswer, type PlayerRequest, type PlayerService } from './player-requests.js';
import { routeFor } from './rules.js';

export interface VoiceControl {
  /** Resolves with the player's answer, or "not reachable" after the timeout. Never rejects. */
  request(request: PlayerRequest): Promise<PlayerAnswer>;
  /**
   * Tells the guild's player, wherever it runs, that a song left the library (hidden or
   * deleted): it stops playing it and drops it from the queue. Resolves once sent; never rejects.
   */
  songRemoved(guildId: string, jobId: string): Promise<void>;
  /** A gateway process hands over its players once the gateway is ready: from then on it answers requests for its guilds. */
  attach(host: PlayerService): Promise<void>;
  stop(): Promise<void>;
}

export interface VoiceControlOptions {
  readonly redis: RedisClient;
  readonly prefix: string;
  readonly logger: Logger;
  /**
   * How long a request waits for the holder's answer. A play answers once the bot is in the
   * channel, which a busy holder can take seconds to reach; the command is deferred meanwhile.
   * @defaultValue 6000
   */
  readonly timeoutMs?: number;
}

/** A song that left a guild's library, as the notice carries it. */
interface RemovedSong {
  readonly guildId: string;
  readonly jobId: string;
}

interface Envelope {
  readonly id: string;
  readonly replyTo: string;
  readonly request: PlayerRequest;
}

export function createVoiceControl(options: VoiceControlOptions): VoiceControl {
  const { redis, prefix, logger } = options;
  const timeoutMs = options.timeoutMs ?? 6_000;
  const requests = `${prefix}:voice:requests`;
  const replyTo = `${prefix}:voice:replies:${randomUUID()}`;
  const removals = `${prefix}:voice:removed`;
  const pending = new Map<string, (answer: PlayerAnswer) => void>();
  let host: PlayerService | undefined;
  let subscriber: RedisClient | undefined;
  let subscribed: Promise<void> | undefined;

  async function serve(envelope: Envelope): Promise<void> {
    const { request } = envelope;
    if (!host || !host.holdsGuild(request.guildId) || !(await host.owns(request.guildId))) return;
    const reply = await host.handle(request);
    await redis.publish(envelope.replyTo, JSON.stringify({ id: envelope.id, answer: reply }));
  }

  /** Subscribes once: to this process's replies, and where a host is attached, to the requests. */
  function subscribe(): Promise<void> {
    subscribed ??= (async () => {
      subscriber = redis.duplicate();
      watchRedisConnection(subscriber, { name: 'voice-subscriber', logger });
      subscriber.on('message', (channel: string, raw: string) => {
        try {
          if (channel === replyTo) {
            const { id, answer: reply } = JSON.parse(raw) as { id: string; answer: PlayerAnswer };
            pending.get(id)?.(reply);
            pending.delete(id);
          } else if (channel === requests) {
            void serve(JSON.parse(raw) as Envelope).catch((error: unknown) => logger.warn({ err: loggableError(error) }, 'voice request from another process failed'));
          } else if (channel === removals) {
            const { guildId, jobId } = JSON.parse(raw) as RemovedSong;
            if (host?.holdsGuild(guildId)) void host.dropSong(guildId, jobId);
          }
        } catch (error) {
          logger.warn({ err: loggableError(error), channel }, 'unreadable voice message');
        }
      });
      await subscriber.subscribe(replyTo);
    })();
    return subscribed;
  }

  return {
    async request(request) {
      try {
        const local = host !== undefined && routeFor({ runsGateway: true, holdsGuild: host.holdsGuild(request.guildId) }) === 'local';
        if (local && (await host!.owns(request.guildId))) return await host!.handle(request);
        await subscribe();
        const id = randomUUID();
        const answered = new Promise<PlayerAnswer>((resolve) => {
          const timer = setTimeout(() => {
            pending.delete(id);
            logger.warn({ guildId: request.guildId, op: request.action.op, timeoutMs }, 'no process answered a voice request');
            resolve(answer(true, localText('player.unreachable')));
          }, timeoutMs);
          pending.set(id, (reply) => {
            clearTimeout(timer);
            resolve(reply);
          });
        });
        await redis.publish(requests, JSON.stringify({ id, replyTo, request } satisfies Envelope));
        return await answered;
      } catch (error) {
        logger.warn({ err: loggableError(error), guildId: request.guildId }, 'voice request could not be sent');
        return answer(true, localText('player.unreachable'));
      }
    },
    async songRemoved(guildId, jobId) {
      try {
        await redis.publish(removals, JSON.stringify({ guildId, jobId } satisfies RemovedSong));
      } catch (error) {
        logger.warn({ err: loggableError(error), guildId, jobId }, 'voice notice of a removed song could not be sent');
      }
    },
    async attach(attached) {
      host = attached;
      await subscribe();
      await subscriber!.subscribe(requests, removals);
    },
    async stop() {
      for (const resolve of pending.values()) resolve(answer(true, localText('player.unreachable')));
      pending.clear();
      if (subscriber) await closeRedis(subscriber);
    },
  };
}
