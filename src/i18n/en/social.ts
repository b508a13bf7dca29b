/** Messages of the social buttons on every song: Like and Reroll. */
import type { Section } from '../messages.js';

export const social = {
  // On every song
  'result.button.like': 'Like · {likes}',
  'result.button.reroll': 'Reroll',
  'result.field.rerollOf': 'Reroll of',
  'unit.likes': { one: '{count} like', other: '{count} likes' },
  // Like
  'like.liked': 'You like **{title}** ({likes:likes} now). Press Like again to take it back.',
  'like.unliked': 'You no longer like **{title}** ({likes:likes} now).',
  'like.gone': 'This song can’t be liked: it was removed, or it isn’t one of this server’s songs.',
  // Reroll
  'reroll.gone': 'This song can’t be rerolled: it was removed, or it isn’t one of this server’s songs. `{/song}` makes a new one.',
  'reroll.voiceGone': 'The voice this song was sung with has been deleted, so it can’t be rerolled. `{/song}` makes a new one.',
  'reroll.already': 'Your reroll of this song is already on its way.',
} as const satisfies Section;
