/**
 * How the router counts an interaction in `musicbot_commands_total`: by what was asked (a
 * command's name, or a component's type and action) and how it ended. The refusal codes are
 * one small vocabulary across the errors that refuse, so a dashboard can group them.
 */
import type { InteractionPort } from './interaction-port.js';
import { ZodError } from 'zod';
import { CreditsError } from '../credits/errors.js';
import { SettingsError } from '../guilds/settings.js';
import { decodeCustomId } from '../discord-rest/custom-ids.js';
import type { Metrics } from '../metrics.js';
import { MusicApiError } from '../music-api/errors.js';
import { RequestRefusedError, RequestTakenError } from '../pipeline/requests.js';
import { Refusal, isExpected, isGoneInteraction } from './errors.js';

export type CommandOutcome = 'accepted' | 'refused' | 'failed';

/** The `command` label: the slash command's name, or `button:<action>`, `select:<action>`, `modal:<action>`. */
export function commandLabelOf(interaction: InteractionPort): string | undefined {
  if (interaction.isChatInputCommand()) return interaction.commandName;
  const [kind, customId] = interaction.isButton()
    ? ['button', interaction.customId]
    : interaction.isStringSelectMenu()
      ? ['select', interaction.customId]
      : interaction.isModalSubmit()
        ? ['modal', interaction.customId]
        : [];
  if (kind === undefined || customId === undefined) return undefined;
  // A custom id this bot did not make is counted as one label, not one label per forged id.
  return `${kind}:${decodeCustomId(customId)?.action ?? 'unknown'}`;
}

/**
 * The outcome of a handled interaction and, for a refusal, its code. Undefined when this
 * process should not count it: another process accepted the same interaction and counts it.
 */
export function outcomeOf(thrown: { error: unknown } | undefined): { outcome: CommandOutcome; reason: string } | undefined {
  if (thrown === undefined) return { outcome: 'accepted', reason: '' };
  const { error } = thrown;
  if (error instanceof RequestTakenError) return undefined;
  if (!isGoneInteraction(error) && isExpected(error)) return { outcome: 'refused', reason: refusalCode(error) };
  return { outcome: 'failed', reason: '' };
}

/** Counts one interaction; autocomplete and anything the router does not route are not counted. */
export function countInteraction(metrics: Metrics | undefined, interaction: InteractionPort, thrown: { error: unknown } | undefined): void {
  if (metrics === undefined) return;
  const command = commandLabelOf(interaction);
  const counted = command === undefined ? undefined : outcomeOf(thrown);
  if (command === undefined || counted === undefined) return;
  metrics.commands.inc({ command, ...counted });
}

export function refusalCode(error: unknown): string {
  if (error instanceof Refusal) return error.kind;
  if (error instanceof RequestRefusedError) {
    if (error.reason === 'invalid_request') return 'invalid_input';
    if (error.reason === 'user_cap') return 'daily_cap';
    return error.reason;
  }
  if (error instanceof CreditsError) {
    return error.reason === 'invalid_amount' || error.reason === 'invalid_argument' ? 'invalid_input' : error.reason;
  }
  if (error instanceof SettingsError || error instanceof ZodError) return 'invalid_input';
  if (error instanceof MusicApiError) return 'upstream';
  return 'other';
}
