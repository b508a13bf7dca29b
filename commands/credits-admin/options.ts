/** Options several `/credits-admin` subcommands share; each gives its own description (its catalogue key names the subcommand). */
import { ApplicationCommandOptionType } from 'discord-api-types/v10';
import { MAX_MANUAL_AMOUNT } from '../../src/credits/index.js';

export const MAX_AMOUNT = MAX_MANUAL_AMOUNT;

export const userOption = (description: string) =>
  ({
    type: ApplicationCommandOptionType.User,
    name: 'user',
    description,
  }) as const;

export const amountOption = (description: string, min: number) =>
  ({
    type: ApplicationCommandOptionType.Integer,
    name: 'amount',
    description,
    required: true,
    min_value: min,
    max_value: MAX_AMOUNT,
  }) as const;

export const reasonOption = (description: string) =>
  ({
    type: ApplicationCommandOptionType.String,
    name: 'reason',
    description,
    required: true,
    max_length: 200,
  }) as const;
