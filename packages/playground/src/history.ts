/**
 * The channels' history across playground runs, as Discord keeps it: the bot's data outlives
 * a run, so its messages should too, with buttons that still work. Ephemeral messages and
 * "thinking" placeholders are not kept, as Discord forgets them too.
 */
import { existsSync, readFileSync } from 'node:fs';
import { rename, writeFile } from 'node:fs/promises';
import { MessageFlags } from 'discord-api-types/v10';
import type { Logger } from '../../../src/logger.js';
import type { DiscordEmulator, EmulatorMessage } from '@music-bot/discord-emulator';

/** What the page adds to a message it started: Discord's "@you used /song" line. */
export interface MessageOrigin {
  readonly command: string;
  readonly usedBy: { readonly id: string; readonly username: string };
}

interface KeptMessage {
  message: Omit<EmulatorMessage, 'attachments'> & { attachments: Array<Omit<EmulatorMessage['attachments'][number], 'data'> & { base64: string }> };
  origin?: MessageOrigin;
}

const SAVE_DELAY_MS = 500;

function worthKeeping(message: EmulatorMessage): boolean {
  return !message.ephemeral && ((message.flags ?? 0) & MessageFlags.Loading) === 0;
}

export interface History {
  /** The origins of restored messages, by interaction id. */
  readonly origins: Map<string, MessageOrigin>;
  /** Writes what is pending now (at shutdown). */
  flush(): Promise<void>;
  stop(): void;
}

/**
 * Restores the kept messages into the emulator, then keeps `file` up to date. `origins` is
 * shared with the page, which records the command behind each interaction it starts.
 */
export function keepHistory(emulator: DiscordEmulator, channelIds: readonly string[], file: string, logger: Logger): History {
  const origins = new Map<string, MessageOrigin>();
  if (existsSync(file)) {
    try {
      const kept = JSON.parse(readFileSync(file, 'utf8')) as KeptMessage[];
      for (const { message, origin } of kept) {
        const attachments = message.attachments.map(({ base64, ...attachment }) => ({ ...attachment, data: Buffer.from(base64, 'base64') }));
        emulator.restoreMessage({ ...message, attachments });
        const interactionId = message.interaction_metadata?.id;
        if (origin && interactionId) origins.set(interactionId, origin);
      }
    } catch (err) {
      // A damaged history costs the old messages, never the playground.
      logger.warn({ err, file }, 'playground history could not be restored');
    }
  }

  let timer: NodeJS.Timeout | undefined;
  let writing = Promise.resolve();
  const save = (): Promise<void> => {
    timer = undefined;
    const kept: KeptMessage[] = channelIds.flatMap((channelId) =>
      emulator.channelMessages(channelId).filter(worthKeeping).map((message) => {
        const interactionId = message.interaction_metadata?.id;
        const origin = interactionId ? origins.get(interactionId) : undefined;
        const attachments = message.attachments.map(({ data, ...attachment }) => ({ ...attachment, base64: data.toString('base64') }));
        return { message: { ...message, attachments }, ...(origin ? { origin } : {}) };
      }),
    );
    // Written aside and renamed, so a stop in the middle never leaves half a file.
    writing = writing
      .then(() => writeFile(`${file}.tmp`, JSON.stringify(kept)))
      .then(() => rename(`${file}.tmp`, file))
      .catch((err: unknown) => logger.warn({ err, file }, 'playground history could not be saved'));
    return writing;
  };
  const unsubscribe = emulator.onMessage(() => {
    timer ??= setTimeout(() => void save(), SAVE_DELAY_MS);
  });

  return {
    origins,
    async flush() {
      if (timer) {
        clearTimeout(timer);
        await save();
      }
      await writing;
    },
    stop() {
      unsubscribe();
      if (timer) clearTimeout(timer);
    },
  };
}
