/** Options several `/credits-admin` subcommands share. */
import { ApplicationCommandOptionType } from 'discord-api-types/v10';

export const MAX_AMOUNT = 1_000_000;

export const userOption = {
  type: ApplicationCommandOptionType.User,
  name: 'user',
  description: 'Only this member.',
} as const;

export const amountOption = (description: string, min: number) =>
  ({
    type: ApplicationCommandOptionType.Integer,
    name: 'amount',
    description,
    required: true,
    min_value: min,
    max_value: MAX_AMOUNT,
  }) as const;

export const reasonOption = {
  type: ApplicationCommandOptionType.String,
  name: 'reason',
  description: 'Why: kept in the ledger.',
  required: true,
  max_length: 200,
} as const;
