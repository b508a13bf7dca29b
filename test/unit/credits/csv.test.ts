import { describe, expect, it } from 'vitest';
import { exportCsv, type CsvLedgerRow } from '../../../src/credits/csv.js';

const base: CsvLedgerRow = {
  id: 7,
  createdAt: new Date('2031-01-02T03:04:05.678Z'),
  kind: 'grant',
  amount: 25,
  balanceAfter: 125,
  userId: null,
  actorId: 'mod-1',
  jobId: null,
  reason: null,
  key: 'manual:interaction-1',
};

const RECORD_START = '7,2031-01-02T03:04:05.678Z,grant,25,125,,mod-1,,';

/** The reason cell as written: what follows the fixed cells, up to the (empty) entitlement cell and the record's final CRLF. */
function cells(reason: string): string {
  const [, body] = exportCsv([{ ...base, reason }]).split(`\r\n${RECORD_START}`);
  return body?.replace(/,\r\n$/, '') ?? '';
}

describe('exportCsv', () => {
  it('writes a header and one CRLF-terminated record per row', () => {
    expect(exportCsv([base, { ...base, id: 8, kind: 'reserve', amount: -5, balanceAfter: 120, userId: 'u-1', actorId: null, jobId: 'job-1' }])).toBe(
      'id,time,kind,amount,balance_after,user,actor,job,reason,entitlement\r\n' +
        '7,2031-01-02T03:04:05.678Z,grant,25,125,,mod-1,,,\r\n' +
        '8,2031-01-02T03:04:05.678Z,reserve,-5,120,u-1,,job-1,,\r\n',
    );
    expect(exportCsv([])).toBe('id,time,kind,amount,balance_after,user,actor,job,reason,entitlement\r\n');
  });

  it('quotes cells with quotes, commas or line breaks and doubles their quotes', () => {
    expect(cells('plain words')).toBe('plain words');
    expect(cells('a, b')).toBe('"a, b"');
    expect(cells('say "hi"')).toBe('"say ""hi"""');
    expect(cells('line\nbreak')).toBe('"line\nbreak"');
    expect(cells('carriage\r\nreturn')).toBe('"carriage\r\nreturn"');
  });

  it('keeps spreadsheet formulas from running in text cells', () => {
    expect(cells('=1+1')).toBe("'=1+1");
    expect(cells('+SUM(A1)')).toBe("'+SUM(A1)");
    expect(cells('-2+3')).toBe("'-2+3");
    expect(cells('@cmd')).toBe("'@cmd");
    expect(cells('\t=1')).toBe("'\t=1");
    expect(cells('=HYPERLINK("http://x", "y")')).toBe(`"'=HYPERLINK(""http://x"", ""y"")"`);
    expect(cells('a=1')).toBe('a=1');
    // The full-width signs some spreadsheets read as their ASCII twins.
    expect(cells('\uFF1D1+1')).toBe("'\uFF1D1+1");
    expect(cells('\uFF20cmd')).toBe("'\uFF20cmd");
    const [, row] = exportCsv([{ ...base, userId: '=cmd|x', actorId: '@evil', jobId: '+1' }]).split('\r\n');
    expect(row).toBe("7,2031-01-02T03:04:05.678Z,grant,25,125,'=cmd|x,'@evil,'+1,,");
  });

  it('leaves negative amounts as numbers', () => {
    const [, row] = exportCsv([{ ...base, amount: -30, balanceAfter: 0 }]).split('\r\n');
    expect(row?.split(',').slice(3, 5)).toEqual(['-30', '0']);
  });

  it('names the entitlement of each purchase movement: the claimed pack, a subscription month, a refund’s take-back', () => {
    const purchase = { ...base, userId: 'buyer' };
    const rows = exportCsv([
      { ...purchase, kind: 'purchase', key: 'entitlement:1300000000000000001', reason: 'credit pack 1200000000000000001' },
      { ...purchase, id: 8, kind: 'subscription', key: 'entitlement:1300000000000000002:2031-01', reason: 'subscription 1200000000000000002 2031-01' },
      { ...purchase, id: 9, kind: 'reversal', amount: -25, key: 'entitlement:1300000000000000001:reversal', reason: 'refund of credit pack 1200000000000000001' },
      { ...purchase, id: 10, key: 'allowance:g:2031-01', reason: 'monthly allowance 2031-01' },
    ])
      .trimEnd()
      .split('\r\n')
      .slice(1)
      .map((row) => row.split(','));
    expect(rows.map((row) => [row[2], row[8], row[9]])).toEqual([
      ['purchase', 'credit pack 1200000000000000001', '1300000000000000001'],
      ['subscription', 'subscription 1200000000000000002 2031-01', '1300000000000000002'],
      ['reversal', 'refund of credit pack 1200000000000000001', '1300000000000000001'],
      ['grant', 'monthly allowance 2031-01', ''],
    ]);
  });
});
