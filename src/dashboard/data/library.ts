/**
 * The server's library as the dashboard shows it: its songs with their audio, requester and
 * date, a keyset page at a time (the pipeline's `libraryPage`); and hiding one, through the
 * same decision as the review queue's Hide, in the audit log with the dashboard as its source.
 */
import { z } from 'zod';
import type { Executor } from '../../db/client.js';
import { libraryPage, type LibraryCursor } from '../../pipeline/library.js';
import type { Pipeline } from '../../pipeline/pipeline.js';
import { givenTitle } from '../../pipeline/titles.js';

export const DASHBOARD_LIBRARY_PAGE = 20;

export interface LibrarySong {
  readonly jobId: string;
  /** The song's title; '' when it has none (the view names it). */
  readonly title: string;
  readonly userId: string;
  readonly createdAt: Date;
  /** The first take's audio, when the service gave one. */
  readonly audioUrl: string | undefined;
}

export interface LibraryView {
  readonly songs: readonly LibrarySong[];
  /** Cursors of the neighbouring pages, or undefined at either end. */
  readonly older: string | undefined;
  readonly newer: string | undefined;
}

const cursorSchema = z.object({
  older: z.string().uuid().optional(),
  newer: z.string().uuid().optional(),
});

/** The page a query string asks for: older or newer than a song, else the newest. */
export function libraryCursorOf(query: unknown): LibraryCursor | undefined {
  const parsed = cursorSchema.safeParse(query ?? {});
  if (!parsed.success) return undefined;
  if (parsed.data.older) return { direction: 'older', jobId: parsed.data.older };
  if (parsed.data.newer) return { direction: 'newer', jobId: parsed.data.newer };
  return undefined;
}

export async function loadLibrary(db: Executor, guildId: string, cursor: LibraryCursor | undefined): Promise<LibraryView> {
  const page = await libraryPage(db, { guildId }, cursor, DASHBOARD_LIBRARY_PAGE);
  const songs = page.songs.map((job) => {
    const clip = job.result?.clips?.[0];
    return {
      jobId: job.id,
      title: givenTitle(job) ?? '',
      userId: job.userId,
      createdAt: job.createdAt,
      audioUrl: clip?.audioUrl,
    };
  });
  return {
    songs,
    older: page.hasOlder ? songs.at(-1)?.jobId : undefined,
    newer: page.hasNewer ? songs[0]?.jobId : undefined,
  };
}

export type HideOutcome = 'hidden' | 'already' | 'not_found';

/** A moderator hides a song from the dashboard: the review queue's Hide, without needing a report. */
export async function hideSong(pipeline: Pick<Pipeline, 'decideReport'>, input: { guildId: string; jobId: string; actorId: string }): Promise<HideOutcome> {
  const decided = await pipeline.decideReport({ ...input, outcome: 'hidden', source: 'dashboard' });
  return decided.outcome === 'decided' ? 'hidden' : decided.outcome === 'already_decided' ? 'already' : 'not_found';
}
