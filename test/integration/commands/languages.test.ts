/**
 * Members read the bot in their own language (Discord's `locale`), and the channel reads it in
 * the guild's (`guild_locale`): a refusal, an acknowledgement, a result edited into the reply,
 * and a result posted to the channel once the interaction token has expired. A language
 * without a translation reads English.
 */
import { Locale } from 'discord-api-types/v10';
import { eq } from 'drizzle-orm';
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { jobs } from '../../../src/db/schema.js';
import { changeSettings } from '../../../src/guilds/settings.js';
import type { EmulatorMessage } from '@music-bot/discord-emulator';
import { found } from '../../support/found.js';
import { privateAnswer, startBot, type BotHarness } from './harness.js';

let h: BotHarness;

beforeAll(async () => {
  h = await startBot({ startingCredits: 200 });
});
afterAll(async () => h?.close());
afterEach(() => expect(h.emulator.findings).toEqual([]));

function buttonLabels(message: EmulatorMessage): string[] {
  return (message.components ?? []).flatMap((row) =>
    ('components' in row ? row.components : []).flatMap((component) => ('label' in component && typeof component.label === 'string' ? [component.label] : [])),
  );
}

/** A guild whose bot may only be used in its music channel, so /song elsewhere is refused. */
async function guildWithOneChannel(): Promise<BotHarness> {
  const g = h.inNewGuild();
  await privateAnswer(g.run(g.members.alice, { name: 'credits' }));
  await changeSettings(g.db.db, { guildId: g.guild.id, actorId: g.members.manager, change: { setting: 'allowedChannels', add: g.channelId } });
  return g;
}

describe('the member’s language', () => {
  it('refuses a German member in German', async () => {
    const g = await guildWithOneChannel();
    const answer = await privateAnswer(g.run(g.members.alice, { name: 'song', channelId: g.otherChannelId, options: { prompt: 'hier nicht' }, locale: 'de' }));
    expect(answer.content).toBe(`Der Bot kann in diesem Kanal nicht verwendet werden. Versuch es in <#${g.channelId}>.`);
  });

  it('answers a language without a translation in English', async () => {
    const g = await guildWithOneChannel();
    const answer = await privateAnswer(g.run(g.members.alice, { name: 'song', channelId: g.otherChannelId, options: { prompt: 'pas ici' }, locale: 'fr' }));
    expect(answer.content).toBe(`The bot can’t be used in this channel. Try <#${g.channelId}>.`);
  });

  it('acknowledges a Brazilian member in Portuguese, and edits the result into the reply in Portuguese', async () => {
    const g = h.inNewGuild();
    const handle = g.run(g.members.alice, { name: 'song', options: { prompt: 'uma bossa nova tranquila' }, locale: 'pt-BR' });
    await handle.waitForResponse();
    expect(handle.original()?.content).toBe(`Criando uma música para <@${g.members.alice}>…`);
    const ack = await privateAnswer(handle);
    expect(ack.content).toContain('Sua música está a caminho: custa **10 créditos**');
    expect(ack.content).toContain('Pedido `');
    // Cancel only while the song waits; a free queue may have taken it before the acknowledgement left.
    expect([[], ['Cancelar (créditos de volta)']]).toContainEqual(buttonLabels(ack));

    const jobId = ack.content?.match(/Pedido `([0-9a-f-]{36})`/)?.[1];
    expect(jobId).toBeDefined();
    const result = await g.delivered(jobId!);
    expect(result.id).toBe(handle.original()?.id);
    const embed = result.embeds?.[0];
    expect(embed?.fields?.map((field) => field.name)).toEqual(expect.arrayContaining(['Pedido por', 'Custo', 'Links']));
    expect(embed?.fields?.find((field) => field.name === 'Custo')?.value).toBe('10 créditos');
    expect(embed?.footer?.text).toBe(`Pedido ${jobId}`);
    expect(buttonLabels(result)).toEqual(['Ouvir', 'Tocar na voz', 'Curtir · 0', 'Arquivo MP3 · 2 créditos', 'Remixar · 10 créditos', 'Outra versão · 10 créditos', 'Denunciar', 'Excluir']);
  });
});

describe('the guild’s language', () => {
  it('posts a result to the channel in the guild’s language once the token has expired, while the member reads their own', async () => {
    h.setSimForThisTest({ taskMs: 60_000 });
    const guild = h.emulator.createGuild({ name: 'Creadores de música', locale: Locale.SpanishES });
    const channel = h.emulator.createChannel(guild.id, { name: 'musica' });
    const member = h.emulator.addMember(guild.id, { userId: h.members.alice, username: 'alice' }).id;

    const ack = await privateAnswer(h.emulator.runCommand({ guildId: guild.id, channelId: channel.id, userId: member, name: 'song', options: { prompt: 'ein langsamer Song' }, locale: 'de' }));
    expect(ack.content).toContain('Dein Song ist unterwegs: Er kostet **10 Credits**');
    expect([[], ['Abbrechen (Credits zurück)']]).toContainEqual(buttonLabels(ack));
    const jobId = ack.content?.match(/Anfrage `([0-9a-f-]{36})`/)?.[1];
    expect(jobId).toBeDefined();
    const row = await vi.waitFor(async () => {
      const [job] = await h.db.db.select().from(jobs).where(eq(jobs.id, jobId!));
      return found(job?.upstreamTaskId ? job : undefined);
    }, 15_000);
    expect(row).toMatchObject({ locale: 'de', guildLocale: 'es-ES' });

    // Only Discord's clock moves: the edit is refused as expired, and the bot posts to the channel.
    h.emulator.clock.advance(16 * 60_000);
    h.sim.completeTask(row.upstreamTaskId!);

    const posted = await vi.waitFor(async () => {
      const [job] = await h.db.db.select().from(jobs).where(eq(jobs.id, jobId!));
      return found(job?.deliveryState === 'delivered' && job.messageId ? h.emulator.message(job.messageId) : undefined);
    }, 20_000);
    expect(posted.channel_id).toBe(channel.id);
    expect(posted.interactionId).toBeUndefined();
    expect(posted.content).toContain(`<@${member}>`);
    const embed = posted.embeds?.[0];
    expect(embed?.fields?.map((field) => field.name)).toEqual(expect.arrayContaining(['Pedido por', 'Coste', 'Enlaces']));
    expect(embed?.footer?.text).toBe(`Pedido ${jobId}`);
    expect(buttonLabels(posted)).toEqual(['Escuchar', 'Reproducir en voz', 'Me gusta · 0', 'Archivo MP3 · 2 créditos', 'Remezclar · 10 créditos', 'Otra versión · 10 créditos', 'Denunciar', 'Eliminar']);
  });
});
