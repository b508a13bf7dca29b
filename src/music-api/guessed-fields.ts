/**
 * Every field name the spec does not show, each a guess labelled with its source, so that when
 * the real service proves one wrong the fix is one line here. Sources: "notes" (the service's
 * public documentation), "client code" (names the notes report from public client code,
 * unconfirmed), "ours" (nothing published; chosen by this project).
 */
export const GUESSED_FIELDS = {
  producerCreate: {
    /** Guess (notes, documented by the real service): the lyrics field; the spec hides its name. */
    lyrics: 'lyrics',
    /** Guess (notes): optional, up to 80 characters. */
    title: 'title',
    /** Guess (notes): optional boolean. */
    makeInstrumental: 'make_instrumental',
    /** Guess (notes): optional, a number written as a string. */
    seed: 'seed',
  },
  lyricsCreate: {
    /** Guess (notes, "a prompt field", name unconfirmed). */
    prompt: 'prompt',
  },
  videoClip: {
    /** Guess (client code). */
    clipId: 'clip_id',
  },
  upload: {
    /** Guess (client code: the sonic group's upload calls its audio URL field `url`). */
    audioUrl: 'url',
  },
  download: {
    /** Guess (client code). */
    clipId: 'clip_id',
    /** Guess (client code): "mp3" or "wav". */
    format: 'format',
  },
  personaSong: {
    /** Guess (notes). The spec names only `task_type: persona_music` and `persona_id`. */
    personaId: 'persona_id',
    /** Guess (notes): always `true` for persona songs. */
    customMode: 'custom_mode',
    /** Guess (notes): the lyrics travel in `prompt` on sonic create. */
    lyrics: 'prompt',
    /** Guess (notes). */
    title: 'title',
    /** Guess (notes): a comma-separated style description. */
    tags: 'tags',
    /** Guess (notes): sonic model names differ from the producer's (e.g. `sonic-v4-5`). */
    model: 'mv',
  },
  credits: {
    /** Guess (notes): GET /api/v1/get-credits answers `{ credits, extra_credits }`. */
    credits: 'credits',
    /** Guess (notes). */
    extraCredits: 'extra_credits',
  },
  results: {
    /** Guess (ours): where a make_lyrics task's text sits in a `data` item; tried in order. */
    lyricsText: ['text', 'lyrics'],
    /** Guess (ours): a download task's link; the spec shows no shape for it. */
    downloadUrl: ['download_url', 'url'],
    /** Guess (ours): why a task failed. */
    failureReason: ['error', 'fail_reason', 'error_message'],
    /** Guess (notes): a sonic clip's state field (`pending`, `running`, `succeeded`, `failed`). */
    clipState: 'state',
  },
} as const;
