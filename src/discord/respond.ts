/**
 * How the bot answers an interaction: once, with the decision, inside Discord's 3 seconds,
 * deferring only when the decision outlasts `ANSWER_BUDGET_MS`. A refusal is only ever private.
 * Why: docs/decisions/answer-once.md
 */
import { MessageFlags, Routes, type APIMessage } from 'discord-api-types/v10';
import type { AnswerOptions, ComponentPort, InteractionPort, ModalSubmitPort, RepliablePort } from './interaction-port.js';
import type { ReplyTarget } from '../pipeline/requests.js';

/**
 * What the first answer will be, decided from the options alone: `public` and `ephemeral`
 * answer with a message (or defer one, once the budget runs out); `update` defers an update of
 * the message the button sits on at once; `modal` leaves the first answer to the handler,
 * which must open a modal.
 */
export type AcknowledgementKind = 'public' | 'ephemeral' | 'update' | 'modal';

/** How the first answer went: `open` until someone sends it. */
export type FirstAnswer = 'open' | 'deferred' | 'answered';

interface ReplyState {
  kind: AcknowledgementKind;
  first: FirstAnswer;
  /** When the router received the interaction (`performance.now()`). */
  receivedAt: number;
  /** Milliseconds from receipt to the first answer, once sent (or deferred). */
  firstAnswerMs?: number;
  /** The deferral the budget started, while it is on its way. */
  deferral?: Promise<void>;
  deadline?: NodeJS.Timeout;
  /** The public reply was deleted, or handed to the pipeline: not ours to delete any more. */
  publicReplySettled: boolean;
}

const states = new WeakMap<InteractionPort, ReplyState>();

/** Mentions in our texts are never pings: prompts and names come from members. */
const NO_PINGS = { parse: [] } as const;

export interface OpenAnswerOptions {
  /** Milliseconds from receipt before the router defers (`ANSWER_BUDGET_MS`). */
  budgetMs: number;
  /** `performance.now()` when the interaction was received. */
  receivedAt: number;
  /** Told when the budget ran out and the answer was deferred (or the deferral failed). */
  onDeferred?: (error?: unknown) => void;
}

/**
 * Opens the interaction's answer. `update` is deferred at once (the member clicked a button
 * whose message will change); `public` and `ephemeral` wait for the handler's decision, up to
 * the budget; `modal` is the handler's.
 */
export async function openAnswer(interaction: RepliablePort, kind: AcknowledgementKind, options: OpenAnswerOptions): Promise<void> {
  const state: ReplyState = { kind, first: 'open', receivedAt: options.receivedAt, publicReplySettled: false };
  states.set(interaction, state);
  if (kind === 'update') {
    state.first = 'deferred';
    state.firstAnswerMs = performance.now() - state.receivedAt;
    await (interaction as ComponentPort | ModalSubmitPort).deferUpdate();
    return;
  }
  if (kind === 'modal') return;
  const left = Math.max(0, options.budgetMs - (performance.now() - options.receivedAt));
  state.deadline = setTimeout(() => {
    state.deadline = undefined;
    if (state.first !== 'open') return;
    state.first = 'deferred';
    state.firstAnswerMs = performance.now() - state.receivedAt;
    const deferral = interaction.deferReply(kind === 'ephemeral' ? { flags: MessageFlags.Ephemeral } : {}).then(() => undefined);
    state.deferral = deferral;
    deferral.then(
      () => options.onDeferred?.(),
      (error: unknown) => options.onDeferred?.(error),
    );
  }, left);
  state.deadline.unref?.();
}

/** Stops the budget's timer: the handler is done, whatever it answered. */
export function closeAnswer(interaction: InteractionPort): void {
  const state = states.get(interaction);
  if (state?.deadline) clearTimeout(state.deadline);
}

/** How the first answer went, and how long after receipt, for the router's log line. */
export function firstAnswerOf(interaction: InteractionPort): { kind: AcknowledgementKind; first: FirstAnswer; ms?: number } | undefined {
  const state = states.get(interaction);
  return state && { kind: state.kind, first: state.first, ...(state.firstAnswerMs === undefined ? {} : { ms: Math.round(state.firstAnswerMs) }) };
}

/**
 * Takes the first answer for the caller, or waits for the deferral already on its way.
 * `open` means the caller must now send the first answer itself (synchronously claimed: the
 * budget's timer can no longer defer).
 */
async function claimFirstAnswer(interaction: RepliablePort, taking: 'answered' | 'deferred' = 'answered'): Promise<FirstAnswer> {
  let state = states.get(interaction);
  if (!state) {
    // Not opened by the router (a handler called from elsewhere): read discord.js's flags.
    if (interaction.deferred) return 'deferred';
    if (interaction.replied) return 'answered';
    state = { kind: 'ephemeral', first: 'open', receivedAt: performance.now(), publicReplySettled: false };
    states.set(interaction, state);
  }
  if (state.first === 'open') {
    if (state.deadline) clearTimeout(state.deadline);
    state.first = taking;
    state.firstAnswerMs = performance.now() - state.receivedAt;
    return 'open';
  }
  if (state.deferral) await state.deferral;
  return state.first;
}

/** Defers now, if nothing was answered yet: for handlers whose answer is sent by someone else (the pipeline). */
export async function deferNow(interaction: RepliablePort): Promise<void> {
  if ((await claimFirstAnswer(interaction, 'deferred')) !== 'open') return;
  await interaction.deferReply(states.get(interaction)?.kind === 'ephemeral' ? { flags: MessageFlags.Ephemeral } : {});
}

export type Answer = Pick<AnswerOptions, 'content' | 'embeds' | 'components' | 'files'>;

function complete(answer: Answer) {
  return { ...answer, content: answer.content ?? '', embeds: answer.embeds ?? [], components: answer.components ?? [], allowedMentions: NO_PINGS };
}

/**
 * Answers where the command said: the first answer itself (public or ephemeral, as the
 * command was acknowledged), or an edit of the deferred reply. After a button's `update` or a
 * modal, an ephemeral follow-up.
 */
export async function answerInPlace(interaction: RepliablePort, answer: Answer): Promise<void> {
  const kind = states.get(interaction)?.kind;
  const first = await claimFirstAnswer(interaction);
  if (first === 'open') {
    await interaction.reply({ ...complete(answer), ...(kind === 'public' ? {} : { flags: MessageFlags.Ephemeral }) });
  } else if (kind === 'update' || kind === 'modal' || first === 'answered') {
    await interaction.followUp({ ...complete(answer), flags: MessageFlags.Ephemeral });
  } else {
    await interaction.editReply(complete(answer));
  }
}

/**
 * Answers the member alone: an ephemeral first answer when nothing was sent yet. After a
 * public deferral still ours, the "thinking…" reply is deleted first, so that nothing public
 * remains; a button that deferred an update gets an ephemeral follow-up and its message stays
 * as it was. Resolves with the answer's message id: `@original` for the reply itself.
 */
export async function answerPrivately(interaction: RepliablePort, answer: Answer): Promise<string> {
  const state = states.get(interaction);
  const first = await claimFirstAnswer(interaction);
  if (first === 'open') {
    await interaction.reply({ ...complete(answer), flags: MessageFlags.Ephemeral });
    return '@original';
  }
  const kind = state?.kind ?? (interaction.ephemeral ? 'ephemeral' : 'public');
  if (first === 'deferred' && kind === 'ephemeral') {
    await interaction.editReply(complete(answer));
    return '@original';
  }
  if (first === 'deferred' && kind === 'public' && !state?.publicReplySettled) await dropPublicReply(interaction);
  return (await interaction.followUp({ ...complete(answer), flags: MessageFlags.Ephemeral })).id;
}

/** Deletes the public deferred reply. */
async function dropPublicReply(interaction: RepliablePort): Promise<void> {
  await interaction.deleteReply();
  settle(interaction);
}

/** From now on the public reply belongs to the pipeline (progress, then the result). */
export function handOverPublicReply(interaction: RepliablePort): void {
  settle(interaction);
}

function settle(interaction: RepliablePort): void {
  const state = states.get(interaction);
  if (state) state.publicReplySettled = true;
}

/**
 * An ephemeral follow-up as one webhook call, without `?wait=true` (Discord answers 204) unless
 * `wait` asks for the message, whose id this then resolves with. Why not discord.js's
 * `followUp`: docs/decisions/answer-once.md
 */
export async function sendPrivateNote(
  interaction: RepliablePort,
  note: { content: string; components?: ReadonlyArray<{ toJSON(): unknown }> },
  options: { wait?: boolean } = {},
): Promise<string | undefined> {
  const sent = await interaction.client.rest.post(Routes.webhook(interaction.applicationId, interaction.token), {
    body: {
      content: note.content,
      components: (note.components ?? []).map((component) => component.toJSON()),
      flags: MessageFlags.Ephemeral,
      allowed_mentions: NO_PINGS,
    },
    auth: false,
    ...(options.wait === true && { query: new URLSearchParams({ wait: 'true' }) }),
  });
  return options.wait === true ? (sent as APIMessage).id : undefined;
}

/** Where the pipeline answers: the interaction's token, valid 15 minutes from its creation. */
export function replyTargetOf(interaction: RepliablePort): ReplyTarget {
  return { applicationId: interaction.applicationId, interactionToken: interaction.token, createdAt: interaction.createdAt };
}
