/** An RFC 4180 reader for checking exports: every record's fields, quotes undone; throws on a malformed file. */
export function parseCsv(text: string): string[][] {
  const records: string[][] = [];
  let fields: string[] = [];
  let field = '';
  let i = 0;
  let start = true;
  while (i < text.length) {
    if (start && text[i] === '"') {
      i += 1;
      for (;;) {
        const quote = text.indexOf('"', i);
        if (quote < 0) throw new Error(`unclosed quote at ${i}`);
        field += text.slice(i, quote);
        i = quote + 1;
        if (text[i] !== '"') break;
        field += '"';
        i += 1;
      }
      if (i < text.length && text[i] !== ',' && text.slice(i, i + 2) !== '\r\n') throw new Error(`text after a closing quote at ${i}`);
    }
    start = false;
    const rest = text.slice(i, i + 2);
    if (rest.startsWith(',')) {
      fields.push(field);
      field = '';
      start = true;
      i += 1;
    } else if (rest === '\r\n') {
      fields.push(field);
      records.push(fields);
      fields = [];
      field = '';
      start = true;
      i += 2;
    } else if (rest[0] === '"' || rest[0] === '\r' || rest[0] === '\n') {
      throw new Error(`unexpected ${JSON.stringify(rest[0])} at ${i}`);
    } else {
      field += text[i];
      i += 1;
    }
  }
  if (field !== '' || fields.length > 0) throw new Error('the last record does not end with CRLF');
  return records;
}
