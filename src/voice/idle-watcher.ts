/**
 * Leaves a voice channel nobody listens in: when the bot's channel has no listener, a
 * countdown of `idleMs` starts; a listener coming back stops it; at its end, if the channel is
 * still empty, `leave` runs. A player told to stay (radio `stay`) is never counted idle.
 */
import type { Guild } from 'discord.js';

/** The members in a voice channel who listen: not bots, not the bot itself. */
export function listenersIn(guild: Guild, channelId: string): string[] {
  return guild.voiceStates.cache.filter((voice) => voice.channelId === channelId && voice.member?.user.bot !== true && voice.id !== guild.client.user.id).map((voice) => voice.id);
}

/** The listeners where the bot is in `guild` (else in `lineChannelId`, the channel its line joined); undefined when neither. */
export function listenersOfPlayer(guild: Guild | undefined, lineChannelId: string | null): string[] | undefined {
  const channelId = guild?.voiceStates.cache.get(guild.client.user.id)?.channelId ?? lineChannelId;
  return guild && channelId ? listenersIn(guild, channelId) : undefined;
}

export interface IdleWatcherOptions {
  readonly idleMs: number;
  /** The listeners (members who are not bots) in the guild's player channel; undefined when nothing plays there. */
  listeners(guildId: string): readonly string[] | undefined;
  /** Whether the guild's player stays in an empty channel. */
  stays(guildId: string): Promise<boolean>;
  /** The channel stayed empty for `idleMs`. */
  leave(guildId: string): void;
}

export class IdleWatcher {
  readonly #options: IdleWatcherOptions;
  readonly #timers = new Map<string, NodeJS.Timeout>();
  /** Guilds whose `stays` is being read, so that two checks at once start one countdown. */
  readonly #checking = new Set<string>();

  constructor(options: IdleWatcherOptions) {
    this.#options = options;
  }

  /** Looks at the guild's channel now: starts the countdown when it is empty, stops it when it is not. */
  check(guildId: string): void {
    const listeners = this.#options.listeners(guildId);
    if (listeners === undefined) return;
    if (listeners.length > 0) {
      this.forget(guildId);
      return;
    }
    if (this.#timers.has(guildId) || this.#checking.has(guildId)) return;
    this.#checking.add(guildId);
    void this.#options
      .stays(guildId)
      .catch(() => false)
      .then((stays) => {
        this.#checking.delete(guildId);
        if (stays || this.#timers.has(guildId) || this.#options.listeners(guildId)?.length !== 0) return;
        const timer = setTimeout(() => {
          this.#timers.delete(guildId);
          if (this.#options.listeners(guildId)?.length === 0) this.#options.leave(guildId);
        }, this.#options.idleMs);
        timer.unref();
        this.#timers.set(guildId, timer);
      });
  }

  /** Stops the guild's countdown (a listener came, or the player ended). */
  forget(guildId: string): void {
    const timer = this.#timers.get(guildId);
    if (timer) clearTimeout(timer);
    this.#timers.delete(guildId);
  }

  /** Whether the guild's countdown runs. */
  counting(guildId: string): boolean {
    return this.#timers.has(guildId);
  }
}
