// The CSV parser against csv-parse (a widely used, maintained implementation of RFC 4180) on generated files:
// quoted commas, doubled quotes, LF, CR and CRLF inside quotes, multibyte text, CRLF or LF line endings, a
// byte order mark, a last line with or without its line ending, each file fed in chunks cut at random bytes.
import { parse } from 'csv-parse/sync';
import { describe, expect, it } from 'vitest';
import { CsvParser } from '../../../shared/kernel/csv.ts';
import { Rng } from '../../sim/scheduler.ts';

/** Rows as the parser gives them, the bytes decoded as the bronze reader decodes a landing file. */
function rowsOf(bytes: Uint8Array, cuts: readonly number[], options = {}) {
  const csv = new CsvParser(options);
  const decoder = new TextDecoder('utf-8');
  const rows: string[][] = [];
  let at = 0;
  for (const cut of [...cuts, bytes.length]) {
    for (const row of csv.write(decoder.decode(bytes.subarray(at, cut), { stream: true })))
      rows.push([...row.fields]);
    at = cut;
  }
  for (const row of csv.write(decoder.decode())) rows.push([...row.fields]);
  const end = csv.end();
  if (end.kind === 'unterminated') throw new Error('unterminated');
  if (end.row) rows.push([...end.row.fields]);
  return rows;
}

const PIECES = ['a', 'Zürich', 'żółw', '🦆', ' ', 'x y', '1.5', ',', '"', '\n', '\r\n', '\r', "'"];

function field(rng: Rng): string {
  if (rng.chance(0.1)) return '';
  let text = '';
  for (let n = rng.int(1, 4); n > 0; n--) text += rng.pick(PIECES);
  return text;
}

/** A field as a writer following RFC 4180 writes it: quoted when it must be, sometimes when it need not. */
function written(value: string, rng: Rng): string {
  const must = /[",\r\n]/.test(value);
  return must || rng.chance(0.2) ? `"${value.replace(/"/g, '""')}"` : value;
}

function file(rng: Rng): { text: string; rows: string[][] } {
  const eol = rng.pick(['\n', '\r\n']);
  const width = rng.int(1, 4);
  const rows = Array.from({ length: rng.int(1, 8) }, () => Array.from({ length: width }, () => field(rng)));
  const lines = rows.map((row) =>
    // A lone empty field would be an empty line: quote it so the row is there.
    row.length === 1 && row[0] === '' ? '""' : row.map((v) => written(v, rng)).join(','),
  );
  const bom = rng.chance(0.2) ? '\uFEFF' : '';
  return { text: bom + lines.join(eol) + (rng.chance(0.7) ? eol : ''), rows };
}

describe('CsvParser', () => {
  it('reads what csv-parse reads from 400 generated RFC 4180 files, however the bytes are cut', () => {
    const rng = new Rng(2026);
    for (let i = 0; i < 400; i++) {
      const { text, rows } = file(rng);
      const bytes = new TextEncoder().encode(text);
      const cuts = Array.from({ length: rng.int(0, 6) }, () => rng.int(0, bytes.length)).sort(
        (a, b) => a - b,
      );
      const oracle = parse(Buffer.from(bytes), { bom: true, relax_column_count: true }) as string[][];
      expect(oracle, `file ${i}: csv-parse reads the rows written`).toEqual(rows);
      expect(rowsOf(bytes, cuts), `file ${i}: ${JSON.stringify(text)} cut at ${cuts}`).toEqual(oracle);
    }
  });

  it('keeps each row as written in `raw` (quotes doubled), without its line ending, up to rawKeep', () => {
    const csv = new CsvParser({ rawKeep: 8 });
    const rows = [...csv.write('a,"b ""c"""\r\n"x\ny",z\n123456789012\n')];
    expect(rows.map((r) => r.raw)).toEqual(['a,"b ""c"""'.slice(0, 8), '"x\ny",z', '12345678']);
    expect(rows.map((r) => r.fields)).toEqual([['a', 'b "c"'], ['x\ny', 'z'], ['123456789012']]);
  });

  it('marks a row past maxRowChars too long and goes on with the next line', () => {
    const csv = new CsvParser({ maxRowChars: 6 });
    const rows = [...csv.write('1,2,3,4\n"a\nb"\n5\n')];
    expect(rows.map((r) => r.tooLong)).toEqual([true, false, false]);
    expect(rows[1]?.fields).toEqual(['a\nb']);
  });

  it('says when the input ends inside quotes, and gives the last row without a line ending', () => {
    const open = new CsvParser();
    expect([...open.write('a\n"b,c')]).toHaveLength(1);
    expect(open.end()).toEqual({ kind: 'unterminated', raw: '"b,c' });
    const last = new CsvParser();
    expect([...last.write('a\nb,"c"')]).toHaveLength(1);
    expect(last.end()).toEqual({ kind: 'done', row: { fields: ['b', 'c'], raw: 'b,"c"', tooLong: false } });
    expect(new CsvParser().end()).toEqual({ kind: 'done' });
  });
});
