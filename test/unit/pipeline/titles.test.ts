import { describe, expect, it } from 'vitest';
import { translator } from '../../../src/i18n/index.js';
import type { JobRow } from '../../../src/pipeline/job-rows.js';
import { normalizeName } from '../../../src/pipeline/job-names.js';
import { cleanTitle, givenTitle, isRemix, titleForDisplay } from '../../../src/pipeline/titles.js';

type Named = Pick<JobRow, 'request' | 'result' | 'remixOf'>;

const song = (request: Record<string, unknown>, clipTitle?: string, remixOf: string | null = null): Named => ({
  request: { kind: 'song', ...request },
  result: clipTitle === undefined ? null : { clips: [{ clipId: 'c', title: clipTitle }] },
  remixOf,
});

describe('givenTitle', () => {
  it('prefers the member’s title to the service’s', () => {
    expect(givenTitle({ request: { kind: 'upload', title: 'My demo' }, result: { clips: [{ clipId: 'c', title: 'Uploaded audio' }] } })).toBe('My demo');
  });

  it('takes the service’s title when the member gave none, else the whole prompt', () => {
    expect(givenTitle(song({ prompt: 'rainy night lofi beat with soft piano' }, 'Rainy night lofi beat'))).toBe('Rainy night lofi beat');
    const prompt = `rainy night lofi beat with soft piano ${'and more '.repeat(20)}`.trim();
    expect(givenTitle(song({ prompt }))).toBe(prompt);
    expect(givenTitle(song({ prompt: '  two\n lines ' }, '  '))).toBe('two lines');
  });

  it('names a voice by its name, and nothing by nothing', () => {
    expect(givenTitle({ request: { kind: 'voice', name: 'Alto' }, result: { personaName: 'Voice 1' } })).toBe('Alto');
    expect(givenTitle({ request: { kind: 'video', clipId: 'c' }, result: { clips: [{ clipId: 'c' }] } })).toBeUndefined();
  });
});

describe('cleanTitle', () => {
  it('drops the punctuation a title cut from a sentence ends with, and keeps ! and ?', () => {
    expect(cleanTitle('Rain on the roof,')).toBe('Rain on the roof');
    expect(cleanTitle(' Night drive… ')).toBe('Night drive');
    expect(cleanTitle('Slow burn - ')).toBe('Slow burn');
    expect(cleanTitle('Why?')).toBe('Why?');
    expect(cleanTitle('Help!')).toBe('Help!');
    expect(cleanTitle('...')).toBe('...');
    expect(givenTitle(song({ prompt: 'rain on the roof, all night long' }, 'Rain on the roof,'))).toBe('Rain on the roof');
  });

  it('is how a typed name is compared too', () => {
    expect(normalizeName('  Rain  on the ROOF, ')).toBe('rain on the roof');
    expect(normalizeName('Why?')).toBe('why?');
  });
});

describe('titleForDisplay', () => {
  const en = translator('en');

  it('marks a remix, in each language, whether its source still exists or not', () => {
    const remix = song({ remixOf: { jobId: '6f1c0c84-1f55-4f8a-9a0e-3f4b8a1d2c3e', title: 'Calm' } }, 'Calm');
    expect(isRemix(remix)).toBe(true);
    expect(isRemix({ ...song({}, 'Calm'), remixOf: '6f1c0c84-1f55-4f8a-9a0e-3f4b8a1d2c3e' })).toBe(true);
    expect(isRemix(song({}, 'Calm'))).toBe(false);
    expect(titleForDisplay(remix, 'Calm', en, 100)).toBe('Calm (remix)');
    expect(titleForDisplay(remix, 'Calm', translator('de'), 100)).toBe('Calm (Remix)');
    expect(titleForDisplay(remix, 'Calm', translator('es-ES'), 100)).toBe('Calm (remezcla)');
    expect(titleForDisplay(remix, 'Calm', translator('pt-BR'), 100)).toBe('Calm (remix)');
    expect(titleForDisplay(song({}, 'Calm'), 'Calm', en, 100)).toBe('Calm');
  });

  it('fits a long title and the mark within a menu label’s 100 characters', () => {
    const remix = song({ remixOf: { jobId: '6f1c0c84-1f55-4f8a-9a0e-3f4b8a1d2c3e', title: 'x' } });
    const shown = titleForDisplay(remix, 'w'.repeat(300), en, 100);
    expect(shown).toHaveLength(100);
    expect(shown.endsWith('… (remix)')).toBe(true);
    expect(titleForDisplay(song({}), 'w'.repeat(300), en, 100)).toHaveLength(100);
  });
});
