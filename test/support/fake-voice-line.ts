/**
 * A voice line for the player's tests: it records what it is told to play and whether it left;
 * the test ends a song through `onEnded` and drops the line through `onGone`.
 */
import type { PlayerLine } from '../../src/voice/dispatcher.js';

export class FakeVoiceLine implements PlayerLine {
  readonly played: string[] = [];
  left = false;
  onEnded: PlayerLine['onEnded'] = () => {};
  onGone: PlayerLine['onGone'] = () => {};
  constructor(
    readonly channelId: string,
    readonly guildId = '',
  ) {}
  play(url: string): number {
    this.played.push(url);
    return this.played.length;
  }
  async stopSong(): Promise<boolean> {
    return false;
  }
  async pause(): Promise<void> {}
  async unpause(): Promise<void> {}
  async playbackMs(): Promise<number> {
    return 0;
  }
  leave(): void {
    this.left = true;
  }
}
