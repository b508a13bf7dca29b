/**
 * What the channel sees: a job's progress while it waits and runs, and its result or failure
 * once it ends. Pure functions of the job row, held to Discord's message limits.
 */
import {
  ButtonStyle,
  ComponentType,
  type APIActionRowComponent,
  type APIButtonComponent,
  type APIEmbed,
  type APIEmbedField,
} from 'discord-api-types/v10';
import { JOB_KINDS, type JobKind } from '../db/schema.js';
import { encodeCustomId } from '../discord-rest/custom-ids.js';
import { english, type MessageKey, type Translator } from '../i18n/index.js';
import { creditCost } from '../music-api/costs.js';
import { MUSIC_API_ERROR_TEXTS, type MusicApiErrorKind } from '../music-api/errors.js';
import { shownPosition, type JobRow } from './job-rows.js';
import type { OutgoingMessage } from '../discord-rest/discord-delivery.js';
import { discordTimestamp, escapeMarkdown, inCode, truncate } from '../text.js';
import { cleanTitle, givenTitle, lyricsTitleOf, titleForDisplay } from './titles.js';
import { downloadLinkOf, httpUrl as safeUrl, lyricsTextOf } from './result-needs.js';
import { clipOfTake, takeArg, takeCount } from './takes.js';

export const DISCORD_LIMITS = {
  content: 2000,
  embedTitle: 256,
  embedDescription: 4096,
  fieldName: 256,
  fieldValue: 1024,
  footer: 2048,
  embedTotal: 6000,
} as const;

const COLOURS = { working: 0x5865f2, success: 0x57f287, failure: 0xed4245 } as const;

/** The catalogue's name for a kind in its per-kind messages (`progress.title.song`, …): a persona song is a song. */
type KindKey = 'song' | 'lyrics' | 'voice' | 'video' | 'download' | 'upload';
export function kindKey(kind: JobKind): KindKey {
  return kind === 'persona_song' ? 'song' : kind;
}

/** A finished job's error kind (see transitions.ts and the music API's kinds) and the message it shows. */
const ERROR_KEYS: Readonly<Record<string, MessageKey>> = {
  upstream_failed: 'failure.upstreamFailed',
  empty_result: 'failure.emptyResult',
  unconfirmed_submission: 'failure.unconfirmed',
  deadline: 'failure.deadline',
  cancelled: 'failure.cancelledQueued',
  account_refused: 'failure.accountCannotPay',
};

function errorText(job: JobRow, t: Translator): string {
  const error = job.error;
  if (!error) return t('failure.unknown');
  if (error.kind === 'unconfirmed_submission' && error.mayArrive === true) return t('failure.unconfirmedMayArrive');
  const key = ERROR_KEYS[error.kind];
  if (key) return t.text({ key });
  if (Object.hasOwn(MUSIC_API_ERROR_TEXTS, error.kind)) return t.text(MUSIC_API_ERROR_TEXTS[error.kind as MusicApiErrorKind]);
  // An unknown kind's message is the service's own, which may echo the member's text.
  return error.message ? escapeMarkdown(error.message) : t('failure.unknown');
}

function requestText(job: JobRow, field: string): string | undefined {
  const value = job.request[field];
  return typeof value === 'string' && value.length > 0 ? value : undefined;
}

export interface ProgressView {
  readonly position: number;
  readonly expectedAt: Date;
}

/** The progress of a waiting or running job, in the member's language `t`. */
export function renderProgress(job: JobRow, view: ProgressView, t: Translator = english): OutgoingMessage {
  const where =
    job.state === 'queued'
      ? view.position > 1
        ? t('progress.position', { position: shownPosition(view.position) })
        : t('progress.next')
      : t('progress.working');
  return {
    content: '',
    embeds: [
      {
        title: truncate(t(`progress.title.${kindKey(job.kind)}`), DISCORD_LIMITS.embedTitle),
        description: `${where}\n${t('progress.expected', { when: discordTimestamp(view.expectedAt, 'R') })}`,
        color: COLOURS.working,
        fields: [{ name: t('result.field.cost'), value: t('result.credits', { count: job.cost }), inline: true }],
        footer: { text: t('job.footer', { id: job.id }) },
      },
    ],
    components: [],
    allowed_mentions: { parse: [] },
  };
}

function button(label: string, customId: string): APIButtonComponent {
  return { type: ComponentType.Button, style: ButtonStyle.Secondary, label, custom_id: customId };
}

function linkButton(label: string, url: string): APIButtonComponent {
  return { type: ComponentType.Button, style: ButtonStyle.Link, label, url };
}

/** A paid action's button: what it makes, and what it costs. */
function paidButton(t: Translator, action: string, price: number, customId: string): APIButtonComponent {
  return button(truncate(t('result.button.priced', { action, price: t('result.credits', { count: price }) }), 80), customId);
}

/** The job as a message without its files shows it: a new post, or an answer that carries none. */
export function withoutFiles(job: JobRow): JobRow {
  return job.result?.attachedTakes === undefined ? job : { ...job, result: { ...job.result, attachedTakes: undefined } };
}

/** What a request of `kind` costs: the pipeline's `costOf`, so that a button shows the price it will be charged. */
export type PriceOf = (kind: JobKind) => number;

/** The spec's prices and the default persona song's, where no pipeline is at hand. */
const LIST_PRICES: PriceOf = (kind) => creditCost(kind === 'persona_song' ? 'personaSong' : kind);

/** A file of a song result that a paid button would make. */
export type SongFile = 'video' | 'mp3' | 'wav';

/**
 * The link a song result's take already carries to `file`, if any: its `video_url`, its
 * `wav_url`, or an `audio_url` already in that format (the spec's is m4a, so an MP3 is usually
 * new). A paid button is offered only where there is none, and a press on an old one answers
 * with the link.
 */
export function linkedFile(job: JobRow, file: SongFile, take = 1): string | undefined {
  const clip = clipOfTake(job, take);
  if (file === 'video') return safeUrl(clip?.videoUrl);
  const audio = safeUrl(clip?.audioUrl);
  const audioInFormat = audio !== undefined && new URL(audio).pathname.toLowerCase().endsWith(`.${file}`) ? audio : undefined;
  return file === 'wav' ? (safeUrl(clip?.wavUrl) ?? audioInFormat) : audioInFormat;
}

function row(buttons: APIButtonComponent[]): APIActionRowComponent<APIButtonComponent>[] {
  return buttons.length === 0 ? [] : [{ type: ComponentType.ActionRow, components: buttons.slice(0, 5) }];
}

/** Fits the fields, title, footer and description together under the 6000-character total. */
function fitEmbed(embed: APIEmbed): APIEmbed {
  const fixed =
    (embed.title?.length ?? 0) +
    (embed.footer?.text.length ?? 0) +
    (embed.fields ?? []).reduce((sum, field) => sum + field.name.length + field.value.length, 0);
  const room = Math.min(DISCORD_LIMITS.embedDescription, DISCORD_LIMITS.embedTotal - fixed);
  return embed.description === undefined ? embed : { ...embed, description: truncate(embed.description, Math.max(room, 0)) };
}

/** The song a remix was made from, as its request recorded it (see `remixOf` in requests.ts). */
function remixSourceOf(job: JobRow): { jobId: string; title: string } | undefined {
  const value = job.request.remixOf;
  if (typeof value !== 'object' || value === null) return undefined;
  const { jobId, title } = value as Record<string, unknown>;
  return typeof jobId === 'string' && typeof title === 'string' ? { jobId, title } : undefined;
}

/** The song a reroll was made from, as its request recorded it (see `rerollOf` in requests.ts): the first of its line. */
function rerollSourceOf(job: JobRow): { jobId: string; title: string } | undefined {
  const value = job.request.rerollOf;
  if (typeof value !== 'object' || value === null) return undefined;
  const { jobId, title } = value as Record<string, unknown>;
  return typeof jobId === 'string' && typeof title === 'string' ? { jobId, title } : undefined;
}

/** Like, with how many members like the song: pressed again, the like is taken back. */
function likeButton(job: JobRow, t: Translator): APIButtonComponent {
  return {
    type: ComponentType.Button,
    style: ButtonStyle.Secondary,
    label: truncate(t('result.button.like', { likes: job.likeCount }), 80),
    custom_id: encodeCustomId({ action: 'like', subject: job.id }),
    emoji: { name: '❤️' },
  };
}

/**
 * A finished job's result (or failure), in the language `t` of whoever reads it; its paid
 * buttons show `priceOf` their requests.
 */
export function renderResult(job: JobRow, t: Translator = english, priceOf: PriceOf = LIST_PRICES): OutgoingMessage {
  if (job.state !== 'succeeded') return renderFailure(job, t);
  if (job.removedAt !== null) return renderRemoved(job, t);
  const result = job.result ?? {};
  const clip = result.clips?.[0];
  const fields: APIEmbedField[] = [{ name: t('result.field.requestedBy'), value: `<@${job.userId}>`, inline: true }];
  const model = requestText(job, 'model');
  if (model) fields.push({ name: t('result.field.model'), value: truncate(escapeMarkdown(model), 100), inline: true });
  // A result that arrived after its job was refunded (see `arrivedLate`) is free.
  const cost = (job.error?.creditsReturned ?? 0) > 0 ? t('result.costReturned') : t('result.credits', { count: job.cost });
  fields.push({ name: t('result.field.cost'), value: cost, inline: true });
  const remixOf = remixSourceOf(job);
  if (remixOf) fields.push({ name: t('result.field.remixOf'), value: `${truncate(escapeMarkdown(remixOf.title), 200)} (\`${remixOf.jobId.slice(0, 8)}\`)` });
  const rerollOf = rerollSourceOf(job);
  if (rerollOf) fields.push({ name: t('result.field.rerollOf'), value: `${truncate(escapeMarkdown(rerollOf.title), 200)} (\`${rerollOf.jobId.slice(0, 8)}\`)` });

  const embed: APIEmbed = { color: COLOURS.success, footer: { text: t('job.footer', { id: job.id }) }, fields };
  const buttons: APIButtonComponent[] = [];
  // Paid actions, a row each: one per take of a song.
  let actionRows: APIButtonComponent[][] = [];

  switch (job.kind) {
    case 'song':
    case 'persona_song':
    case 'upload': {
      const clips = (result.clips ?? []).slice(0, Math.max(takeCount(job), 1));
      // The member's title, else the service's, else the prompt; a remix says so.
      const title = givenTitle(job);
      embed.title =
        title === undefined
          ? t(job.kind === 'upload' ? 'result.upload.title' : 'result.song.title')
          : titleForDisplay(job, escapeMarkdown(title), t, DISCORD_LIMITS.embedTitle);
      const takes = takeCount(job);
      // With several takes, every link and button names its take ("take 2").
      const ofTake = (label: string, take: number) => (takes > 1 ? `${label} · ${t('result.take', { n: take })}` : label);
      // The audio shows once where the message carries it as a file: it plays there, and is linked
      // nowhere else. Without the file, its link (and for one take the Listen button) opens it.
      const attached = new Set(result.attachedTakes ?? []);
      const links = clips.flatMap((c, i) => {
        const suffix = takes > 1 ? ` (${t('result.take', { n: i + 1 })})` : '';
        const audioLinked = !attached.has(i + 1);
        return [
          audioLinked && safeUrl(c.audioUrl) && `[${t('result.link.audio')}${suffix}](${safeUrl(c.audioUrl)})`,
          safeUrl(c.wavUrl) && `[${t('result.link.wav')}${suffix}](${safeUrl(c.wavUrl)})`,
          safeUrl(c.videoUrl) && `[${t('result.link.video')}${suffix}](${safeUrl(c.videoUrl)})`,
        ].filter(Boolean);
      });
      if (links.length > 0) fields.push({ name: t('result.field.links'), value: truncate(links.join(' · '), DISCORD_LIMITS.fieldValue) });
      const prompt = requestText(job, 'prompt');
      const lyrics = clip?.lyrics ?? requestText(job, 'lyrics');
      // The service echoes the member's lyrics: escaped as theirs.
      embed.description =
        [prompt && `*${escapeMarkdown(prompt)}*`, lyrics && `**${t('result.lyricsHeading')}**\n${escapeMarkdown(lyrics)}`].filter(Boolean).join('\n\n') ||
        undefined;
      const image = safeUrl(clip?.imageUrl);
      if (image) embed.image = { url: image };
      // Each take gets Play and its own row of files and remix.
      const audio = safeUrl(clip?.audioUrl);
      if (audio && takes <= 1 && !attached.has(1)) buttons.push(linkButton(t('result.button.listen'), audio));
      const takeRows: APIButtonComponent[][] = [];
      for (let take = 1; take <= Math.max(takes, 1); take += 1) {
        const arg = takeArg(take);
        // Free: plays the take in the member's voice channel, as /play.
        if (safeUrl(clipOfTake(job, take)?.audioUrl)) buttons.push(button(ofTake(t('result.button.play'), take), encodeCustomId({ action: 'play', subject: job.id, arg })));
        // Only what the take does not link already: a video, an MP3, a WAV; and a remix, always new.
        const paid: APIButtonComponent[] = [];
        if (!linkedFile(job, 'video', take)) {
          paid.push(paidButton(t, ofTake(t('result.button.makeVideo'), take), priceOf('video'), encodeCustomId({ action: 'video', subject: job.id, arg })));
        }
        if (job.kind !== 'upload') {
          for (const format of ['mp3', 'wav'] as const) {
            if (linkedFile(job, format, take)) continue;
            const formatArg = take === 1 ? format : `${format}:${take}`;
            paid.push(paidButton(t, ofTake(t(`result.button.${format}`), take), priceOf('download'), encodeCustomId({ action: 'download', subject: job.id, arg: formatArg })));
          }
          paid.push(paidButton(t, ofTake(t('result.button.remix'), take), priceOf(job.kind), encodeCustomId({ action: 'remix', subject: job.id, arg })));
        }
        takeRows.push(paid);
      }
      if (job.kind !== 'upload') {
        buttons.push(likeButton(job, t));
        // Posted while a contest ran: its requester may enter it (the handler checks who and when).
        if (result.contestOpen === true) {
          buttons.push({
            type: ComponentType.Button,
            style: ButtonStyle.Primary,
            label: t('result.button.enterContest'),
            custom_id: encodeCustomId({ action: 'contest-enter', subject: job.id }),
            emoji: { name: '🏆' },
          });
        }
        // The whole request made again: one button, after the first take's remix.
        takeRows[0]?.push(paidButton(t, t('result.button.reroll'), priceOf(job.kind), encodeCustomId({ action: 'reroll', subject: job.id })));
      }
      actionRows = takeRows;
      break;
    }
    case 'lyrics': {
      const text = lyricsTextOf(result) ?? '';
      const title = lyricsTitleOf(job);
      embed.title = title ? truncate(escapeMarkdown(title), DISCORD_LIMITS.embedTitle) : t('result.lyrics.title');
      embed.description = text ? escapeMarkdown(text) : t('result.lyrics.empty');
      actionRows = [[paidButton(t, t('result.button.makeSong'), priceOf('song'), encodeCustomId({ action: 'make-song', subject: job.id }))]];
      break;
    }
    case 'voice': {
      const name = requestText(job, 'name') ?? result.personaName ?? t('result.voice.defaultName');
      embed.title = truncate(t('result.voice.title', { name: escapeMarkdown(name) }), DISCORD_LIMITS.embedTitle);
      embed.description = t('result.voice.usage', { name: inCode(name) });
      break;
    }
    case 'video': {
      const video = safeUrl(clip?.videoUrl);
      embed.title = truncate(clip?.title?.trim() ? t('result.video.titleOf', { title: escapeMarkdown(cleanTitle(clip.title)) }) : t('result.video.title'), DISCORD_LIMITS.embedTitle);
      embed.description = video ? t('result.video.watch', { url: video }) : t('result.video.noLink');
      const image = safeUrl(clip?.imageUrl);
      if (image) embed.image = { url: image };
      if (video) buttons.push(linkButton(t('result.button.watch'), video));
      break;
    }
    case 'download': {
      const format = requestText(job, 'format')?.toUpperCase() ?? t('result.download.file');
      const url = downloadLinkOf(clip, format);
      embed.title = truncate(t('result.download.title', { format }), DISCORD_LIMITS.embedTitle);
      embed.description = url ? t('result.download.link', { format, url }) : t('result.download.noLink');
      if (url) buttons.push(linkButton(t('result.button.download', { format }), url));
      break;
    }
  }

  return {
    content: '',
    embeds: [fitEmbed(embed)],
    components: [...row(buttons), ...actionRows.flatMap(row), ...row(REPORTABLE_KINDS.includes(job.kind) ? safetyButtons(job, t) : [])],
    allowed_mentions: { parse: [] },
  };
}

/**
 * What a member can report, and its requester delete (src/pipeline/reports.ts): every result,
 * since each starts from a member's text or file (a voice's name and recording, a file's song).
 */
export const REPORTABLE_KINDS: readonly JobKind[] = JOB_KINDS;

/** Report, for anyone; Delete, which only the requester may use (the handler checks). */
function safetyButtons(job: JobRow, t: Translator): APIButtonComponent[] {
  return [
    button(t('result.button.report'), encodeCustomId({ action: 'report', subject: job.id })),
    { type: ComponentType.Button, style: ButtonStyle.Danger, label: t('result.button.delete'), custom_id: encodeCustomId({ action: 'delete-result', subject: job.id }) },
  ];
}

/**
 * A result that left the library: hidden by a moderator or deleted by its requester. Nothing
 * of it is shown, no button, no file (`attachments: []` drops an attached audio file).
 */
export function renderRemoved(job: JobRow, t: Translator = english): OutgoingMessage {
  return {
    content: '',
    embeds: [
      {
        description: t(job.removal === 'deleted' ? 'result.removed.deleted' : 'result.removed.hidden'),
        color: COLOURS.failure,
        footer: { text: t('job.footer', { id: job.id }) },
      },
    ],
    components: [],
    attachments: [],
    allowed_mentions: { parse: [] },
  };
}

export function renderFailure(job: JobRow, t: Translator = english): OutgoingMessage {
  const returned = job.error?.creditsReturned ?? 0;
  const credits =
    returned > 0
      ? t('failure.creditsReturned', { count: returned })
      : job.state === 'failed' || job.state === 'timed_out'
        ? t('failure.noCreditsReturned')
        : '';
  const title = t(job.state === 'cancelled' ? `failure.cancelled.${kindKey(job.kind)}` : `failure.failed.${kindKey(job.kind)}`);
  return {
    content: '',
    embeds: [
      {
        title: truncate(title, DISCORD_LIMITS.embedTitle),
        description: truncate([errorText(job, t), credits].filter(Boolean).join('\n'), DISCORD_LIMITS.embedDescription),
        color: COLOURS.failure,
        footer: { text: t('job.footer', { id: job.id }) },
      },
    ],
    components: [],
    allowed_mentions: { parse: [] },
  };
}

/** The same message posted in the channel: it names the requester, and pings only them. */
export function asChannelMessage(job: JobRow, message: OutgoingMessage): OutgoingMessage {
  return {
    ...message,
    content: truncate(`<@${job.userId}>${message.content ? ` ${message.content}` : ''}`, DISCORD_LIMITS.content),
    allowed_mentions: { parse: [], users: [job.userId] },
  };
}
