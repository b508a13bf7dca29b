/**
 * Buttons and modals carry their action and the job they act on in the custom id, so they
 * keep working after a restart: nothing about them lives in memory. Discord allows 100
 * characters; `<action>:<uuid>:<arg>` stays far below.
 */
export const CUSTOM_ID_ACTIONS = [
  /** Make a music video of a song result. arg: none for take 1, else the take's number (src/pipeline/takes.ts). */
  'video',
  /** Download a song result re-encoded. arg: `mp3` | `wav`, then `:<take>` for a take after the first. */
  'download',
  /** Open the "Make a song" modal from a lyrics result. */
  'make-song',
  /** Submit of that modal. */
  'make-song-modal',
  /** Re-post a job's result (`/jobs show` and "show again" buttons). */
  'show',
  /** Cancel a job that was not yet submitted. */
  'cancel',
  /**
   * Paging of `/credits-admin history`. subject: `<userId|all>`; arg: `o` (older) or `n` (newer)
   * and the ledger id the page starts beyond (none on a disabled button); a bare id is `o`.
   */
  'history-page',
  /** The "Export CSV" button of `/credits-admin history`. subject: `<userId|all>`. */
  'history-csv',
  /** The owner's choice when a new monthly allowance would top the balance up at once. subject: the amount; arg: `now` | `next`. */
  'allowance-set',
  /**
   * Paging of `/library`. subject: `<userId|all>`; arg: `o` (older) or `n` (newer), the job id
   * the page starts beyond in base64url, `:`, and the search as typed (possibly empty).
   */
  'library-page',
  /** The "Show a song" select of `/library`. subject: `page`; the value is the job id. */
  'library-show',
  /** The "Remix a song" select of `/library`: opens the remix form. subject: `page`; the value is the job id. */
  'library-remix',
  /** The Remix button on every song: opens the song form filled with that song. arg: as `video`'s. */
  'remix',
  /** Submit of that form. subject: the job remixed; arg: as `video`'s. */
  'remix-modal',
  /**
   * "Which one did you mean?" menus, sent when a typed name fits several songs or voices; the
   * pick continues the command. subject: `song`, `job` or `voice`, for `download-pick` the
   * format, for `song-voice-pick` the asking interaction's id (its options are kept under it,
   * see src/discord/pending-choices.ts). The value is the job or voice id.
   */
  'video-pick',
  'download-pick',
  'jobs-show-pick',
  'jobs-cancel-pick',
  'voice-delete-pick',
  'song-voice-pick',
  /** The Play button on every song: plays it in the member's voice channel, as `/play`. subject: the job id; arg: as `video`'s. */
  'play',
  /** "Which one did you mean?" for `/play`. subject: `song`; the value is the job id. */
  'play-pick',
  /** The "Play a song" select of `/library`. subject: `page`; the value is the job id. */
  'library-play',
  /** The now-playing message's buttons. subject: `pause` | `resume` | `skip` | `stop`. */
  'player',
  /** "Add to this server" on a pack the member bought (`/credits`). subject: the entitlement id. */
  'pack-claim',
  /** The Report button on every result: opens the "why?" form. subject: the job id. */
  'report',
  /** Submit of that form, also opened by the Report message command. subject: the job id. */
  'report-modal',
  /** The moderators' buttons on a review message. subject: the job id; arg: `hide` | `block` | `dismiss`. */
  'review',
  /** The Delete button on every result, for its requester: asks to confirm. subject: the job id. */
  'delete-result',
  /** The confirmation of that delete. subject: the job id. */
  'delete-confirm',
  /** The Like button on every song: likes it, or takes the like back. subject: the job id. */
  'like',
  /** The Reroll button on every song: makes it again from the same inputs, as `/song`. subject: the job id. */
  'reroll',
  /** Enter contest, on a member's song posted while a contest ran: enters it, for its requester only. subject: the job id. */
  'contest-enter',
  /** Paging of `/moderation reports`. subject: the page to show, from 1 (0 or one past the last on a disabled button). */
  'reports-page',
] as const;

export type CustomIdAction = (typeof CUSTOM_ID_ACTIONS)[number];

export interface CustomId {
  readonly action: CustomIdAction;
  /** A job id, or a guild-scoped subject for the paging actions. */
  readonly subject: string;
  readonly arg?: string;
}

const MAX_LENGTH = 100;

export function encodeCustomId({ action, subject, arg }: CustomId): string {
  const id = arg === undefined ? `${action}:${subject}` : `${action}:${subject}:${arg}`;
  if (id.length > MAX_LENGTH) throw new RangeError(`custom id longer than ${MAX_LENGTH} characters: ${action}`);
  return id;
}

/** Returns undefined for anything this bot did not make (an old or foreign id). */
export function decodeCustomId(raw: string): CustomId | undefined {
  const [action, subject, ...rest] = raw.split(':');
  if (!action || !subject || !(CUSTOM_ID_ACTIONS as readonly string[]).includes(action)) return undefined;
  const arg = rest.length > 0 ? rest.join(':') : undefined;
  return arg === undefined
    ? { action: action as CustomIdAction, subject }
    : { action: action as CustomIdAction, subject, arg };
}
