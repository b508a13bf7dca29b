/** What the simulator answers about a task: the polling body, which is also its webhook payload. */
import { DEFAULT_MODEL, REQUEST_FIELDS, RESPONSE_FIELDS } from './contract.js';
import type { SimTask } from './tasks.js';
import type { SimTaskState } from './types.js';

function mediaLinks(baseUrl: string, clipId: string): Record<string, string> {
  return {
    audio_url: `${baseUrl}/producer/${clipId}.m4a`,
    wav_url: `${baseUrl}/producer/${clipId}-wav.wav`,
    image_url: `${baseUrl}/producer/${clipId}-img.jpg`,
    video_url: `${baseUrl}/producer/${clipId}-video.mp4`,
  };
}

/** Where the media links point, and how long the songs there are. */
export interface MediaSettings {
  readonly baseUrl: string;
  readonly songSeconds: number;
}

/**
 * The body GET .../task/{id} answers for a task, and the payload of its webhook; in `taskState`
 * for an intermediate callback sent late.
 */
export function pollBody(task: SimTask, media: MediaSettings, taskState: SimTaskState = task.view.state): Record<string, unknown> {
  const { baseUrl, songSeconds } = media;
  const { view } = task;
  const done = taskState === 'SUCCESS';
  // An empty success ends SUCCESS without the one field its task type is for.
  const empty = done && task.behaviour.emptySuccess;
  const failure = taskState === 'FAILED' ? { [RESPONSE_FIELDS.failureReason]: 'the generation provider failed (simulated)' } : {};
  if (view.platform === 'producer') {
    // The envelope stays exactly code, message, data, status; the reason rides in the items.
    const data = producerData(task, baseUrl, done, songSeconds, empty).map((item) => ({ ...item, ...failure }));
    return { code: 200, message: 'success', data, status: taskState };
  }
  const state = { PENDING: 'pending', RUNNING: 'running', SUCCESS: 'succeeded', FAILED: 'failed' }[taskState];
  const { clipState, clipTitle, clipTags, clipLyrics, clipDuration } = RESPONSE_FIELDS;
  if (task.operation === 'voice') {
    const data = done
      ? { [clipState]: state, ...(empty ? {} : { persona_id: `persona-${view.taskId.slice(0, 8)}` }), name: `Voice ${view.taskId.slice(0, 4)}` }
      : { [clipState]: state, ...failure };
    return { code: 200, message: 'success', data };
  }
  const fields = REQUEST_FIELDS.personaSong;
  const data = task.clipIds.map((clipId, index) => ({
    clip_id: clipId,
    [clipState]: state,
    [clipTitle]: stringOr(view.body[fields.title], 'Persona song') + (index === 0 ? '' : ' (take 2)'),
    [clipTags]: stringOr(view.body[fields.tags], ''),
    [clipLyrics]: stringOr(view.body[fields.lyrics], ''),
    // notes "Sonic": a sonic clip's duration may be a string.
    ...(done ? { ...(empty ? {} : { audio_url: mediaLinks(baseUrl, clipId)['audio_url'] }), image_url: mediaLinks(baseUrl, clipId)['image_url'], [clipDuration]: songSeconds.toFixed(2) } : {}),
    ...failure,
  }));
  return { code: 200, message: 'success', data };
}

function producerData(task: SimTask, baseUrl: string, done: boolean, songSeconds: number, empty: boolean): Record<string, unknown>[] {
  const { body } = task.view;
  const clipId = task.clipIds[0] ?? task.view.taskId;
  const { clipTitle, clipSound, clipLyrics, clipTags, clipDuration, lyricsText, downloadUrl } = RESPONSE_FIELDS;
  switch (task.operation) {
    case 'lyrics': {
      const prompt = stringOr(body[REQUEST_FIELDS.lyrics.prompt], 'a song');
      return [{ [clipTitle]: titleFrom(prompt), ...(done && !empty ? { [lyricsText]: lyricsFor(prompt) } : {}) }];
    }
    case 'video':
      return [{ clip_id: clipId, ...(done ? { ...(empty ? {} : { video_url: mediaLinks(baseUrl, clipId)['video_url'] }), image_url: mediaLinks(baseUrl, clipId)['image_url'] } : {}) }];
    case 'upload':
      return [{ clip_id: clipId, [clipTitle]: 'Uploaded audio', ...(done ? { audio_url: mediaLinks(baseUrl, clipId)['audio_url'] } : {}) }];
    case 'download': {
      const format = body[REQUEST_FIELDS.download.format] === 'wav' ? 'wav' : 'mp3';
      const url = format === 'wav' ? `${baseUrl}/producer/${clipId}-wav.wav` : `${baseUrl}/producer/${clipId}.mp3`;
      return [{ clip_id: clipId, format, ...(done && !empty ? { [downloadUrl]: url } : {}) }];
    }
    default: {
      const fields = REQUEST_FIELDS.song;
      const sound = stringOr(body[fields.sound], '');
      const lyrics = body[fields.makeInstrumental] === true ? '' : stringOr(body[fields.lyrics], lyricsFor(sound));
      return [
        {
          clip_id: clipId,
          [clipTitle]: stringOr(body[fields.title], titleFrom(sound || lyrics)),
          [clipSound]: sound,
          [clipLyrics]: lyrics,
          [clipTags]: sound.slice(0, 60),
          mv: stringOr(body[fields.model], DEFAULT_MODEL),
          // A song without its audio has no `audio_url`, nor the `wav_url` and `video_url` made from it.
          ...(done ? { ...(empty ? { image_url: mediaLinks(baseUrl, clipId)['image_url'] } : mediaLinks(baseUrl, clipId)), [clipDuration]: songSeconds } : {}),
        },
      ];
    }
  }
}

function stringOr(value: unknown, fallback: string): string {
  return typeof value === 'string' && value.length > 0 ? value : fallback;
}

function withoutMarkers(text: string): string {
  return text.replace(/\[sim:[^\]]*\]/g, '').replace(/\s+/g, ' ').trim();
}

function titleFrom(text: string): string {
  const words = withoutMarkers(text).split(' ').slice(0, 4).join(' ');
  return words.length > 0 ? words.charAt(0).toUpperCase() + words.slice(1) : 'Untitled';
}

function lyricsFor(prompt: string): string {
  const topic = withoutMarkers(prompt).slice(0, 60) || 'nothing at all';
  return `[Verse]\nSinging about ${topic}\nUnder simulated skies\n\n[Chorus]\nLa la la, ${topic}\nNo credits spent tonight`;
}
