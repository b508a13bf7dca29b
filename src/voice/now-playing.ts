/**
 * The player's messages in its text channel: the now-playing card (the song, who made and asked
 * for it, how far it has played, what is next, and the buttons), kept up to date by editing it,
 * closed with why the player ended, and one-line notices such as a song that could not be played.
 * While a song plays, the card's progress bar is edited again every `progressEveryMs` at most
 * often (Discord limits how often a message may be edited).
 */
import { ActionRowBuilder, ButtonBuilder, ButtonStyle, ChannelType, EmbedBuilder, type Client } from 'discord.js';
import { encodeCustomId } from '../discord-rest/custom-ids.js';
import { translator, type LocalText, type Translator } from '../i18n/index.js';
import { loggableError, type Logger } from '../logger.js';
import { truncate } from '../text.js';
import { clock, progressBar } from './rules.js';
import type { PlayerState, PlayerStore } from './store.js';

const PLAYER_BUTTONS = ['pause', 'resume', 'skip', 'stop'] as const;
export type PlayerButton = (typeof PLAYER_BUTTONS)[number];

export function isPlayerButton(value: string): value is PlayerButton {
  return (PLAYER_BUTTONS as readonly string[]).includes(value);
}

type CardMessage = ReturnType<typeof nowPlayingMessage>;

/** The card's line for where the song is: a bar and the clock when both are known, else its length alone. */
function whereLine(t: Translator, length: number | null, elapsedSeconds: number | undefined): string {
  if (length === null) return '';
  if (elapsedSeconds === undefined) return t('player.message.length', { length: clock(length) });
  const elapsed = Math.min(elapsedSeconds, length);
  return t('player.message.progress', { bar: progressBar(elapsed, length), elapsed: clock(elapsed), length: clock(length) });
}

/**
 * The now-playing message: the song, who made and asked for it, where it is (`elapsedSeconds`
 * into it, when known) or its length, the volume and loop when set, what is next, and the buttons.
 */
export function nowPlayingMessage(t: Translator, state: PlayerState, queued: number, elapsedSeconds?: number) {
  const current = state.current!;
  const volume = state.volume ?? 100;
  const embed = new EmbedBuilder()
    .setTitle(truncate(`${state.paused ? '⏸' : '▶'} ${current.title}`, 256))
    .setDescription(
      [
        t('player.message.maker', { maker: current.makerId, requester: current.requestedBy }),
        whereLine(t, current.durationSeconds, elapsedSeconds),
        volume === 100 ? '' : t('player.message.volume', { level: volume }),
        state.loop === 'song' ? t('player.message.loopSong') : state.loop === 'queue' ? t('player.message.loopQueue') : '',
        t(state.radio ? 'player.message.radio' : 'player.message.queued', { count: queued }),
      ]
        .filter(Boolean)
        .join('\n'),
    );
  const button = (action: PlayerButton, label: string, style: ButtonStyle) =>
    new ButtonBuilder().setCustomId(encodeCustomId({ action: 'player', subject: action })).setLabel(label).setStyle(style);
  const row = new ActionRowBuilder<ButtonBuilder>().addComponents(
    state.paused ? button('resume', t('player.button.resume'), ButtonStyle.Primary) : button('pause', t('player.button.pause'), ButtonStyle.Secondary),
    button('skip', t('player.button.skip'), ButtonStyle.Secondary),
    button('stop', t('player.button.stop'), ButtonStyle.Danger),
  );
  return { content: state.paused ? t('player.message.paused') : t('player.message.playing'), embeds: [embed], components: [row] };
}

export interface PlayerMessagesOptions {
  readonly client: Client<true>;
  readonly store: PlayerStore;
  readonly logger: Logger;
  /** Where the guild's song is, in ms; undefined where no player of this process plays it. */
  elapsedMs(guildId: string): Promise<number | undefined>;
  /** Shows the card again (in the guild's order, only while its player plays here): the progress bar's next edit. */
  refresh(guildId: string): void;
  /** How long the progress bar waits between two edits of the card. @defaultValue 15000 */
  readonly progressEveryMs?: number;
}

/** Posts and edits the player's messages; a failure is logged, never thrown: the music plays on. */
export class PlayerMessages {
  readonly #options: PlayerMessagesOptions;
  /** The next progress edit of each guild's card. */
  readonly #ticks = new Map<string, NodeJS.Timeout>();

  constructor(options: PlayerMessagesOptions) {
    this.#options = options;
  }

  /** Shows the guild's current song: edits the card, or posts a new one when it is gone. Runs in the guild's order: nothing else writes its state meanwhile. */
  async show(guildId: string): Promise<void> {
    const { store, logger } = this.#options;
    this.#stopTicking(guildId);
    const state = await store.read(guildId);
    if (!state?.current) return;
    const elapsedMs = await this.#options.elapsedMs(guildId);
    const message = nowPlayingMessage(translator(state.guildLocale), state, await store.queueLength(guildId), elapsedMs === undefined ? undefined : elapsedMs / 1000);
    // A paused song's bar does not move; resuming shows the card again, and that starts it.
    if (!state.paused && state.current.durationSeconds !== null) this.#tickAfter(guildId);
    try {
      if (state.nowPlayingMessageId) {
        await this.#edit(state, message);
        return;
      }
    } catch {
      // Deleted or no longer editable: a new one below.
    }
    try {
      const channel = await this.#options.client.channels.fetch(state.textChannelId);
      if (!channel?.isSendable()) return;
      const sent = await channel.send({ ...message, allowedMentions: { parse: [] } });
      await store.write(guildId, { ...state, nowPlayingMessageId: sent.id });
    } catch (error) {
      logger.warn({ err: loggableError(error), guildId }, 'could not post the now-playing message');
    }
  }

  /** Replaces the card of a player that ended with `text`, and takes its buttons away. */
  async close(guildId: string, state: PlayerState, text: string): Promise<void> {
    this.#stopTicking(guildId);
    if (!state.nowPlayingMessageId) return;
    await this.#edit(state, { content: text, embeds: [], components: [] }).catch((error: unknown) =>
      this.#options.logger.warn({ err: loggableError(error), guildId }, 'could not close the now-playing message'),
    );
  }

  /** One line in the player's text channel, in the guild's language. */
  async post(guildId: string, text: LocalText): Promise<void> {
    const state = await this.#options.store.read(guildId);
    if (!state) return;
    try {
      const channel = await this.#options.client.channels.fetch(state.textChannelId);
      if (channel?.isSendable()) await channel.send({ content: translator(state.guildLocale).text(text), allowedMentions: { parse: [] } });
    } catch (error) {
      this.#options.logger.warn({ err: loggableError(error), guildId }, 'could not post to the player channel');
    }
  }

  /** No more progress edits for any guild (the host stops). */
  stopAll(): void {
    for (const guildId of [...this.#ticks.keys()]) this.#stopTicking(guildId);
  }

  #tickAfter(guildId: string): void {
    const timer = setTimeout(() => {
      this.#ticks.delete(guildId);
      this.#options.refresh(guildId);
    }, this.#options.progressEveryMs ?? 15_000);
    timer.unref();
    this.#ticks.set(guildId, timer);
  }

  #stopTicking(guildId: string): void {
    clearTimeout(this.#ticks.get(guildId));
    this.#ticks.delete(guildId);
  }

  async #edit(state: PlayerState, message: Pick<CardMessage, 'content'> & { embeds: EmbedBuilder[]; components: ActionRowBuilder<ButtonBuilder>[] }): Promise<void> {
    const channel = await this.#options.client.channels.fetch(state.textChannelId);
    if (!channel?.isTextBased() || channel.type === ChannelType.DM || !state.nowPlayingMessageId) throw new Error('no channel to edit in');
    await channel.messages.edit(state.nowPlayingMessageId, { ...message, allowedMentions: { parse: [] } });
  }
}
