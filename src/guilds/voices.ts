/**
 * The voice personas of a guild: made by `/voice create` (the pipeline records them when the
 * service has made them), listed, picked for persona songs, and deleted by their owner or a
 * moderator. Deleting keeps the row (deletedAt) so that old jobs still name it.
 */
import { and, asc, eq, ilike, isNull, sql } from 'drizzle-orm';
import type { Executor } from '../db/client.js';
import { auditLog, voicePersonas } from '../db/schema.js';

export type VoicePersona = typeof voicePersonas.$inferSelect;

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

const live = (guildId: string) => and(eq(voicePersonas.guildId, guildId), isNull(voicePersonas.deletedAt));

/** Live personas of the guild, by name; `search` filters names containing it. */
export async function listVoices(executor: Executor, guildId: string, options: { search?: string; limit?: number } = {}) {
  // What a member typed: Postgres refuses U+0000 in a query's text, and no name holds one.
  const search = options.search?.replaceAll('\u0000', '').trim();
  return executor
    .select()
    .from(voicePersonas)
    .where(and(live(guildId), search ? ilike(voicePersonas.name, `%${escapeLike(search)}%`) : undefined))
    .orderBy(asc(voicePersonas.name))
    .limit(options.limit ?? 100);
}

/** A live persona of the guild by its id (what autocomplete returns) or, failing that, its exact name. */
export async function findVoice(executor: Executor, guildId: string, idOrName: string): Promise<VoicePersona | undefined> {
  const value = idOrName.replaceAll('\u0000', '').trim();
  if (value === '') return undefined;
  const byId = UUID.test(value) ? eq(voicePersonas.id, value) : undefined;
  const [voice] = await executor
    .select()
    .from(voicePersonas)
    .where(and(live(guildId), byId ?? sql`lower(${voicePersonas.name}) = lower(${value})`))
    .limit(1);
  return voice;
}

/** What a typed voice names: one persona, or the candidates to ask about (none: nothing like it). */
export type VoiceMatch =
  | { readonly voice: VoicePersona }
  | { readonly candidates: readonly VoicePersona[]; readonly exact: boolean };

/**
 * The persona a member means by what they typed in a voice option: its id (what autocomplete
 * sends), its exact name, or its name in any case and spacing when only one is so named.
 * Otherwise the candidates: every persona of that name (`exact`), or those whose names
 * contain what was typed, for the member to pick from. A backtick and the `ˋ` that stands for
 * it in the bot's inline code (see `inCode`) count as one.
 */
export async function resolveVoice(executor: Executor, guildId: string, typed: string): Promise<VoiceMatch> {
  const value = typed.replaceAll('\u0000', '').trim();
  if (value === '') return { candidates: [], exact: false };
  if (UUID.test(value)) {
    const byId = await findVoice(executor, guildId, value);
    if (byId) return { voice: byId };
  }
  const asShown = (text: string) => text.replaceAll('`', 'ˋ');
  const name = asShown(value).replace(/\s+/g, ' ').toLowerCase();
  const named = await executor
    .select()
    .from(voicePersonas)
    .where(and(live(guildId), sql`lower(replace(regexp_replace(btrim(${voicePersonas.name}), '\\s+', ' ', 'g'), ${'`'}, ${'ˋ'})) = ${name}`))
    .orderBy(asc(voicePersonas.name), asc(voicePersonas.createdAt))
    .limit(25);
  const exactly = named.find((voice) => voice.name === value) ?? named.find((voice) => asShown(voice.name) === asShown(value));
  if (exactly) return { voice: exactly };
  if (named.length === 1) return { voice: named[0]! };
  if (named.length > 1) return { candidates: named, exact: true };
  return { candidates: await listVoices(executor, guildId, { search: value, limit: 25 }), exact: false };
}

export type DeleteVoiceResult =
  | { readonly deleted: true; readonly voice: VoicePersona }
  | { readonly deleted: false; readonly reason: 'not_found' | 'not_allowed' };

/** Soft-deletes a persona if `actor` owns it or is a moderator, and records who did it. */
export async function deleteVoice(
  executor: Executor,
  input: { guildId: string; idOrName: string; actorId: string; isModerator: boolean },
): Promise<DeleteVoiceResult> {
  return executor.transaction(async (tx) => {
    const voice = await findVoice(tx, input.guildId, input.idOrName);
    if (!voice) return { deleted: false, reason: 'not_found' };
    if (voice.ownerId !== input.actorId && !input.isModerator) return { deleted: false, reason: 'not_allowed' };
    const [deleted] = await tx
      .update(voicePersonas)
      .set({ deletedAt: sql`now()` })
      .where(and(eq(voicePersonas.id, voice.id), isNull(voicePersonas.deletedAt)))
      .returning();
    if (!deleted) return { deleted: false, reason: 'not_found' };
    await tx.insert(auditLog).values({
      guildId: input.guildId,
      actorId: input.actorId,
      action: 'voice.delete',
      details: { voiceId: voice.id, name: voice.name, ownerId: voice.ownerId },
    });
    return { deleted: true, voice: deleted };
  });
}

function escapeLike(text: string): string {
  return text.replace(/[\\%_]/g, (char) => `\\${char}`);
}
