/**
 * What a member reads when the server cannot pay for a request: the same sentences whether
 * the Discord layer sees it before answering or the pipeline finds it in the reservation.
 */
import { localText, type LocalText } from '../i18n/index.js';

export const REFUSAL_TEXTS = {
  frozen: (): LocalText => localText('refusal.frozen'),
  dailyCap: (cost: number, left: number, limit: number): LocalText => localText('refusal.dailyCap', { cost, left, limit }),
  insufficientCredits: (balance: number, cost: number): LocalText => localText('refusal.insufficientCredits', { balance, cost }),
  remixSourceGone: (): LocalText => localText('refusal.remixSourceGone'),
};
