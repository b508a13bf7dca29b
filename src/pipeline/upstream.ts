/**
 * How each kind of job talks to the music service: which operation submits it, where it is
 * polled, which task type it counts against for the in-flight cap, and how long it usually takes.
 */
import type { JobKind } from '../db/schema.js';
import type { MusicApiClient, TaskAccepted, TaskStatus, WebhookTarget } from '../music-api/index.js';
import type { GenerationRequest } from './requests.js';

export type UpstreamTaskType =
  | 'create_music'
  | 'make_lyrics'
  | 'video_clip'
  | 'upload'
  | 'download'
  | 'create_voice'
  | 'persona_music';

export const TASK_TYPE_BY_KIND: Record<JobKind, UpstreamTaskType> = {
  song: 'create_music',
  lyrics: 'make_lyrics',
  video: 'video_clip',
  upload: 'upload',
  download: 'download',
  voice: 'create_voice',
  persona_song: 'persona_music',
};

export const KINDS_BY_TASK_TYPE = Object.entries(TASK_TYPE_BY_KIND).reduce(
  (acc, [kind, type]) => ({ ...acc, [type]: [...(acc[type] ?? []), kind as JobKind] }),
  {} as Record<UpstreamTaskType, JobKind[]>,
);

/** The kinds that share `kind`'s task type, and so its queue and its cap at the service. */
export function kindsSharingTaskType(kind: JobKind): JobKind[] {
  return KINDS_BY_TASK_TYPE[TASK_TYPE_BY_KIND[kind]];
}

/** Where the music service sends a job's webhook (configuration checks PUBLIC_URL against its length). */

/**
 * Whether the operation that submits `kind` takes a webhook. The spec registers `webhook_url`
 * on the producer creates and sonic create-voice only: a persona song (sonic create) is polled.
 */
export function takesWebhook(kind: JobKind): boolean {
  return kind !== 'persona_song';
}

export function submitUpstream(
  client: MusicApiClient,
  request: GenerationRequest,
  webhook: WebhookTarget | undefined,
): Promise<TaskAccepted> {
  const hook = webhook ? { webhook } : {};
  switch (request.kind) {
    case 'song':
      return client.createSong({
        ...(request.prompt !== undefined && { sound: request.prompt }),
        ...(request.lyrics !== undefined && { lyrics: request.lyrics }),
        ...(request.title !== undefined && { title: request.title }),
        ...(request.model !== undefined && { model: request.model }),
        ...(request.instrumental !== undefined && { makeInstrumental: request.instrumental }),
        ...hook,
      });
    case 'persona_song':
      return client.createPersonaSong({
        personaId: request.personaId,
        ...(request.lyrics !== undefined && { lyrics: request.lyrics }),
        ...(request.title !== undefined && { title: request.title }),
        ...(request.prompt !== undefined && { tags: request.prompt }),
      });
    case 'lyrics':
      return client.createLyrics({ prompt: request.prompt, ...hook });
    case 'voice':
      return client.createVoice({ audioUrl: request.audioUrl, ...hook });
    case 'video':
      return client.createVideoClip({ clipId: request.clipId, ...hook });
    case 'download':
      return client.requestDownload({ clipId: request.clipId, format: request.format, ...hook });
    case 'upload':
      return client.uploadAudio({ audioUrl: request.audioUrl, ...hook });
  }
}

export function pollUpstream(client: MusicApiClient, kind: JobKind, taskId: string): Promise<TaskStatus> {
  return kind === 'voice' || kind === 'persona_song' ? client.getSonicTask(taskId) : client.getProducerTask(taskId);
}
