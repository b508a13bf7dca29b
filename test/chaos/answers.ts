/**
 * What a member saw when they sent a command during an outage, and how soon: the first answer
 * that says something (a "thinking…" deferral does not; the edit or follow-up after it does),
 * read as accepted (the public "Starting…" line, or a private acknowledgement naming the job)
 * or refused (a private sentence). Shared by the outage scenarios.
 */
import { InteractionResponseType } from 'discord-api-types/v10';
import type { EmulatorMessage, InteractionHandle } from '@music-bot/discord-emulator';
import { atRate, percentile, summarize } from '../bench/support.js';
import type { ChaosWorld } from './world.js';

/** Discord's window for the first answer, and the issue's bound for a decision during an outage. */
export const ANSWER_WITHIN_MS = 3_000;

export interface SentCommand {
  readonly prompt: string;
  readonly handle: InteractionHandle;
  /** Date.now() when it was sent (the emulator's clock is the real one; nothing advances it here). */
  readonly sentAt: number;
  /** Sent while the service was down. */
  readonly duringOutage: boolean;
}

export interface Answer {
  readonly command: SentCommand;
  readonly outcome: 'accepted' | 'refused' | 'unanswered';
  /** Milliseconds from sending to the answer, when there was one. */
  readonly ms?: number;
  /** Accepted: milliseconds from sending to the private acknowledgement that names the job (its cost, its Cancel button). */
  readonly acknowledgedMs?: number;
  readonly text: string;
}

const JOB_NAMED = /Job `[0-9a-f-]{36}`/;

/** The `index`th command's member: guild after guild, so that consecutive commands share no channel. */
function placeFor(world: ChaosWorld, index: number) {
  const guilds = [...new Set(world.places.map((place) => place.guildId))];
  const inGuild = world.places.filter((place) => place.guildId === guilds[index % guilds.length]);
  return inGuild[Math.floor(index / guilds.length) % inGuild.length]!;
}

export function send(world: ChaosWorld, index: number, prompt: string, duringOutage: boolean): SentCommand {
  const sentAt = Date.now();
  return { prompt, handle: world.song(placeFor(world, index), prompt), sentAt, duringOutage };
}

/**
 * The songs of an outage scenario: a third before the outage, a third during it, the rest
 * after (at least 2, 2 and 1), each prompt `<prefix> <n>`. `send` sends the next `count` at
 * `perSecond` and keeps them in `sent`.
 */
export function outageCommands(world: ChaosWorld, prefix: string, jobs: number) {
  const before = Math.max(2, Math.round(jobs / 3));
  const during = Math.max(2, Math.round(jobs / 3));
  const sent: SentCommand[] = [];
  let next = 0;
  return {
    before,
    during,
    after: Math.max(1, jobs - before - during),
    sent,
    async send(count: number, perSecond: number, duringOutage: boolean): Promise<void> {
      sent.push(...(await atRate(count, perSecond, () => send(world, next, `${prefix} ${next++}`, duringOutage))));
    },
  };
}

/**
 * Milliseconds from an interaction's creation (its snowflake's time) to the gateway's "request
 * accepted" line: how long the bot held an accepted request before its acknowledgement could
 * go, whatever Discord's rate limits then made of the acknowledgement itself.
 */
function acceptanceMs(world: ChaosWorld, interactionId: string): number | undefined {
  const created = createdAtOf(interactionId);
  for (const line of world.logLines()) {
    if (!line.includes(`"interactionId":"${interactionId}"`) || !line.includes('"msg":"request accepted"')) continue;
    const time = /"time":(\d+)/.exec(line)?.[1];
    if (time !== undefined) return Number(time) - created;
  }
  return undefined;
}

/** When Discord created the interaction: its snowflake's time. */
function createdAtOf(interactionId: string): number {
  return Number((BigInt(interactionId) >> 22n) + 1_420_070_400_000n);
}

/**
 * Why an interaction went unanswered, for the report: every request the emulator saw for it
 * (its callback and its webhook, the token cut out), each with its status and how long after the
 * interaction's creation it arrived, and every line the bot's processes logged for its id.
 */
export function unansweredDetail(world: ChaosWorld, handle: InteractionHandle, prompt: string): string {
  const created = createdAtOf(handle.id);
  const requests = world.emulator.requests
    .filter((request) => request.path.startsWith(`/interactions/${handle.id}/`) || request.path.includes(`/${handle.token}`))
    .map((request) => {
      const code = (request.response as { code?: unknown } | undefined)?.code;
      return `${request.method} ${request.path.replaceAll(handle.token, '<token>')} at +${request.at - created} ms: ${request.status}${code === undefined ? '' : ` (code ${String(code)})`}`;
    });
  const lines = world.logLines().filter((line) => line.includes(`"interactionId":"${handle.id}"`));
  return `unanswered: "${prompt}" (interaction ${handle.id}); the emulator saw ${requests.length === 0 ? 'no request for it' : requests.join('; ')}; the bot logged ${lines.length === 0 ? 'nothing for it' : lines.join(' | ')}`;
}

function outcomeOf(content: string, ephemeral: boolean): Answer['outcome'] {
  return !ephemeral || JOB_NAMED.test(content) ? 'accepted' : 'refused';
}

export async function answerOf(command: SentCommand, timeoutMs: number): Promise<Answer> {
  const answer = await firstAnswerOf(command, timeoutMs);
  if (answer.outcome !== 'accepted') return answer;
  if (JOB_NAMED.test(answer.text)) return { ...answer, acknowledgedMs: answer.ms! };
  const left = Math.max(1, timeoutMs - (Date.now() - command.sentAt));
  // Asked after the fact: the message's own time, not the moment of asking.
  const acknowledged = await command.handle.waitForFollowUp((message) => JOB_NAMED.test(message.content ?? ''), left).then(
    (message) => Date.parse(message.timestamp) - command.sentAt,
    () => undefined,
  );
  return acknowledged === undefined ? answer : { ...answer, acknowledgedMs: acknowledged };
}

async function firstAnswerOf(command: SentCommand, timeoutMs: number): Promise<Answer> {
  const { handle, sentAt } = command;
  try {
    const response = await handle.waitForResponse(timeoutMs);
    if (response.type === InteractionResponseType.ChannelMessageWithSource) {
      const data = (response.data ?? {}) as { content?: string };
      return { command, outcome: outcomeOf(data.content ?? '', response.ephemeral), ms: response.at - sentAt, text: data.content ?? '' };
    }
    // Deferred: the decision is the edit of the "thinking…" reply, or the private follow-up after deleting it.
    const left = Math.max(1, timeoutMs - (Date.now() - sentAt));
    const decided = await Promise.any([
      handle.waitForEdit((message) => (message.content ?? '') !== '', left).then((message) => ({ message, ephemeral: response.ephemeral })),
      handle.waitForFollowUp(undefined, left).then((message: EmulatorMessage) => ({ message, ephemeral: true })),
    ]);
    const content = decided.message.content ?? '';
    const at = Date.parse(decided.message.edited_timestamp ?? decided.message.timestamp);
    return { command, outcome: outcomeOf(content, decided.ephemeral), ms: at - sentAt, text: content };
  } catch {
    return { command, outcome: 'unanswered', text: '' };
  }
}

export interface AnswerFigures {
  /** Commands sent during the outage answered later than `ANSWER_WITHIN_MS`. */
  readonly slowAnswers: number;
  /**
   * Accepted during the outage, but the bot held the request longer than `ANSWER_WITHIN_MS` before
   * its private acknowledgement (cost, job id, Cancel) could go. When the acknowledgement then
   * reached Discord is reported beside it: Discord's per-channel rate limit delays it as well.
   */
  readonly lateAcknowledgements: number;
  readonly unanswered: number;
  /** Accepted (the member was told so) but Postgres has no job for it. */
  readonly acceptedWithoutJob: number;
  /** Refused, yet a job of its prompt holds a charge. */
  readonly refusedButCharged: number;
  readonly info: Record<string, number | string>;
  readonly details: string[];
}

/** Checks the answers against Postgres: an accepted command has its job, a refused one charged nothing. */
export async function answerFigures(world: ChaosWorld, answers: readonly Answer[]): Promise<AnswerFigures> {
  const details: string[] = [];
  const { rows } = await world.db.query<{ prompt: string; net: number }>(
    `select j.request->>'prompt' as prompt, coalesce(sum(l.amount), 0)::int as net
     from jobs j left join credit_ledger l on l.job_id = j.id
     where j.request->>'prompt' = any($1::text[]) group by j.id`,
    [answers.map((answer) => answer.command.prompt)],
  );
  const jobsByPrompt = new Map(rows.map((row) => [row.prompt, row]));
  let slowAnswers = 0;
  let lateAcknowledgements = 0;
  let unanswered = 0;
  let acceptedWithoutJob = 0;
  let refusedButCharged = 0;
  for (const answer of answers) {
    const { prompt, duringOutage } = answer.command;
    if (answer.outcome === 'unanswered') {
      unanswered += 1;
      details.push(unansweredDetail(world, answer.command.handle, prompt));
      continue;
    }
    if (duringOutage && answer.ms! > ANSWER_WITHIN_MS) {
      slowAnswers += 1;
      details.push(`slow: "${prompt}" was answered (${answer.outcome}) after ${answer.ms} ms`);
    }
    if (duringOutage && answer.outcome === 'accepted') {
      const held = acceptanceMs(world, answer.command.handle.id);
      if (held === undefined || held > ANSWER_WITHIN_MS) {
        lateAcknowledgements += 1;
        details.push(`late acknowledgement: "${prompt}" was accepted after ${held ?? 'never'} ms (told its job after ${answer.acknowledgedMs ?? 'never'} ms)`);
      }
    }
    const job = jobsByPrompt.get(prompt);
    if (answer.outcome === 'accepted' && !job) {
      acceptedWithoutJob += 1;
      details.push(`accepted without a job: "${prompt}"`);
    }
    if (answer.outcome === 'refused' && job && job.net !== 0) {
      refusedButCharged += 1;
      details.push(`refused but charged ${-job.net}: "${prompt}" (told: ${answer.text.slice(0, 120)})`);
    }
  }
  const during = answers.filter((answer) => answer.command.duringOutage && answer.ms !== undefined);
  const times = summarize(during.map((answer) => answer.ms!));
  const sorted = during.map((answer) => answer.ms!).sort((a, b) => a - b);
  const count = (outcome: Answer['outcome']) => answers.filter((answer) => answer.command.duringOutage && answer.outcome === outcome).length;
  const acknowledged = answers.filter((answer) => answer.command.duringOutage && answer.acknowledgedMs !== undefined).map((answer) => answer.acknowledgedMs!);
  return {
    slowAnswers,
    lateAcknowledgements,
    unanswered,
    acceptedWithoutJob,
    refusedButCharged,
    info: {
      sentDuringOutage: answers.filter((answer) => answer.command.duringOutage).length,
      acceptedDuringOutage: count('accepted'),
      refusedDuringOutage: count('refused'),
      answerDuringOutageP50Ms: sorted.length ? Math.round(percentile(sorted, 50)) : 'n/a',
      answerDuringOutageP99Ms: sorted.length ? Math.round(times.p99) : 'n/a',
      answerDuringOutageMaxMs: sorted.length ? Math.round(times.max) : 'n/a',
      acknowledgedDuringOutageP99Ms: acknowledged.length ? Math.round(summarize(acknowledged).p99) : 'n/a',
    },
    details,
  };
}
