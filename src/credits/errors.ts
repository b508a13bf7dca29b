import { localText, type LocalText } from '../i18n/index.js';

/** Why a credits operation was refused. Each has a fixed text a Discord user may see. */
export type CreditsErrorReason =
  | 'unknown_guild'
  | 'insufficient_credits'
  | 'invalid_amount'
  | 'invalid_argument'
  | 'key_conflict';

const USER_TEXTS: Record<CreditsErrorReason, LocalText> = {
  unknown_guild: localText('credits.error.unknownGuild'),
  insufficient_credits: localText('credits.error.insufficientCredits'),
  invalid_amount: localText('credits.error.invalidAmount'),
  invalid_argument: localText('credits.error.invalidArgument'),
  key_conflict: localText('credits.error.keyConflict'),
};

/**
 * A refused credits operation. `message` is for logs; `userText` is a catalogue message, never
 * built from user input, safe to show in Discord in the reader's language.
 */
export class CreditsError extends Error {
  override readonly name = 'CreditsError';
  readonly userText: LocalText;

  constructor(
    readonly reason: CreditsErrorReason,
    message: string,
    readonly details: Readonly<Record<string, string | number | boolean | null>> = {},
    options: { userText?: LocalText; cause?: unknown } = {},
  ) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.userText = options.userText ?? USER_TEXTS[reason];
  }
}

export function isCreditsError(error: unknown): error is CreditsError {
  return error instanceof CreditsError;
}

export function requireInteger(amount: number, what: string, range: { min?: number; nonZero?: boolean } = {}): void {
  const valid =
    Number.isSafeInteger(amount) && (range.min === undefined || amount >= range.min) && !(range.nonZero && amount === 0);
  if (!valid) {
    throw new CreditsError('invalid_amount', `${what} must be ${describeRange(range)}, got ${String(amount)}`, {
      amount: Number.isFinite(amount) ? amount : null,
    });
  }
}

function describeRange(range: { min?: number; nonZero?: boolean }): string {
  if (range.min === 1) return 'a positive integer';
  if (range.min === 0) return 'a non-negative integer';
  return range.nonZero ? 'a non-zero integer' : 'an integer';
}

export function requireText(value: string, what: string, maxLength = 200): void {
  if (typeof value !== 'string' || value.length === 0 || value.length > maxLength) {
    throw new CreditsError('invalid_argument', `${what} must be 1 to ${maxLength} characters`);
  }
}
