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
import { JOB_NOUNS } from '../db/schema.js';
import { encodeCustomId } from '../delivery/custom-ids.js';
import type { JobRow } from './job-rows.js';
import type { OutgoingMessage } from '../delivery/discord-delivery.js';
import { discordTimestamp, truncate } from '../text.js';

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

function requestText(job: JobRow, field: string): string | undefined {
  const value = job.request[field];
  return typeof value === 'string' && value.length > 0 ? value : undefined;
}

/** Only http(s) links from the service are ever rendered as links. */
function safeUrl(url: string | undefined): string | undefined {
  if (!url) return undefined;
  try {
    const parsed = new URL(url);
    return parsed.protocol === 'https:' || parsed.protocol === 'http:' ? parsed.toString() : undefined;
  } catch {
    return undefined;
  }
}

export interface ProgressView {
  readonly position: number;
  readonly expectedAt: Date;
}

export function renderProgress(job: JobRow, view: ProgressView): OutgoingMessage {
  const noun = JOB_NOUNS[job.kind];
  const where =
    job.state === 'queued'
      ? view.position > 1
        ? `Waiting in the queue: position ${view.position}.`
        : 'Next in the queue.'
      : 'The music service is working on it.';
  return {
    content: '',
    embeds: [
      {
        title: truncate(`Making your ${noun}…`, DISCORD_LIMITS.embedTitle),
        description: `${where}\nExpected ${discordTimestamp(view.expectedAt, 'R')}.`,
        color: COLOURS.working,
        fields: [{ name: 'Cost', value: `${job.cost} credits`, inline: true }],
        footer: { text: `Job ${job.id}` },
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

/** Markdown in a member's title is shown as typed, not interpreted. */
function escapeMarkdown(text: string): string {
  return text.replace(/[\\*_`~|>[\]()]/g, (match) => `\\${match}`);
}

export function renderResult(job: JobRow): OutgoingMessage {
  if (job.state !== 'succeeded') return renderFailure(job);
  const result = job.result ?? {};
  const clip = result.clips?.[0];
  const fields: APIEmbedField[] = [{ name: 'Requested by', value: `<@${job.userId}>`, inline: true }];
  const model = requestText(job, 'model');
  if (model) fields.push({ name: 'Model', value: truncate(model, 100), inline: true });
  fields.push({ name: 'Cost', value: `${job.cost} credits`, inline: true });
  const remixOf = remixSourceOf(job);
  if (remixOf) fields.push({ name: 'Remix of', value: `${truncate(escapeMarkdown(remixOf.title), 200)} (\`${remixOf.jobId.slice(0, 8)}\`)` });

  const embed: APIEmbed = { color: COLOURS.success, footer: { text: `Job ${job.id}` }, fields };
  const buttons: APIButtonComponent[] = [];
  let actions: APIButtonComponent[] = [];

  switch (job.kind) {
    case 'song':
    case 'persona_song':
    case 'upload': {
      const clips = (result.clips ?? []).filter((c) => safeUrl(c.audioUrl));
      embed.title = truncate(clip?.title ?? requestText(job, 'title') ?? (job.kind === 'upload' ? 'Your upload' : 'Your song'), DISCORD_LIMITS.embedTitle);
      const links = clips.flatMap((c, i) => {
        const suffix = clips.length > 1 ? ` ${i + 1}` : '';
        return [
          safeUrl(c.audioUrl) && `[Audio${suffix}](${safeUrl(c.audioUrl)})`,
          safeUrl(c.wavUrl) && `[WAV${suffix}](${safeUrl(c.wavUrl)})`,
          safeUrl(c.videoUrl) && `[Video${suffix}](${safeUrl(c.videoUrl)})`,
        ].filter(Boolean);
      });
      if (links.length > 0) fields.push({ name: 'Links', value: truncate(links.join(' · '), DISCORD_LIMITS.fieldValue) });
      const prompt = requestText(job, 'prompt');
      const lyrics = clip?.lyrics ?? requestText(job, 'lyrics');
      embed.description = [prompt && `*${prompt}*`, lyrics && `**Lyrics**\n${lyrics}`].filter(Boolean).join('\n\n') || undefined;
      const image = safeUrl(clip?.imageUrl);
      if (image) embed.image = { url: image };
      const audio = safeUrl(clip?.audioUrl);
      if (audio) buttons.push(linkButton('Listen', audio));
      actions = [
        button('Make a video', encodeCustomId({ action: 'video', subject: job.id })),
        ...(job.kind === 'upload'
          ? []
          : [
              button('MP3', encodeCustomId({ action: 'download', subject: job.id, arg: 'mp3' })),
              button('WAV', encodeCustomId({ action: 'download', subject: job.id, arg: 'wav' })),
              button('Remix', encodeCustomId({ action: 'remix', subject: job.id })),
            ]),
      ];
      break;
    }
    case 'lyrics': {
      const text = result.lyrics ?? clip?.lyrics ?? '';
      embed.title = truncate(result.lyricsTitle ?? clip?.title ?? 'Your lyrics', DISCORD_LIMITS.embedTitle);
      embed.description = text || 'The service returned no text.';
      actions = [button('Make a song', encodeCustomId({ action: 'make-song', subject: job.id }))];
      break;
    }
    case 'voice': {
      const name = requestText(job, 'name') ?? result.personaName ?? 'your voice';
      embed.title = truncate(`Voice persona "${name}" is ready`, DISCORD_LIMITS.embedTitle);
      embed.description = `Use it with \`/song voice:${name}\`.`;
      break;
    }
    case 'video': {
      const video = safeUrl(clip?.videoUrl);
      embed.title = truncate(clip?.title ? `Music video: ${clip.title}` : 'Your music video', DISCORD_LIMITS.embedTitle);
      embed.description = video ? `[Watch the video](${video})` : 'The service returned no video link.';
      const image = safeUrl(clip?.imageUrl);
      if (image) embed.image = { url: image };
      if (video) buttons.push(linkButton('Watch', video));
      break;
    }
    case 'download': {
      const format = requestText(job, 'format')?.toUpperCase() ?? 'file';
      const url = safeUrl(clip?.downloadUrl ?? (format === 'WAV' ? clip?.wavUrl : clip?.audioUrl));
      embed.title = truncate(`${format} download ready`, DISCORD_LIMITS.embedTitle);
      embed.description = url ? `[Download ${format}](${url})` : 'The service returned no download link.';
      if (url) buttons.push(linkButton(`Download ${format}`, url));
      break;
    }
  }

  return {
    content: '',
    embeds: [fitEmbed(embed)],
    components: [...row(buttons), ...row(actions)],
    allowed_mentions: { parse: [] },
  };
}

export function renderFailure(job: JobRow): OutgoingMessage {
  const returned = job.error?.creditsReturned ?? 0;
  const credits =
    returned > 0
      ? `${returned} credits were returned to the server.`
      : job.state === 'failed' || job.state === 'timed_out'
        ? 'No credits were returned.'
        : '';
  const title = job.state === 'cancelled' ? `Your ${JOB_NOUNS[job.kind]} was cancelled` : `Your ${JOB_NOUNS[job.kind]} could not be made`;
  return {
    content: '',
    embeds: [
      {
        title: truncate(title, DISCORD_LIMITS.embedTitle),
        description: truncate([job.error?.message ?? 'Something went wrong.', credits].filter(Boolean).join('\n'), DISCORD_LIMITS.embedDescription),
        color: COLOURS.failure,
        footer: { text: `Job ${job.id}` },
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
