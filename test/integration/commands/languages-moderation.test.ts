/**
 * `/credits`, `/help`, `/settings`, `/credits-admin` and the welcome in the members' languages:
 * a reply in the member's (the interaction's `locale`), the welcome in the guild's
 * (`preferred_locale`), and English for the members whose language has no translation.
 */
import { Locale } from 'discord-api-types/v10';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it, vi } from 'vitest';
import { grant } from '../../../src/credits/index.js';
import { CATALOGUES } from '../../../src/i18n/index.js';
import { found } from '../../support/found.js';
import { privateAnswer, startBot, type BotHarness } from './harness.js';

let h: BotHarness;
let g: BotHarness;

beforeAll(async () => {
  h = await startBot({ startingCredits: 100 });
});
afterAll(async () => h?.close());
beforeEach(() => {
  g = h.inNewGuild();
});
afterEach(() => expect(h.emulator.findings).toEqual([]));

const { de, en } = CATALOGUES;

/** The labels of the buttons on a message. */
function labelsOf(message: { components?: unknown[] }): string[] {
  return (message.components ?? []).flatMap((row) =>
    ((row as { components?: Array<{ label?: string }> }).components ?? []).flatMap((component) => (component.label ? [component.label] : [])),
  );
}

describe('a German member', () => {
  it('reads /credits in German', async () => {
    const answer = await privateAnswer(g.run(g.members.alice, { name: 'credits', locale: 'de' }));
    expect(answer.content).toContain('**Credits dieses Servers**: 100');
    expect(answer.content).toContain('Monatsbudget: keins');
    expect(answer.content).toMatch(/Verbrauch im [A-ZÄÖÜ][a-zäöü]+ \d{4}: 0 Credits für 0 Anfragen \(davon du: 0 für 0\)/);
    expect(answer.content).toContain('Heute kannst du noch ausgeben: 100 (kein Tageslimit)');
  });

  it('reads /help in German, with every command described in German', async () => {
    const answer = await privateAnswer(g.run(g.members.alice, { name: 'help', locale: 'de' }));
    expect(answer.content).toContain('**Dieser Server hat 100 Credits.**');
    expect(answer.content).toContain('Du bist hier Mitglied. Du hast kein Tageslimit und keine Wartezeit.');
    expect(answer.content).toContain('**Befehle, die Credits des Servers kosten**');
    expect(answer.content).toContain('**Kostenlos**');
    expect(answer.content).toContain(`\`/${String(de['command.credits.name'])}\`: ${de['command.credits.description']}`);
    expect(answer.content).toContain(`\`/${String(de['command.help.name'])}\`: ${de['command.help.description']}`);
    // The spending commands' own descriptions, in German, with the server's price instead of the list price.
    const song = String(de['command.song.description']);
    expect(song).not.toBe(en['command.song.description']);
    expect(answer.content).toContain(`\`/song\` · 10 Credits: ${song.replace(/\s*\([^()]*\d[^()]*\)\s*\.?$/, '.')}\n`);
    expect(answer.content).toContain(`(\`/song ${String(de['command.song.voice.name'])}:\`) kostet 10 Credits.`);
    expect(answer.content).not.toContain('**Für Moderatoren**');
    expect(answer.content).not.toContain('credits on');
  });

  it('pages through the credit history with German buttons', async () => {
    await g.balance();
    for (let i = 0; i < 11; i += 1) {
      await grant(g.db.db, { guildId: g.guild.id, amount: 1, actorId: g.members.owner, key: `de-${i}`, reason: `Geschenk ${i}` });
    }
    const page = await privateAnswer(g.run(g.members.manager, { name: 'credits-admin', subcommand: 'history', locale: 'de' }));
    expect(page.content).toContain('**Credit-Verlauf**');
    expect(page.content).toContain('**Gutschrift** +1');
    expect(page.content).toContain(`von <@${g.members.owner}>`);
    expect(labelsOf(page)).toEqual(['Neuere', 'Ältere', 'Als CSV exportieren']);
  });
});

describe('a Spanish member', () => {
  it('is refused the moderator role in Spanish when a moderator only by role', async () => {
    await privateAnswer(g.run(g.members.manager, { name: 'settings', subcommand: 'moderator-role', options: { role: g.moderatorRole.id } }));
    const refused = await privateAnswer(g.run(g.members.roleModerator, { name: 'settings', subcommand: 'moderator-role', locale: 'es-ES' }));
    expect(refused.ephemeral).toBe(true);
    expect(refused.content).toBe('Solo los miembros con Gestionar servidor pueden cambiar el rol de moderador.');
  });

  it('reads the answers of /credits-admin in Spanish, Latin American Spanish too', async () => {
    const granted = await privateAnswer(
      g.run(g.members.owner, { name: 'credits-admin', subcommand: 'grant', options: { amount: 50, reason: 'fiesta' }, locale: 'es-419' }),
    );
    expect(granted.content).toBe('Se han añadido 50 créditos. El saldo ahora es 150.');
    const limited = await privateAnswer(g.run(g.members.manager, { name: 'credits-admin', subcommand: 'user-limit', options: { amount: 1 }, locale: 'es-ES' }));
    expect(limited.content).toBe('Cada miembro puede gastar ahora 1 crédito al día (UTC).');
  });
});

describe('a Brazilian member', () => {
  it('reads /settings show in Portuguese', async () => {
    const shown = await privateAnswer(g.run(g.members.manager, { name: 'settings', subcommand: 'show', locale: 'pt-BR' }));
    expect(shown.content).toBe(
      [
        '**Configurações deste servidor**',
        'Canais: todos',
        'Cargo exigido: nenhum (todos)',
        'Cargo de moderador: nenhum (só Gerenciar servidor)',
        'Cargo de DJ: nenhum (os moderadores controlam o player)',
        'Modelo padrão: o padrão do serviço',
        'Intervalo: nenhum',
        'Visibilidade: público',
        'Canal de revisão: nenhum (as denúncias só ficam na lista)',
        'Regras do AutoMod: não usadas',
        'Palavras explícitas: só em canais com restrição de idade',
        'Mensagem direta quando um trabalho longo termina: só para quem pedir com `/notify`',
        'Parada semanal: não é postada.',
      ].join('\n'),
    );
    const saved = await privateAnswer(
      g.run(g.members.manager, { name: 'settings', subcommand: 'visibility', options: { mode: 'private' }, locale: 'pt-BR' }),
    );
    expect(saved.content).toMatch(/^Salvo\.\n/);
    expect(saved.content).toContain('Visibilidade: privado');
  });
});

describe('a member whose language has no translation', () => {
  it('reads English', async () => {
    const answer = await privateAnswer(g.run(g.members.alice, { name: 'credits', locale: 'fr' }));
    expect(answer.content).toContain('**Credits of this server**: 100');
  });
});

describe('the welcome', () => {
  it('is written in the guild’s language', async () => {
    const guild = h.emulator.createGuild({ name: 'Coral', locale: Locale.PortugueseBR, systemChannel: 'geral' });
    const welcome = await vi.waitFor(() => found(h.emulator.channelMessages(guild.systemChannelId!)[0], () => 'the welcome'), 10_000);
    expect(welcome.content).toContain('**Três primeiros passos para moderadores** (membros com Gerenciar servidor):');
    expect(welcome.content).toContain('Este servidor começa com **100** créditos.');
    expect(welcome.content).toContain('`/configurações canais adicionar:#song-requests`');
    expect(welcome.content).toContain('`/configurações visibilidade modo:privado`');
    expect(welcome.content!.length).toBeLessThanOrEqual(2000);
  });
});
