/**
 * What Discord registers for the generation commands: every command, subcommand, option and
 * choice named and described in each translated language (Latin American Spanish reading the
 * Spanish), the English text staying the definition's own.
 */
import { describe, expect, it } from 'vitest';
import { commandDefinitions } from '../../../commands/index.js';
import { AUDIO_LIMITS } from '../../../src/discord/attachments.js';
import { CATALOGUES, LOCALES, type MessageKey } from '../../../src/i18n/index.js';
import { OPERATION_COSTS } from '../../../src/music-api/index.js';

const GENERATION = ['song', 'lyrics', 'voice', 'video', 'download', 'upload', 'jobs', 'library'];
const CODES = ['de', 'es-419', 'es-ES', 'pt-BR'];

interface Node {
  name: string;
  description?: string;
  value?: string | number;
  options?: Node[];
  choices?: Node[];
  name_localizations?: Record<string, string>;
  description_localizations?: Record<string, string>;
}

const registered = (name: string) => commandDefinitions.find((definition) => definition.name === name) as unknown as Node;

/** Every node under a command with where it is, the command first. */
function nodesOf(node: Node, where: string): Array<{ node: Node; where: string; isChoice: boolean }> {
  return [
    { node, where, isChoice: false },
    ...(node.choices ?? []).map((choice) => ({ node: choice, where: `${where} choice ${String(choice.value)}`, isChoice: true })),
    ...(node.options ?? []).flatMap((option) => nodesOf(option, `${where} ${option.name}`)),
  ];
}

describe.each(GENERATION)('/%s as registered', (name) => {
  it('names and describes everything in de, es-ES, es-419 and pt-BR', () => {
    const missing: string[] = [];
    for (const { node, where, isChoice } of nodesOf(registered(name), `/${name}`)) {
      if (Object.keys(node.name_localizations ?? {}).sort().join() !== CODES.join()) missing.push(`${where} name`);
      if (!isChoice && Object.keys(node.description_localizations ?? {}).sort().join() !== CODES.join()) missing.push(`${where} description`);
    }
    expect(missing).toEqual([]);
  });

  it('gives options different names in every language', () => {
    const clashes: string[] = [];
    for (const { node, where, isChoice } of nodesOf(registered(name), `/${name}`)) {
      if (isChoice || !node.options) continue;
      for (const code of CODES) {
        const names = node.options.map((option) => option.name_localizations?.[code]);
        if (new Set(names).size !== names.length) clashes.push(`${where} in ${code}: ${names.join(', ')}`);
      }
    }
    expect(clashes).toEqual([]);
  });
});

describe('the generation commands’ translations', () => {
  it('are the Spanish, Portuguese and German ones, Latin American Spanish reading the Spanish', () => {
    const song = registered('song');
    expect(song.name_localizations).toEqual({ 'es-ES': 'canción', 'es-419': 'canción', 'pt-BR': 'música', de: 'song' });
    expect(song.description_localizations?.de).toBe(`Erstelle einen Song aus einer Beschreibung (${OPERATION_COSTS.song} Credits).`);
    const format = registered('download').options?.find((option) => option.name === 'format');
    expect(format?.choices?.map((choice) => choice.name_localizations?.['pt-BR'])).toEqual(['MP3', 'WAV']);
    const jobs = registered('jobs');
    expect(jobs.options?.map((option) => option.name_localizations?.['es-419'])).toEqual(['lista', 'mostrar', 'cancelar', 'renombrar']);
  });

  it('keep each spending command’s list price, and the voice’s minimum length, in every language', () => {
    const prices: Array<[MessageKey, number]> = [
      ['command.song.description', OPERATION_COSTS.song],
      ['command.lyrics.description', OPERATION_COSTS.lyrics],
      ['command.voice.create.description', OPERATION_COSTS.voice],
      ['command.video.description', OPERATION_COSTS.video],
      ['command.download.description', OPERATION_COSTS.download],
      ['command.upload.description', OPERATION_COSTS.upload],
    ];
    for (const locale of LOCALES) {
      for (const [key, cost] of prices) expect(CATALOGUES[locale][key], `${locale} ${key}`).toMatch(new RegExp(`\\(${cost} \\p{L}+\\)\\.$`, 'u'));
      for (const key of ['command.voice.create.description', 'command.voice.create.audio.description'] as const) {
        expect(CATALOGUES[locale][key], `${locale} ${key}`).toContain(` ${AUDIO_LIMITS.voiceMinSeconds} `);
      }
    }
  });
});
