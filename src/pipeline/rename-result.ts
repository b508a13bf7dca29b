/**
 * A member renames one of their own songs: the new title is checked as a request's words are,
 * shows everywhere the song is named (the library, the player, autocomplete), and the posted
 * result's title is edited to match.
 */
import { auditLog } from '../db/schema.js';
import { describeDiscordError } from '../discord-rest/discord-delivery.js';
import { localText, translator, type LocalText } from '../i18n/index.js';
import { zodText } from '../i18n/zod-text.js';
import { checkRequestText, costOfKind } from './accept-request.js';
import type { PipelineDeps } from './deps.js';
import { getJob, isShownResult, retitleJob, type JobRow } from './job-rows.js';
import { LIBRARY_KINDS } from './library.js';
import { renderResult } from './render.js';
import { songRequestSchema, type GuildForRequest, type Requester } from './requests.js';
import { describeJob } from './titles.js';

export type RenameOutcome =
  | { readonly outcome: 'renamed'; readonly before: string; readonly after: string }
  | { readonly outcome: 'gone' }
  | { readonly outcome: 'not_yours' }
  | { readonly outcome: 'invalid'; readonly text: LocalText };

export interface RenameInput {
  /** The member, as for a request: AutoMod rules and the explicit words look at where they write. */
  readonly requester: Requester;
  readonly jobId: string;
  readonly title: string;
  /** The guild as the caller read it: its words and blocks. */
  readonly guild: GuildForRequest;
}

/** @throws RequestRefusedError when the new title breaks the server's rules (nothing changes). */
export async function renameOwnResult(deps: PipelineDeps, input: RenameInput): Promise<RenameOutcome> {
  const { requester } = input;
  const job = await getJob(deps.db, input.jobId);
  if (!job || job.guildId !== requester.guildId || !isShownResult(job) || !LIBRARY_KINDS.includes(job.kind)) return { outcome: 'gone' };
  if (job.userId !== requester.userId) return { outcome: 'not_yours' };
  const parsed = songRequestSchema.shape.title.safeParse(input.title);
  if (!parsed.success) return { outcome: 'invalid', text: zodText(parsed.error) };
  if (parsed.data === undefined) return { outcome: 'invalid', text: localText('request.title.empty') };
  const title = parsed.data;
  await checkRequestText(deps, input.guild, { requester, request: { kind: 'song', title } });

  const before = describeJob(job);
  const renamed = await deps.db.transaction(async (tx) => {
    const row = await retitleJob(tx, job.id, title, deps.now());
    await tx.insert(auditLog).values({ guildId: job.guildId, actorId: requester.userId, action: 'result_renamed', details: { jobId: job.id, before, after: title } });
    return row;
  });
  if (!renamed) return { outcome: 'gone' };
  await showNewTitle(deps, renamed);
  deps.logger.info({ guildId: job.guildId, jobId: job.id }, 'result renamed by its requester');
  return { outcome: 'renamed', before, after: describeJob(renamed) };
}

/** Edits the posted result's embed to the new title; a message Discord no longer has is left be. */
async function showNewTitle(deps: PipelineDeps, job: JobRow): Promise<void> {
  if (!job.messageId) return;
  const rendered = renderResult(job, translator(job.guildLocale), (kind) => costOfKind(deps, kind));
  await deps.discord
    .editChannelMessage(job.channelId, job.messageId, { embeds: rendered.embeds ?? [] })
    .catch((err: unknown) => deps.logger.info({ jobId: job.id, error: describeDiscordError(err) }, 'could not show the new title on the result'));
}
