/**
 * A voice line for the player's tests: it records what it is told to play and whether it left;
 * the test ends a song through `onEnded` and drops the line through `onGone`.
 */
import type { PlayerLine } from '../../src/voice/dispatcher.js';
import type { PlayFrom } from '../../src/voice/engine/engine.js';

export class FakeVoiceLine implements PlayerLine {
  readonly played: string[] = [];
  /** Where and how loud each play started (a seek or a volume restarts the song). */
  readonly starts: PlayFrom[] = [];
  paused = false;
  left = false;
  onEnded: PlayerLine['onEnded'] = () => {};
  onGone: PlayerLine['onGone'] = () => {};
  constructor(
    readonly channelId: string,
    readonly guildId = '',
  ) {}
  play(url: string, from: PlayFrom = {}): number {
    this.played.push(url);
    this.starts.push(from);
    return this.played.length;
  }
  async stopSong(): Promise<boolean> {
    return false;
  }
  async pause(): Promise<void> {
    this.paused = true;
  }
  async unpause(): Promise<void> {
    this.paused = false;
  }
  /** Where the song playing is, as `playbackMs` reports it. */
  positionMs = 0;
  async playbackMs(): Promise<number> {
    return this.positionMs;
  }
  /** How much of the song playing was heard, as `heardMs` reports it. */
  heardPlayingMs = 0;
  async heardMs(): Promise<number> {
    return this.heardPlayingMs;
  }
  leave(): void {
    this.left = true;
  }
}
