/** How the router sorts an interaction's end for `musicbot_commands_total`. */
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { CreditsError } from '../../../src/credits/errors.js';
import { Refusal } from '../../../src/discord/errors.js';
import { outcomeOf } from '../../../src/discord/outcomes.js';
import { localText } from '../../../src/i18n/index.js';
import { RequestRefusedError, RequestTakenError } from '../../../src/pipeline/requests.js';

const text = localText('refusal.commandGone');

describe('outcomeOf', () => {
  it('is accepted when nothing was thrown', () => {
    expect(outcomeOf(undefined)).toEqual({ outcome: 'accepted', reason: '' });
  });

  it('is refused, with one vocabulary of reasons, for what the member was told no', () => {
    expect(outcomeOf({ error: new Refusal('cooldown', text) })).toEqual({ outcome: 'refused', reason: 'cooldown' });
    expect(outcomeOf({ error: new RequestRefusedError('insufficient_credits', text) })).toEqual({ outcome: 'refused', reason: 'insufficient_credits' });
    expect(outcomeOf({ error: new RequestRefusedError('invalid_request', text) })?.reason).toBe('invalid_input');
    expect(outcomeOf({ error: new RequestRefusedError('user_cap', text) })?.reason).toBe('daily_cap');
    expect(outcomeOf({ error: new CreditsError('invalid_amount', 'amount must be positive') })?.reason).toBe('invalid_input');
    expect(outcomeOf({ error: z.string().safeParse(1).error })).toEqual({ outcome: 'refused', reason: 'invalid_input' });
  });

  it('is failed for anything else, with no reason', () => {
    expect(outcomeOf({ error: new Error('boom') })).toEqual({ outcome: 'failed', reason: '' });
  });

  it('is not counted here when another process took the interaction', () => {
    expect(outcomeOf({ error: new RequestTakenError('00000000-0000-4000-8000-000000000000') })).toBeUndefined();
  });
});
