/** The DAVE side of the emulator's voice server: what a voice session needs of a listening member. */

/** The listening member of a voice session, an MLS group member that opens the bot's end-to-end encrypted frames. */
export interface DaveListener {
  /** The listener's user id (announced to the bot in Clients Connect). */
  readonly userId: string;
  readonly state: DaveState;
  /** Called after Session Description: sends the external sender package. */
  start(): void;
  onBinary(op: number, payload: Buffer): void;
  onJson(op: number, d: Record<string, unknown>): void;
  /** The Opus frame inside a transport-decrypted payload; `encrypted` when it came through DAVE. Null: it did not open. */
  decrypt(payload: Buffer): { frame: Buffer; encrypted: boolean } | null;
  close(): void;
}

/** What happened in a guild's DAVE negotiation, for tests. */
export interface DaveState {
  /** The listening member's user id. */
  listenerId: string;
  keyPackages: number;
  /** Welcomes sent to the bot (op 30), and the last transition id. */
  welcomes: number;
  transitionId: number;
  /** The bot said it is ready for the transition (op 23), and the emulator executed it (op 22). */
  transitionsReady: number;
  transitionsExecuted: number;
  /** The bot could not use a commit or welcome (op 31). */
  invalidCommitWelcomes: number;
  /** The listener's group is established and can open the bot's frames. */
  ready: boolean;
  /** The voice privacy code of the group, as both sides see it. */
  privacyCode: string;
  /** The last error making the group, if any. */
  error: string | null;
}
