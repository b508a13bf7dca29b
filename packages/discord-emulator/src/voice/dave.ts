/** The DAVE side of the emulator's voice server: what a voice session needs of a listening member. */

/** The listening member of a voice session, an MLS group member that opens the bot's end-to-end encrypted frames. */
export interface DaveListener {
  /** The listener's user id (announced to the bot in Clients Connect). */
  readonly userId: string;
  /** Called after Session Description: sends the external sender package. */
  start(): void;
  onBinary(op: number, payload: Buffer): void;
  onJson(op: number, d: Record<string, unknown>): void;
  /** The Opus frame inside a transport-decrypted payload; `encrypted` when it came through DAVE. Null: it did not open. */
  decrypt(payload: Buffer): { frame: Buffer; encrypted: boolean } | null;
  close(): void;
}
