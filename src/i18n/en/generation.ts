/** Messages of the commands that make things: /song, /lyrics, /voice, /video, /download, /upload, /jobs, /library and Remix. */
import { OPERATION_COSTS as COST } from '../../music-api-spec.js';
import type { Section } from '../messages.js';

export const generation = {
  // ---- command definitions (English is what the definitions register) ----
  'command.song.name': 'song',
  'command.song.description': `Make a song from a prompt (${COST.song} credits).`,
  'command.song.prompt.name': 'prompt',
  'command.song.prompt.description': 'What the song is about and how it should sound.',
  'command.song.lyrics.name': 'lyrics',
  'command.song.lyrics.description': 'Your own lyrics, sung as written.',
  'command.song.title.name': 'title',
  'command.song.title.description': 'The song’s title.',
  'command.song.model.name': 'model',
  'command.song.model.description': 'Which model makes it (the server’s default when left out).',
  'command.song.instrumental.name': 'instrumental',
  'command.song.instrumental.description': 'Music only, no vocals.',
  'command.song.voice.name': 'voice',
  'command.song.voice.description': 'Sung by one of this server’s voice personas.',

  'command.lyrics.name': 'lyrics',
  'command.lyrics.description': `Write song lyrics from a prompt (${COST.lyrics} credit).`,
  'command.lyrics.prompt.name': 'prompt',
  'command.lyrics.prompt.description': 'What the lyrics should be about.',

  // The 10 seconds are AUDIO_LIMITS.voiceMinSeconds (a test keeps them in step).
  'command.voice.name': 'voice',
  'command.voice.description': 'Voice personas: make one from a recording, list them, delete one.',
  'command.voice.create.name': 'create',
  'command.voice.create.description': `Make a voice persona from a clear solo vocal, MP3 or WAV, over 10 s (${COST.voice} credits).`,
  'command.voice.create.audio.name': 'audio',
  'command.voice.create.audio.description': 'A clear solo vocal, MP3 or WAV, longer than 10 seconds.',
  'command.voice.create.name.name': 'name',
  'command.voice.create.name.description': 'What to call the voice.',
  'command.voice.list.name': 'list',
  'command.voice.list.description': 'The voice personas of this server.',
  'command.voice.delete.name': 'delete',
  'command.voice.delete.description': 'Delete a voice persona (its owner or a moderator).',
  'command.voice.delete.voice.name': 'voice',
  'command.voice.delete.voice.description': 'The voice to delete.',

  'command.video.name': 'video',
  'command.video.description': `Make a music video for a song of this server (${COST.video} credits).`,
  'command.video.song.name': 'song',
  'command.video.song.description': 'The song (pick a recent one, or paste its job id).',

  'command.download.name': 'download',
  'command.download.description': `Download a song of this server re-encoded as MP3 or WAV (${COST.download} credits).`,
  'command.download.song.name': 'song',
  'command.download.song.description': 'The song (pick a recent one, or paste its job id).',
  'command.download.format.name': 'format',
  'command.download.format.description': 'The file format.',
  'command.download.format.choice.mp3': 'MP3',
  'command.download.format.choice.wav': 'WAV',

  'command.upload.name': 'upload',
  'command.upload.description': `Register your own MP3 or WAV as a clip, to make a video of it (${COST.upload} credits).`,
  'command.upload.audio.name': 'audio',
  'command.upload.audio.description': 'Your audio, MP3 or WAV.',
  'command.upload.title.name': 'title',
  'command.upload.title.description': 'Its title.',

  'command.jobs.name': 'jobs',
  'command.jobs.description': 'Your requests: list them, show a result again, cancel one that has not started.',
  'command.jobs.list.name': 'list',
  'command.jobs.list.description': 'Your recent requests on this server.',
  'command.jobs.show.name': 'show',
  'command.jobs.show.description': 'Post a finished result again, with working buttons.',
  'command.jobs.show.id.name': 'id',
  'command.jobs.show.id.description': 'The job id (pick one, or paste it or its first 8 characters).',
  'command.jobs.cancel.name': 'cancel',
  'command.jobs.cancel.description': 'Cancel a request that was not yet sent to the service; its credits come back.',
  'command.jobs.cancel.id.name': 'id',
  'command.jobs.cancel.id.description': 'The job id (pick one, or paste it or its first 8 characters).',

  'command.library.name': 'library',
  'command.library.description': 'This server’s finished songs, newest first: search them, play them again, remix them.',
  'command.library.user.name': 'user',
  'command.library.user.description': 'Only this member’s songs.',
  'command.library.query.name': 'query',
  'command.library.query.description': 'Words in the title, the prompt or the lyrics.',

  // ---- /song ----
  'song.refusal.unknownModel': 'That model is not one this bot offers. Pick one from the list.',
  'song.refusal.voiceInstrumental': 'A voice persona sings: leave out `{:song instrumental}`, or leave out `{:song voice}`.',
  'song.refusal.voiceModel': 'A song with a voice persona uses the voice’s own model: leave out `{:song model}`.',

  // ---- the "Make a song" form (from lyrics, and Remix) ----
  'songForm.title': 'Make a song',
  'songForm.remixTitle': 'Remix: {title}',
  'songForm.lyrics': 'Lyrics',
  'songForm.style': 'Style',
  'songForm.stylePlaceholder': 'e.g. upbeat synth-pop with female vocals',
  'songForm.songTitle': 'Title',
  'songForm.busy': 'The bot is busy right now. Please press the button again.',

  // ---- /lyrics ----
  'lyrics.refusal.gone': 'These lyrics are no longer available.',
  'lyrics.refusal.notYours': 'Only the member who asked for these lyrics, or a moderator, can make a song of them.',

  // ---- /voice ----
  'voice.refusal.unknown': 'That is not one of this server’s voice personas. Pick one from the list.',
  'voice.refusal.nameTaken': 'This server already has a voice named “{name}”. Pick another name.',
  'voice.refusal.notYours': 'Only the member who made this voice, or a moderator, can delete it.',
  'voice.list.empty': 'This server has no voice personas yet. Make one with `{/voice create}`.',
  'voice.list.heading': '**Voice personas of this server** ({count})',
  'voice.list.line': '• **{name}**, by <@{user}>, {date}',
  'voice.deleted': 'Deleted the voice **{name}**.',

  // ---- /video and /download, from the command or a result's buttons ----
  'songButtons.notYours': 'Only the member who made this song, or a moderator, can use its buttons. Try `{command}`.',
  'download.refusal.format': 'The format is MP3 or WAV.',
  'jobLookup.notASong': 'That is not a finished song of this server. Pick one from the list.',

  // ---- audio attachments (/voice create, /upload) ----
  'attachment.notAudio': 'Attach an MP3 or WAV file.',
  'attachment.tooLarge': 'That file is {size} MB; the limit is {limit} MB.',
  'attachment.larger': 'That file is larger than {limit} MB.',
  'attachment.unreadable': 'That file is not a readable MP3 or WAV recording.',
  'attachment.tooShort': 'That recording is {seconds:seconds} long; a voice needs more than {min:seconds} of clear solo singing.',
  'attachment.downloadFailed': 'The bot could not read that attachment. Please upload it again.',

  // ---- /jobs ----
  'jobs.kind.song': 'song',
  'jobs.kind.personaSong': 'persona song',
  'jobs.kind.lyrics': 'lyrics',
  'jobs.kind.voice': 'voice',
  'jobs.kind.video': 'video',
  'jobs.kind.download': 'download',
  'jobs.kind.upload': 'upload',
  'jobs.state.queued': 'waiting',
  'jobs.state.submitting': 'being sent',
  'jobs.state.submitted': 'in progress',
  'jobs.state.succeeded': 'done',
  'jobs.state.failed': 'failed',
  'jobs.state.timedOut': 'timed out',
  'jobs.state.cancelled': 'cancelled',
  'jobs.list.empty': 'You have no requests on this server yet.',
  'jobs.list.heading': '**Your recent requests**',
  'jobs.refusal.notYours': 'No request of yours on this server has that id. `{/jobs list}` shows them.',
  'jobs.refusal.unknown': 'No request of yours on this server has that id.',
  'jobs.refusal.gone': 'That request no longer exists.',
  'jobs.refusal.cancelNotAllowed': 'Only the member who asked, or a moderator, can cancel this request.',
  'jobs.refusal.alreadySubmitted': 'Too late to cancel: the music service is already working on it.',
  'jobs.refusal.alreadyFinal': 'That request is already {state}.',
  'jobs.refusal.cancelledNoResult': 'That request was cancelled: it has no result.',
  'jobs.refusal.notDone': 'That request is {state}; its result will be posted when it is done.',
  'jobs.refusal.notDoneQueued': 'That request is {state} (position {position} in the queue); its result will be posted when it is done.',
  'jobs.cancelled': {
    one: 'Cancelled your {kind} request: {count} credit back.',
    other: 'Cancelled your {kind} request: {count} credits back.',
  },
  'jobs.cancelledWithBalance': {
    one: 'Cancelled your {kind} request: {count} credit back, {balance} on this server now.',
    other: 'Cancelled your {kind} request: {count} credits back, {balance} on this server now.',
  },

  // ---- /library ----
  'library.title': 'This server’s library',
  'library.by': 'Songs by <@{user}>',
  'library.matching': 'matching “{query}”',
  'library.range': 'Songs {from}–{to} of {total}',
  'library.empty': 'No songs here yet. `{/song}` makes the first one.',
  'library.emptyFor': '<@{user}> has no finished songs on this server yet.',
  'library.noMatch': 'No song matches “{query}”. Try fewer words, or other ones.',
  'library.newer': 'Newer',
  'library.older': 'Older',
  'library.showPlaceholder': 'Show a song again, with its buttons…',
  'library.remixPlaceholder': 'Remix a song…',
  'library.withVoice': 'with a voice',
  'library.queryTooLong': 'That search is too long to page through: at most {max} characters.',
  'library.stale': 'This page no longer works. Run `{/library}` again.',
  'library.notInLibrary': 'That song is no longer in this server’s library.',

  // ---- Remix ----
  'remix.refusal.otherGuild': 'That song belongs to another server: it can only be remixed there.',
  'remix.refusal.voiceGone': 'The voice this song was sung with has been deleted, so it can’t be remixed. `{/song}` makes a new one.',
} as const satisfies Section;
