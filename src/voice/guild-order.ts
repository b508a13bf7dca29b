/**
 * Each guild's player changes, one after another: a song ending never races a command or the
 * idle timer of the same guild, while other guilds go on at once.
 */
export class GuildOrder {
  readonly #tails = new Map<string, Promise<unknown>>();

  /** Runs `work` after the guild's earlier work has settled (whether it succeeded or not). */
  run<T>(guildId: string, work: () => Promise<T>): Promise<T> {
    const previous = this.#tails.get(guildId) ?? Promise.resolve();
    const next = previous.then(work, work);
    const settled = next.catch(() => {});
    this.#tails.set(guildId, settled);
    void settled.then(() => {
      if (this.#tails.get(guildId) === settled) this.#tails.delete(guildId);
    });
    return next;
  }

  /** Guilds with work queued or running. */
  get busy(): number {
    return this.#tails.size;
  }
}
