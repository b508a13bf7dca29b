/**
 * What a member reads when the server cannot pay for a request: the same sentences whether
 * the Discord layer sees it before answering or the pipeline finds it in the reservation.
 */
export const REFUSAL_TEXTS = {
  frozen: (): string => 'Generation is paused on this server by its moderators.',
  dailyCap: (cost: number, left: number, limit: number): string =>
    `That costs ${cost} credits, and you can spend ${left} more today (daily limit ${limit}). The limit resets at midnight UTC.`,
  insufficientCredits: (balance: number, cost: number): string => `This server has ${balance} credits and this costs ${cost}. A moderator can add more.`,
  remixSourceGone: (): string => 'That song is no longer in this server’s library, so it can’t be remixed. `/song` makes a new one.',
};
