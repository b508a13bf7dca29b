/**
 * Answers with files that are on disk, streamed from disk into the request. discord.js reads
 * every attachment into one Buffer first (and @discordjs/rest copies it into a Blob); here each
 * file is a Blob backed by its file (`fs.openAsBlob`) in a multipart body that the REST client
 * passes to undici untouched, and undici reads it chunk by chunk as it sends it.
 * Why: docs/decisions/streamed-csv-export.md
 */
import { openAsBlob } from 'node:fs';
import { MessageFlags, Routes, type APIMessage } from 'discord-api-types/v10';
import type { RepliablePort } from './interaction-port.js';

/** Discord's upload limit per attachment for a bot in a server without boosts, when the interaction does not say. */
export const DEFAULT_ATTACHMENT_LIMIT_BYTES = 10 * 1024 * 1024;

/** Files in one message: Discord's limit. */
export const MAX_FILES_PER_MESSAGE = 10;

/**
 * The files in messages, in order: at most ten a message and at most `limitBytes` together,
 * since Discord may count a request's files together against the limit. A file alone in its
 * message may be up to `limitBytes` itself.
 */
export function filesPerMessage<T extends { readonly bytes: number }>(files: readonly T[], limitBytes: number): T[][] {
  const messages: T[][] = [];
  let current: T[] = [];
  let bytes = 0;
  for (const file of files) {
    if (current.length > 0 && (current.length === MAX_FILES_PER_MESSAGE || bytes + file.bytes > limitBytes)) {
      messages.push(current);
      current = [];
      bytes = 0;
    }
    current.push(file);
    bytes += file.bytes;
  }
  if (current.length > 0) messages.push(current);
  return messages;
}

export interface DiskFile {
  /** The name the member sees. */
  readonly name: string;
  readonly path: string;
  readonly contentType?: string;
}

export interface FileMessage {
  readonly content: string;
  readonly files: readonly DiskFile[];
}

/** The largest attachment the interaction's server takes (more with boosts), in bytes. */
export function attachmentLimitOf(interaction: RepliablePort): number {
  const limit = interaction.attachmentSizeLimit;
  return typeof limit === 'number' && limit > 0 ? limit : DEFAULT_ATTACHMENT_LIMIT_BYTES;
}

async function multipart(message: FileMessage, flags?: number): Promise<FormData> {
  const form = new FormData();
  form.append(
    'payload_json',
    JSON.stringify({
      content: message.content,
      attachments: message.files.map((file, id) => ({ id: String(id), filename: file.name })),
      allowed_mentions: { parse: [] },
      ...(flags !== undefined && { flags }),
    }),
  );
  for (const [index, file] of message.files.entries()) {
    form.append(`files[${index}]`, await openAsBlob(file.path, { type: file.contentType ?? 'application/octet-stream' }), file.name);
  }
  return form;
}

/**
 * Puts `message` in place of the interaction's deferred reply. The caller must have deferred
 * it (`deferNow`) and must keep the files until this resolves.
 */
export async function editReplyWithDiskFiles(interaction: RepliablePort, message: FileMessage): Promise<void> {
  await interaction.client.rest.patch(Routes.webhookMessage(interaction.applicationId, interaction.token, '@original'), {
    body: await multipart(message),
    passThroughBody: true,
    auth: false,
  });
}

/** A follow-up with files, ephemeral unless told otherwise; resolves with the message. */
export async function followUpWithDiskFiles(interaction: RepliablePort, message: FileMessage, options: { ephemeral?: boolean } = {}): Promise<APIMessage> {
  return (await interaction.client.rest.post(Routes.webhook(interaction.applicationId, interaction.token), {
    body: await multipart(message, options.ephemeral === false ? undefined : MessageFlags.Ephemeral),
    passThroughBody: true,
    auth: false,
    query: new URLSearchParams({ wait: 'true' }),
  })) as APIMessage;
}
