/**
 * The first answer's timed transitions, on fake timers: answered inside the budget (no
 * deferral), deferred when the budget runs out, then edits and private errors after the
 * deferral. The interaction is a strict fake of Discord's side: it refuses a second first
 * answer, anything after the 3-second window, and an edit or follow-up before a first answer.
 */
import { MessageFlags } from 'discord-api-types/v10';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import type { RepliablePort } from '../../../src/discord/interaction-port.js';
import { answerInPlace, answerPrivately, closeAnswer, firstAnswerOf, openAnswer } from '../../../src/discord/respond.js';

/** Discord's window for the first answer, from receipt. */
const DISCORD_WINDOW_MS = 3_000;
const BUDGET_MS = 2_500;

interface Call {
  method: string;
  ephemeral: boolean;
  content?: string;
  /** Milliseconds from receipt. */
  at: number;
}

/** What Discord would accept of an interaction, and the calls made in order. */
class StrictInteraction {
  readonly calls: Call[] = [];
  readonly applicationId = 'application';
  readonly token = 'token';
  readonly createdAt = new Date();
  replied = false;
  deferred = false;
  ephemeral: boolean | null = null;
  readonly #receivedAt: number;
  /** How long Discord takes to acknowledge a deferral. */
  readonly #deferralMs: number;

  constructor(receivedAt: number, deferralMs = 0) {
    this.#receivedAt = receivedAt;
    this.#deferralMs = deferralMs;
  }

  #record(method: string, options: { flags?: number; content?: string } = {}): void {
    this.calls.push({ method, ephemeral: ((options.flags ?? 0) & MessageFlags.Ephemeral) !== 0, ...(options.content === undefined ? {} : { content: options.content }), at: performance.now() - this.#receivedAt });
  }

  #first(method: string): void {
    if (this.replied || this.deferred) throw new Error(`${method}: Interaction has already been acknowledged (40060)`);
    if (performance.now() - this.#receivedAt > DISCORD_WINDOW_MS) throw new Error(`${method}: Unknown interaction (10062)`);
  }

  #acknowledged(method: string): void {
    if (!this.replied && !this.deferred) throw new Error(`${method}: Unknown Webhook (10015), nothing answered yet`);
  }

  async reply(options: { flags?: number; content?: string }): Promise<void> {
    this.#first('reply');
    this.#record('reply', options);
    this.replied = true;
    this.ephemeral = ((options.flags ?? 0) & MessageFlags.Ephemeral) !== 0;
  }

  async deferReply(options: { flags?: number } = {}): Promise<void> {
    this.#first('deferReply');
    this.#record('deferReply', options);
    if (this.#deferralMs > 0) await new Promise((resolve) => setTimeout(resolve, this.#deferralMs));
    this.deferred = true;
    this.ephemeral = ((options.flags ?? 0) & MessageFlags.Ephemeral) !== 0;
  }

  async deferUpdate(): Promise<void> {
    this.#first('deferUpdate');
    this.#record('deferUpdate');
    this.deferred = true;
  }

  async editReply(options: { content?: string }): Promise<void> {
    this.#acknowledged('editReply');
    this.#record('editReply', options);
  }

  async followUp(options: { flags?: number; content?: string }): Promise<{ id: string }> {
    this.#acknowledged('followUp');
    this.#record('followUp', options);
    return { id: `message-${this.calls.length}` };
  }

  async deleteReply(): Promise<void> {
    this.#acknowledged('deleteReply');
    this.#record('deleteReply');
  }

  get port(): RepliablePort {
    return this as unknown as RepliablePort;
  }
}

beforeEach(() => {
  vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout', 'performance', 'Date'] });
});

afterEach(() => {
  vi.useRealTimers();
});

/** An interaction received now, opened as the router opens it. */
async function received(kind: 'public' | 'ephemeral' | 'update', options: { deferralMs?: number; receivedAgoMs?: number } = {}) {
  const receivedAt = performance.now() - (options.receivedAgoMs ?? 0);
  const interaction = new StrictInteraction(receivedAt, options.deferralMs);
  const onDeferred = vi.fn();
  await openAnswer(interaction.port, kind, { budgetMs: BUDGET_MS, receivedAt, onDeferred });
  return { interaction, onDeferred };
}

describe('the first answer', () => {
  it('answered inside the budget is the reply itself, and no deferral follows', async () => {
    const { interaction, onDeferred } = await received('public');
    await vi.advanceTimersByTimeAsync(1_000);
    await answerInPlace(interaction.port, { content: 'done' });
    closeAnswer(interaction.port);
    await vi.advanceTimersByTimeAsync(10_000);
    expect(interaction.calls).toEqual([{ method: 'reply', ephemeral: false, content: 'done', at: 1_000 }]);
    expect(onDeferred).not.toHaveBeenCalled();
    expect(firstAnswerOf(interaction.port)).toEqual({ kind: 'public', first: 'answered', ms: 1_000 });
  });

  it('is deferred when the budget runs out, as private as the command, and then edited', async () => {
    const { interaction, onDeferred } = await received('ephemeral');
    await vi.advanceTimersByTimeAsync(BUDGET_MS - 1);
    expect(interaction.calls).toEqual([]);
    await vi.advanceTimersByTimeAsync(1);
    expect(interaction.calls).toEqual([{ method: 'deferReply', ephemeral: true, at: BUDGET_MS }]);
    expect(onDeferred).toHaveBeenCalledWith();
    expect(firstAnswerOf(interaction.port)).toEqual({ kind: 'ephemeral', first: 'deferred', ms: BUDGET_MS });
    // The handler's answer, long after Discord's window: an edit of the deferred reply.
    await vi.advanceTimersByTimeAsync(60_000);
    await answerInPlace(interaction.port, { content: 'late but here' });
    expect(interaction.calls.map((call) => call.method)).toEqual(['deferReply', 'editReply']);
    expect(interaction.calls[1]).toMatchObject({ content: 'late but here' });
  });

  it('counts the budget from receipt, not from when the answer was opened', async () => {
    const { interaction } = await received('public', { receivedAgoMs: 2_000 });
    await vi.advanceTimersByTimeAsync(BUDGET_MS - 2_000);
    expect(interaction.calls).toEqual([{ method: 'deferReply', ephemeral: false, at: BUDGET_MS }]);
  });

  it('waits for a deferral on its way before answering, so the answer edits it', async () => {
    const { interaction } = await received('public', { deferralMs: 300 });
    await vi.advanceTimersByTimeAsync(BUDGET_MS);
    // The deferral is sent but not yet acknowledged: a reply now would be a second first answer.
    const answering = answerInPlace(interaction.port, { content: 'result' });
    await vi.advanceTimersByTimeAsync(300);
    await answering;
    expect(interaction.calls.map((call) => call.method)).toEqual(['deferReply', 'editReply']);
  });

  it('tells the handler when the deferral failed', async () => {
    const { interaction, onDeferred } = await received('public', { receivedAgoMs: 3_500 });
    await vi.advanceTimersByTimeAsync(0);
    expect(interaction.calls).toEqual([]);
    expect(onDeferred).toHaveBeenCalledWith(expect.objectContaining({ message: expect.stringContaining('10062') }));
  });
});

describe('an error after the first answer', () => {
  it('after a public deferral: the public "thinking…" reply is deleted and the error follows privately', async () => {
    const { interaction } = await received('public');
    await vi.advanceTimersByTimeAsync(BUDGET_MS);
    const id = await answerPrivately(interaction.port, { content: 'that failed' });
    expect(interaction.calls.map(({ method, ephemeral }) => ({ method, ephemeral }))).toEqual([
      { method: 'deferReply', ephemeral: false },
      { method: 'deleteReply', ephemeral: false },
      { method: 'followUp', ephemeral: true },
    ]);
    expect(id).toBe('message-3');
  });

  it('after a private deferral: the deferred reply is edited into the error', async () => {
    const { interaction } = await received('ephemeral');
    await vi.advanceTimersByTimeAsync(BUDGET_MS);
    expect(await answerPrivately(interaction.port, { content: 'that failed' })).toBe('@original');
    expect(interaction.calls.map((call) => call.method)).toEqual(['deferReply', 'editReply']);
  });

  it('inside the budget: a private reply, and no deferral after it', async () => {
    const { interaction, onDeferred } = await received('public');
    await vi.advanceTimersByTimeAsync(100);
    expect(await answerPrivately(interaction.port, { content: 'no' })).toBe('@original');
    await vi.advanceTimersByTimeAsync(10_000);
    expect(interaction.calls).toEqual([{ method: 'reply', ephemeral: true, content: 'no', at: 100 }]);
    expect(onDeferred).not.toHaveBeenCalled();
  });

  it('after a button deferred its update at once: a private follow-up, the message left as it was', async () => {
    const { interaction } = await received('update');
    expect(interaction.calls).toEqual([{ method: 'deferUpdate', ephemeral: false, at: 0 }]);
    await vi.advanceTimersByTimeAsync(10_000);
    await answerInPlace(interaction.port, { content: 'cancelled' });
    expect(interaction.calls.map(({ method, ephemeral }) => ({ method, ephemeral }))).toEqual([
      { method: 'deferUpdate', ephemeral: false },
      { method: 'followUp', ephemeral: true },
    ]);
  });
});
