/**
 * `/library`: the server's finished songs, newest first, ten a page, optionally one member's and
 * matching a search, public or private as the server's visibility says. Pages with **Newer** and
 * **Older**; its menus show a song again (as `/jobs show`), play it in voice (as `/play`, whose
 * command handles that menu) or open the remix form.
 */
import {
  ApplicationCommandOptionType,
  InteractionContextType,
  type RESTPostAPIApplicationCommandsJSONBody,
} from 'discord-api-types/v10';
import {
  ActionRowBuilder,
  ButtonBuilder,
  ButtonStyle,
  EmbedBuilder,
  StringSelectMenuBuilder,
} from 'discord.js';
import type { RepliablePort } from '../src/discord/interaction-port.js';
import { loadCaller } from '../src/discord/caller.js';
import { defineCommand, type ButtonHandler, type SelectHandler } from '../src/discord/command.js';
import type { CommandContext } from '../src/discord/context.js';
import { encodeCustomId, type CustomId } from '../src/discord-rest/custom-ids.js';
import { Refusal } from '../src/discord/errors.js';
import { english, localText, type Translator } from '../src/i18n/index.js';
import { isJobId } from '../src/discord/job-lookup.js';
import { describeJob } from '../src/pipeline/titles.js';
import { answerInPlace, answerPrivately, deferNow, handOverPublicReply, replyTargetOf, type Answer } from '../src/discord/respond.js';
import { isShownResult, type JobRow } from '../src/pipeline/job-rows.js';
import { LIBRARY_KINDS, type LibraryCursor, type LibraryFilter, type LibraryPage } from '../src/pipeline/library.js';
import { renderResult, withoutFiles } from '../src/pipeline/render.js';
import { discordTimestamp, escapeMarkdown, truncate } from '../src/text.js';
import { remixButtons, remixModals, remixSelects } from './remix.js';
import { socialButtons } from './social.js';

/**
 * The paging buttons carry the search in their custom id (nothing about a page lives in
 * memory): `library-page:<20-digit user id>:o<22-character cursor>:` leaves 42 of Discord's
 * 100 characters, and 40 keeps a margin.
 */
export const QUERY_MAX = 40;

/**
 * A member's search words, trimmed (none: undefined). Discord holds a member's app to the
 * option's max_length; a forged longer query is refused, as it would overflow a heading.
 */
export function searchWords(raw: string | undefined): string | undefined {
  const query = raw?.trim() || undefined;
  if (query !== undefined && [...query].length > QUERY_MAX) throw new Refusal('invalid_input', localText('library.queryTooLong', { max: QUERY_MAX }));
  return query;
}

export const definition = {
  name: 'library',
  description: english('command.library.description'),
  contexts: [InteractionContextType.Guild],
  dm_permission: false,
  options: [
    { type: ApplicationCommandOptionType.User, name: 'user', description: english('command.library.user.description') },
    {
      type: ApplicationCommandOptionType.String,
      name: 'query',
      description: english('command.library.query.description'),
      max_length: QUERY_MAX,
    },
    { type: ApplicationCommandOptionType.Boolean, name: 'liked', description: english('command.library.liked.description') },
  ],
} as const satisfies RESTPostAPIApplicationCommandsJSONBody;

/** The paging subject of the songs a member likes: `liked-<their id>`, in place of a maker's id. */
const LIKED_SUBJECT = /^liked-(\d{17,20})$/;

/** A job id in 22 characters instead of 36, so the search has room in the custom id. */
function packJobId(jobId: string): string {
  return Buffer.from(jobId.replaceAll('-', ''), 'hex').toString('base64url');
}

function unpackJobId(packed: string): string | undefined {
  const hex = Buffer.from(packed, 'base64url').toString('hex');
  const id = `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
  return isJobId(id) ? id : undefined;
}

function pageButton(filter: LibraryFilter, cursor: LibraryCursor, label: string, enabled: boolean): ButtonBuilder {
  const arg = `${cursor.direction === 'older' ? 'o' : 'n'}${packJobId(cursor.jobId)}:${filter.query ?? ''}`;
  let customId: string;
  try {
    customId = encodeCustomId({ action: 'library-page', subject: filter.likedBy ? `liked-${filter.likedBy}` : (filter.userId ?? 'all'), arg });
  } catch {
    throw new Refusal('invalid_input', localText('library.queryTooLong', { max: QUERY_MAX }));
  }
  return new ButtonBuilder().setCustomId(customId).setLabel(label).setStyle(ButtonStyle.Secondary).setDisabled(!enabled);
}

/** Reads a paging button back; a custom id this bot did not write is refused. */
function pagingOf(id: CustomId, guildId: string): { filter: LibraryFilter; cursor: LibraryCursor } {
  const match = /^([on])([A-Za-z0-9_-]{22}):(.*)$/s.exec(id.arg ?? '');
  const jobId = match?.[2] && unpackJobId(match[2]);
  const likedBy = LIKED_SUBJECT.exec(id.subject)?.[1];
  if (!match || !jobId || !(id.subject === 'all' || likedBy || /^\d{17,20}$/.test(id.subject))) throw new Refusal('not_found', localText('library.stale'));
  return {
    filter: { guildId, userId: id.subject === 'all' || likedBy ? undefined : id.subject, likedBy, query: match[3] || undefined },
    cursor: { direction: match[1] === 'o' ? 'older' : 'newer', jobId },
  };
}

/** Room for a title on a page of ten lines, each with its link, member and date, in 4096 characters once escaped. */
const ENTRY_TITLE_MAX = 150;

function entry(t: Translator, job: JobRow, position: number): string {
  const audio = job.result?.clips?.[0]?.audioUrl;
  const title = escapeMarkdown(describeJob(job, t, ENTRY_TITLE_MAX).replace(/[[\]]/g, ''));
  const link = audio && /^https?:\/\//.test(audio) ? `[${title}](${audio})` : `**${title}**`;
  return `**${position}.** ${link} · <@${job.userId}> · ${discordTimestamp(job.createdAt, 'd')}`;
}

function songOptions(t: Translator, songs: readonly JobRow[], before: number) {
  return songs.map((job, index) => ({
    // Menu labels are plain text (no markdown), 100 characters at most.
    label: `${before + index + 1}. ${describeJob(job, t, 100 - `${before + index + 1}. `.length)}`,
    value: job.id,
    description: truncate(
      [job.kind === 'persona_song' ? t('library.withVoice') : '', t.day(job.createdAt)].filter(Boolean).join(' · '),
      100,
    ),
  }));
}

/**
 * "Songs 11–20 of 23": the total as counted, "1,000+" past the count's cap, and none for a
 * search with older pages (counting its matches would read them all).
 */
function rangeText(t: Translator, page: LibraryPage): string {
  const range = { from: page.before + 1, to: page.before + page.songs.length };
  if (page.total === undefined) return t('library.rangeOpen', range);
  return t(page.totalCapped ? 'library.rangeMany' : 'library.range', { ...range, total: page.total });
}

/**
 * The page a filter and cursor name, as a message in the reader's language; a cursor past the
 * end falls back to the newest page.
 */
async function libraryAnswer(context: CommandContext, filter: LibraryFilter, cursor?: LibraryCursor): Promise<Answer> {
  const { t } = context;
  let page = await context.library.libraryPage(filter, cursor);
  if (page.songs.length === 0 && cursor) page = await context.library.libraryPage(filter);
  const query = filter.query === undefined ? undefined : escapeMarkdown(filter.query);
  const heading = [filter.userId ? t('library.by', { user: filter.userId }) : '', filter.likedBy ? t('library.liked', { user: filter.likedBy }) : '', query ? t('library.matching', { query }) : '']
    .filter(Boolean)
    .join(' ');
  const embed = new EmbedBuilder().setTitle(t('library.title'));
  if (page.songs.length === 0) {
    const empty = query
      ? t('library.noMatch', { query })
      : filter.likedBy
        ? t('library.emptyLiked', { user: filter.likedBy })
        : filter.userId
          ? t('library.emptyFor', { user: filter.userId })
          : t('library.empty');
    return { embeds: [embed.setDescription(empty)], components: [] };
  }
  const lines = page.songs.map((job, index) => entry(t, job, page.before + index + 1));
  embed
    .setDescription(truncate([heading, ...lines].filter(Boolean).join('\n'), 4096))
    .setFooter({ text: rangeText(t, page) });
  const options = songOptions(t, page.songs, page.before);
  const first = page.songs[0]!;
  const last = page.songs.at(-1)!;
  return {
    embeds: [embed],
    components: [
      new ActionRowBuilder<StringSelectMenuBuilder>().addComponents(
        new StringSelectMenuBuilder()
          .setCustomId(encodeCustomId({ action: 'library-show', subject: 'page' }))
          .setPlaceholder(t('library.showPlaceholder'))
          .addOptions(options),
      ),
      new ActionRowBuilder<StringSelectMenuBuilder>().addComponents(
        new StringSelectMenuBuilder()
          .setCustomId(encodeCustomId({ action: 'library-play', subject: 'page' }))
          .setPlaceholder(t('library.playPlaceholder'))
          .addOptions(options),
      ),
      new ActionRowBuilder<StringSelectMenuBuilder>().addComponents(
        new StringSelectMenuBuilder()
          .setCustomId(encodeCustomId({ action: 'library-remix', subject: 'page' }))
          .setPlaceholder(t('library.remixPlaceholder'))
          .addOptions(options),
      ),
      new ActionRowBuilder<ButtonBuilder>().addComponents(
        pageButton(filter, { direction: 'newer', jobId: first.id }, t('library.newer'), page.hasNewer),
        pageButton(filter, { direction: 'older', jobId: last.id }, t('library.older'), page.hasOlder),
      ),
    ],
  };
}

/** In a private server the library, and a song shown from it, are the member's alone. */
async function answer(interaction: RepliablePort, isPrivate: boolean, reply: Answer): Promise<void> {
  await (isPrivate ? answerPrivately(interaction, reply) : answerInPlace(interaction, reply));
}

const pageButtons = {
  'library-page': {
    acknowledge: 'update',
    async execute(interaction, id, context) {
      const { filter, cursor } = pagingOf(id, interaction.guildId);
      await interaction.editReply({ ...(await libraryAnswer(context, filter, cursor)), allowedMentions: { parse: [] } });
    },
  },
} as const satisfies Record<'library-page', ButtonHandler>;

const showSelects = {
  /** The same as `/jobs show` for any song of the library; in a private server, to the member alone. */
  'library-show': {
    acknowledge: 'public',
    async execute(interaction, _id, context) {
      const jobId = interaction.values[0];
      const caller = await loadCaller(interaction, context);
      const job = jobId && isJobId(jobId) ? await context.pipeline.findJob(caller.guild.id, jobId) : undefined;
      if (!job || !LIBRARY_KINDS.includes(job.kind) || !isShownResult(job)) throw new Refusal('not_found', localText('library.notInLibrary'));
      if (caller.guild.visibility === 'private') {
        const { content, embeds, components } = renderResult(withoutFiles(job), context.t, (kind) => context.pipeline.costOf(kind));
        await answerPrivately(interaction, { content, embeds, components });
        return;
      }
      // The pipeline posts the result by editing the reply: there must be one to edit.
      await deferNow(interaction);
      await context.pipeline.redeliver(job.id, replyTargetOf(interaction));
      handOverPublicReply(interaction);
    },
  },
} as const satisfies Record<'library-show', SelectHandler>;

export default defineCommand({
  definition,
  acknowledge: () => 'public',
  async execute(interaction, args, context) {
    const caller = await loadCaller(interaction, context);
    const query = searchWords(args.query);
    // The paging button has room for one member: the maker, or the member whose liked songs these are.
    if (args.liked === true && args.user) throw new Refusal('invalid_input', localText('library.likedOrUser'));
    const filter: LibraryFilter = { guildId: caller.guild.id, userId: args.user?.id, likedBy: args.liked === true ? caller.member.userId : undefined, query };
    await answer(interaction, caller.guild.visibility === 'private', await libraryAnswer(context, filter));
  },
  buttons: { ...pageButtons, ...remixButtons, ...socialButtons },
  selects: { ...showSelects, ...remixSelects },
  modals: remixModals,
});
